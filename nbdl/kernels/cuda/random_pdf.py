"""CUDA kernels of the pdf ops (views and math as ``nbdl.kernels.cpu.random_pdf``):
the forward one thread per sample, the backward one thread per parameter set
(it sums the parameters' gradients over that set's samples)."""
import math

import numpy as np
from numba import cuda

from ...errors import DTypeError
from ...ops.registry import REQ_NULL, Launch
from ..shared.random import DIST_CODES
from ..shared.random_pdf import (dirichlet_backward_row, dirichlet_lpdf, dist_of, log_pdf,
                                 pdf_grads, pdf_views)
from ._launch import launcher
from ..shared.elemwise_plan import size_of as _size


@cuda.jit
def _pdf(sample, p1, p2, out, dist, is_log):
    s = sample.shape[1]
    for e in range(cuda.grid(1), sample.size, cuda.gridsize(1)):
        i = e // s
        j = e - i * s
        v = log_pdf(dist, np.float64(sample[i, j]), np.float64(p1[i]), np.float64(p2[i]))
        out[i, j] = v if is_log else math.exp(v)


@cuda.jit
def _pdf_backward(og, sample, p1, p2, pdf, gs, g1, g2, dist, is_log, want_s, want_1, want_2):
    s = sample.shape[1]
    for i in range(cuda.grid(1), sample.shape[0], cuda.gridsize(1)):
        a = np.float64(p1[i])
        b = np.float64(p2[i])
        acc1 = 0.0
        acc2 = 0.0
        for j in range(s):
            sc = np.float64(og[i, j])
            if not is_log:
                sc = sc * np.float64(pdf[i, j])
            gx, ga, gb = pdf_grads(dist, np.float64(sample[i, j]), a, b, sc)
            if want_s:
                gs[i, j] = gx
            acc1 += ga
            acc2 += gb
        if want_1:
            g1[i] = acc1
        if want_2:
            g2[i] = acc2


@cuda.jit
def _dirichlet(sample, alpha, out, is_log):
    s = sample.shape[1]
    for e in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        i = e // s
        j = e - i * s
        v = dirichlet_lpdf(sample, alpha, i, j)
        out[i, j] = v if is_log else math.exp(v)


@cuda.jit
def _dirichlet_backward(og, sample, alpha, pdf, gs, ga, is_log, want_s, want_a):
    for i in range(cuda.grid(1), sample.shape[0], cuda.gridsize(1)):
        dirichlet_backward_row(og, sample, alpha, pdf, gs, ga, i, is_log, want_s, want_a)


def _nothing(*arrays):
    return None


def prepare_pdf(call):
    if np.dtype(call.out_dtypes[0]) == np.float16:
        raise DTypeError(f"{call.op.name}: float16 is not supported by the CUDA pdf kernels "
                         f"(float32/float64 are; the CPU kernels take float16)")
    dist = dist_of(call.op.name)
    sv, pv, ov = pdf_views(call.in_shapes[0], call.in_shapes[1], dist == "dirichlet")
    is_log = bool(call.attrs["is_log"])
    two = len(call.in_shapes) == 3
    views = [sv, pv, pv, ov] if two else [sv, pv, ov]
    if call.req[0] == REQ_NULL or _size(ov) == 0:
        return Launch(_nothing, (), views=views)
    if dist == "dirichlet":
        run = launcher(_dirichlet, _size(ov))
        return Launch(lambda x, a, out: run(x, a, out, is_log), (), views=views)
    run = launcher(_pdf, _size(sv))
    code = int(DIST_CODES[dist])

    def fn(*arrays):
        p2 = arrays[2] if two else arrays[1]
        run(arrays[0], arrays[1], p2, arrays[-1], code, is_log)
    return Launch(fn, (), views=views)


def prepare_pdf_backward(call):
    dist = dist_of(call.op.name)
    sv, pv, ov = pdf_views(call.in_shapes[1], call.in_shapes[2], dist == "dirichlet")
    is_log = bool(call.attrs["is_log"])
    want = [r != REQ_NULL for r in call.req]
    if dist == "dirichlet":
        views = [ov, sv, pv, ov, sv, pv]
        if not any(want) or _size(ov) == 0:
            return Launch(_nothing, (), views=views)
        run = launcher(_dirichlet_backward, pv[0])
        return Launch(lambda og, x, a, pdf, gs, ga: run(og, x, a, pdf, gs, ga, is_log, want[0],
                                                        want[1]), (), views=views)
    code = int(DIST_CODES[dist])
    two = len(call.in_shapes) == 5
    views = ([ov, sv, pv, pv, ov, sv, pv, pv] if two else [ov, sv, pv, ov, sv, pv, pv])
    if not any(want) or _size(ov) == 0:
        return Launch(_nothing, (), views=views)
    run = launcher(_pdf_backward, pv[0])

    def fn(*arrays):
        if two:
            og, x, p1, p2, pdf, gs, g1, g2 = arrays
            w2 = want[2]
        else:
            og, x, p1, pdf, gs, g1, g2 = arrays     # g2: the scratch temp
            p2 = p1
            w2 = False
        run(og, x, p1, p2, pdf, gs, g1, g2, code, is_log, want[0], want[1], w2)
    return Launch(fn, (), views=views)
