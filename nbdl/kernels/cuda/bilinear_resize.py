"""CUDA kernels for _contrib_BilinearResize2D (per-point math of
``nbdl.kernels.shared.bilinear_resize`` as device functions): one thread per
output forward, one per (n, c) plane for the scattering gradient."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.bilinear_resize import build, resize_call
from ._launch import launcher, launcher_without
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

_s = build(cuda.jit(device=True))
_value_at = cuda.jit(device=True)(_s.value_at)
_scatter_plane = cuda.jit(device=True)(_s.scatter_plane)


def _noop(*args):
    pass


@cuda.jit
def _forward(x, out, P, H, W, OH, OW, sh, sw, align, half, req):
    for t in range(cuda.grid(1), P * OH * OW, cuda.gridsize(1)):
        ow = t % OW
        r = t // OW
        oh = r % OH
        p = r // OH
        v = _value_at(x, p, oh, ow, H, W, sh, sw, align, half)
        _put(out, (p, oh, ow), v, req == REQ_ADD)


@cuda.jit
def _backward(og, dx, P, H, W, OH, OW, sh, sw, align, half, req):
    for p in range(cuda.grid(1), P, cuda.gridsize(1)):
        _scatter_plane(og, dx, p, H, W, OH, OW, sh, sw, align, half, req == REQ_ADD)


def prepare_resize(call):
    plan, xv, ov = resize_call(call, call.in_shapes[0], call.out_shapes[0])
    like = len(call.in_shapes) == 2
    views = [xv] + ([None] if like else []) + [ov]
    n = plan[0] * plan[3] * plan[4]
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    run = launcher_without(_forward, n) if like else launcher(_forward, n)
    return Launch(run, plan + (call.req[0],), views=views)


def prepare_resize_backward(call):
    plan, xv, ov = resize_call(call, call.in_shapes[1], call.in_shapes[0])
    P, H, W = xv
    views = [ov, xv, xv]
    if P * H * W == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    return Launch(launcher_without(_backward, P), plan + (call.req[0],), views=views)
