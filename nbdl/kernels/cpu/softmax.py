"""CPU kernels for softmax / log_softmax and their gradients.

Every kernel sees its arrays as ``(outer, n, inner)``: ``n`` is the softmax
axis, and a row is one ``(outer, inner)`` pair.  Rows are independent, so the
parallel variants split rows across threads.  Each row is read completely
before it is written, which keeps the kernels correct when the output buffer
is the input buffer (the planner's inplace pairs).
"""
import dataclasses
import math

import numpy as np
from numba import prange

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ._parallel import twins as _twins, use_parallel
from ..shared.softmax import axis_view, inv_temperature, softmin_attrs


@njit(cache=True, inline="always")
def _forward_row(x, out, o, i, inv_t, log):
    n = x.shape[1]
    if n == 0:
        return
    # max of x / T (not of x) so that a negative temperature stays stable too
    m = x[o, 0, i] * inv_t
    for k in range(1, n):
        v = x[o, k, i] * inv_t
        if v > m:
            m = v
    s = out.dtype.type(0)
    if log:
        for k in range(n):
            s += np.exp(x[o, k, i] * inv_t - m)
        shift = m + np.log(s)
        for k in range(n):
            out[o, k, i] = x[o, k, i] * inv_t - shift
    else:
        for k in range(n):
            e = np.exp(x[o, k, i] * inv_t - m)
            out[o, k, i] = e
            s += e
        r = out.dtype.type(1) / s
        for k in range(n):
            out[o, k, i] *= r


@njit(cache=True)
def softmax_forward(x, out, inv_t, log, req):
    """``out = softmax(x * inv_t)`` (``log``: log_softmax) along axis 1."""
    if req == REQ_NULL:
        return
    inner = x.shape[2]
    for r in range(x.shape[0] * inner):
        o = r // inner
        _forward_row(x, out, o, r - o * inner, inv_t, log)


@njit(cache=True, parallel=True)
def softmax_forward_parallel(x, out, inv_t, log, req):
    if req == REQ_NULL:
        return
    inner = x.shape[2]
    for r in prange(x.shape[0] * inner):
        o = r // inner
        _forward_row(x, out, o, r - o * inner, inv_t, log)


@njit(cache=True, inline="always")
def _backward_row(og, out, grad, o, i, inv_t, log, add):
    n = og.shape[1]
    s = grad.dtype.type(0)
    if log:
        # y = x/T - logsumexp(x/T):  dx = (g - exp(y) * sum(g)) / T
        for k in range(n):
            s += og[o, k, i]
        if add:
            for k in range(n):
                grad[o, k, i] += (og[o, k, i] - np.exp(out[o, k, i]) * s) * inv_t
        else:
            for k in range(n):
                grad[o, k, i] = (og[o, k, i] - np.exp(out[o, k, i]) * s) * inv_t
    else:
        # y = softmax(x/T):  dx = y * (g - sum(g * y)) / T
        for k in range(n):
            s += og[o, k, i] * out[o, k, i]
        if add:
            for k in range(n):
                grad[o, k, i] += out[o, k, i] * (og[o, k, i] - s) * inv_t
        else:
            for k in range(n):
                grad[o, k, i] = out[o, k, i] * (og[o, k, i] - s) * inv_t


@njit(cache=True)
def softmax_backward(og, out, grad, inv_t, log, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    inner = og.shape[2]
    for r in range(og.shape[0] * inner):
        o = r // inner
        _backward_row(og, out, grad, o, r - o * inner, inv_t, log, add)


@njit(cache=True, parallel=True)
def softmax_backward_parallel(og, out, grad, inv_t, log, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    inner = og.shape[2]
    for r in prange(og.shape[0] * inner):
        o = r // inner
        _backward_row(og, out, grad, o, r - o * inner, inv_t, log, add)


# -- prepare -------------------------------------------------------------------


def pick_variant(serial, parallel, size):
    return parallel if use_parallel(size) else serial


def _prepare_forward(call, log):
    view = axis_view(call.in_shapes[0], call.attrs["axis"])
    fn = pick_variant(softmax_forward, softmax_forward_parallel, math.prod(view))
    return Launch(fn, (inv_temperature(call.attrs, call.out_dtypes[0]), int(log), call.req[0]),
                  views=[view, view])


def _prepare_backward(call, log):
    view = axis_view(call.in_shapes[0], call.attrs["axis"])
    fn = pick_variant(softmax_backward, softmax_backward_parallel, math.prod(view))
    return Launch(fn, (inv_temperature(call.attrs, call.out_dtypes[0]), int(log), call.req[0]),
                  views=[view, view, view])


def prepare_softmin(call):
    """softmin: the softmax kernel with the temperature negated."""
    return prepare_softmax(dataclasses.replace(call, attrs=softmin_attrs(call.attrs)))


def prepare_softmax(call):
    return _prepare_forward(call, False)


def prepare_log_softmax(call):
    return _prepare_forward(call, True)


def prepare_softmax_backward(call):
    return _prepare_backward(call, False)


def prepare_log_softmax_backward(call):
    return _prepare_backward(call, True)


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((softmax_forward_parallel, softmax_forward),
       (softmax_backward_parallel, softmax_backward))
