"""CUDA kernels for Correlation and its gradient (the math of
``nbdl.kernels.shared.correlation`` as device functions): one thread per
output element; the gradients are zeroed, then added with atomics
(neighbouring outputs share input pixels).  float16 runs the float32
kernels on mirrors."""
import math

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import correlation as cr
from ..shared.half_mirror import with_half, with_half_prepare
from ._half import device_copy
from ._launch import atomic_add, launcher, noop, zero
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)


temp_plain = with_half(None)


@cuda.jit
def _forward(d1, d2, out, C, H, W, pad, K, md, radius, width, s1, s2, mult, se, zero, one, req):
    Q, TH, TW = out.shape[1], out.shape[2], out.shape[3]
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        j = t % TW
        i = (t // TW) % TH
        q = (t // (TW * TH)) % Q
        n = t // (TW * TH * Q)
        v = cr.py_value(d1, d2, n, q, i, j, C, H, W, pad, K, md, radius, width, s1, s2, mult, se,
                   zero)
        _put(out, (n, q, i, j), v, req == REQ_ADD)


_backward_point = cuda.jit(device=True)(cr.build_backward_point(atomic_add))


@cuda.jit
def _backward(og, d1, d2, g1, g2, C, H, W, pad, K, md, radius, width, s1, s2, mult, se, zero,
              one, req1, req2):
    Q, TH, TW = og.shape[1], og.shape[2], og.shape[3]
    for t in range(cuda.grid(1), og.size, cuda.gridsize(1)):
        j = t % TW
        i = (t // TW) % TH
        q = (t // (TW * TH)) % Q
        n = t // (TW * TH * Q)
        _backward_point(og, d1, d2, g1, g2, n, q, i, j, C, H, W, pad, K, md, radius, width, s1,
                        s2, mult, se, zero, one, req1, req2)


def _prepare_correlation(call):
    n = math.prod(call.in_shapes[0])
    m = math.prod(call.out_shapes[0])
    views = [(n,), (n,), None]
    if m == 0 or call.req[0] == REQ_NULL:
        return Launch(noop, (), views=views)
    return Launch(launcher(_forward, m), cr.corr_scalars(call, call.in_shapes[0]) + (call.req[0],),
                  views=views)


def _prepare_correlation_backward(call):
    n = math.prod(call.in_shapes[1])
    m = math.prod(call.in_shapes[0])
    views = [None, (n,), (n,), (n,), (n,)]
    req1, req2 = call.req
    scalars = cr.corr_scalars(call, call.in_shapes[1]) + (req1, req2)
    run = launcher(_backward, max(m, 1))

    def fn(og, d1, d2, g1, g2):
        if req1 not in (REQ_NULL, REQ_ADD):
            zero(g1)
        if req2 not in (REQ_NULL, REQ_ADD):
            zero(g2)
        if m and n and (req1 != REQ_NULL or req2 != REQ_NULL):
            run(og, d1, d2, g1, g2, *scalars)
    return Launch(fn, (), views=views)


prepare_correlation = with_half_prepare(_prepare_correlation, None, device_copy)
prepare_correlation_backward = with_half_prepare(_prepare_correlation_backward, None, device_copy)
