"""CPU kernels of the deterministic ``_image_*`` ops (pixel math in
``nbdl.kernels.shared.image``, the resize rule in
``nbdl.kernels.shared.image_resize``).  Images are viewed as (N, H*W, C) or
flat; crop runs Crop's kernels on an (N, H, W*C) view; float16 runs the
float32 kernels on mirrors."""
import numpy as np
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import image as im
from ..shared import image_resize as rs
from ..shared.half_mirror import with_half, with_half_prepare
from ._half import host_copy
from .crop import crop_backward, crop_forward

temp_plain = with_half(None)


def half(prepare):
    """``prepare`` with float16 calls run on float32 mirrors."""
    return with_half_prepare(prepare, None, host_copy)


@njit(cache=True)
def to_tensor(x, out, req):
    """(N, HW, C) -> (N, C, HW) / 255 in float32."""
    if req == REQ_NULL:
        return
    for n in range(x.shape[0]):
        for c in range(x.shape[2]):
            for p in range(x.shape[1]):
                im.to_tensor_element(x, out, n, c, p, req == REQ_ADD)


def _prepare_to_tensor(call):
    n, h, w, c = im.image_layout(call.in_shapes[0])
    return Launch(to_tensor, (call.req[0],), views=[(n, h * w, c), (n, c, h * w)])


@njit(cache=True)
def channel_affine(x, out, a0, a1, a2, b0, b1, b2, req):
    """``(x - a[c]) / b[c]`` over (N, C, HW) (C <= 3)."""
    if req == REQ_NULL:
        return
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for p in range(x.shape[2]):
                im.normalize_element(x, out, n, c, p, a0, a1, a2, b0, b1, b2, req == REQ_ADD)


def _prepare_normalize(call):
    v, scalars = im.normalize_plan(call, False)
    return Launch(channel_affine, scalars + (call.req[0],), views=[v, v])


def _prepare_normalize_backward(call):
    v, scalars = im.normalize_plan(call, True)
    return Launch(channel_affine_shape, scalars + (call.req[0],), views=[v, v, v])


@njit(cache=True)
def channel_affine_shape(og, data, out, a0, a1, a2, b0, b1, b2, req):
    channel_affine(og, out, a0, a1, a2, b0, b1, b2, req)


def _prepare_crop(call):
    dv, ov, oy, ox = im.crop_views(call.attrs, call.in_shapes[0])
    return Launch(crop_forward, (oy, ox, call.req[0]), views=[dv, ov])


def _prepare_crop_backward(call):
    dv, ov, oy, ox = im.crop_views(call.attrs, call.in_shapes[1])
    # arrays: out_grad, data (shape only), data_grad
    return Launch(crop_backward, (oy, ox, call.req[0]), views=[ov, dv, dv], args=(0, 2))


@njit(cache=True)
def flip(x, out, fh, fw, req):
    """Mirror (N, H, W, C) images vertically (``fh``) and/or horizontally (``fw``)."""
    if req == REQ_NULL:
        return
    N, H, W, C = x.shape
    for n in range(N):
        for h in range(H):
            for w in range(W):
                _, sh, sw = im.flip_source(n, h, w, H, W, fh, fw)
                for c in range(C):
                    out[n, h, w, c] = x[n, sh, sw, c]


def _prepare_flip(call):
    v = im.image_layout(call.in_shapes[0])
    return Launch(flip, im.flip_axes(call) + (call.req[0],), views=[v, v])


@njit(cache=True)
def color_fixed(x, out, C, mode, a, c0, c1, c2, lo, hi, req):
    """One colour step with fixed parameters over flat (N*H*W*C,) images."""
    if req == REQ_NULL:
        return
    for p in range(x.size // C):
        im.apply_pixel(x, out, p * C, C, mode, a, np.float32(0), c0, c1, c2, lo, hi)


def _prepare_adjust_lighting(call):
    n, h, w, c = im.image_layout(call.in_shapes[0])
    lo, hi = im.saturation_bounds(call.out_dtypes[0])
    pca = im.lighting_pca(call.attrs["alpha"])
    return Launch(color_fixed, (c, im.MODE_LIGHTING, np.float32(0)) + pca + (lo, hi, call.req[0]),
                  views=[(n * h * w * c,), (n * h * w * c,)])


@njit(cache=True)
def resize(x, out, my, ty, sy, mx, tx, sx, fixed, rnd, lo, hi, linear8, req):
    """OpenCV's separable resize of (N, H, W, C) images (``shared.image_resize``)."""
    if req == REQ_NULL:
        return
    for n in range(x.shape[0]):
        for d in range(out.shape[1]):
            for e in range(out.shape[2]):
                for c in range(x.shape[3]):
                    out[n, d, e, c] = rs.resize_value(x, n, d, e, c, my, ty, sy, mx, tx, sx,
                                                      fixed, rnd, lo, hi, linear8)


def _prepare_resize(call):
    views, scalars = rs.resize_args(call, im.image_layout, im.saturation_bounds)
    return Launch(resize, scalars + (call.req[0],), views=views)


(prepare_to_tensor, prepare_normalize, prepare_normalize_backward, prepare_crop,
 prepare_crop_backward, prepare_flip, prepare_adjust_lighting) = map(half, (
    _prepare_to_tensor, _prepare_normalize, _prepare_normalize_backward, _prepare_crop,
    _prepare_crop_backward, _prepare_flip, _prepare_adjust_lighting))
prepare_resize = _prepare_resize
