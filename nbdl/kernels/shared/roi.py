"""ROIPooling's and ROIAlign's scalars and per-bin math (plain Python:
compiled by ``njit`` in ``kernels.cpu.roi``, by ``cuda.jit(device=True)`` in
``kernels.cuda.roi``; ``build(jit, add)`` for the per-bin routines that call
them).  The data are seen as (N, C, H, W), the outputs as (R, C_out, PH, PW)."""
import math
from types import SimpleNamespace

import numpy as np


_FLT_LOWEST = -3.4028234663852886e+38   # C's -FLT_MAX

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


def build(jit, add):
    """Compile the per-bin functions above with ``jit`` and return them with
    the plain per-output routines built on them (the caller compiles those).

    Parameters
    ----------
    jit : callable
        The decorator applied to ``py_pool_bin``, ``py_align_box``,
        ``py_bilinear`` and ``py_align_channel``.
    add : compiled function
        The device's scatter-add ``add(a, index, value)`` (serial on the
        CPU, atomic on CUDA).

    Returns
    -------
    SimpleNamespace
        ``pool_max(x, rois, r, c, ph, pw, N, C, H, W, PH, PW, scale, zero)``:
        ROIPooling's (max, flat index of it or -1) of one output;
        ``align_value(x, rois, r, c, ph, pw, C_in, H, W, PH, PW, scale, offset,
        ratio, sens, zero)``: ROIAlign's output; ``align_scatter(g, dx, rois,
        r, c, ph, pw, C_in, H, W, PH, PW, scale, offset, ratio, sens)``: the
        output gradient ``g`` added to the data gradient.
    """
    pool_bin = jit(py_pool_bin)
    align_box = jit(py_align_box)
    bilinear = jit(py_bilinear)
    align_channel = jit(py_align_channel)

    def pool_max(x, rois, r, c, ph, pw, N, C, H, W, PH, PW, scale, zero):
        b, h0, h1, w0, w1 = pool_bin(rois, r, ph, pw, N, H, W, PH, PW, scale)
        if b < 0 or h1 <= h0 or w1 <= w0:
            return zero, -1
        # MXNet's rule: the maximum starts at -FLT_MAX (whatever the dtype) and
        # takes each element strictly greater, so NaN never wins; a bin of NaN
        # gives -FLT_MAX and no index (its gradient goes nowhere)
        best = x.dtype.type(_FLT_LOWEST)
        arg = -1
        base = (b * C + c) * H * W
        for h in range(h0, h1):
            for w in range(w0, w1):
                v = x[base + h * W + w]
                if v > best:
                    best = v
                    arg = base + h * W + w
        return best, arg

    def align_value(x, rois, r, c, ph, pw, C_in, H, W, PH, PW, scale, offset, ratio, sens,
                    zero):
        b, y0, x0, dy, dx_, gh, gw = align_box(rois, r, ph, pw, PH, PW, scale, offset, ratio)
        if b < 0 or gh * gw == 0:
            return zero
        base = (b * C_in + align_channel(c, ph, pw, C_in, PH, PW, sens)) * H * W
        acc = zero
        for iy in range(gh):
            for ix in range(gw):
                inside, yl, yh, xl, xh, w1, w2, w3, w4 = bilinear(y0 + iy * dy, x0 + ix * dx_,
                                                                  H, W)
                if inside:
                    acc += (w1 * x[base + yl * W + xl] + w2 * x[base + yl * W + xh]
                            + w3 * x[base + yh * W + xl] + w4 * x[base + yh * W + xh])
        return acc / (gh * gw)

    def align_scatter(g, dx, rois, r, c, ph, pw, C_in, H, W, PH, PW, scale, offset, ratio,
                      sens):
        b, y0, x0, dy, dx_, gh, gw = align_box(rois, r, ph, pw, PH, PW, scale, offset, ratio)
        if b < 0 or gh * gw == 0:
            return
        base = (b * C_in + align_channel(c, ph, pw, C_in, PH, PW, sens)) * H * W
        g = g / (gh * gw)
        for iy in range(gh):
            for ix in range(gw):
                inside, yl, yh, xl, xh, w1, w2, w3, w4 = bilinear(y0 + iy * dy, x0 + ix * dx_,
                                                                  H, W)
                if inside:
                    add(dx, base + yl * W + xl, w1 * g)
                    add(dx, base + yl * W + xh, w2 * g)
                    add(dx, base + yh * W + xl, w3 * g)
                    add(dx, base + yh * W + xh, w4 * g)

    return SimpleNamespace(pool_bin=pool_bin, align_box=align_box, bilinear=bilinear,
                           align_channel=align_channel, pool_max=pool_max,
                           align_value=align_value, align_scatter=align_scatter)
