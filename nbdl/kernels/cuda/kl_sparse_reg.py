"""CUDA kernels for IdentityAttachKLSparseReg: one thread per element forward,
one per channel backward (``nbdl.kernels.shared.kl_sparse_reg``)."""
import math

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.kl_sparse_reg import kl_scalars, kl_view, py_kl_channel
from ._launch import copy_kernel, launcher, launcher_without

_channel = cuda.jit(device=True)(py_kl_channel)


def _noop(*args):
    pass


@cuda.jit
def _backward(og, x, ma, dx, target, penalty, momentum, one, req):
    for c in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _channel(og, x, ma, dx, c, target, penalty, momentum, one, req != REQ_NULL,
                 req == REQ_ADD)


def prepare_forward(call):
    n = math.prod(call.in_shapes[0])
    fn = launcher_without(copy_kernel, n) if n and call.req[0] != REQ_NULL else _noop
    return Launch(fn, (call.req[0],), views=[(n,), None, (n,)])


def prepare_backward(call):
    v = kl_view(call.in_shapes[1])
    fn = launcher(_backward, v[1]) if v[1] else _noop
    return Launch(fn, kl_scalars(call) + (call.req[0],), views=[v, v, None, v])
