"""CUDA kernels for ROIPooling and _contrib_ROIAlign (per-bin math of
``nbdl.kernels.shared.roi`` as device functions): one thread per output
element; the gradients zero the data gradient, then add with atomics (bins
of different rois overlap)."""
import math

import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.roi import build, roi_align_scalars, roi_scalars
from ._launch import atomic_add, launcher
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

_s = build(cuda.jit(device=True), atomic_add)
_pool_max = cuda.jit(device=True)(_s.pool_max)
_align_value = cuda.jit(device=True)(_s.align_value)
_align_scatter = cuda.jit(device=True)(_s.align_scatter)


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
        best, arg = _pool_max(x, rois, r, c, ph, pw, N, C, H, W, PH, PW, scale, zero)
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
        v = _align_value(x, rois, r, c, ph, pw, C_in, H, W, PH, PW, scale, offset, ratio, sens,
                         zero)
        _put(out, (r, c, ph, pw), v, req == REQ_ADD)


@cuda.jit
def _align_backward(og, rois, dx, N, C_in, H, W, PH, PW, scale, zero, ratio, sens, offset):
    C = og.shape[1]
    for t in range(cuda.grid(1), og.size, cuda.gridsize(1)):
        pw = t % PW
        ph = (t // PW) % PH
        c = (t // (PW * PH)) % C
        r = t // (PW * PH * C)
        _align_scatter(og[r, c, ph, pw], dx, rois, r, c, ph, pw, C_in, H, W, PH, PW, scale,
                       offset, ratio, sens)


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
