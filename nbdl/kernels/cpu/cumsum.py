"""CPU kernels for cumsum (``_np_cumsum``) and its gradient.

The data is viewed as ``(outer, n, inner)`` around the axis
(``nbdl.ops.cumsum.cumsum_geometry``; ``(1, size, 1)`` for axis=None), so
one compiled loop per dtype pair serves every rank.  The running sum is kept
in the output's dtype (as MXNet: an integer sum wraps) and the loops run in
memory order: row j of the output is row j - 1 plus row j of the input.
"""
from ..shared.jit import njit

from ...ops.cumsum import cumsum_geometry
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)


@njit(cache=True)
def cumsum(x, out, req):
    """out[o, j, i] = sum of x[o, :j + 1, i], accumulated in out's dtype."""
    if req == REQ_NULL:
        return
    n_outer, n, n_inner = x.shape
    t = out.dtype.type
    for o in range(n_outer):
        if n == 0:
            continue
        for i in range(n_inner):
            out[o, 0, i] = t(x[o, 0, i])
        for j in range(1, n):
            for i in range(n_inner):
                out[o, j, i] = out[o, j - 1, i] + t(x[o, j, i])


@njit(cache=True)
def cumsum_backward(g, data, dx, acc, req):
    """dx[o, j, i] = sum of g[o, j:, i] (the running sum from the end), in
    dx's dtype; ``data`` is an input for its shape only, ``acc`` one row of
    running sums so that ``REQ_ADD`` can add."""
    if req == REQ_NULL:
        return
    n_outer, n, n_inner = g.shape
    t = dx.dtype.type
    for o in range(n_outer):
        for i in range(n_inner):
            acc[i] = t(0)
        for j in range(n - 1, -1, -1):
            for i in range(n_inner):
                acc[i] = acc[i] + t(g[o, j, i])
                _put(dx, (o, j, i), acc[i], req == REQ_ADD)


def prepare_cumsum(call):
    view = cumsum_geometry(call.attrs, call.in_shapes[0], call.where())
    return Launch(cumsum, (call.req[0],), views=[view, view])


def prepare_cumsum_backward(call):
    view = cumsum_geometry(call.attrs, call.in_shapes[1], call.where())
    return Launch(cumsum_backward, (call.req[0],), views=[view, view, view, (view[2],)])


def temp_cumsum_backward(call):
    """One row (inner) of running sums in the gradient's dtype."""
    _, _, inner = cumsum_geometry(call.attrs, call.in_shapes[1], call.where())
    return [((inner,), call.out_dtypes[0])]
