"""CUDA kernels of the interleaved attention products (``nbdl.ops.transformer``).

The heads' slices are gathered into ``(batch * heads, seq, head_dim)``
temps (scaled when the product wants it), multiplied by the batched tiled
GEMM of ``kernels/cuda/matrix.py`` (which accumulates itself for
``REQ_ADD``), and results bound for an interleaved array are added back
into it (zeroed first for a write).  Geometry:
``nbdl.kernels.shared.transformer``.
"""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, Launch
from ..shared.transformer import call_plan
from ._launch import grid1d
from .matrix import gemm_launcher


@cuda.jit
def _take_heads(src, part, heads, scale, dst):
    """dst[b * heads + h, s, d] = scale * src[s, b, h, part, d]."""
    n_bh, n_s, n_d = dst.shape
    for k in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
        d = k % n_d
        s = (k // n_d) % n_s
        i = k // (n_d * n_s)
        dst[i, s, d] = scale * src[s, i // heads, i % heads, part, d]


@cuda.jit
def _put_heads_add(src, dst, part, heads):
    """dst[s, b, h, part, d] += src[b * heads + h, s, d]."""
    n_bh, n_s, n_d = src.shape
    for k in range(cuda.grid(1), src.size, cuda.gridsize(1)):
        d = k % n_d
        s = (k // n_d) % n_s
        i = k // (n_d * n_s)
        dst[s, i // heads, i % heads, part, d] += src[i, s, d]


@cuda.jit
def _zero(dst):
    for k in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
        dst[k] = 0


def _run(kernel, n, *args):
    if n:
        blocks, threads = grid1d(n)
        kernel[blocks, threads](*args)


def _take(src, part, heads, scale, dst):
    _run(_take_heads, dst.size, src, part, heads, scale, dst)


def _put(src, dst, part, heads):
    _run(_put_heads_add, src.size, src, dst, part, heads)


def _zero_for(dst, req):
    if req != REQ_NULL and req != REQ_ADD:
        _run(_zero, dst.size, dst.reshape(dst.size))


def temp_selfatt_qk(call):
    _, p = call_plan(call)
    dt = call.out_dtypes[0]
    return [((p.bh, p.sx, p.d), dt), ((p.bh, p.sy, p.d), dt)]


temp_encdec_qk = temp_selfatt_qk


def temp_selfatt_qk_backward(call):
    _, p = call_plan(call, True)
    dt = call.out_dtypes[0]
    return [((p.bh, p.sx, p.d), dt), ((p.bh, p.sy, p.d), dt)] * 2


temp_encdec_qk_backward = temp_selfatt_qk_backward


def temp_selfatt_valatt(call):
    _, p = call_plan(call)
    dt = call.out_dtypes[0]
    return [((p.bh, p.sk, p.d), dt), ((p.bh, p.sq, p.d), dt)]


temp_encdec_valatt = temp_selfatt_valatt


def temp_selfatt_valatt_backward(call):
    _, p = call_plan(call, True)
    dt = call.out_dtypes[0]
    return [((p.bh, p.sq, p.d), dt), ((p.bh, p.sk, p.d), dt), ((p.bh, p.sk, p.d), dt)]


temp_encdec_valatt_backward = temp_selfatt_valatt_backward


def prepare_selfatt_qk(call):
    kind, p = call_plan(call)
    gemm = gemm_launcher(call.out_dtypes[0], p.bh, p.sx, p.sy)
    one = p.scale.dtype.type(1)

    def qk(x, y, out, tx, ty, req):
        if req != REQ_NULL:
            _take(x, p.px, p.heads, p.scale, tx)
            _take(y, p.py, p.heads, one, ty)
            gemm(tx, ty, out, None, 0, 1, 0, req)

    out = (p.bh, p.sx, p.sy)
    if kind == "selfatt_qk":
        def fn(qkv, out, tx, ty, req):
            qk(qkv, qkv, out, tx, ty, req)
        return Launch(fn, (call.req[0],), [p.x5, out, None, None])
    return Launch(qk, (call.req[0],), [p.x5, p.y5, out, None, None])


prepare_encdec_qk = prepare_selfatt_qk


def prepare_selfatt_qk_backward(call):
    kind, p = call_plan(call, True)
    dt = call.out_dtypes[0]
    gemm_x = gemm_launcher(dt, p.bh, p.sx, p.d)
    gemm_y = gemm_launcher(dt, p.bh, p.sy, p.d)

    def grads(g, x, y, dx, dy, tx, ty, tdx, tdy, req_x, req_y):
        _zero_for(dx, req_x)
        _zero_for(dy, req_y)
        _take(x, p.px, p.heads, p.scale, tx)
        _take(y, p.py, p.heads, p.scale, ty)
        if req_x != REQ_NULL:
            gemm_x(g, ty, tdx, None, 0, 0, 0, REQ_WRITE)      # scale * g . y
            _put(tdx, dx, p.px, p.heads)
        if req_y != REQ_NULL:
            gemm_y(g, tx, tdy, None, 1, 0, 0, REQ_WRITE)      # scale * g^T . x
            _put(tdy, dy, p.py, p.heads)

    g = (p.bh, p.sx, p.sy)
    if kind == "selfatt_qk":
        def fn(g, qkv, dqkv, tx, ty, tdx, tdy, req):
            grads(g, qkv, qkv, dqkv, dqkv, tx, ty, tdx, tdy, req, req)
        return Launch(fn, (call.req[0],), [g, p.x5, p.x5] + [None] * 4)
    return Launch(grads, (call.req[0], call.req[1]), [g, p.x5, p.y5, p.x5, p.y5] + [None] * 4)


prepare_encdec_qk_backward = prepare_selfatt_qk_backward


def prepare_selfatt_valatt(call):
    _, p = call_plan(call)
    gemm = gemm_launcher(call.out_dtypes[0], p.bh, p.sq, p.d)
    one = np.dtype(call.out_dtypes[0]).type(1)

    def fn(v, att, out, tv, to, req):
        if req == REQ_NULL:
            return
        _zero_for(out, req)
        _take(v, p.pv, p.heads, one, tv)
        gemm(att, tv, to, None, 0, 0, 0, REQ_WRITE)
        _put(to, out, 0, p.heads)
    return Launch(fn, (call.req[0],), [p.v5, p.att, p.out5, None, None])


prepare_encdec_valatt = prepare_selfatt_valatt


def prepare_selfatt_valatt_backward(call):
    _, p = call_plan(call, True)
    dt = call.out_dtypes[0]
    gemm_a = gemm_launcher(dt, p.bh, p.sq, p.sk)
    gemm_v = gemm_launcher(dt, p.bh, p.sk, p.d)
    one = np.dtype(dt).type(1)

    def fn(g, v, att, dv, datt, tg, tv, tdv, req_v, req_a):
        _zero_for(dv, req_v)
        _take(g, 0, p.heads, one, tg)
        _take(v, p.pv, p.heads, one, tv)
        gemm_a(tg, tv, datt, None, 0, 1, 0, req_a)             # g . v^T
        if req_v != REQ_NULL:
            gemm_v(att, tg, tdv, None, 1, 0, 0, REQ_WRITE)     # att^T . g
            _put(tdv, dv, p.pv, p.heads)
    return Launch(fn, (call.req[0], call.req[1]), [p.out5, p.v5, p.att, p.v5, p.att] + [None] * 3)


prepare_encdec_valatt_backward = prepare_selfatt_valatt_backward
