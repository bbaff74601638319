"""CUDA kernels for softmax / log_softmax and their gradients: one thread per
row of the ``(outer, n, inner)`` view (see ``nbdl.kernels.cpu.softmax``)."""
import dataclasses
import math

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.softmax import axis_view, inv_temperature, length_view, softmin_attrs
from ._launch import launcher


@cuda.jit(device=True)
def _forward_row(x, out, o, i, inv_t, log, n, zero):
    """Row (o, i) over its first ``n`` entries; the others get 0 (a masked row)."""
    for k in range(n, x.shape[1]):
        out[o, k, i] = zero
    if n == 0:
        return
    m = x[o, 0, i] * inv_t
    for k in range(1, n):
        v = x[o, k, i] * inv_t
        if v > m:
            m = v
    s = zero
    if log:
        for k in range(n):
            s += math.exp(x[o, k, i] * inv_t - m)
        shift = m + math.log(s)
        for k in range(n):
            out[o, k, i] = x[o, k, i] * inv_t - shift
    else:
        for k in range(n):
            e = math.exp(x[o, k, i] * inv_t - m)
            out[o, k, i] = e
            s += e
        for k in range(n):
            out[o, k, i] = out[o, k, i] / s


@cuda.jit(device=True)
def _backward_row(og, out, grad, o, i, inv_t, log, req, n, zero):
    """Row (o, i) over its first ``n`` entries; the others' gradient is 0."""
    if req != REQ_ADD:
        for k in range(n, og.shape[1]):
            grad[o, k, i] = zero
    s = zero
    if log:
        for k in range(n):
            s += og[o, k, i]
    else:
        for k in range(n):
            s += og[o, k, i] * out[o, k, i]
    for k in range(n):
        if log:
            v = (og[o, k, i] - math.exp(out[o, k, i]) * s) * inv_t
        else:
            v = out[o, k, i] * (og[o, k, i] - s) * inv_t
        if req == REQ_ADD:
            grad[o, k, i] += v
        else:
            grad[o, k, i] = v


@cuda.jit(device=True)
def _row_length(length, o, i, n):
    k = int(length[o, i])
    return 0 if k < 0 else (n if k > n else k)


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
        _backward_row(og, out, grad, o, r - o * inner, inv_t, log, req, og.shape[1], zero)


@cuda.jit
def softmax_backward_length(og, out, length, grad, inv_t, log, req):
    inner = og.shape[2]
    zero = inv_t - inv_t
    for r in range(cuda.grid(1), og.shape[0] * inner, cuda.gridsize(1)):
        o = r // inner
        i = r - o * inner
        _backward_row(og, out, grad, o, i, inv_t, log, req,
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


def prepare_softmax(call):
    return _prepare(call, softmax_forward, False, 2)


def prepare_log_softmax(call):
    return _prepare(call, softmax_forward, True, 2)


def prepare_softmax_backward(call):
    return _prepare(call, softmax_backward, False, 3)


def prepare_log_softmax_backward(call):
    return _prepare(call, softmax_backward, True, 3)
