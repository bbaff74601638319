"""CPU kernels for ROIPooling and _contrib_ROIAlign and their gradients, the
per-bin math of ``nbdl.kernels.shared.roi`` compiled here."""
import math

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.roi import (py_align_box, py_align_channel, py_bilinear, py_pool_bin,
                          roi_align_scalars, roi_scalars)

_pool_bin = njit(cache=True, inline="always")(py_pool_bin)
_align_box = njit(cache=True, inline="always")(py_align_box)
_bilinear = njit(cache=True, inline="always")(py_bilinear)
_align_channel = njit(cache=True, inline="always")(py_align_channel)


@njit(cache=True)
def roi_pool_forward(x, rois, out, idx, N, C, H, W, PH, PW, scale, zero, w_out, w_idx):
    for r in range(out.shape[0]):
        for ph in range(PH):
            for pw in range(PW):
                b, h0, h1, w0, w1 = _pool_bin(rois, r, ph, pw, N, H, W, PH, PW, scale)
                for c in range(C):
                    best = zero
                    arg = -1
                    if b >= 0:
                        base = (b * C + c) * H * W
                        for h in range(h0, h1):
                            for w in range(w0, w1):
                                v = x[base + h * W + w]
                                if arg < 0 or v > best:
                                    best = v
                                    arg = base + h * W + w
                    if w_out:
                        out[r, c, ph, pw] = best
                    if w_idx:
                        idx[r, c, ph, pw] = arg


@njit(cache=True)
def roi_pool_backward(og, data, idx, dx, req):
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        dx[:] = 0
    for i in range(og.size):
        j = idx[i]
        if j >= 0:
            dx[j] += og[i]


def prepare_roi_pooling(call):
    s = roi_scalars(call, call.in_shapes[0])
    n = s[0] * s[1] * s[2] * s[3]
    return Launch(roi_pool_forward, s + (call.req[0] != REQ_NULL, call.req[1] != REQ_NULL),
                  views=[(n,), None, None, None])


def prepare_roi_pooling_backward(call):
    n = math.prod(call.in_shapes[1])
    m = math.prod(call.in_shapes[0])
    return Launch(roi_pool_backward, (call.req[0],), views=[(m,), (n,), (m,), (n,)])


@njit(cache=True)
def _align_bin(x, rois, r, c, ph, pw, C_in, H, W, PH, PW, scale, offset, ratio, sens, zero):
    b, y0, x0, dy, dx_, gh, gw = _align_box(rois, r, ph, pw, PH, PW, scale, offset, ratio)
    if b < 0:
        return zero
    base = (b * C_in + _align_channel(c, ph, pw, C_in, PH, PW, sens)) * H * W
    acc = zero
    for iy in range(gh):
        y = y0 + iy * dy
        for ix in range(gw):
            inside, yl, yh, xl, xh, w1, w2, w3, w4 = _bilinear(y, x0 + ix * dx_, H, W)
            if inside:
                acc += (w1 * x[base + yl * W + xl] + w2 * x[base + yl * W + xh]
                        + w3 * x[base + yh * W + xl] + w4 * x[base + yh * W + xh])
    return acc / (gh * gw) if gh * gw > 0 else zero


@njit(cache=True)
def roi_align_forward(x, rois, out, N, C_in, H, W, PH, PW, scale, zero, ratio, sens, offset,
                      req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    for r in range(out.shape[0]):
        for c in range(out.shape[1]):
            for ph in range(PH):
                for pw in range(PW):
                    v = _align_bin(x, rois, r, c, ph, pw, C_in, H, W, PH, PW, scale, offset,
                                   ratio, sens, zero)
                    if add:
                        out[r, c, ph, pw] += v
                    else:
                        out[r, c, ph, pw] = v


@njit(cache=True)
def roi_align_backward(og, data, rois, dx, N, C_in, H, W, PH, PW, scale, zero, ratio, sens,
                       offset, req):
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        dx[:] = zero
    for r in range(og.shape[0]):
        for c in range(og.shape[1]):
            for ph in range(PH):
                for pw in range(PW):
                    b, y0, x0, dy, dx_, gh, gw = _align_box(rois, r, ph, pw, PH, PW, scale,
                                                            offset, ratio)
                    if b < 0 or gh * gw == 0:
                        continue
                    base = (b * C_in + _align_channel(c, ph, pw, C_in, PH, PW, sens)) * H * W
                    g = og[r, c, ph, pw] / (gh * gw)
                    for iy in range(gh):
                        for ix in range(gw):
                            inside, yl, yh, xl, xh, w1, w2, w3, w4 = _bilinear(
                                y0 + iy * dy, x0 + ix * dx_, H, W)
                            if inside:
                                dx[base + yl * W + xl] += w1 * g
                                dx[base + yl * W + xh] += w2 * g
                                dx[base + yh * W + xl] += w3 * g
                                dx[base + yh * W + xh] += w4 * g


def prepare_roi_align(call):
    s = roi_scalars(call, call.in_shapes[0])
    n = s[0] * s[1] * s[2] * s[3]
    return Launch(roi_align_forward, s + roi_align_scalars(call) + (call.req[0],),
                  views=[(n,), None, None])


def prepare_roi_align_backward(call):
    s = roi_scalars(call, call.in_shapes[1])
    n = s[0] * s[1] * s[2] * s[3]
    return Launch(roi_align_backward, s + roi_align_scalars(call) + (call.req[0],),
                  views=[None, (n,), None, (n,)])
