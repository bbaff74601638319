"""CUDA kernels for _contrib_AdaptiveAvgPooling2D (Pooling's window functions
over the adaptive bounds, as ``nbdl.kernels.cpu.adaptive_pooling``): one
thread per output forward; one thread per (n, c) plane for the gradient,
whose windows may overlap (no atomics)."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.adaptive_pooling import AVG, adaptive_plan, py_adaptive_bounds
from ._launch import launcher, launcher_without
from .pooling import _pool_window, _scatter_window
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

_bounds = cuda.jit(device=True)(py_adaptive_bounds)


def _noop(*args):
    pass


@cuda.jit
def _forward(x, out, P, H, W, OH, OW, zero, req):
    for t in range(cuda.grid(1), P * OH * OW, cuda.gridsize(1)):
        ow = t % OW
        r = t // OW
        oh = r % OH
        p = r // OH
        h0, h1 = _bounds(oh, H, OH)
        w0, w1 = _bounds(ow, W, OW)
        v = _pool_window(x, p * H * W, 1, H, W, 0, 1, h0, h1, w0, w1, (h1 - h0) * (w1 - w0),
                         AVG, 1, zero, zero)
        _put(out, t, v, req == REQ_ADD)


@cuda.jit
def _backward(og, dx, P, H, W, OH, OW, zero, req):
    for p in range(cuda.grid(1), P, cuda.gridsize(1)):
        if req != REQ_ADD:
            for i in range(p * H * W, (p + 1) * H * W):
                dx[i] = zero
        for oh in range(OH):
            h0, h1 = _bounds(oh, H, OH)
            for ow in range(OW):
                w0, w1 = _bounds(ow, W, OW)
                _scatter_window(dx, zero, og[(p * OH + oh) * OW + ow], dx, p * H * W, 1, H, W,
                                0, 1, h0, h1, w0, w1, (h1 - h0) * (w1 - w0), AVG, 1, zero,
                                False)


def prepare_adaptive_avg(call):
    plan = adaptive_plan(call.in_shapes[0], call.out_shapes[0], call.out_dtypes[0])
    P, H, W, OH, OW, _ = plan
    n = P * OH * OW
    fn = launcher(_forward, n) if n and call.req[0] != REQ_NULL else _noop
    return Launch(fn, plan + (call.req[0],), views=[(P * H * W,), (n,)])


def prepare_adaptive_avg_backward(call):
    plan = adaptive_plan(call.in_shapes[1], call.in_shapes[0], call.out_dtypes[0])
    P, H, W, OH, OW, _ = plan
    views = [(P * OH * OW,), (P * H * W,), (P * H * W,)]
    if P * H * W == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    return Launch(launcher_without(_backward, P), plan + (call.req[0],), views=views)
