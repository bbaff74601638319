"""CUDA kernels for SoftmaxActivation (softmax's own kernels over the view of
``nbdl.kernels.shared.nn_softmax``) and softmax_cross_entropy (one thread per
row into the per-row temp, then one thread sums it)."""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.nn_softmax import py_xent_grad_row, py_xent_row, softmax_activation_call
from ._launch import launcher
from .softmax import prepare_softmax, prepare_softmax_backward
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

_xent_row = cuda.jit(device=True)(py_xent_row)
_xent_grad_row = cuda.jit(device=True)(py_xent_grad_row)


def _noop(*args):
    pass


def prepare_softmax_activation(call):
    return prepare_softmax(softmax_activation_call(call, call.in_shapes[0]))


def prepare_softmax_activation_backward(call):
    return prepare_softmax_backward(softmax_activation_call(call, call.in_shapes[1]))


@cuda.jit
def _xent_rows(x, label, rows, tiny):
    for r in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        rows[r] = _xent_row(x, label, r, tiny)


@cuda.jit
def _xent_sum(rows, n, out, zero, req):
    if cuda.grid(1) == 0:
        s = zero
        for r in range(n):
            s += rows[r]
        _put(out, 0, s, req == REQ_ADD)


@cuda.jit
def _xent_backward(og, x, label, dx, req):
    for r in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        _xent_grad_row(og, x, label, dx, r, req == REQ_ADD)


def prepare_softmax_cross_entropy(call):
    n = int(call.in_shapes[0][0])
    tiny = np.dtype(call.out_dtypes[0]).type(1e-8)
    req = call.req[0]
    if req == REQ_NULL:
        return Launch(_noop, (), views=[None, None, None, None])
    rows_run = launcher(_xent_rows, max(n, 1))

    def fn(x, label, out, rows):
        if n:
            rows_run(x, label, rows, tiny)
        _xent_sum[1, 1](rows, n, out, tiny - tiny, req)
    return Launch(fn, (), views=[None, None, None, None])


def prepare_softmax_cross_entropy_backward(call):
    n = int(call.in_shapes[1][0])
    if call.req[0] == REQ_NULL or n == 0:
        return Launch(_noop, (), views=[None] * 4)
    return Launch(launcher(_xent_backward, n), (call.req[0],), views=[None] * 4)
