"""CUDA kernels of the deterministic ``_image_*`` ops (pixel math in
``nbdl.kernels.shared.image``, the resize rule in
``nbdl.kernels.shared.image_resize``): one thread per output element or
pixel; crop runs Crop's CUDA kernels on an (N, H, W*C) view; float16 runs the
float32 kernels on mirrors."""
import math

import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import image as im
from ..shared import image_resize as rs
from ..shared.half_mirror import with_half, with_half_prepare
from ._half import device_copy
from ._launch import launcher, noop
from .crop import _backward as _crop_backward
from .crop import _forward as _crop_forward

temp_plain = with_half(None)


def half(prepare, rule=None):
    """``prepare`` with float16 calls run on float32 mirrors (``rule``: the
    op's float32 temp rule)."""
    return with_half_prepare(prepare, rule, device_copy)


def launch(kernel, work, scalars, views, req):
    """A Launch running ``kernel`` over ``work`` threads (a no-op when there
    is no work or the output is not wanted)."""
    if work == 0 or req == REQ_NULL:
        return Launch(noop, (), views=views)
    return Launch(launcher(kernel, work), scalars, views=views)


@cuda.jit
def _to_tensor(x, out, req):
    HW = x.shape[1]
    C = x.shape[2]
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        im.to_tensor_element(x, out, t // (HW * C), (t // HW) % C, t % HW, req == REQ_ADD)


def _prepare_to_tensor(call):
    n, h, w, c = im.image_layout(call.in_shapes[0])
    return launch(_to_tensor, n * h * w * c, (call.req[0],), [(n, h * w, c), (n, c, h * w)],
                  call.req[0])


@cuda.jit
def _channel_affine(x, out, a0, a1, a2, b0, b1, b2, req):
    C = x.shape[1]
    HW = x.shape[2]
    for t in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        im.normalize_element(x, out, t // (HW * C), (t // HW) % C, t % HW, a0, a1, a2, b0, b1,
                             b2, req == REQ_ADD)


def _prepare_normalize(call):
    v, scalars = im.normalize_plan(call, False)
    return launch(_channel_affine, v[0] * v[1] * v[2], scalars + (call.req[0],), [v, v],
                  call.req[0])


def _prepare_normalize_backward(call):
    v, scalars = im.normalize_plan(call, True)
    run = launch(_channel_affine, v[0] * v[1] * v[2], (), [v, v, v], call.req[0])
    if run.fn is noop:
        return run
    req = call.req[0]

    def fn(og, data, out):
        run.fn(og, out, *scalars, req)
    return Launch(fn, (), views=run.views)


def _prepare_crop(call):
    dv, ov, oy, ox = im.crop_views(call.attrs, call.in_shapes[0])
    return launch(_crop_forward, ov[0] * ov[1] * ov[2], (oy, ox, call.req[0]), [dv, ov],
                  call.req[0])


def _prepare_crop_backward(call):
    dv, ov, oy, ox = im.crop_views(call.attrs, call.in_shapes[1])
    run = launch(_crop_backward, dv[0] * dv[1] * dv[2], (), [ov, dv, dv], call.req[0])
    if run.fn is noop:
        return run
    scalars = (oy, ox, np.dtype(call.out_dtypes[0]).type(0), call.req[0])

    def fn(og, data, dx):
        run.fn(og, dx, *scalars)
    return Launch(fn, (), views=run.views)


@cuda.jit
def _flip(x, out, fh, fw):
    N, H, W, C = x.shape
    for t in range(cuda.grid(1), N * H * W, cuda.gridsize(1)):
        w = t % W
        h = (t // W) % H
        n = t // (W * H)
        _, sh, sw = im.flip_source(n, h, w, H, W, fh, fw)
        for c in range(C):
            out[n, h, w, c] = x[n, sh, sw, c]


def _prepare_flip(call):
    v = im.image_layout(call.in_shapes[0])
    return launch(_flip, v[0] * v[1] * v[2], im.flip_axes(call), [v, v], call.req[0])


@cuda.jit
def _color_fixed(x, out, C, mode, a, c0, c1, c2, lo, hi):
    for p in range(cuda.grid(1), x.size // C, cuda.gridsize(1)):
        im.apply_pixel(x, out, p * C, C, mode, a, np.float32(0), c0, c1, c2, lo, hi)


def _prepare_adjust_lighting(call):
    v, n, hw, c, lo, hi = im.color_layout(call)
    pca = im.lighting_pca(call.attrs["alpha"])
    return launch(_color_fixed, n * hw, (c, im.MODE_LIGHTING, np.float32(0)) + pca + (lo, hi),
                  [v, v], call.req[0])


@cuda.jit
def _resize(x, out, my, ty, sy, mx, tx, sx, fixed, rnd, lo, hi, linear8):
    C = x.shape[3]
    OH = out.shape[1]
    OW = out.shape[2]
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        c = t % C
        e = (t // C) % OW
        d = (t // (C * OW)) % OH
        n = t // (C * OW * OH)
        out[n, d, e, c] = rs.resize_value(x, n, d, e, c, my, ty, sy, mx, tx, sx, fixed, rnd, lo,
                                          hi, linear8)


def _prepare_resize(call):
    views, scalars = rs.resize_args(call, im.image_layout, im.saturation_bounds)
    return launch(_resize, math.prod(views[1]), scalars, views, call.req[0])


(prepare_to_tensor, prepare_normalize, prepare_normalize_backward, prepare_crop,
 prepare_crop_backward, prepare_flip, prepare_adjust_lighting) = map(half, (
    _prepare_to_tensor, _prepare_normalize, _prepare_normalize_backward, _prepare_crop,
    _prepare_crop_backward, _prepare_flip, _prepare_adjust_lighting))
prepare_resize = _prepare_resize
