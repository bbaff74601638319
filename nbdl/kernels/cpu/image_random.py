"""CPU kernels of the random ``_image_*`` ops: each launch draws its key
from numba's seeded stream (``kernels.cpu.random.launch_key``), then every
image's parameters are a function of (key, image) (``shared.image_random``)
and its pixels go through ``shared.image.apply_pixel``.  Images are flat;
float16 runs on float32 mirrors."""
import numpy as np
from ..shared.jit import njit

from ...ops.registry import REQ_NULL, Launch
from ..shared import image as im
from ..shared import image_random as ir
from ..shared.half_mirror import with_half
from .image import half
from .random import launch_key

temp_plain = with_half(None)
temp_means = temp_plain


@njit(cache=True)
def random_flip(x, out, fh, fw, p, req):
    """Mirror each (N, H, W, C) image along the chosen axes with probability ``p``."""
    if req == REQ_NULL:
        return
    key = launch_key()
    N, H, W, C = x.shape
    for n in range(N):
        on = ir.flips(key, n, p)
        for h in range(H):
            for w in range(W):
                _, sh, sw = im.flip_source(n, h, w, H, W, fh and on, fw and on)
                for c in range(C):
                    out[n, h, w, c] = x[n, sh, sw, c]


def _prepare_flip(call):
    v = im.image_layout(call.in_shapes[0])
    return Launch(random_flip, im.flip_axes(call) + (float(call.attrs["p"]), call.req[0]),
                  views=[v, v])


@njit(cache=True)
def _image_step(src, out, base, HW, C, mode, a, c0, c1, c2, lo, hi):
    mean = im.gray_mean(src, base, HW, C) if mode == im.MODE_CONTRAST else np.float32(0)
    for p in range(HW):
        im.apply_pixel(src, out, base + p * C, C, mode, a, mean, c0, c1, c2, lo, hi)


@njit(cache=True)
def random_color(x, out, N, HW, C, mode, f_lo, f_hi, alpha_std, lo, hi, req):
    """One random colour step per image (``mode``: a ``shared.image`` MODE)."""
    if req == REQ_NULL:
        return
    key = launch_key()
    zero = np.float32(0)
    for n in range(N):
        if mode == im.MODE_LIGHTING:
            c0, c1, c2 = ir.lighting_offsets(key, n, alpha_std)
            a = zero
        else:
            c0, c1, c2 = zero, zero, zero
            a = ir.factor(key, n, 0, f_lo, f_hi)
        _image_step(x, out, n * HW * C, HW, C, mode, a, c0, c1, c2, lo, hi)


@njit(cache=True)
def random_jitter(x, out, N, HW, C, b, c, sa, h, lo, hi, req):
    """MXNet's colour jitter: up to four steps per image in a random order."""
    if req == REQ_NULL:
        return
    key = launch_key()
    zero = np.float32(0)
    for n in range(N):
        base = n * HW * C
        done = False
        for s in range(ir.JITTER_STEPS):
            mode, a, on = ir.jitter_step(key, n, s, b, c, sa, h)
            if not on:
                continue
            if done:
                _image_step(out, out, base, HW, C, mode, a, zero, zero, zero, lo, hi)
            else:
                _image_step(x, out, base, HW, C, mode, a, zero, zero, zero, lo, hi)
            done = True
        if not done:
            for i in range(base, base + HW * C):
                out[i] = x[i]


def _color(mode):
    def prepare(call):
        v, n, hw, c, lo, hi = im.color_layout(call)
        return Launch(random_color,
                      (n, hw, c) + im.color_scalars(call.attrs, mode) + (lo, hi, call.req[0]),
                      views=[v, v])
    return half(prepare)


def _prepare_jitter(call):
    v, n, hw, c, lo, hi = im.color_layout(call)
    return Launch(random_jitter, (n, hw, c) + im.jitter_amounts(call.attrs) + (lo, hi, call.req[0]),
                  views=[v, v])


prepare_random_flip_left_right = half(_prepare_flip)
prepare_random_flip_top_bottom = half(_prepare_flip)
(prepare_random_brightness, prepare_random_contrast, prepare_random_saturation, prepare_random_hue,
 prepare_random_lighting) = map(_color, im.COLOR_MODES)
prepare_random_color_jitter = half(_prepare_jitter)
