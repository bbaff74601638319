"""CUDA kernels for softmax / log_softmax and their gradients: one thread per
row of the ``(outer, n, inner)`` view (see ``nbdl.kernels.cpu.softmax``)."""
import dataclasses
import math

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.softmax import axis_view, inv_temperature, softmin_attrs
from ._launch import launcher


@cuda.jit
def softmax_forward(x, out, inv_t, log, req):
    n = x.shape[1]
    inner = x.shape[2]
    zero = inv_t - inv_t  # a zero of the data's float type
    for r in range(cuda.grid(1), x.shape[0] * inner, cuda.gridsize(1)):
        if n == 0:
            break
        o = r // inner
        i = r - o * inner
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


@cuda.jit
def softmax_backward(og, out, grad, inv_t, log, req):
    n = og.shape[1]
    inner = og.shape[2]
    zero = inv_t - inv_t
    for r in range(cuda.grid(1), og.shape[0] * inner, cuda.gridsize(1)):
        o = r // inner
        i = r - o * inner
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


def _noop(*args):
    pass


def _prepare(call, kernel, log, n_arrays):
    view = axis_view(call.in_shapes[0], call.attrs["axis"])
    rows = view[0] * view[2]
    fn = _noop if call.req[0] == REQ_NULL or rows == 0 else launcher(kernel, rows)
    return Launch(fn, (inv_temperature(call.attrs, call.out_dtypes[0]), int(log), call.req[0]),
                  views=[view] * n_arrays)


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
