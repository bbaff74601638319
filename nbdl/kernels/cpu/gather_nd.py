"""CPU kernels of gather_nd, scatter_nd and the adding scatter of
_backward_gather_nd / gather_nd's gradient (layouts in
``nbdl.kernels.shared.gather_nd``).  An index outside ``[-X, X)`` raises
IndexOutOfRange from the kernel; a negative one counts from the end."""
from ..shared.jit import njit

from ...ops.gather_nd import IndexOutOfRange
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ...ops.shape import size_of
from ..shared.gather_nd import gather_views, scatter_views


@njit(cache=True, inline="always")
def row_of(idx, y, dims):
    """Row of the (P, inner) view that index column ``y`` names."""
    r = 0
    for k in range(idx.shape[0]):
        n = dims[k]
        j = int(idx[k, y])
        if j < -n or j >= n:
            raise IndexOutOfRange("gather_nd/scatter_nd: an index is out of range")
        if j < 0:
            j += n
        r = r * n + j
    return r


@njit(cache=True)
def gather_nd_kernel(data, idx, out, d0, d1, d2, d3, d4, d5, d6, d7, req):
    if req == REQ_NULL:
        return
    dims = (d0, d1, d2, d3, d4, d5, d6, d7)
    inner = out.shape[1]
    for y in range(out.shape[0]):
        r = row_of(idx, y, dims)
        if req == REQ_ADD:
            for i in range(inner):
                out[y, i] += data[r, i]
        else:
            for i in range(inner):
                out[y, i] = data[r, i]


@njit(cache=True)
def scatter_nd_kernel(data, idx, out, d0, d1, d2, d3, d4, d5, d6, d7, req, add):
    """Zero ``out`` (unless req is add), then place (``add`` 0) or add
    (``add`` 1: repeated indices accumulate) each row of data."""
    if req == REQ_NULL:
        return
    dims = (d0, d1, d2, d3, d4, d5, d6, d7)
    if req != REQ_ADD:
        out[...] = 0
    inner = out.shape[1]
    for y in range(data.shape[0]):
        r = row_of(idx, y, dims)
        if add or req == REQ_ADD:
            for i in range(inner):
                out[r, i] += data[y, i]
        else:
            for i in range(inner):
                out[r, i] = data[y, i]


@njit(cache=True)
def add_nd_like_kernel(og, idx, like, out, d0, d1, d2, d3, d4, d5, d6, d7, req, add):
    """scatter_nd_kernel with gather_nd's data as a shape-only input."""
    scatter_nd_kernel(og, idx, out, d0, d1, d2, d3, d4, d5, d6, d7, req, add)


def prepare_gather_nd(call):
    full, iview, sliced, dims = gather_views(call)
    return Launch(gather_nd_kernel, dims + (call.req[0],), views=[full, iview, sliced])


def prepare_scatter_nd(call):
    full, iview, sliced, dims = scatter_views(call)
    return Launch(scatter_nd_kernel, dims + (call.req[0], 0), views=[sliced, iview, full])


def prepare_add_nd(call):
    full, iview, sliced, dims = scatter_views(call)
    if len(call.in_shapes) == 3:    # _gather_nd_backward(out_grad, indices, data)
        return Launch(add_nd_like_kernel, dims + (call.req[0], 1),
                      views=[sliced, iview, (size_of(call.in_shapes[2]),), full])
    return Launch(scatter_nd_kernel, dims + (call.req[0], 1), views=[sliced, iview, full])
