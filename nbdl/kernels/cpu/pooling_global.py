"""CPU kernels for global pooling (``Pooling`` with ``global_pool=True``) and
its gradient: the data viewed as ``(A, S, B)`` (``(N*C, S, 1)``
channels-first, ``(N, S, C)`` channels-last), each ``(a, b)`` one reduction
over ``S``; ``pooling.prepare_pooling`` picks them (``global_kernels``)."""
from numba import prange

from ..shared.jit import njit

from ._parallel import serial_and_parallel
from ...ops.registry import REQ_ADD, REQ_NULL
from ..shared.pooling import AVG, LP, MAX
from .pooling_math import _floor, _global_back_one, _global_one, _ipow, _key


# -- global pooling: x as (A, S, B), out as (A, B) ------------------------------
# Channels-first (B == 1): rows of S values, x as (A, S), one reduction a row
# in 2-D indexing from 0 (a row index computed with a division, or 3-D
# indexing, costs several times the reduction on small maps); S == 1 (a 1x1
# map: ResNet's head on small images) is a copy.  Channels-last: each (a, b)
# through the shared per-(a, b) functions.

@njit(cache=True, inline="always")
def _put(o, i, v, add):
    if add:
        o[i] += v
    else:
        o[i] = v


@njit(cache=True, inline="always")
def _row_pool(xr, ptype, ip, inv_p, zero):
    """The pooling of the row ``xr`` (``global_one``'s rule)."""
    S = xr.shape[0]
    if S == 0:
        return zero
    if ptype == MAX:
        v = _key(xr[0], _floor(xr))
        for s in range(1, S):
            t = xr[s]
            v = t if t > v else v
        return v
    v = zero
    if ptype == LP:
        for s in range(S):
            v += _ipow(xr[s], ip)
        return v ** inv_p if ip > 1 else v
    for s in range(S):
        v += xr[s]
    if ptype == AVG:
        v = v / xr.dtype.type(S)
    return v


@njit(cache=True, inline="always")
def _row_grad(xr, dr, g, yv, ptype, ip, zero, add):
    """The row's gradient from the output's ``g`` (``global_back_one``'s rule)."""
    S = xr.shape[0]
    if ptype == MAX:
        arg = 0
        best = _key(xr[0], _floor(xr))
        for s in range(1, S):
            if xr[s] > best:
                best = xr[s]
                arg = s
        for s in range(S):
            _put(dr, s, g if s == arg else zero, add)
        return
    if ptype == LP and ip > 1:
        for s in range(S):
            _put(dr, s, zero if yv == zero else g * _ipow(xr[s] / yv, ip - 1), add)
        return
    if ptype == AVG:
        g = g / xr.dtype.type(max(S, 1))
    for s in range(S):
        _put(dr, s, g, add)


def global_rows_forward(x, out, ptype, ip, inv_p, zero, req):
    """Channels-first (B == 1): one reduction a row of x viewed as (A, S)."""
    if req == REQ_NULL:
        return
    A, S, B = x.shape
    add = req == REQ_ADD
    x2, o1 = x.reshape(A, S), out.reshape(A)
    if S == 1 and ptype == MAX:
        low = _floor(x2)
        for a in prange(A):
            _put(o1, a, _key(x2[a, 0], low), add)
        return
    if S == 1 and ptype != LP:
        for a in prange(A):
            _put(o1, a, x2[a, 0], add)
        return
    for a in prange(A):
        _put(o1, a, _row_pool(x2[a], ptype, ip, inv_p, zero), add)


global_rows_forward, global_rows_forward_parallel = serial_and_parallel(global_rows_forward)


def global_forward(x, out, ptype, ip, inv_p, zero, req):
    """Channels-last (B > 1): each (a, b) through the shared per-(a, b) function."""
    if req == REQ_NULL:
        return
    A, S, B = x.shape
    for a in prange(A):
        for b in range(B):
            _global_one(x, out, a, b, ptype, ip, inv_p, zero, req)


global_forward, global_forward_parallel = serial_and_parallel(global_forward)


def global_rows_backward(og, x, y, dx, ptype, ip, inv_p, zero, req):
    """Channels-first (B == 1): each row's gradient from its output's."""
    if req == REQ_NULL:
        return
    A, S, B = x.shape
    add = req == REQ_ADD
    x2, d2, g1, y1 = x.reshape(A, S), dx.reshape(A, S), og.reshape(A), y.reshape(A)
    if S == 1 and ptype != LP:
        for a in prange(A):
            _put(d2, (a, 0), g1[a], add)
        return
    for a in prange(A):
        _row_grad(x2[a], d2[a], g1[a], y1[a], ptype, ip, zero, add)


global_rows_backward, global_rows_backward_parallel = serial_and_parallel(global_rows_backward)


def global_backward(og, x, y, dx, ptype, ip, inv_p, zero, req):
    """Channels-last (B > 1): each (a, b) through the shared per-(a, b) function."""
    if req == REQ_NULL:
        return
    A, S, B = x.shape
    add = req == REQ_ADD
    for a in prange(A):
        for b in range(B):
            _global_back_one(og, x, y, dx, a, b, ptype, ip, zero, add)


global_backward, global_backward_parallel = serial_and_parallel(global_backward)


def global_kernels(backward, B, parallel):
    """The global pooling kernel for views (A, S, ``B``): rows (B == 1) or
    per-(a, b), forward or ``backward``, serial or ``parallel`` (a kernel
    apiece, so that a model compiles only the layout it uses)."""
    if B == 1:
        pair = ((global_rows_backward, global_rows_backward_parallel) if backward
                else (global_rows_forward, global_rows_forward_parallel))
    else:
        pair = ((global_backward, global_backward_parallel) if backward
                else (global_forward, global_forward_parallel))
    return pair[1] if parallel else pair[0]
