"""CPU kernels for SVMOutput: the identity forward, the SVM loss gradient
(``nbdl.kernels.shared.svm_output``) backward."""
import math

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.svm_output import py_svm_grad, svm_scalars, svm_views
from ..shared.store import py_copy, py_put

_put = njit(cache=True, inline="always")(py_put)

_copy = njit(cache=True, inline="always")(py_copy)

_svm_grad = njit(cache=True, inline="always")(py_svm_grad)


@njit(cache=True)
def svm_forward(x, label, out, req):
    _copy(x, out, req)


@njit(cache=True)
def svm_backward(out, label, grad, margin, coef, linear, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    for n in range(out.shape[0]):
        y = int(label[n]) if n < label.size else -1
        for k in range(out.shape[1]):
            v = _svm_grad(out[n, k], k == y, margin, coef, linear)
            _put(grad, (n, k), v, add)


def prepare_svm_forward(call):
    n = math.prod(call.out_shapes[0])
    return Launch(svm_forward, (call.req[0],), views=[(n,), None, (n,)])


def prepare_svm_backward(call):
    rows, lview = svm_views(call)
    return Launch(svm_backward, svm_scalars(call) + (call.req[0],), views=[rows, lview, rows])
