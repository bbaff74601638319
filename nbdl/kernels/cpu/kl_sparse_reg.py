"""CPU kernels for IdentityAttachKLSparseReg: a copy forward; backward the
per-channel update and gradient of ``nbdl.kernels.shared.kl_sparse_reg``."""
import math

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.kl_sparse_reg import kl_scalars, kl_view, py_kl_channel
from ..shared.store import py_copy

_copy = njit(cache=True, inline="always")(py_copy)

_channel = njit(cache=True, inline="always")(py_kl_channel)


@njit(cache=True)
def kl_forward(x, ma, out, req):
    _copy(x, out, req)


@njit(cache=True)
def kl_backward(og, x, ma, dx, target, penalty, momentum, one, req):
    add = req == REQ_ADD
    write = req != REQ_NULL
    for c in range(x.shape[1]):
        _channel(og, x, ma, dx, c, target, penalty, momentum, one, write, add)


def prepare_forward(call):
    n = math.prod(call.in_shapes[0])
    return Launch(kl_forward, (call.req[0],), views=[(n,), None, (n,)])


def prepare_backward(call):
    v = kl_view(call.in_shapes[1])
    # the moving average is updated even when the data gradient is not wanted
    return Launch(kl_backward, kl_scalars(call) + (call.req[0],), views=[v, v, None, v])
