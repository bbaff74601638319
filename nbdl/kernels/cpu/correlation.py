"""CPU kernels for Correlation and its gradient (the math of
``nbdl.kernels.shared.correlation``); float16 runs the float32 kernels on
mirrors."""
import math

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import correlation as cr
from ..shared.half_mirror import with_half, with_half_prepare
from ._half import host_copy
from ..shared.store import py_add_at, py_put

_put = njit(cache=True, inline="always")(py_put)


temp_plain = with_half(None)


@njit(cache=True)
def correlation_forward(d1, d2, out, C, H, W, pad, K, md, radius, width, s1, s2, mult, se,
                        zero, one, req):
    if req == REQ_NULL:
        return
    for n in range(out.shape[0]):
        for q in range(out.shape[1]):
            for i in range(out.shape[2]):
                for j in range(out.shape[3]):
                    v = cr.py_value(d1, d2, n, q, i, j, C, H, W, pad, K, md, radius, width, s1, s2,
                               mult, se, zero)
                    _put(out, (n, q, i, j), v, req == REQ_ADD)


_backward_point = njit(cache=True, inline="always")(
    cr.build_backward_point(njit(cache=True, inline="always")(py_add_at)))


@njit(cache=True)
def correlation_backward(og, d1, d2, g1, g2, C, H, W, pad, K, md, radius, width, s1, s2, mult,
                         se, zero, one, req1, req2):
    if req1 != REQ_NULL and req1 != REQ_ADD:
        g1[:] = zero
    if req2 != REQ_NULL and req2 != REQ_ADD:
        g2[:] = zero
    for n in range(og.shape[0]):
        for q in range(og.shape[1]):
            for i in range(og.shape[2]):
                for j in range(og.shape[3]):
                    _backward_point(og, d1, d2, g1, g2, n, q, i, j, C, H, W, pad, K, md,
                                    radius, width, s1, s2, mult, se, zero, one, req1, req2)


def _prepare_correlation(call):
    n = math.prod(call.in_shapes[0])
    return Launch(correlation_forward, cr.corr_scalars(call, call.in_shapes[0]) + (call.req[0],),
                  views=[(n,), (n,), None])


def _prepare_correlation_backward(call):
    n = math.prod(call.in_shapes[1])
    return Launch(correlation_backward,
                  cr.corr_scalars(call, call.in_shapes[1]) + (call.req[0], call.req[1]),
                  views=[None, (n,), (n,), (n,), (n,)])


prepare_correlation = with_half_prepare(_prepare_correlation, None, host_copy)
prepare_correlation_backward = with_half_prepare(_prepare_correlation_backward, None, host_copy)
