"""CPU kernels of the pdf ops (rules in nbdl.ops.random_pdf, math in
nbdl.kernels.shared.random_pdf).

Views: samples ``(n, s)`` (n parameter sets, s samples each), parameters
``(n,)``; Dirichlet's samples ``(n, s, k)`` and alpha ``(n, k)``.  The
parameters' gradients are summed over their samples in float64.
"""
import math

import numpy as np
from ..shared.jit import njit

from ...ops.registry import REQ_NULL, Launch
from ._half import bits_launcher, f2h, h2f
from ..shared.random import DIST_CODES
from ..shared.random_pdf import (dirichlet_backward_row, dirichlet_lpdf, dist_of, log_pdf,
                                 pdf_grads, pdf_views)


@njit(cache=True, inline="always")
def _put_pdf(out, i, j, v, is_log, half):
    """out[i, j] = the density (exp of the log-density ``v`` unless
    ``is_log``), float16 bits when ``half``."""
    if not is_log:
        v = math.exp(v)
    if half:
        out[i, j] = f2h(v)
    else:
        out[i, j] = v


@njit(cache=True, inline="always")
def _load(x, half):
    if half:
        return np.float64(h2f(x))
    return np.float64(x)


@njit(cache=True)
def pdf_forward(sample, p1, p2, out, dist, is_log, half, req):
    """``half``: every array holds float16 bits (computed in float64, rounded once)."""
    if req == REQ_NULL:
        return
    n, s = sample.shape
    for i in range(n):
        a = _load(p1[i], half)
        b = _load(p2[i], half)
        for j in range(s):
            _put_pdf(out, i, j, log_pdf(dist, _load(sample[i, j], half), a, b), is_log, half)


@njit(cache=True)
def pdf_forward_one(sample, p1, out, dist, is_log, half, req):
    pdf_forward(sample, p1, p1, out, dist, is_log, half, req)


@njit(cache=True)
def pdf_backward(og, sample, p1, p2, pdf, gs, g1, g2, dist, is_log, req_s, req_1, req_2):
    n, s = sample.shape
    for i in range(n):
        a = np.float64(p1[i])
        b = np.float64(p2[i])
        acc1 = 0.0
        acc2 = 0.0
        for j in range(s):
            sc = np.float64(og[i, j]) if is_log else np.float64(og[i, j]) * np.float64(pdf[i, j])
            gx, ga, gb = pdf_grads(dist, np.float64(sample[i, j]), a, b, sc)
            if req_s != REQ_NULL:
                gs[i, j] = gx
            acc1 += ga
            acc2 += gb
        if req_1 != REQ_NULL:
            g1[i] = acc1
        if req_2 != REQ_NULL:
            g2[i] = acc2


@njit(cache=True)
def pdf_backward_one(og, sample, p1, pdf, gs, g1, scratch, dist, is_log, req_s, req_1):
    pdf_backward(og, sample, p1, p1, pdf, gs, g1, scratch, dist, is_log, req_s, req_1, REQ_NULL)


@njit(cache=True)
def dirichlet_forward(sample, alpha, out, is_log, half, req):
    if req == REQ_NULL:
        return
    n, s, k = sample.shape
    for i in range(n):
        for j in range(s):
            if half:
                sum_a = 0.0
                v = 0.0
                for c in range(k):
                    ac = np.float64(h2f(alpha[i, c]))
                    sum_a += ac
                    v += (ac - 1.0) * math.log(np.float64(h2f(sample[i, j, c]))) - math.lgamma(ac)
                v += math.lgamma(sum_a)
            else:
                v = dirichlet_lpdf(sample, alpha, i, j)
            _put_pdf(out, i, j, v, is_log, half)


@njit(cache=True)
def dirichlet_backward(og, sample, alpha, pdf, gs, ga, is_log, req_s, req_a):
    for i in range(sample.shape[0]):
        dirichlet_backward_row(og, sample, alpha, pdf, gs, ga, i, is_log, req_s != REQ_NULL,
                               req_a != REQ_NULL)


def prepare_pdf(call):
    dist = dist_of(call.op.name)
    sv, pv, ov = pdf_views(call.in_shapes[0], call.in_shapes[1], dist == "dirichlet")
    is_log = bool(call.attrs["is_log"])
    req = int(call.req[0])
    half = np.dtype(call.out_dtypes[0]) == np.float16

    def fn(kernel):
        return bits_launcher(kernel) if half else kernel
    if dist == "dirichlet":
        return Launch(fn(dirichlet_forward), (is_log, half, req), views=[sv, pv, ov])
    code = int(DIST_CODES[dist])
    if len(call.in_shapes) == 2:
        return Launch(fn(pdf_forward_one), (code, is_log, half, req), views=[sv, pv, ov])
    return Launch(fn(pdf_forward), (code, is_log, half, req), views=[sv, pv, pv, ov])


def prepare_pdf_backward(call):
    dist = dist_of(call.op.name)
    sv, pv, ov = pdf_views(call.in_shapes[1], call.in_shapes[2], dist == "dirichlet")
    is_log = bool(call.attrs["is_log"])
    req = [int(r) for r in call.req]
    if dist == "dirichlet":
        return Launch(dirichlet_backward, (is_log, req[0], req[1]),
                      views=[ov, sv, pv, ov, sv, pv])
    code = int(DIST_CODES[dist])
    if len(call.in_shapes) == 4:
        return Launch(pdf_backward_one, (code, is_log, req[0], req[1]),
                      views=[ov, sv, pv, ov, sv, pv, pv])
    return Launch(pdf_backward, (code, is_log, req[0], req[1], req[2]),
                  views=[ov, sv, pv, pv, ov, sv, pv, pv])
