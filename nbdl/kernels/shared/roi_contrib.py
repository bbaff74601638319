"""The per-bin math of _contrib_PSROIPooling, _contrib_DeformablePSROIPooling
and _contrib_RROIAlign (``register_jitable`` functions called from the
``njit`` kernels of ``kernels.cpu.roi_contrib`` and the CUDA kernels of
``kernels.cuda.roi_contrib``) and their prepare-time scalars.  Data are read
as flat (N * C * H * W,) arrays; arithmetic stays in the data's dtype
(``like.dtype.type``), in MXNet's order of operations.  RROIAlign samples
with ROIAlign's bilinear rule (``kernels.shared.roi.py_bilinear``)."""
import math

import numpy as np
from numba.extending import register_jitable

from ...ops.registry import REQ_NULL
from ...ops.roi_contrib import group_of, part_of
from .roi import py_bilinear

bilinear = register_jitable(py_bilinear)


def psroi_scalars(call, data_shape):
    """(N, C, H, W, P, G, output_dim, spatial_scale in the data's dtype)."""
    t = np.dtype(call.in_dtypes[0]).type
    a = call.attrs
    n, c, h, w = (int(v) for v in data_shape)
    return n, c, h, w, a["pooled_size"], group_of(a), a["output_dim"], t(a["spatial_scale"])


def deformable_scalars(call, data_shape, trans_shape):
    """psroi_scalars + (part size, samples per part, classes, trans_std, no_trans)."""
    t = np.dtype(call.in_dtypes[0]).type
    a = call.attrs
    classes = 1 if a["no_trans"] else int(trans_shape[1]) // 2
    return psroi_scalars(call, data_shape) + (part_of(a), a["sample_per_part"], classes,
                                              t(a["trans_std"]), bool(a["no_trans"]))


def rroi_scalars(call, data_shape):
    """(N, C, H, W, PH, PW, spatial_scale in the data's dtype, sampling_ratio)."""
    t = np.dtype(call.in_dtypes[0]).type
    a = call.attrs
    n, c, h, w = (int(v) for v in data_shape)
    ph, pw = (int(v) for v in a["pooled_size"])
    return n, c, h, w, ph, pw, t(a["spatial_scale"]), int(a["sampling_ratio"])


@register_jitable
def c_round(v):
    """C's round(): halves away from zero (an int)."""
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))


@register_jitable
def ps_box(rois, r, scale, off, like):
    """(batch, start x, start y, width, height) of roi ``r`` on the feature
    map: corners rounded, the end one pixel past the corner, minus ``off``."""
    t = like.dtype.type
    sw = t(c_round(rois[r, 1])) * scale - off
    sh = t(c_round(rois[r, 2])) * scale - off
    ew = t(c_round(rois[r, 3]) + 1) * scale - off
    eh = t(c_round(rois[r, 4]) + 1) * scale - off
    return int(rois[r, 0]), sw, sh, max(ew - sw, t(0.1)), max(eh - sh, t(0.1))


@register_jitable
def ps_group(ph, pw, P, G, like):
    """(gh, gw): the position-sensitive group of bin (ph, pw)."""
    t = like.dtype.type
    gw = min(max(int(math.floor(t(pw) * t(G) / t(P))), 0), G - 1)
    gh = min(max(int(math.floor(t(ph) * t(G) / t(P))), 0), G - 1)
    return gh, gw


@register_jitable
def psroi_bin(rois, r, k, ph, pw, N, C, H, W, P, G, scale, like):
    """(data offset of the bin's channel plane or -1, h0, h1, w0, w1) of
    PSROIPooling's output (r, k, ph, pw); -1 for an empty bin or a batch
    index outside [0, N)."""
    t = like.dtype.type
    b, sw, sh, rw, rh = ps_box(rois, r, scale, t(0), like)
    bh = rh / t(P)
    bw = rw / t(P)
    h0 = min(max(int(math.floor(t(ph) * bh + sh)), 0), H)
    w0 = min(max(int(math.floor(t(pw) * bw + sw)), 0), W)
    h1 = min(max(int(math.ceil(t(ph + 1) * bh + sh)), 0), H)
    w1 = min(max(int(math.ceil(t(pw + 1) * bw + sw)), 0), W)
    gh, gw = ps_group(ph, pw, P, G, like)
    c = (k * G + gh) * G + gw
    if h1 <= h0 or w1 <= w0 or b < 0 or b >= N:
        return -1, h0, h1, w0, w1
    return (b * C + c) * H * W, h0, h1, w0, w1


@register_jitable
def psroi_value(data, rois, r, k, ph, pw, N, C, H, W, P, G, scale):
    """PSROIPooling's output (r, k, ph, pw)."""
    t = data.dtype.type
    base, h0, h1, w0, w1 = psroi_bin(rois, r, k, ph, pw, N, C, H, W, P, G, scale, data)
    if base < 0:
        return t(0)
    acc = t(0)
    for h in range(h0, h1):
        for w in range(w0, w1):
            acc += data[base + h * W + w]
    return acc / t((h1 - h0) * (w1 - w0))


