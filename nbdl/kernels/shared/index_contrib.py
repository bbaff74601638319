"""_contrib_arange_like / _contrib_index_array / _contrib_index_copy: prepare-time
scalars and views shared by the CPU and CUDA kernels."""
import dataclasses

import numpy as np

from ...ops.index_contrib import index_array_axes
from ...ops.registry import REQ_ADD
from ...ops.shape import MAX_RANK, c_strides, size_of


def arange_scalars(call):
    """(start, step, repeat) for the flat loop (computed in float64, stored in the output dtype)."""
    a = call.attrs
    return np.float64(a["start"]), np.float64(a["step"]), int(a["repeat"])


def index_array_scalars(call):
    """(strides of the selected axes, their sizes), each padded to MAX_RANK."""
    d = call.in_shapes[0]
    axes = index_array_axes(call.attrs, tuple(d))
    st = c_strides(d)
    pad = MAX_RANK - len(axes)
    return (tuple(int(st[a]) for a in axes) + (1,) * pad
            + tuple(int(d[a]) for a in axes) + (1,) * pad)


def index_array_views(call):
    d = call.in_shapes[0]
    k = call.out_shapes[0][-1]
    return [(size_of(d),), (size_of(d), k)]


def index_copy_views(call):
    """old / out as (N, inner), index (K,), new (K, inner)."""
    old, new = call.in_shapes[0], call.in_shapes[2]
    inner = size_of(old[1:])
    return [(old[0], inner), (new[0],), (new[0], inner), (old[0], inner)]


def index_copy_backward_views(call):
    """out_grad, old, dold as (N, inner), index and its gradient (K,), new and
    dnew (K, inner), the row mask (N,)."""
    old, idx, new, _ = index_copy_views(dataclasses.replace(call, in_shapes=call.in_shapes[1:]))
    return [old, old, idx, new, old, idx, new, None]


def py_old_grad(g, copied, dold, r, c, req):
    """_contrib_index_copy's gradient to ``old`` at (r, c): the head gradient,
    or 0 where row ``r`` was replaced (``copied[r]``), honouring ``req``
    (plain Python compiled by both devices' kernels)."""
    if copied[r] != 0:
        if req != REQ_ADD:
            dold[r, c] = 0
    elif req == REQ_ADD:
        dold[r, c] += g[r, c]
    else:
        dold[r, c] = g[r, c]
