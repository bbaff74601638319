"""CUDA kernels for ROIPooling and _contrib_ROIAlign (per-bin math of
``nbdl.kernels.shared.roi`` as device functions): one thread per output
element; the gradients zero the data gradient, then add with atomics (bins
of different rois overlap)."""
import math

import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.roi import (py_align_box, py_align_channel, py_bilinear, py_pool_bin,
                          roi_align_scalars, roi_scalars)
from ._launch import launcher

_pool_bin = cuda.jit(device=True)(py_pool_bin)
_align_box = cuda.jit(device=True)(py_align_box)
_bilinear = cuda.jit(device=True)(py_bilinear)
_align_channel = cuda.jit(device=True)(py_align_channel)


def _noop(*args):
    pass


@cuda.jit
def _zero(dx, zero):
    for i in range(cuda.grid(1), dx.size, cuda.gridsize(1)):
        dx[i] = zero


@cuda.jit
def _pool_forward(x, rois, out, idx, N, C, H, W, PH, PW, scale, zero, w_out, w_idx):
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        pw = t % PW
        ph = (t // PW) % PH
        c = (t // (PW * PH)) % C
        r = t // (PW * PH * C)
        b, h0, h1, w0, w1 = _pool_bin(rois, r, ph, pw, N, H, W, PH, PW, scale)
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


@cuda.jit
def _pool_backward(og, idx, dx):
    for i in range(cuda.grid(1), og.size, cuda.gridsize(1)):
        j = idx[i]
        if j >= 0:
            cuda.atomic.add(dx, j, og[i])


def prepare_roi_pooling(call):
    s = roi_scalars(call, call.in_shapes[0])
    n = s[0] * s[1] * s[2] * s[3]
    m = math.prod(call.out_shapes[0])
    views = [(n,), None, None, None]
    if m == 0:
        return Launch(_noop, (), views=views)
    return Launch(launcher(_pool_forward, m),
                  s + (call.req[0] != REQ_NULL, call.req[1] != REQ_NULL), views=views)


def prepare_roi_pooling_backward(call):
    n = math.prod(call.in_shapes[1])
    m = math.prod(call.in_shapes[0])
    views = [(m,), (n,), (m,), (n,)]
    if call.req[0] == REQ_NULL or n == 0:
        return Launch(_noop, (), views=views)
    zero_run = launcher(_zero, n)
    run = launcher(_pool_backward, max(m, 1))
    add = call.req[0] == REQ_ADD
    zero = np.dtype(call.out_dtypes[0]).type(0)

    def fn(og, data, idx, dx):
        if not add:
            zero_run(dx, zero)
        if m:
            run(og, idx, dx)
    return Launch(fn, (), views=views)


@cuda.jit
def _align_forward(x, rois, out, N, C_in, H, W, PH, PW, scale, zero, ratio, sens, offset, req):
    C = out.shape[1]
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        pw = t % PW
        ph = (t // PW) % PH
        c = (t // (PW * PH)) % C
        r = t // (PW * PH * C)
        b, y0, x0, dy, dx_, gh, gw = _align_box(rois, r, ph, pw, PH, PW, scale, offset, ratio)
        v = zero
        if b >= 0 and gh * gw > 0:
            base = (b * C_in + _align_channel(c, ph, pw, C_in, PH, PW, sens)) * H * W
            acc = zero
            for iy in range(gh):
                for ix in range(gw):
                    inside, yl, yh, xl, xh, w1, w2, w3, w4 = _bilinear(y0 + iy * dy,
                                                                       x0 + ix * dx_, H, W)
                    if inside:
                        acc += (w1 * x[base + yl * W + xl] + w2 * x[base + yl * W + xh]
                                + w3 * x[base + yh * W + xl] + w4 * x[base + yh * W + xh])
            v = acc / (gh * gw)
        if req == REQ_ADD:
            out[r, c, ph, pw] += v
        else:
            out[r, c, ph, pw] = v


@cuda.jit
def _align_backward(og, rois, dx, N, C_in, H, W, PH, PW, scale, zero, ratio, sens, offset):
    C = og.shape[1]
    for t in range(cuda.grid(1), og.size, cuda.gridsize(1)):
        pw = t % PW
        ph = (t // PW) % PH
        c = (t // (PW * PH)) % C
        r = t // (PW * PH * C)
        b, y0, x0, dy, dx_, gh, gw = _align_box(rois, r, ph, pw, PH, PW, scale, offset, ratio)
        if b < 0 or gh * gw == 0:
            continue
        base = (b * C_in + _align_channel(c, ph, pw, C_in, PH, PW, sens)) * H * W
        g = og[r, c, ph, pw] / (gh * gw)
        for iy in range(gh):
            for ix in range(gw):
                inside, yl, yh, xl, xh, w1, w2, w3, w4 = _bilinear(y0 + iy * dy, x0 + ix * dx_,
                                                                   H, W)
                if inside:
                    cuda.atomic.add(dx, base + yl * W + xl, w1 * g)
                    cuda.atomic.add(dx, base + yl * W + xh, w2 * g)
                    cuda.atomic.add(dx, base + yh * W + xl, w3 * g)
                    cuda.atomic.add(dx, base + yh * W + xh, w4 * g)


def prepare_roi_align(call):
    s = roi_scalars(call, call.in_shapes[0])
    n = s[0] * s[1] * s[2] * s[3]
    m = math.prod(call.out_shapes[0])
    views = [(n,), None, None]
    if m == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    return Launch(launcher(_align_forward, m), s + roi_align_scalars(call) + (call.req[0],),
                  views=views)


def prepare_roi_align_backward(call):
    s = roi_scalars(call, call.in_shapes[1])
    n = s[0] * s[1] * s[2] * s[3]
    m = math.prod(call.in_shapes[0])
    views = [None, (n,), None, (n,)]
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    zero_run = launcher(_zero, n)
    run = launcher(_align_backward, max(m, 1))
    add = call.req[0] == REQ_ADD
    scalars = s + roi_align_scalars(call)

    def fn(og, data, rois, dx):
        if not add:
            zero_run(dx, s[7])
        if m:
            run(og, rois, dx, *scalars)
    return Launch(fn, (), views=views)
