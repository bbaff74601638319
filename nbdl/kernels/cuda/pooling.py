"""CUDA kernels for Pooling (layouts and scalars as in
``nbdl.kernels.shared.pooling``, whose per-window functions are compiled here
as device functions): one thread per output for the forward pass; one
thread per ``(n, c)`` plane for the gradient, which scatters each window's
gradient serially (overlapping windows need no atomics).  Global pooling:
one thread per ``(a, b)`` reduction."""
import math

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.pooling import (LP, MAX, AVG, pool_params, py_bounds, py_divisor, py_pad_zero,
                              py_plane, py_pool_window, py_scatter_window)
from ._launch import launcher

_bounds = cuda.jit(device=True)(py_bounds)
_plane = cuda.jit(device=True)(py_plane)
_pool_window = cuda.jit(device=True)(py_pool_window)
_scatter_window = cuda.jit(device=True)(py_scatter_window)
_divisor = cuda.jit(device=True)(py_divisor)
_pad_zero = cuda.jit(device=True)(py_pad_zero)


@cuda.jit
def _forward(x, out, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, cl, ptype,
             ip, inv_p, cip, zero, req):
    total = N * C * OD * OH * OW
    for t in range(cuda.grid(1), total, cuda.gridsize(1)):
        ow = t % OW
        r = t // OW
        oh = r % OH
        r = r // OH
        od = r % OD
        q = r // OD
        n = q // C
        c = q - n * C
        xb, xu = _plane(n, c, C, D * H * W, cl)
        ob, ou = _plane(n, c, C, OD * OH * OW, cl)
        d0, d1, nd = _bounds(od, SD, PD, KD, D)
        h0, h1, nh = _bounds(oh, SH, PH, KH, H)
        w0, w1, nw = _bounds(ow, SW, PW, KW, W)
        dn = (d1 - d0) * (h1 - h0) * (w1 - w0)
        cnt = _divisor(cip, nd, nh, nw, dn, KD * KH * KW)
        v = _pool_window(x, xb, xu, H, W, d0, d1, h0, h1, w0, w1, cnt, ptype, ip, inv_p, zero)
        if _pad_zero(cip, ptype, dn, KD * KH * KW) and v < zero:
            v = zero
        i = ob + ((od * OH + oh) * OW + ow) * ou
        if req == REQ_ADD:
            out[i] += v
        else:
            out[i] = v


@cuda.jit
def _backward(og, x, y, dx, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, cl,
              ptype, ip, inv_p, cip, zero, req):
    for q in range(cuda.grid(1), N * C, cuda.gridsize(1)):
        n = q // C
        c = q - n * C
        xb, xu = _plane(n, c, C, D * H * W, cl)
        ob, ou = _plane(n, c, C, OD * OH * OW, cl)
        if req != REQ_ADD:
            for k in range(D * H * W):
                dx[xb + k * xu] = zero
        for od in range(OD):
            d0, d1, nd = _bounds(od, SD, PD, KD, D)
            for oh in range(OH):
                h0, h1, nh = _bounds(oh, SH, PH, KH, H)
                for ow in range(OW):
                    w0, w1, nw = _bounds(ow, SW, PW, KW, W)
                    dn = (d1 - d0) * (h1 - h0) * (w1 - w0)
                    cnt = _divisor(cip, nd, nh, nw, dn, KD * KH * KW)
                    i = ob + ((od * OH + oh) * OW + ow) * ou
                    _scatter_window(x, y[i], og[i], dx, xb, xu, H, W, d0, d1, h0, h1, w0, w1,
                                    cnt, ptype, ip, zero, _pad_zero(cip, ptype, dn, KD * KH * KW))


@cuda.jit
def _global_forward(x, out, ptype, ip, inv_p, zero, req):
    S = x.shape[1]
    B = x.shape[2]
    for r in range(cuda.grid(1), x.shape[0] * B, cuda.gridsize(1)):
        a = r // B
        b = r - a * B
        v = zero
        if S > 0:
            if ptype == MAX:
                v = x[a, 0, b]
                for s in range(1, S):
                    if x[a, s, b] > v:
                        v = x[a, s, b]
            else:
                for s in range(S):
                    t = x[a, s, b]
                    if ptype == LP:
                        u = t
                        for _ in range(ip - 1):
                            u = u * t
                        v += u
                    else:
                        v += t
                if ptype == LP and ip > 1:
                    v = v ** inv_p
                if ptype == AVG:
                    v = v / S
        if req == REQ_ADD:
            out[a, b] += v
        else:
            out[a, b] = v


@cuda.jit
def _global_backward(og, x, y, dx, ptype, ip, inv_p, zero, req):
    S = x.shape[1]
    B = x.shape[2]
    add = req == REQ_ADD
    for r in range(cuda.grid(1), x.shape[0] * B, cuda.gridsize(1)):
        a = r // B
        b = r - a * B
        g = og[a, b]
        yv = y[a, b]
        arg = 0
        if ptype == MAX:
            for s in range(1, S):
                if x[a, s, b] > x[a, arg, b]:
                    arg = s
        for s in range(S):
            if ptype == MAX:
                v = g if s == arg else zero
            elif ptype == AVG:
                v = g / S
            elif ptype == LP and ip > 1:
                if yv == zero:
                    v = zero
                else:
                    rr = x[a, s, b] / yv
                    t = rr
                    for _ in range(ip - 2):
                        t = t * rr
                    v = g * t
            else:
                v = g
            if add:
                dx[a, s, b] += v
            else:
                dx[a, s, b] = v


def _noop(*args):
    pass


def prepare_pooling(call):
    is_global, view, oview, scalars = pool_params(call, call.in_shapes[0], call.out_shapes[0])
    views = [view, oview]
    n_out = math.prod(call.out_shapes[0])
    if n_out == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    kernel = _global_forward if is_global else _forward
    return Launch(launcher(kernel, n_out), scalars + (int(call.req[0]),), views=views)


def prepare_pooling_backward(call):
    is_global, view, oview, scalars = pool_params(call, call.in_shapes[1], call.in_shapes[0])
    views = [oview, view, oview, view]
    if math.prod(call.in_shapes[1]) == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    if is_global:
        n = view[0] * view[2]
        kernel = _global_backward
    else:
        n = scalars[0] * scalars[1]
        kernel = _backward
    return Launch(launcher(kernel, n), scalars + (int(call.req[0]),), views=views)
