"""CPU kernels of the interleaved attention products (``nbdl.ops.transformer``).

Each attention batch item's ``(seq, head_dim)`` slices are gathered from the
interleaved operand into small contiguous temps (BLAS needs contiguous
matrices) and multiplied with ``np.dot``, one item after another, as
``batch_dot`` does; results bound for an interleaved array are added into
it (zeroed first for a write).  The geometry is
``nbdl.kernels.shared.transformer``.
"""
import numpy as np

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.transformer import call_plan
from ..shared.jit import njit
from ._blas_threads import hold_blas, hold_for, release_blas
from .matrix import gemm_req


@njit(cache=True)
def _take(src, b, h, part, dst):
    """dst (S, D) = src[:, b, h, part, :]."""
    for s in range(dst.shape[0]):
        for d in range(dst.shape[1]):
            dst[s, d] = src[s, b, h, part, d]


@njit(cache=True)
def _put_add(src, dst, b, h, part):
    """dst[:, b, h, part, :] += src (S, D)."""
    for s in range(src.shape[0]):
        for d in range(src.shape[1]):
            dst[s, b, h, part, d] += src[s, d]


@njit(cache=True)
def _zero_for(dst, req):
    if req != REQ_NULL and req != REQ_ADD:
        dst[:] = 0


@njit(cache=True)
def qk_forward(x, y, out, tx, ty, tmp, px, py, heads, scale, req, hold):
    """out[i] (Sx, Sy) = scale * x_i . y_i^T over the batch items i."""
    if req == REQ_NULL:
        return
    prev = hold_blas(hold)
    for i in range(out.shape[0]):
        _take(x, i // heads, i % heads, px, tx)
        _take(y, i // heads, i % heads, py, ty)
        tx *= scale
        gemm_req(tx, ty, out[i], tmp, 0, 1, req)
    release_blas(prev)


@njit(cache=True)
def qk_backward(g, x, y, dx, dy, tx, ty, tdx, tdy, px, py, heads, scale, req_x, req_y, hold):
    """dx_i = scale * g[i] . y_i, dy_i = scale * g[i]^T . x_i, added into the
    interleaved gradients (``dx`` and ``dy`` may be one array)."""
    _zero_for(dx, req_x)
    _zero_for(dy, req_y)
    prev = hold_blas(hold)
    for i in range(g.shape[0]):
        b, h = i // heads, i % heads
        _take(x, b, h, px, tx)
        _take(y, b, h, py, ty)
        tx *= scale
        ty *= scale
        if req_x != REQ_NULL:
            np.dot(g[i], ty, tdx)
            _put_add(tdx, dx, b, h, px)
        if req_y != REQ_NULL:
            np.dot(g[i].T, tx, tdy)
            _put_add(tdy, dy, b, h, py)
    release_blas(prev)


@njit(cache=True)
def valatt_forward(v, att, out, tv, to, pv, heads, req, hold):
    """out_i (Sq, D) = att[i] . v_i, written into the interleaved output."""
    if req == REQ_NULL:
        return
    _zero_for(out, req)
    prev = hold_blas(hold)
    for i in range(att.shape[0]):
        b, h = i // heads, i % heads
        _take(v, b, h, pv, tv)
        np.dot(att[i], tv, to)
        _put_add(to, out, b, h, 0)
    release_blas(prev)


@njit(cache=True)
def valatt_backward(g, v, att, dv, datt, tg, tv, tdv, tmp, pv, heads, req_v, req_a, hold):
    """datt[i] = g_i . v_i^T, dv_i = att[i]^T . g_i."""
    _zero_for(dv, req_v)
    prev = hold_blas(hold)
    for i in range(att.shape[0]):
        b, h = i // heads, i % heads
        _take(g, b, h, 0, tg)
        _take(v, b, h, pv, tv)
        gemm_req(tg, tv, datt[i], tmp, 0, 1, req_a)
        if req_v != REQ_NULL:
            np.dot(att[i].T, tg, tdv)
            _put_add(tdv, dv, b, h, pv)
    release_blas(prev)


# -- prepare ---------------------------------------------------------------------------

def _add_scratch(call, index, shape):
    return (tuple(shape) if call.req[index] == REQ_ADD else (0, 0), call.out_dtypes[index])


def temp_selfatt_qk(call):
    _, p = call_plan(call)
    dt = call.out_dtypes[0]
    return [((p.sx, p.d), dt), ((p.sy, p.d), dt), _add_scratch(call, 0, (p.sx, p.sy))]


temp_encdec_qk = temp_selfatt_qk


def temp_selfatt_qk_backward(call):
    _, p = call_plan(call, True)
    dt = call.out_dtypes[0]
    return [((p.sx, p.d), dt), ((p.sy, p.d), dt), ((p.sx, p.d), dt), ((p.sy, p.d), dt)]


temp_encdec_qk_backward = temp_selfatt_qk_backward


def temp_selfatt_valatt(call):
    _, p = call_plan(call)
    dt = call.out_dtypes[0]
    return [((p.sk, p.d), dt), ((p.sq, p.d), dt)]


temp_encdec_valatt = temp_selfatt_valatt


def temp_selfatt_valatt_backward(call):
    _, p = call_plan(call, True)
    dt = call.out_dtypes[0]
    return [((p.sq, p.d), dt), ((p.sk, p.d), dt), ((p.sk, p.d), dt),
            _add_scratch(call, 1, (p.sq, p.sk))]


temp_encdec_valatt_backward = temp_selfatt_valatt_backward


def _qk_scalars(p):
    return (p.px, p.py, p.heads, p.scale)


def _hold(p):
    return hold_for(2 * p.bh * p.sx * p.sy * max(p.d, 1))


def prepare_selfatt_qk(call):
    kind, p = call_plan(call)
    out = (p.bh, p.sx, p.sy)
    if kind == "selfatt_qk":      # queries and keys are the same interleaved array
        return Launch(qk_forward, _qk_scalars(p) + (call.req[0], _hold(p)),
                      [p.x5, out, None, None, None], args=(0, 0, 1, 2, 3, 4))
    return Launch(qk_forward, _qk_scalars(p) + (call.req[0], _hold(p)),
                  [p.x5, p.y5, out, None, None, None])


prepare_encdec_qk = prepare_selfatt_qk


def prepare_selfatt_qk_backward(call):
    kind, p = call_plan(call, True)
    g = (p.bh, p.sx, p.sy)
    if kind == "selfatt_qk":      # one input and one gradient, each used twice
        return Launch(qk_backward, _qk_scalars(p) + (call.req[0], call.req[0], _hold(p)),
                      [g, p.x5, p.x5] + [None] * 4, args=(0, 1, 1, 2, 2, 3, 4, 5, 6))
    return Launch(qk_backward, _qk_scalars(p) + (call.req[0], call.req[1], _hold(p)),
                  [g, p.x5, p.y5, p.x5, p.y5] + [None] * 4)


prepare_encdec_qk_backward = prepare_selfatt_qk_backward


def _valatt_hold(p):
    return hold_for(2 * p.bh * p.sq * p.sk * max(p.d, 1))


def prepare_selfatt_valatt(call):
    _, p = call_plan(call)
    return Launch(valatt_forward, (p.pv, p.heads, call.req[0], _valatt_hold(p)),
                  [p.v5, p.att, p.out5, None, None])


prepare_encdec_valatt = prepare_selfatt_valatt


def prepare_selfatt_valatt_backward(call):
    _, p = call_plan(call, True)
    return Launch(valatt_backward, (p.pv, p.heads, call.req[0], call.req[1], _valatt_hold(p)),
                  [p.out5, p.v5, p.att, p.v5, p.att] + [None] * 4)


prepare_encdec_valatt_backward = prepare_selfatt_valatt_backward
