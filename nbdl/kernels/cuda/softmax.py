"""CUDA kernels for softmax / log_softmax and their gradients: one thread per
row of the ``(outer, n, inner)`` view (see ``nbdl.kernels.cpu.softmax``)."""
import dataclasses
from functools import partial

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.softmax import (axis_view, inv_temperature, length_view, py_backward_row,
                              py_forward_row, py_row_length, softmin_attrs)
from ._launch import launcher


_forward_row = cuda.jit(device=True)(py_forward_row)
_backward_row = cuda.jit(device=True)(py_backward_row)
_row_length = cuda.jit(device=True)(py_row_length)


@cuda.jit
def softmax_forward(x, out, inv_t, log, req):
    inner = x.shape[2]
    zero = inv_t - inv_t  # a zero of the data's float type
    for r in range(cuda.grid(1), x.shape[0] * inner, cuda.gridsize(1)):
        o = r // inner
        _forward_row(x, out, o, r - o * inner, inv_t, log, x.shape[1], zero)


@cuda.jit
def softmax_forward_length(x, length, out, inv_t, log, req):
    inner = x.shape[2]
    zero = inv_t - inv_t
    for r in range(cuda.grid(1), x.shape[0] * inner, cuda.gridsize(1)):
        o = r // inner
        i = r - o * inner
        _forward_row(x, out, o, i, inv_t, log, _row_length(length, o, i, x.shape[1]), zero)


@cuda.jit
def softmax_backward(og, out, grad, inv_t, log, req):
    inner = og.shape[2]
    zero = inv_t - inv_t
    for r in range(cuda.grid(1), og.shape[0] * inner, cuda.gridsize(1)):
        o = r // inner
        _backward_row(og, out, grad, o, r - o * inner, inv_t, log, req == REQ_ADD, og.shape[1],
                      zero)


@cuda.jit
def softmax_backward_length(og, out, length, grad, inv_t, log, req):
    inner = og.shape[2]
    zero = inv_t - inv_t
    for r in range(cuda.grid(1), og.shape[0] * inner, cuda.gridsize(1)):
        o = r // inner
        i = r - o * inner
        _backward_row(og, out, grad, o, i, inv_t, log, req == REQ_ADD,
                      _row_length(length, o, i, og.shape[1]), zero)


def _noop(*args):
    pass


def _prepare(call, kernel, log, n_arrays):
    view = axis_view(call.in_shapes[0], call.attrs["axis"])
    views = [view] * n_arrays
    if call.attrs.get("use_length"):
        kernel = softmax_forward_length if kernel is softmax_forward else softmax_backward_length
        views.insert(n_arrays - 1, length_view(view))    # after the data inputs
    rows = view[0] * view[2]
    fn = _noop if call.req[0] == REQ_NULL or rows == 0 else launcher(kernel, rows)
    return Launch(fn, (inv_temperature(call.attrs, call.out_dtypes[0]), int(log), call.req[0]),
                  views=views)


def prepare_softmin(call):
    """softmin: the softmax kernel with the temperature negated."""
    return prepare_softmax(dataclasses.replace(call, attrs=softmin_attrs(call.attrs)))


prepare_softmax = partial(_prepare, kernel=softmax_forward, log=False, n_arrays=2)
prepare_log_softmax = partial(_prepare, kernel=softmax_forward, log=True, n_arrays=2)
prepare_softmax_backward = partial(_prepare, kernel=softmax_backward, log=False, n_arrays=3)
prepare_log_softmax_backward = partial(_prepare, kernel=softmax_backward, log=True, n_arrays=3)
