"""CUDA kernels of the random ``_image_*`` ops: each launch takes a key from
the device's key stream (``random_state.next_key``, seeded per GPU), and
every thread recomputes its image's parameters from (key, image)
(``shared.image_random``).  One thread per pixel; the contrast reference
(mean luma) is first computed by one thread per image into scratch, and
the colour jitter runs its four steps as four such passes.  float16 runs
on float32 mirrors."""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_NULL, Launch
from ..shared import image as im
from ..shared import image_random as ir
from ..shared.half_mirror import with_half
from ..shared.random_state import next_key
from . import random as _random  # noqa: F401  (silences the simulator's uint64 wrap warnings)
from ._launch import launcher, noop
from .image import half

F32 = np.dtype(np.float32)
temp_plain = with_half(None)


def _means_rule(call):
    n = im.image_layout(call.in_shapes[0])[0]
    return [((n,), F32)]


temp_means = with_half(_means_rule)


def _device_id(call):
    return call.device.device_id if call.device is not None else 0


@cuda.jit
def _random_flip(x, out, fh, fw, p, key):
    N, H, W, C = x.shape
    for t in range(cuda.grid(1), N * H * W, cuda.gridsize(1)):
        w = t % W
        h = (t // W) % H
        n = t // (W * H)
        on = ir.flips(key, n, p)
        _, sh, sw = im.flip_source(n, h, w, H, W, fh and on, fw and on)
        for c in range(C):
            out[n, h, w, c] = x[n, sh, sw, c]


def _prepare_flip(call):
    v = im.image_layout(call.in_shapes[0])
    views = [v, v]
    work = v[0] * v[1] * v[2]
    if work == 0 or call.req[0] == REQ_NULL:
        return Launch(noop, (), views=views)
    run = launcher(_random_flip, work)
    fh, fw = im.flip_axes(call)
    p = float(call.attrs["p"])
    dev = _device_id(call)

    def fn(x, out):
        run(x, out, fh, fw, p, next_key(dev))
    return Launch(fn, (), views=views)


@cuda.jit(device=True)
def _step_params(key, n, mode, f_lo, f_hi, alpha_std):
    zero = np.float32(0)
    if mode == im.MODE_LIGHTING:
        c0, c1, c2 = ir.lighting_offsets(key, n, alpha_std)
        return zero, c0, c1, c2
    return ir.factor(key, n, 0, f_lo, f_hi), zero, zero, zero


@cuda.jit
def _contrast_means(src, means, HW, C):
    for n in range(cuda.grid(1), means.size, cuda.gridsize(1)):
        means[n] = im.gray_mean(src, n * HW * C, HW, C)


@cuda.jit
def _random_color(x, out, means, HW, C, mode, f_lo, f_hi, alpha_std, lo, hi, key):
    for p in range(cuda.grid(1), x.size // C, cuda.gridsize(1)):
        n = p // HW
        a, c0, c1, c2 = _step_params(key, n, mode, f_lo, f_hi, alpha_std)
        mean = means[n] if mode == im.MODE_CONTRAST else np.float32(0)
        im.apply_pixel(x, out, p * C, C, mode, a, mean, c0, c1, c2, lo, hi)


def _color(mode):
    def prepare(call):
        v, n, hw, c, lo, hi = im.color_layout(call)
        views = [v, v] + ([(n,)] if mode == im.MODE_CONTRAST else [])
        if n * hw == 0 or call.req[0] == REQ_NULL:
            return Launch(noop, (), views=views)
        run = launcher(_random_color, n * hw)
        mean_run = launcher(_contrast_means, n)
        scalars = (hw, c) + im.color_scalars(call.attrs, mode) + (lo, hi)
        dev = _device_id(call)

        def fn(x, out, *means):
            if mode == im.MODE_CONTRAST:
                mean_run(x, means[0], hw, c)
                run(x, out, means[0], *scalars, next_key(dev))
            else:
                run(x, out, x, *scalars, next_key(dev))
        return Launch(fn, (), views=views)
    return half(prepare, _means_rule if mode == im.MODE_CONTRAST else None)


@cuda.jit
def _jitter_means(x, out, means, HW, C, s, b, c, sa, h, key):
    for n in range(cuda.grid(1), means.size, cuda.gridsize(1)):
        mode, _, on = ir.jitter_step(key, n, s, b, c, sa, h)
        if on and mode == im.MODE_CONTRAST:
            if ir.jitter_source_is_output(key, n, s, b, c, sa, h):
                means[n] = im.gray_mean(out, n * HW * C, HW, C)
            else:
                means[n] = im.gray_mean(x, n * HW * C, HW, C)


@cuda.jit
def _jitter_pass(x, out, means, HW, C, s, b, c, sa, h, lo, hi, key):
    zero = np.float32(0)
    for p in range(cuda.grid(1), x.size // C, cuda.gridsize(1)):
        n = p // HW
        mode, a, on = ir.jitter_step(key, n, s, b, c, sa, h)
        from_out = ir.jitter_source_is_output(key, n, s, b, c, sa, h)
        if on:
            if from_out:
                im.apply_pixel(out, out, p * C, C, mode, a, means[n], zero, zero, zero, lo, hi)
            else:
                im.apply_pixel(x, out, p * C, C, mode, a, means[n], zero, zero, zero, lo, hi)
        elif s == ir.JITTER_STEPS - 1 and not from_out:
            for k in range(C):       # no step ran on this image: copy it
                out[p * C + k] = x[p * C + k]


def _prepare_jitter(call):
    v, n, hw, c, lo, hi = im.color_layout(call)
    views = [v, v, (n,)]
    if n * hw == 0 or call.req[0] == REQ_NULL:
        return Launch(noop, (), views=views)
    run = launcher(_jitter_pass, n * hw)
    mean_run = launcher(_jitter_means, n)
    amounts = im.jitter_amounts(call.attrs)
    dev = _device_id(call)

    def fn(x, out, means):
        key = next_key(dev)
        for s in range(ir.JITTER_STEPS):
            mean_run(x, out, means, hw, c, s, *amounts, key)
            run(x, out, means, hw, c, s, *amounts, lo, hi, key)
    return Launch(fn, (), views=views)


prepare_random_flip_left_right = half(_prepare_flip)
prepare_random_flip_top_bottom = half(_prepare_flip)
(prepare_random_brightness, prepare_random_contrast, prepare_random_saturation, prepare_random_hue,
 prepare_random_lighting) = map(_color, im.COLOR_MODES)
prepare_random_color_jitter = half(_prepare_jitter, _means_rule)
