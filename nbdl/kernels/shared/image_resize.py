"""``_image_resize``'s sampling rule: OpenCV's ``cv::resize`` per axis, as
MXNet's CPU kernel calls it (``register_jitable`` functions called from the
kernels of ``kernels.cpu.image`` and ``kernels.cuda.image``).

A resize is separable: output coordinate ``d`` of an axis reads ``taps``
source indices with weights (``resize_tap``), and a pixel is the weighted
sum over the taps of both axes.  Per OpenCV (``imgproc/src/resize.cpp``):

- nearest: ``floor(d * scale)``, clamped;
- bilinear: centre ``(d + 0.5) * scale - 0.5`` (rounded to float32), two
  taps, an edge clamps the centre (upscaling with ``area`` uses this too,
  with its own fraction);
- bicubic (A = -0.75, 4 taps) and Lanczos-4 (8 taps) around the same
  centre, indices clamped to the image;
- area when shrinking: the source cells overlapping ``[d, d + 1) * scale``
  weighted by their overlap.

``scale`` is OpenCV's ``1 / (out / in)``.  For uint8 OpenCV uses 11-bit
fixed-point weights (except true area) and rounds the final sum: the
weights are quantised to multiples of 1/2048 here (``fixed``) and the
kernels round the float64 sum; float images are summed in float64.
"""
import math

import numpy as np
from numba.extending import register_jitable

NEAREST, LINEAR, CUBIC, AREA, LANCZOS = 0, 1, 2, 3, 4
AREA_UP = 5          # area mode when enlarging an axis: bilinear with area fractions
_COEF = 2048.0       # OpenCV's INTER_RESIZE_COEF_SCALE
_S45 = 0.70710678118654752440084436210485
_FLT_EPS = 1.1920929e-07


def axis_plan(interp, n_in, n_out, other_up):
    """(mode, taps, scale) of one axis; ``other_up``: whether the other axis
    enlarges (OpenCV uses true area only when neither does)."""
    scale = 1.0 / (float(n_out) / float(n_in))
    mode = interp
    if interp == AREA:
        mode = AREA if scale >= 1.0 and not other_up else AREA_UP
    if mode == AREA:
        taps = int(math.ceil(scale)) + 1
    else:
        taps = {NEAREST: 1, LINEAR: 2, AREA_UP: 2, CUBIC: 4, LANCZOS: 8}[mode]
    return mode, taps, scale


def resize_plan(interp, in_hw, out_hw):
    """(mode y, taps y, scale y, mode x, taps x, scale x)."""
    (ih, iw), (oh, ow) = in_hw, out_hw
    up_y, up_x = oh > ih, ow > iw
    return axis_plan(interp, ih, oh, up_x) + axis_plan(interp, iw, ow, up_y)


@register_jitable
def _centre(d, scale, mode):
    """(first index, fraction) of the interpolating modes, OpenCV's rounding."""
    if mode == AREA_UP:
        sx = int(math.floor(d * scale))
        f = np.float32((d + 1) - (sx + 1) * (1.0 / scale))
        f = np.float32(0) if f <= 0 else f - np.float32(math.floor(f))
        return sx, f
    f = np.float32((d + 0.5) * scale - 0.5)
    sx = int(math.floor(f))
    return sx, f - np.float32(sx)


@register_jitable
def _cubic(x, k):
    a = np.float32(-0.75)
    one = np.float32(1)
    c0 = ((a * (x + one) - np.float32(5) * a) * (x + one) + np.float32(8) * a) * (x + one) \
        - np.float32(4) * a
    c1 = ((a + np.float32(2)) * x - (a + np.float32(3))) * x * x + one
    c2 = ((a + np.float32(2)) * (one - x) - (a + np.float32(3))) * (one - x) * (one - x) + one
    if k == 0:
        return c0
    if k == 1:
        return c1
    if k == 2:
        return c2
    return one - c0 - c1 - c2


@register_jitable
def _lanczos_term(x, i, s0, c0):
    """OpenCV's term ``i``: ``(cs[i][0] * s0 + cs[i][1] * c0) / y**2``, cs the
    unit vectors at multiples of 135 degrees."""
    y = -(x + 3 - i) * math.pi * 0.25
    angle = (i * 3) % 8                   # cs[i] = (cos, -sin) of i * 135 degrees
    ca = math.cos(angle * math.pi * 0.25)
    cb = -math.sin(angle * math.pi * 0.25)
    return np.float32((ca * s0 + cb * c0) / (y * y))


@register_jitable
def _lanczos(x, k):
    if x < _FLT_EPS:
        return np.float32(1) if k == 3 else np.float32(0)
    y0 = -(x + 3) * math.pi * 0.25
    s0 = math.sin(y0)
    c0 = math.cos(y0)
    total = np.float32(0)
    for i in range(8):
        total += _lanczos_term(x, i, s0, c0)
    return _lanczos_term(x, k, s0, c0) * (np.float32(1) / total)


@register_jitable
def _round_even(v):
    """``v`` rounded to the nearest integer, halves to even (cvRound)."""
    r = math.floor(v + 0.5)
    if r - v == 0.5 and r % 2 != 0:
        r -= 1.0
    return r


