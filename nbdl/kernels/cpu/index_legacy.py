"""CPU kernels of batch_take, fill_element_0index, argmax_channel,
ravel_multi_index and unravel_index (rules in ``nbdl.ops.index_legacy``).
batch_take is pick's loop over ``(rows, n, 1)`` and argmax_channel is
argmax's with axis 1; the ravel loops take the sizes of ``shape`` as
``MAX_RAVEL_DIMS`` scalars (padded with 1)."""
from ..shared.jit import njit

from ...ops.index_legacy import argmax_channel_axis, ravel_scalars
from ...ops.registry import REQ_NULL, Launch
from ...ops.shape import size_of
from ..shared.indexing import MODE_CLIP
from .indexing import pick_forward
from .reduce import prepare_arg


def batch_take_views(call):
    a = call.in_shapes[0]
    n = a[-1]
    rows = size_of(call.in_shapes[1])
    return [(rows, n, 1), (rows, 1), (rows, 1)]


def prepare_batch_take(call):
    return Launch(pick_forward, (MODE_CLIP, call.req[0]), views=batch_take_views(call))


@njit(cache=True)
def fill_element_kernel(lhs, mhs, rhs, out, req):
    """out = lhs, then out[i, rhs[i]] = mhs[i] where rhs[i] is in range."""
    if req == REQ_NULL:
        return
    m = lhs.shape[1]
    if lhs.ctypes.data != out.ctypes.data:
        for i in range(lhs.shape[0]):
            for j in range(m):
                out[i, j] = lhs[i, j]
    for i in range(lhs.shape[0]):
        j = int(rhs[i])
        if 0 <= j < m:
            out[i, j] = mhs[i]


def prepare_fill_element(call):
    return Launch(fill_element_kernel, (call.req[0],), views=[None, None, None, None])


def prepare_argmax_channel(call):
    return prepare_arg(argmax_channel_axis(call))


@njit(cache=True)
def ravel_kernel(data, out, d0, d1, d2, d3, d4, d5, d6, d7, req):
    """out[b] = sum_k data[k, b] * stride_k (row-major strides of the dims)."""
    if req == REQ_NULL:
        return
    dims = (d0, d1, d2, d3, d4, d5, d6, d7)
    n = data.shape[0]
    for b in range(out.shape[0]):
        flat = 0
        for k in range(n):
            flat = flat * dims[k] + int(data[k, b])
        out[b] = flat


@njit(cache=True)
def unravel_kernel(data, out, d0, d1, d2, d3, d4, d5, d6, d7, req):
    """out[k, b]: coordinate k of flat index data[b]; the first is not wrapped."""
    if req == REQ_NULL:
        return
    dims = (d0, d1, d2, d3, d4, d5, d6, d7)
    n = out.shape[0]
    for b in range(data.shape[0]):
        j = int(data[b])
        for k in range(n - 1, 0, -1):
            out[k, b] = j % dims[k]
            j //= dims[k]
        out[0, b] = j


def prepare_ravel_multi_index(call):
    d = call.in_shapes[0]
    b = size_of(d[1:])
    return Launch(ravel_kernel, ravel_scalars(call) + (call.req[0],), views=[(d[0], b), (b,)])


def prepare_unravel_index(call):
    b = size_of(call.in_shapes[0])
    n = len(call.attrs["shape"])
    return Launch(unravel_kernel, ravel_scalars(call) + (call.req[0],), views=[(b,), (n, b)])
