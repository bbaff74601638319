"""CUDA kernels for SVMOutput (the gradient of ``nbdl.kernels.shared.svm_output``
compiled as a device function): one thread per element."""
import math

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.svm_output import py_svm_grad, svm_scalars, svm_views
from ._launch import copy_kernel, launcher, launcher_without
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

_svm_grad = cuda.jit(device=True)(py_svm_grad)


def _noop(*args):
    pass


@cuda.jit
def _backward(out, label, grad, margin, coef, linear, req):
    K = out.shape[1]
    for t in range(cuda.grid(1), out.shape[0] * K, cuda.gridsize(1)):
        n = t // K
        k = t - n * K
        y = -1
        if n < label.size:
            y = int(label[n])
        v = _svm_grad(out[n, k], k == y, margin, coef, linear)
        _put(grad, (n, k), v, req == REQ_ADD)


def prepare_svm_forward(call):
    n = math.prod(call.out_shapes[0])
    fn = launcher_without(copy_kernel, n) if n and call.req[0] != REQ_NULL else _noop
    return Launch(fn, (call.req[0],), views=[(n,), None, (n,)])


def prepare_svm_backward(call):
    rows, lview = svm_views(call)
    n = rows[0] * rows[1]
    fn = launcher(_backward, n) if n and call.req[0] != REQ_NULL else _noop
    return Launch(fn, svm_scalars(call) + (call.req[0],), views=[rows, lview, rows])