@register_jitable
def _area_tap(d, k, n_in, scale):
    f1 = d * scale
    f2 = f1 + scale
    s1 = int(math.ceil(f1))
    s2 = min(int(math.floor(f2)), n_in - 1)
    s1 = min(s1, s2)
    cell = min(scale, n_in - f1)
    j = k
    if s1 - f1 > 1e-3:
        if j == 0:
            return s1 - 1, (s1 - f1) / cell
        j -= 1
    if j < s2 - s1:
        return s1 + j, 1.0 / cell
    if j == s2 - s1 and f2 - s2 > 1e-3:
        return s2, min(min(f2 - s2, 1.0), cell) / cell
    return 0, 0.0


@register_jitable
def resize_tap(d, k, n_in, mode, scale, fixed, horizontal):
    """(source index, weight) of tap ``k`` of output coordinate ``d``.
    OpenCV moves a bilinear centre past an edge onto it only horizontally;
    vertically the fraction is kept and the rows clamped (which matters
    for 8-bit rounding only)."""
    if mode == NEAREST:
        return min(int(math.floor(d * scale)), n_in - 1), 1.0
    if mode == AREA:
        return _area_tap(d, k, n_in, scale)
    sx, f = _centre(d, scale, mode)
    if mode == LINEAR or mode == AREA_UP:
        if horizontal and sx < 0:
            sx, f = 0, np.float32(0)
        if horizontal and sx >= n_in - 1:
            sx, f = n_in - 1, np.float32(0)
        w = np.float32(1) - f if k == 0 else f
        first = sx
    elif mode == CUBIC:
        w = _cubic(f, k)
        first = sx - 1
    else:
        w = _lanczos(f, k)
        first = sx - 3
    wd = float(w)
    if fixed:
        wd = _round_even(wd * _COEF) / _COEF
    return min(max(first + k, 0), n_in - 1), wd


def uses_linear8(call_dtype, plan, in_hw, out_hw):
    """Whether an 8-bit resize runs OpenCV's fixed-point linear path (both
    axes bilinear, not the 2x2 shrink OpenCV turns into area averaging)."""
    my, mx = plan[0], plan[3]
    if np.dtype(call_dtype) != np.uint8 or my not in (LINEAR, AREA_UP) or mx not in (LINEAR, AREA_UP):
        return False
    halving = all(i == 2 * o for i, o in zip(in_hw, out_hw))
    return not (my == LINEAR and halving)


@register_jitable
def linear8_sums(x, n, d, e, c, H, W, my, sy, mx, sx):
    """(r0, r1, b0, b1): the horizontal sums of the two source rows of
    output (n, d, e, c) with 11-bit weights, and the rows' 11-bit weights."""
    r0 = 0
    r1 = 0
    b0 = 0
    b1 = 0
    for i in range(2):
        yi, wy = resize_tap(d, i, H, my, sy, True, False)
        r = 0
        for j in range(2):
            xj, wx = resize_tap(e, j, W, mx, sx, True, True)
            r += int(wx * _COEF) * int(x[n, yi, xj, c])
        if i == 0:
            r0 = r
            b0 = int(wy * _COEF)
        else:
            r1 = r
            b1 = int(wy * _COEF)
    return r0, r1, b0, b1


@register_jitable
def linear8_value(r0, r1, b0, b1):
    """An 8-bit output of OpenCV 3.4's vertical linear pass (its SSE2 code,
    ``VResizeLinearVec_32s8u``, which MXNet's wheel runs on whole rows):
    16-bit products of the sums shifted right by 4, keeping the high half,
    then rounded by 2 bits."""
    v = (((r0 >> 4) * b0) >> 16) + (((r1 >> 4) * b1) >> 16)
    return (v + 2) >> 2


def resize_args(call, layout, bounds):
    """([input view, output view], scalars) of a resize call: the plan,
    whether weights are 11-bit, whether the sum is rounded, the saturation
    bounds and whether OpenCV's 8-bit linear path applies.  ``layout`` and
    ``bounds`` are ``shared.image``'s ``image_layout`` / ``saturation_bounds``."""
    src = layout(call.in_shapes[0])
    dst = layout(call.out_shapes[0])
    plan = resize_plan(call.attrs["interp"], src[1:3], dst[1:3])
    dt = np.dtype(call.in_dtypes[0])
    fixed = dt == np.uint8 and plan[0] != AREA and plan[3] != AREA
    lo, hi = bounds(dt)
    return [src, dst], plan + (fixed, bool(np.issubdtype(dt, np.integer)), float(lo), float(hi),
                               uses_linear8(dt, plan, src[1:3], dst[1:3]))


@register_jitable
def resize_value(x, n, d, e, c, my, ty, sy, mx, tx, sx, fixed, rnd, lo, hi, linear8):
    """Output (n, d, e, c) of resizing the (N, H, W, C) images ``x`` (a
    float64 sum of the taps; ``rnd``: rounded to an integer; ``linear8``:
    OpenCV's 8-bit bilinear integer path), clamped to [lo, hi]."""
    H = x.shape[1]
    W = x.shape[2]
    if linear8:
        r0, r1, b0, b1 = linear8_sums(x, n, d, e, c, H, W, my, sy, mx, sx)
        return float(min(max(linear8_value(r0, r1, b0, b1), 0), 255))
    acc = 0.0
    for i in range(ty):
        yi, wy = resize_tap(d, i, H, my, sy, fixed, False)
        row = 0.0
        for j in range(tx):
            xj, wx = resize_tap(e, j, W, mx, sx, fixed, True)
            row += wx * x[n, yi, xj, c]
        acc += wy * row
    if rnd:
        acc = math.floor(acc + 0.5)
    return min(max(acc, lo), hi)
