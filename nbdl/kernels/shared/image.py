"""Pixel math of the ``_image_*`` ops (``register_jitable`` functions called
from the ``njit`` kernels of ``kernels.cpu.image`` / ``image_random`` and the
CUDA kernels of ``kernels.cuda.image`` / ``image_random``) and their
prepare-time scalars.

Colour arithmetic is float32, as MXNet's ``image_random-inl.h``, and a
result is stored with MXNet's ``saturate_cast`` (clamped to the output
dtype's range ``[lo, hi]``: [0, 255] for uint8; the integer conversion then
truncates).  Images are read as (N, H*W, C) (or flat) arrays of pixels.
"""
import numpy as np
from numba.extending import register_jitable

MODE_BRIGHTNESS = 0
MODE_CONTRAST = 1
MODE_SATURATION = 2
MODE_HUE = 3
MODE_LIGHTING = 4
# the colour modes in the order of the _image_random_{brightness, contrast,
# saturation, hue, lighting} ops
COLOR_MODES = (MODE_BRIGHTNESS, MODE_CONTRAST, MODE_SATURATION, MODE_HUE, MODE_LIGHTING)

_F = np.float32
# MXNet's luma coefficients and AlexNet's PCA (eigenvalue times eigenvector),
# rounded to float32 as MXNet's static tables are
_R, _G, _B = _F(0.299), _F(0.587), _F(0.114)
EIG = ((_F(55.46 * -0.5675), _F(4.794 * 0.7192), _F(1.148 * 0.4009)),
       (_F(55.46 * -0.5808), _F(4.794 * -0.0045), _F(1.148 * -0.8140)),
       (_F(55.46 * -0.5836), _F(4.794 * -0.6948), _F(1.148 * 0.4203)))
_E00, _E01, _E02 = EIG[0]
_E10, _E11, _E12 = EIG[1]
_E20, _E21, _E22 = EIG[2]
_EPS = _F(1.1920929e-07)       # FLT_EPSILON


def saturation_bounds(dtype):
    """(lo, hi) float32 bounds of MXNet's ``saturate_cast`` to ``dtype``
    (only uint8 clamps in MXNet; other integers are clamped to their range
    here instead of overflowing)."""
    dt = np.dtype(dtype)
    if dt == np.uint8:
        return _F(0), _F(255)
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return _F(info.min), _F(info.max)
    return _F(-np.inf), _F(np.inf)


def image_layout(shape):
    """(N, H, W, C) of an HWC image (N = 1) or NHWC batch."""
    s = tuple(int(v) for v in shape)
    return (1,) + s if len(s) == 3 else s


def lighting_pca(alpha):
    """The (R, G, B) offsets of AlexNet's PCA lighting for ``alpha`` (float32)."""
    a0, a1, a2 = (_F(v) for v in alpha)
    return pca_offsets(a0, a1, a2)


@register_jitable
def pca_offsets(a0, a1, a2):
    """(R, G, B) offsets ``EIG @ (a0, a1, a2)``."""
    return (_E00 * a0 + _E01 * a1 + _E02 * a2, _E10 * a0 + _E11 * a1 + _E12 * a2,
            _E20 * a0 + _E21 * a1 + _E22 * a2)


@register_jitable
def store(out, i, v, lo, hi):
    """``out[i] = saturate_cast(v)``."""
    if v < lo:
        v = lo
    if v > hi:
        v = hi
    out[i] = v


@register_jitable
def gray_mean(src, base, HW, C):
    """MXNet's contrast reference: the mean luma of the image at ``base``
    (the mean value for one channel), in float32."""
    acc = _F(0)
    if C > 1:
        for p in range(HW):
            q = base + p * C
            acc += _F(src[q]) * _R + _F(src[q + 1]) * _G + _F(src[q + 2]) * _B
    else:
        for p in range(HW):
            acc += _F(src[base + p])
    return acc / _F(HW)


@register_jitable
def rgb_to_hls(r, g, b):
    """OpenCV's RGB [0, 255] -> (hue in degrees, lightness, saturation)."""
    r = r / _F(255)
    g = g / _F(255)
    b = b / _F(255)
    vmax = max(max(r, g), b)
    vmin = min(min(r, g), b)
    diff = vmax - vmin
    lum = (vmax + vmin) * _F(0.5)
    h = _F(0)
    s = _F(0)
    if diff > _EPS:
        s = diff / (vmax + vmin) if lum < _F(0.5) else diff / (_F(2) - vmax - vmin)
        diff = _F(60) / diff
        if vmax == r:
            h = (g - b) * diff
        elif vmax == g:
            h = (b - r) * diff + _F(120)
        else:
            h = (r - g) * diff + _F(240)
        if h < _F(0):
            h += _F(360)
    return h, lum, s


@register_jitable
def hls_to_rgb(h, lum, s):
    """OpenCV's HLS -> RGB [0, 255] (MXNet's ``HLS2RGBConvert``)."""
    r = lum
    g = lum
    b = lum
    if s != _F(0):
        p2 = lum * (_F(1) + s) if lum <= _F(0.5) else lum + s - lum * s
        p1 = _F(2) * lum - p2
        h = h * (_F(1) / _F(60))
        while h < _F(0):
            h += _F(6)
        while h >= _F(6):
            h -= _F(6)
        sector = int(h)
        h -= _F(sector)
        t2 = p1 + (p2 - p1) * (_F(1) - h)
        t3 = p1 + (p2 - p1) * h
        # OpenCV's sector table: (b, g, r) picks from (p2, p1, t2, t3)
        if sector == 0:
            b, g, r = p1, t3, p2
        elif sector == 1:
            b, g, r = p1, p2, t2
        elif sector == 2:
            b, g, r = t3, p2, p1
        elif sector == 3:
            b, g, r = p2, t2, p1
        elif sector == 4:
            b, g, r = p2, p1, t3
        else:
            b, g, r = t2, p1, p2
    return r * _F(255), g * _F(255), b * _F(255)


