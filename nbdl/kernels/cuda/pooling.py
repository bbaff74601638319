"""CUDA kernels for Pooling (layouts and scalars as in
``nbdl.kernels.shared.pooling``, whose per-output, per-plane and global
functions are compiled here as device functions): one thread per output for the forward pass; one
thread per ``(n, c)`` plane for the gradient, which scatters each window's
gradient serially (overlapping windows need no atomics).  Global pooling:
one thread per ``(a, b)`` reduction."""
import math

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.pooling import build, pool_params
from ._launch import launcher

_s = build(cuda.jit(device=True))
_pool_window, _scatter_window = _s.pool_window, _s.scatter_window
_pool_at = cuda.jit(device=True)(_s.pool_at)
_scatter_plane = cuda.jit(device=True)(_s.scatter_plane)
_global_one = cuda.jit(device=True)(_s.global_one)
_global_back_one = cuda.jit(device=True)(_s.global_back_one)


@cuda.jit
def _forward(x, out, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, cl, ptype,
             ip, inv_p, cip, zero, req):
    for t in range(cuda.grid(1), N * C * OD * OH * OW, cuda.gridsize(1)):
        ow = t % OW
        r = t // OW
        oh = r % OH
        r = r // OH
        od = r % OD
        _pool_at(x, out, r // OD, od, oh, ow, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW,
                 PD, PH, PW, cl, ptype, ip, inv_p, cip, zero, req)


@cuda.jit
def _backward(og, x, y, dx, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, cl,
              ptype, ip, inv_p, cip, zero, req):
    for q in range(cuda.grid(1), N * C, cuda.gridsize(1)):
        _scatter_plane(og, x, y, dx, q, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH,
                       PW, cl, ptype, ip, cip, zero, req)


@cuda.jit
def _global_forward(x, out, ptype, ip, inv_p, zero, req):
    B = x.shape[2]
    for r in range(cuda.grid(1), x.shape[0] * B, cuda.gridsize(1)):
        a = r // B
        _global_one(x, out, a, r - a * B, ptype, ip, inv_p, zero, req)


@cuda.jit
def _global_backward(og, x, y, dx, ptype, ip, inv_p, zero, req):
    B = x.shape[2]
    for r in range(cuda.grid(1), x.shape[0] * B, cuda.gridsize(1)):
        a = r // B
        _global_back_one(og, x, y, dx, a, r - a * B, ptype, ip, zero, req == REQ_ADD)


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


def temp_pooling(call):
    """Pooling's scratch on CUDA: none (one thread an output)."""
    return []
