"""CPU kernels for SoftmaxActivation (softmax's own kernels over the view of
``nbdl.kernels.shared.nn_softmax``) and softmax_cross_entropy (the per-row
functions of the shared module compiled here)."""
import numpy as np
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.nn_softmax import py_xent_grad_row, py_xent_row, softmax_activation_call
from .softmax import prepare_softmax, prepare_softmax_backward
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)

_xent_row = njit(cache=True, inline="always")(py_xent_row)
_xent_grad_row = njit(cache=True, inline="always")(py_xent_grad_row)


def prepare_softmax_activation(call):
    return prepare_softmax(softmax_activation_call(call, call.in_shapes[0]))


def prepare_softmax_activation_backward(call):
    return prepare_softmax_backward(softmax_activation_call(call, call.in_shapes[1]))


@njit(cache=True)
def xent_forward(x, label, out, rows, tiny, req):
    if req == REQ_NULL:
        return
    s = tiny - tiny
    for r in range(x.shape[0]):
        s += _xent_row(x, label, r, tiny)
    _put(out, 0, s, req == REQ_ADD)


@njit(cache=True)
def xent_backward(og, x, label, dx, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    for r in range(x.shape[0]):
        _xent_grad_row(og, x, label, dx, r, add)


def prepare_softmax_cross_entropy(call):
    tiny = np.dtype(call.out_dtypes[0]).type(1e-8)
    # inputs data, label; output (1,); the per-row temp (used by the CUDA kernels)
    return Launch(xent_forward, (tiny, call.req[0]), views=[None, None, None, None])


def prepare_softmax_cross_entropy_backward(call):
    return Launch(xent_backward, (call.req[0],), views=[None, None, None, None])
