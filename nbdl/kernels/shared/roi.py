"""ROIPooling's and ROIAlign's scalars and per-bin math (plain Python:
compiled by ``njit`` in ``kernels.cpu.roi``, by ``cuda.jit(device=True)`` in
``kernels.cuda.roi``).  The data are seen as (N, C, H, W), the outputs as
(R, C_out, PH, PW)."""
import math

import numpy as np


def roi_scalars(call, data_shape):
    """(N, C, H, W, PH, PW, spatial_scale in the data's dtype, zero)."""
    t = np.dtype(call.in_dtypes[0]).type
    n, c, h, w = (int(v) for v in data_shape)
    ph, pw = (int(v) for v in call.attrs["pooled_size"])
    return n, c, h, w, ph, pw, t(call.attrs["spatial_scale"]), t(0)


def roi_align_scalars(call):
    """(sample_ratio, position_sensitive, half-pixel offset in the data's dtype)."""
    t = np.dtype(call.in_dtypes[0]).type
    a = call.attrs
    return int(a["sample_ratio"]), bool(a["position_sensitive"]), t(0.5 if a["aligned"] else 0.0)


def py_pool_bin(rois, r, ph, pw, N, H, W, PH, PW, scale):
    """(batch, h0, h1, w0, w1) of ROIPooling's bin (ph, pw) of roi ``r``;
    batch -1 when the bin is empty or the batch index invalid."""
    b = int(rois[r, 0])
    # C's round(): halves away from zero
    v = rois[r, 1] * scale
    x1 = int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))
    v = rois[r, 2] * scale
    y1 = int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))
    v = rois[r, 3] * scale
    x2 = int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))
    v = rois[r, 4] * scale
    y2 = int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))
    rh = max(y2 - y1 + 1, 1)
    rw = max(x2 - x1 + 1, 1)
    bh = rh / PH
    bw = rw / PW
    h0 = min(max(int(math.floor(ph * bh)) + y1, 0), H)
    h1 = min(max(int(math.ceil((ph + 1) * bh)) + y1, 0), H)
    w0 = min(max(int(math.floor(pw * bw)) + x1, 0), W)
    w1 = min(max(int(math.ceil((pw + 1) * bw)) + x1, 0), W)
    if b < 0 or b >= N or h1 <= h0 or w1 <= w0:
        b = -1
    return b, h0, h1, w0, w1


def py_align_box(rois, r, ph, pw, PH, PW, scale, offset, ratio):
    """(batch, y of the bin's first sample, x of it, sample step y, step x,
    samples y, samples x) of ROIAlign's bin (ph, pw) of roi ``r``."""
    b = int(rois[r, 0])
    sw = rois[r, 1] * scale - offset
    sh = rois[r, 2] * scale - offset
    ew = rois[r, 3] * scale - offset
    eh = rois[r, 4] * scale - offset
    rw = ew - sw
    rh = eh - sh
    if offset == 0:
        if rw < 1:
            rw = rw - rw + 1
        if rh < 1:
            rh = rh - rh + 1
    bh = rh / PH
    bw = rw / PW
    gh = ratio if ratio > 0 else int(math.ceil(rh / PH))
    gw = ratio if ratio > 0 else int(math.ceil(rw / PW))
    y0 = sh + ph * bh + 0.5 * bh / gh
    x0 = sw + pw * bw + 0.5 * bw / gw
    return b, y0, x0, bh / gh, bw / gw, gh, gw


def py_bilinear(y, x, H, W):
    """(inside, y_low, y_high, x_low, x_high, weight of each of the four) of a
    sample at (y, x), as MXNet's ROIAlign clamps it."""
    if y < -1.0 or y > H or x < -1.0 or x > W:
        return False, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0
    if y <= 0:
        y = 0.0
    if x <= 0:
        x = 0.0
    yl = int(y)
    xl = int(x)
    if yl >= H - 1:
        yl = H - 1
        yh = yl
        y = float(yl)
    else:
        yh = yl + 1
    if xl >= W - 1:
        xl = W - 1
        xh = xl
        x = float(xl)
    else:
        xh = xl + 1
    ly = y - yl
    lx = x - xl
    hy = 1.0 - ly
    hx = 1.0 - lx
    return True, yl, yh, xl, xh, hy * hx, hy * lx, ly * hx, ly * lx


def py_align_channel(c, ph, pw, C, PH, PW, sensitive):
    """The data channel read for output channel ``c`` at bin (ph, pw)."""
    if sensitive:
        return (c * PH + ph) * PW + pw
    return c