@register_jitable
def deformable_start(rois, trans, r, k, ph, pw, P, K, classes, scale, trans_std, no_trans,
                     output_dim, like):
    """(batch, start x, start y, sub-bin width, sub-bin height, box width,
    box height, offset index into trans or -1) of the deformable bin."""
    t = like.dtype.type
    b, sw, sh, rw, rh = ps_box(rois, r, scale, t(0.5), like)
    bh = rh / t(P)
    bw = rw / t(P)
    part_h = int(math.floor(t(ph) / t(P) * t(K)))
    part_w = int(math.floor(t(pw) / t(P) * t(K)))
    tx = t(0)
    ty = t(0)
    ti = -1
    if not no_trans:
        cls = k // (output_dim // classes)
        ti = (((r * classes + cls) * 2) * K + part_h) * K + part_w
        tx = trans[ti] * trans_std
        ty = trans[ti + K * K] * trans_std
    x0 = t(pw) * bw + sw + tx * rw
    y0 = t(ph) * bh + sh + ty * rh
    return b, x0, y0, bw, bh, rw, rh, ti


@register_jitable
def deformable_sample(x, y, H, W, like):
    """(inside, x, y) of a sample clamped to the map; outside when more than
    half a pixel beyond it."""
    t = like.dtype.type
    if x < -0.5 or x > W - 0.5 or y < -0.5 or y > H - 0.5:
        return False, x, y
    return True, min(max(x, t(0)), t(W - 1)), min(max(y, t(0)), t(H - 1))


@register_jitable
def deformable_taps(x, y, W):
    """(p00, p01, p10, p11, dx, dy): offsets of the floor/ceil neighbours
    (row-major: y then x) and the fractional distances, as MXNet's
    ``bilinear_interp``."""
    x1 = int(math.floor(x))
    x2 = int(math.ceil(x))
    y1 = int(math.floor(y))
    y2 = int(math.ceil(y))
    return y1 * W + x1, y1 * W + x2, y2 * W + x1, y2 * W + x2, x - x1, y - y1


@register_jitable
def deformable_value(data, rois, trans, r, k, ph, pw, N, C, H, W, P, G, output_dim, scale, K,
                     S, classes, trans_std, no_trans):
    """(output (r, k, ph, pw), number of samples taken)."""
    t = data.dtype.type
    b, x0, y0, bw, bh, rw, rh, ti = deformable_start(rois, trans, r, k, ph, pw, P, K, classes,
                                                     scale, trans_std, no_trans, output_dim,
                                                     data)
    if b < 0 or b >= N:
        return t(0), 0
    gh, gw = ps_group(ph, pw, P, G, data)
    base = (b * C + (k * G + gh) * G + gw) * H * W
    acc = t(0)
    count = 0
    for ih in range(S):
        for iw in range(S):
            inside, x, y = deformable_sample(x0 + t(iw) * (bw / t(S)), y0 + t(ih) * (bh / t(S)),
                                             H, W, data)
            if not inside:
                continue
            p00, p01, p10, p11, dx, dy = deformable_taps(x, y, W)
            acc += ((t(1) - dx) * (t(1) - dy) * data[base + p00] + (t(1) - dx) * dy * data[base + p10]
                    + dx * (t(1) - dy) * data[base + p01] + dx * dy * data[base + p11])
            count += 1
    if count == 0:
        return t(0), 0
    return acc / t(count), count


@register_jitable
def rroi_value(data, rois, r, c, ph, pw, N, C, H, W, PH, PW, scale, ratio):
    """RROIAlign's output (r, c, ph, pw)."""
    t = data.dtype.type
    b = int(rois[r, 0])
    cx = rois[r, 1] * scale
    cy = rois[r, 2] * scale
    rw = max(rois[r, 3] * scale, t(1))
    rh = max(rois[r, 4] * scale, t(1))
    theta = t(rois[r, 5] * math.pi / 180.0)
    if b < 0 or b >= N:
        return t(0)
    sh = t(-rh / 2.0)
    sw = t(-rw / 2.0)
    bh = rh / t(PH)
    bw = rw / t(PW)
    gh = ratio if ratio > 0 else int(math.ceil(rh / t(PH)))
    gw = ratio if ratio > 0 else int(math.ceil(rw / t(PW)))
    cos_t = t(math.cos(theta))
    sin_t = t(math.sin(theta))
    base = (b * C + c) * H * W
    acc = t(0)
    for iy in range(gh):
        yy = sh + t(ph) * bh + t(iy + 0.5) * bh / t(gh)
        for ix in range(gw):
            xx = sw + t(pw) * bw + t(ix + 0.5) * bw / t(gw)
            x = xx * cos_t + yy * sin_t + cx
            y = yy * cos_t - xx * sin_t + cy
            inside, yl, yh, xl, xh, w1, w2, w3, w4 = bilinear(y, x, H, W)
            if inside:
                acc += t(w1 * data[base + yl * W + xl] + w2 * data[base + yl * W + xh]
                         + w3 * data[base + yh * W + xl] + w4 * data[base + yh * W + xh])
    return acc / t(gh * gw)


