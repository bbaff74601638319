"""CUDA kernels for Crop and its gradient over (N*C, H, W) planes
(``nbdl.kernels.shared.crop``): one thread per data or output element."""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.crop import crop_plan
from ._launch import launcher, launcher_without
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)


def _noop(*args):
    pass


@cuda.jit
def _forward(x, out, oy, ox, req):
    h = out.shape[1]
    w = out.shape[2]
    for t in range(cuda.grid(1), out.shape[0] * h * w, cuda.gridsize(1)):
        j = t % w
        r = t // w
        i = r % h
        p = r // h
        _put(out, (p, i, j), x[p, i + oy, j + ox], req == REQ_ADD)


@cuda.jit
def _backward(og, dx, oy, ox, zero, req):
    H = dx.shape[1]
    W = dx.shape[2]
    h = og.shape[1]
    w = og.shape[2]
    for t in range(cuda.grid(1), dx.shape[0] * H * W, cuda.gridsize(1)):
        j = t % W
        r = t // W
        i = r % H
        p = r // H
        inside = oy <= i < oy + h and ox <= j < ox + w
        v = zero
        if inside:
            v = og[p, i - oy, j - ox]
        _put(dx, (p, i, j), v, req == REQ_ADD)


def prepare_crop(call):
    dview, oview, oy, ox = crop_plan(call.attrs, call.in_shapes[0], call.out_shapes[0])
    n = oview[0] * oview[1] * oview[2]
    views = [dview] + [None] * (len(call.in_shapes) - 1) + [oview]
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    like = len(call.in_shapes) > 1
    run = launcher_without(_forward, n) if like else launcher(_forward, n)
    return Launch(run, (oy, ox, call.req[0]), views=views)


def prepare_crop_backward(call):
    dview, oview, oy, ox = crop_plan(call.attrs, call.in_shapes[1], call.in_shapes[0])
    n = dview[0] * dview[1] * dview[2]
    views = [oview, dview, dview]
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    run = launcher(_backward, n)
    zero = np.dtype(call.out_dtypes[0]).type(0)

    def fn(og, data, dx, oy, ox, req):
        run(og, dx, oy, ox, zero, req)
    return Launch(fn, (oy, ox, call.req[0]), views=views)
