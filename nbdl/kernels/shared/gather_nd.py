"""gather_nd / scatter_nd: prepare-time views and index sizes, shared by the
CPU and CUDA kernels.  The full array is seen as ``(P, inner)`` with ``P`` the
product of its first ``M`` dims, indices as ``(M, Y)`` and the sliced array
as ``(Y, inner)``; the ``M`` leading sizes travel as ``MAX_INDEX_DIMS``
scalars (padded with 1)."""
from ...ops.gather_nd import MAX_INDEX_DIMS, nd_layout
from ...ops.shape import size_of


def nd_views(call, full, idx):
    """((P, inner), (M, Y), (Y, inner), dims) for an op on array shape ``full``."""
    m, y, inner, _ = nd_layout(call.where(), tuple(idx), tuple(full))
    dims = tuple(int(d) for d in full[:m]) + (1,) * (MAX_INDEX_DIMS - m)
    return (size_of(full[:m]), inner), (m, y), (y, inner), dims


def gather_views(call):
    """gather_nd(data, indices) -> out."""
    return nd_views(call, call.in_shapes[0], call.in_shapes[1])


def scatter_views(call):
    """scatter_nd / _backward_gather_nd (data, indices) and _gather_nd_backward
    (out_grad, indices, data) -> out of the full shape."""
    return nd_views(call, call.out_shapes[0], call.in_shapes[1])
