"""CPU kernels for _contrib_AdaptiveAvgPooling2D: each output is Pooling's
average window (``kernels.shared.pooling.py_pool_window``) over the adaptive
bounds of ``kernels.shared.adaptive_pooling``; the gradient scatters with
Pooling's ``py_scatter_window``.  Data are passed flat, plane ``p`` at
``p * H * W``."""
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.adaptive_pooling import AVG, adaptive_plan, py_adaptive_bounds
from .pooling_math import _pool_window, _scatter_window
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)

_bounds = njit(cache=True, inline="always")(py_adaptive_bounds)


@njit(cache=True)
def adaptive_avg_forward(x, out, P, H, W, OH, OW, zero, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    for p in range(P):
        for oh in range(OH):
            h0, h1 = _bounds(oh, H, OH)
            for ow in range(OW):
                w0, w1 = _bounds(ow, W, OW)
                v = _pool_window(x, p * H * W, 1, H, W, 0, 1, h0, h1, w0, w1,
                                 (h1 - h0) * (w1 - w0), AVG, 1, zero, zero)
                i = (p * OH + oh) * OW + ow
                _put(out, i, v, add)


@njit(cache=True)
def adaptive_avg_backward(og, data, dx, P, H, W, OH, OW, zero, req):
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        dx[:] = zero
    for p in range(P):
        for oh in range(OH):
            h0, h1 = _bounds(oh, H, OH)
            for ow in range(OW):
                w0, w1 = _bounds(ow, W, OW)
                i = (p * OH + oh) * OW + ow
                _scatter_window(dx, zero, og[i], dx, p * H * W, 1, H, W, 0, 1, h0, h1, w0, w1,
                                (h1 - h0) * (w1 - w0), AVG, 1, zero, False)


def prepare_adaptive_avg(call):
    plan = adaptive_plan(call.in_shapes[0], call.out_shapes[0], call.out_dtypes[0])
    P, H, W, OH, OW, _ = plan
    return Launch(adaptive_avg_forward, plan + (call.req[0],),
                  views=[(P * H * W,), (P * OH * OW,)])


def prepare_adaptive_avg_backward(call):
    plan = adaptive_plan(call.in_shapes[1], call.in_shapes[0], call.out_dtypes[0])
    P, H, W, OH, OW, _ = plan
    return Launch(adaptive_avg_backward, plan + (call.req[0],),
                  views=[(P * OH * OW,), (P * H * W,), (P * H * W,)])