@register_jitable
def deformable_count(x0, y0, bw, bh, S, H, W, like):
    """How many of a bin's samples fall on the map (the forward's count)."""
    t = like.dtype.type
    count = 0
    for ih in range(S):
        for iw in range(S):
            inside, _, _ = deformable_sample(x0 + t(iw) * (bw / t(S)), y0 + t(ih) * (bh / t(S)),
                                             H, W, like)
            if inside:
                count += 1
    return count


@register_jitable
def deformable_weights(dx, dy, like):
    """The weights of the neighbours p00, p01, p10, p11 (``deformable_taps``)."""
    one = like.dtype.type(1)
    return (one - dx) * (one - dy), dx * (one - dy), (one - dx) * dy, dx * dy


@register_jitable
def deformable_trans_grads(data, base, p00, p01, p10, p11, dx, dy, g, trans_std, rw, rh):
    """(d / d trans_x, d / d trans_y) of one sample times the head gradient
    share ``g`` (MXNet's formula: the sample's position derivative)."""
    one = data.dtype.type(1)
    u00 = data[base + p00]
    u01 = data[base + p10]
    u10 = data[base + p01]
    u11 = data[base + p11]
    gx = (u11 * dy + u10 * (one - dy) - u01 * dy - u00 * (one - dy)) * trans_std * g * rw
    gy = (u11 * dx + u01 * (one - dx) - u10 * dx - u00 * (one - dx)) * trans_std * g * rh
    return gx, gy


def deformable_parts(call, data_i):
    """(scalars of ``deformable_scalars``, data size, trans size (0 without
    trans)) of a DeformablePSROIPooling call whose data is input ``data_i``."""
    shapes = call.in_shapes
    trans_shape = None if call.attrs["no_trans"] else shapes[data_i + 2]
    s = deformable_scalars(call, shapes[data_i], trans_shape)
    return s, math.prod(shapes[data_i]), (math.prod(trans_shape) if trans_shape else 0)


def build_deformable_backward(add):
    """DeformablePSROIPooling's gradient of output (r, k, ph, pw), scattered
    into the data and trans gradients through ``add(a, index, value)`` (a
    serial add on the CPU, ``cuda.atomic.add`` on CUDA): the plain function
    ``point(og, data, rois, trans, gdata, gtrans, r, k, ph, pw, N, C, H, W,
    P, G, output_dim, scale, K, S, classes, trans_std, no_trans, req,
    req_trans)`` for the caller to compile.

    Parameters
    ----------
    add : compiled function
        Adds into ``gdata`` and ``gtrans`` (bins of different rois
        overlap).

    Returns
    -------
    function
        The per-bin gradient ``point``, plain Python.
    """
    def point(og, data, rois, trans, gdata, gtrans, r, k, ph, pw, N, C, H, W, P, G, output_dim,
              scale, K, S, classes, trans_std, no_trans, req, req_trans):
        t = data.dtype.type
        b, x0, y0, bw, bh, rw, rh, ti = deformable_start(rois, trans, r, k, ph, pw, P, K, classes,
                                                         scale, trans_std, no_trans, output_dim,
                                                         data)
        count = deformable_count(x0, y0, bw, bh, S, H, W, data)
        if b < 0 or b >= N or count == 0:
            return
        g = og[r, k, ph, pw] / t(count)
        gh, gw = ps_group(ph, pw, P, G, data)
        base = (b * C + (k * G + gh) * G + gw) * H * W
        for ih in range(S):
            for iw in range(S):
                inside, x, y = deformable_sample(x0 + t(iw) * (bw / t(S)),
                                                 y0 + t(ih) * (bh / t(S)), H, W, data)
                if not inside:
                    continue
                p00, p01, p10, p11, dx, dy = deformable_taps(x, y, W)
                if req != REQ_NULL:
                    q00, q01, q10, q11 = deformable_weights(dx, dy, data)
                    add(gdata, base + p00, q00 * g)
                    add(gdata, base + p01, q01 * g)
                    add(gdata, base + p10, q10 * g)
                    add(gdata, base + p11, q11 * g)
                if ti >= 0 and req_trans != REQ_NULL:
                    gx, gy = deformable_trans_grads(data, base, p00, p01, p10, p11, dx, dy, g,
                                                    trans_std, rw, rh)
                    add(gtrans, ti, gx)
                    add(gtrans, ti + K * K, gy)
    return point
