"""CPU kernels for softmax / log_softmax and their gradients.

Every kernel sees its arrays as ``(outer, n, inner)``: ``n`` is the softmax
axis, and a row is one ``(outer, inner)`` pair.  Rows are independent, so the
parallel variants split rows across threads.  Each row is read completely
before it is written, which keeps the kernels correct when the output buffer
is the input buffer (the planner's inplace pairs).
"""
import dataclasses
from functools import partial
import math

from numba import prange

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ._parallel import serial_and_parallel, use_parallel
from ..shared.softmax import (axis_view, inv_temperature, length_view, py_backward_row,
                              py_forward_row, py_row_length, softmin_attrs)


_forward_row = njit(cache=True, inline="always")(py_forward_row)
_backward_row = njit(cache=True, inline="always")(py_backward_row)
_row_length = njit(cache=True, inline="always")(py_row_length)


def softmax_forward(x, out, inv_t, log, req):
    """``out = softmax(x * inv_t)`` (``log``: log_softmax) along axis 1."""
    if req == REQ_NULL:
        return
    inner = x.shape[2]
    for r in prange(x.shape[0] * inner):
        o = r // inner
        _forward_row(x, out, o, r - o * inner, inv_t, log, x.shape[1], out.dtype.type(0))


softmax_forward, softmax_forward_parallel = serial_and_parallel(softmax_forward)


def softmax_backward(og, out, grad, inv_t, log, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    inner = og.shape[2]
    for r in prange(og.shape[0] * inner):
        o = r // inner
        _backward_row(og, out, grad, o, r - o * inner, inv_t, log, add, og.shape[1],
                      grad.dtype.type(0))


softmax_backward, softmax_backward_parallel = serial_and_parallel(softmax_backward)


@njit(cache=True)
def softmax_forward_length(x, length, out, inv_t, log, req):
    """The masked softmax (``use_length``): row (o, i) over its first
    ``length[o, i]`` entries."""
    if req == REQ_NULL:
        return
    inner = x.shape[2]
    for r in range(x.shape[0] * inner):
        o = r // inner
        i = r - o * inner
        _forward_row(x, out, o, i, inv_t, log, _row_length(length, o, i, x.shape[1]),
                     out.dtype.type(0))


@njit(cache=True)
def softmax_backward_length(og, out, length, grad, inv_t, log, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    inner = og.shape[2]
    for r in range(og.shape[0] * inner):
        o = r // inner
        i = r - o * inner
        _backward_row(og, out, grad, o, i, inv_t, log, add,
                      _row_length(length, o, i, og.shape[1]), grad.dtype.type(0))


# -- prepare -------------------------------------------------------------------


def pick_variant(serial, parallel, size):
    return parallel if use_parallel(size) else serial


def _prepare_forward(call, log):
    view = axis_view(call.in_shapes[0], call.attrs["axis"])
    scalars = (inv_temperature(call.attrs, call.out_dtypes[0]), int(log), call.req[0])
    if call.attrs.get("use_length"):
        return Launch(softmax_forward_length, scalars, views=[view, length_view(view), view])
    fn = pick_variant(softmax_forward, softmax_forward_parallel, math.prod(view))
    return Launch(fn, scalars, views=[view, view])


def _prepare_backward(call, log):
    view = axis_view(call.in_shapes[0], call.attrs["axis"])
    scalars = (inv_temperature(call.attrs, call.out_dtypes[0]), int(log), call.req[0])
    if call.attrs.get("use_length"):
        return Launch(softmax_backward_length, scalars,
                      views=[view, view, length_view(view), view])
    fn = pick_variant(softmax_backward, softmax_backward_parallel, math.prod(view))
    return Launch(fn, scalars, views=[view, view, view])


def prepare_softmin(call):
    """softmin: the softmax kernel with the temperature negated."""
    return prepare_softmax(dataclasses.replace(call, attrs=softmin_attrs(call.attrs)))


prepare_softmax = partial(_prepare_forward, log=False)
prepare_log_softmax = partial(_prepare_forward, log=True)
prepare_softmax_backward = partial(_prepare_backward, log=False)
prepare_log_softmax_backward = partial(_prepare_backward, log=True)
