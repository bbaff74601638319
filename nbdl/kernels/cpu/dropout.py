"""CPU kernels for Dropout and its gradient.

The mask holds the scale of each element (0 or 1/(1-p)) and has the data's
shape with the ``axes`` dimensions set to 1 (variational dropout: one draw
shared along those axes).  Data and mask are viewed as 6-D arrays in which
runs of broadcast / non-broadcast dimensions are merged, so one kernel
handles every ``axes`` pattern; without ``axes`` the views are
``(1, 1, 1, 1, 1, n)``.

The mask is drawn serially from numba's per-thread generator so that a
seed (``random_state.seed``) reproduces it exactly.
"""
import numpy as np
from ..shared.jit import njit

from ...ops.dropout import mask_temp
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.dropout import broadcast_views, dropout_plan


@njit(cache=True, inline="always")
def _draw(mask, pkeep, scale):
    s = mask.dtype.type(scale)
    z = mask.dtype.type(0)
    m0, m1, m2, m3, m4, m5 = mask.shape
    for i0 in range(m0):
        for i1 in range(m1):
            for i2 in range(m2):
                for i3 in range(m3):
                    for i4 in range(m4):
                        for i5 in range(m5):
                            mask[i0, i1, i2, i3, i4, i5] = s if np.random.random() < pkeep else z


@njit(cache=True)
def apply_mask(x, mask, out, req):
    """``out = x * mask`` with the mask broadcast along its size-1 dims."""
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    a0, a1, a2, a3, a4, a5 = x.shape
    # stride 0 along broadcast dims (mask dim 1), 1 elsewhere
    s0 = 1 if mask.shape[0] == a0 else 0
    s1 = 1 if mask.shape[1] == a1 else 0
    s2 = 1 if mask.shape[2] == a2 else 0
    s3 = 1 if mask.shape[3] == a3 else 0
    s4 = 1 if mask.shape[4] == a4 else 0
    s5 = 1 if mask.shape[5] == a5 else 0
    for i0 in range(a0):
        for i1 in range(a1):
            for i2 in range(a2):
                for i3 in range(a3):
                    for i4 in range(a4):
                        if add:
                            for i5 in range(a5):
                                out[i0, i1, i2, i3, i4, i5] += x[i0, i1, i2, i3, i4, i5] * mask[
                                    i0 * s0, i1 * s1, i2 * s2, i3 * s3, i4 * s4, i5 * s5]
                        else:
                            for i5 in range(a5):
                                out[i0, i1, i2, i3, i4, i5] = x[i0, i1, i2, i3, i4, i5] * mask[
                                    i0 * s0, i1 * s1, i2 * s2, i3 * s3, i4 * s4, i5 * s5]


@njit(cache=True, inline="always")
def _forward(x, out, mask, pkeep, scale, draw, fill, req):
    if draw:
        _draw(mask, pkeep, scale)
    else:
        mask[...] = fill
    apply_mask(x, mask, out, req)


@njit(cache=True)
def dropout_forward(x, out, mask, pkeep, scale, draw, fill, req, req_mask):
    if req == REQ_NULL and req_mask == REQ_NULL:
        return
    _forward(x, out, mask, pkeep, scale, draw, fill, req)


@njit(cache=True)
def dropout_forward_scratch_mask(x, out, mask, scratch, pkeep, scale, draw, fill, req,
                                 req_mask):
    """The mask output is not wanted (req null): draw into planner scratch."""
    if req == REQ_NULL:
        return
    _forward(x, out, scratch, pkeep, scale, draw, fill, req)


def prepare_dropout(call):
    dview, mview, pkeep, scale, draw, fill = dropout_plan(call)
    dt = np.dtype(call.out_dtypes[0]).type
    scalars = (float(pkeep), float(scale), int(draw), dt(fill), call.req[0], call.req[1])
    if mask_temp(call):
        return Launch(dropout_forward_scratch_mask, scalars, views=[dview, dview, mview, mview])
    return Launch(dropout_forward, scalars, views=[dview, dview, mview])


def prepare_dropout_backward(call):
    dview, mview = broadcast_views(call.in_shapes[0], call.attrs["axes"])
    return Launch(apply_mask, (call.req[0],), views=[dview, mview, dview])
