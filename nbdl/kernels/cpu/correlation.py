"""CPU kernels for Correlation and its gradient (the math of
``nbdl.kernels.shared.correlation``); float16 runs the float32 kernels on
mirrors."""
import math

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import correlation as cr
from ..shared.half_mirror import with_half, with_half_prepare
from ._half import host_copy


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
                    if req == REQ_ADD:
                        out[n, q, i, j] += v
                    else:
                        out[n, q, i, j] = v


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
                    y1, x1, y2, x2 = cr.py_positions(q, i, j, md, radius, width, s1, s2)
                    g = og[n, q, i, j] / se
                    for h in range(K):
                        for w in range(K):
                            for c in range(C):
                                a, p1 = cr.py_padded(d1, n, c, y1 + h, x1 + w, C, H, W, pad, zero)
                                b, p2 = cr.py_padded(d2, n, c, y2 + h, x2 + w, C, H, W, pad, zero)
                                ga, gb = cr.py_pair_grads(a, b, g, mult, one)
                                if p1 >= 0 and req1 != REQ_NULL:
                                    g1[p1] += ga
                                if p2 >= 0 and req2 != REQ_NULL:
                                    g2[p2] += gb


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