@register_jitable
def apply_pixel(src, out, q, C, mode, a, mean, c0, c1, c2, lo, hi):
    """One colour step on the pixel whose first channel is at flat index
    ``q``: brightness ``x * a``; contrast ``x * a + (1 - a) * mean``;
    saturation (MXNet's: the blend's gray level is 0.114 * blue);
    hue (rotate by ``a`` turns in HLS); lighting ``x + (c0, c1, c2)``.  A
    one-channel pixel is copied by saturation, hue and lighting."""
    if mode == MODE_BRIGHTNESS:
        for c in range(C):
            store(out, q + c, _F(src[q + c]) * a, lo, hi)
    elif mode == MODE_CONTRAST:
        beta = (_F(1) - a) * mean
        for c in range(C):
            store(out, q + c, _F(src[q + c]) * a + beta, lo, hi)
    elif C == 1:
        store(out, q, _F(src[q]), lo, hi)
    elif mode == MODE_SATURATION:
        gray = _F(src[q + 2]) * _B * (_F(1) - a)
        for c in range(3):
            store(out, q + c, gray + _F(src[q + c]) * a, lo, hi)
    elif mode == MODE_HUE:
        h, lum, s = rgb_to_hls(_F(src[q]), _F(src[q + 1]), _F(src[q + 2]))
        r, g, b = hls_to_rgb(h + a * _F(360), lum, s)
        store(out, q, r, lo, hi)
        store(out, q + 1, g, lo, hi)
        store(out, q + 2, b, lo, hi)
    else:
        store(out, q, _F(src[q]) + c0, lo, hi)
        store(out, q + 1, _F(src[q + 1]) + c1, lo, hi)
        store(out, q + 2, _F(src[q + 2]) + c2, lo, hi)


@register_jitable
def to_tensor_element(x, out, n, c, p, add):
    """``out[n, c, p] = x[n, p, c] / 255`` (float32; ``add``: accumulate)."""
    v = _F(x[n, p, c]) / _F(255)
    if add:
        out[n, c, p] += v
    else:
        out[n, c, p] = v


@register_jitable
def normalize_element(x, out, n, c, p, a0, a1, a2, b0, b1, b2, add):
    """``out[n, c, p] = (x[n, c, p] - a[c]) / b[c]`` (C <= 3; ``add``: accumulate)."""
    a = a0 if c == 0 else (a1 if c == 1 else a2)
    b = b0 if c == 0 else (b1 if c == 1 else b2)
    v = (x[n, c, p] - a) / b
    if add:
        out[n, c, p] += v
    else:
        out[n, c, p] = v


@register_jitable
def flip_source(n, h, w, H, W, fh, fw):
    """The source pixel (n, h', w') of output pixel (n, h, w)."""
    return n, H - 1 - h if fh else h, W - 1 - w if fw else w


# -- prepare-time plans (host code both devices' prepare functions use) ---------------------------

def normalize_plan(call, backward):
    """((N, C, HW) view, float32 (mean x 3, std x 3)) of a normalize call
    (zero means for the backward, ``g / std``)."""
    a = call.attrs
    s = tuple(int(v) for v in call.in_shapes[0])
    s = (1,) + s if len(s) == 3 else s
    mean = [0.0] * 3 if backward else list(a["mean"]) * (3 // len(a["mean"]))
    std = list(a["std"]) * (3 // len(a["std"]))
    return (s[0], s[1], s[2] * s[3]), tuple(_F(v) for v in mean[:3] + std[:3])


def crop_views(attrs, shape):
    """(data view (N, H, W*C), output view (N, h, w*C), y, x*C): an image
    crop as Crop's kernels see it."""
    n, h, w, c = image_layout(shape)
    return (n, h, w * c), (n, attrs["height"], attrs["width"] * c), attrs["y"], attrs["x"] * c


def color_layout(call):
    """(flat view, N, H*W, C, saturation bounds) of a colour op's call."""
    n, h, w, c = image_layout(call.in_shapes[0])
    lo, hi = saturation_bounds(call.out_dtypes[0])
    return (n * h * w * c,), n, h * w, c, lo, hi


def color_scalars(attrs, mode):
    """A random colour step's (mode, factor range, alpha_std)."""
    if mode == MODE_LIGHTING:
        return mode, 0.0, 0.0, float(attrs["alpha_std"])
    return mode, float(attrs["min_factor"]), float(attrs["max_factor"]), 0.0


def jitter_amounts(attrs):
    """The colour jitter's (brightness, contrast, saturation, hue), float32."""
    return tuple(_F(attrs[k]) for k in ("brightness", "contrast", "saturation", "hue"))


def flip_axes(call):
    """(vertical, horizontal) of a (random) flip op."""
    lr = call.op.name.endswith("left_right")
    return not lr, lr
