"""The draws of the random ``_image_*`` ops (``register_jitable`` functions
called from ``kernels.cpu.image_random`` and ``kernels.cuda.image_random``).

Every draw is a pure function of the launch key (``kernels.shared.random``:
the CPU kernels take theirs from numba's seeded stream, the CUDA ones from
the device's key stream) and the image's index, so a CUDA thread can
recompute its image's parameters without scratch, and one launch gives the
same numbers on either device.  Factors are float32, as MXNet's
``uniform_real_distribution<float>``.
"""
import numpy as np
from numba.extending import register_jitable

from .image import (MODE_BRIGHTNESS, MODE_CONTRAST, MODE_HUE, MODE_LIGHTING,  # noqa: F401
                    MODE_SATURATION, pca_offsets)
from .random import std_normal, uniform01, uniform_below

_F = np.float32
JITTER_STEPS = 4        # brightness, contrast, saturation, hue (MXNet's order codes 0-3)


@register_jitable
def flips(key, n, p):
    """Whether image ``n`` is mirrored: with probability ``p`` (MXNet's op: a
    fair coin)."""
    return uniform01(key, n, 0) < p


@register_jitable
def factor(key, n, j, lo, hi):
    """A float32 factor drawn uniformly from [lo, hi] (draw ``j`` of image ``n``)."""
    return _F(lo + (hi - lo) * uniform01(key, n, j))


@register_jitable
def lighting_offsets(key, n, alpha_std):
    """The PCA (R, G, B) offsets of three N(0, alpha_std) alphas."""
    a0 = _F(std_normal(key, n, 0) * alpha_std)
    a1 = _F(std_normal(key, n, 2) * alpha_std)
    a2 = _F(std_normal(key, n, 4) * alpha_std)
    return pca_offsets(a0, a1, a2)


@register_jitable
def jitter_step(key, n, s, b, c, sa, h):
    """(mode, factor, enabled) of step ``s`` (0-3) of image ``n``'s colour
    jitter: a Fisher-Yates order of the four steps, each factor ``1 +
    U(-amount, amount)`` (hue ``U(-h, h)``), a step with amount 0 disabled."""
    order = 0b11100100              # slot k holds step (order >> 2k) & 3: 0, 1, 2, 3
    for i in range(JITTER_STEPS - 1, 0, -1):
        j = uniform_below(i + 1, key, n, i)
        a = (order >> (2 * i)) & 3
        z = (order >> (2 * j)) & 3
        order &= ~((3 << (2 * i)) | (3 << (2 * j)))
        order |= (z << (2 * i)) | (a << (2 * j))
    code = (order >> (2 * s)) & 3
    if code == 0:
        return MODE_BRIGHTNESS, _F(1) + factor(key, n, 10, -b, b), b > 0
    if code == 1:
        return MODE_CONTRAST, _F(1) + factor(key, n, 11, -c, c), c > 0
    if code == 2:
        return MODE_SATURATION, _F(1) + factor(key, n, 12, -sa, sa), sa > 0
    return MODE_HUE, factor(key, n, 13, -h, h), h > 0


@register_jitable
def jitter_source_is_output(key, n, s, b, c, sa, h):
    """Whether step ``s`` of image ``n`` reads the output (an earlier step
    was enabled) rather than the input, as MXNet's ``flag``."""
    for t in range(s):
        _, _, on = jitter_step(key, n, t, b, c, sa, h)
        if on:
            return True
    return False
