"""CPU kernels for Crop and its gradient over (N*C, H, W) planes
(``nbdl.kernels.shared.crop``)."""
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.crop import crop_plan
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)


@njit(cache=True)
def crop_forward(x, out, oy, ox, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    for p in range(out.shape[0]):
        for i in range(out.shape[1]):
            for j in range(out.shape[2]):
                _put(out, (p, i, j), x[p, i + oy, j + ox], add)


@njit(cache=True)
def crop_backward(og, dx, oy, ox, req):
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        dx[:] = 0
    for p in range(og.shape[0]):
        for i in range(og.shape[1]):
            for j in range(og.shape[2]):
                dx[p, i + oy, j + ox] += og[p, i, j]


def prepare_crop(call):
    dview, oview, oy, ox = crop_plan(call.attrs, call.in_shapes[0], call.out_shapes[0])
    views = [dview] + [None] * (len(call.in_shapes) - 1) + [oview]
    # a second input (crop_like) is read for its shape only
    pick = None if len(call.in_shapes) == 1 else (0, len(call.in_shapes))
    return Launch(crop_forward, (oy, ox, call.req[0]), views=views, args=pick)


def prepare_crop_backward(call):
    dview, oview, oy, ox = crop_plan(call.attrs, call.in_shapes[1], call.in_shapes[0])
    # arrays: out_grad, data (shape only), data_grad
    return Launch(crop_backward, (oy, ox, call.req[0]), views=[oview, dview, dview],
                  args=(0, 2))
