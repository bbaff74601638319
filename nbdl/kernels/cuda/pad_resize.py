"""CUDA kernels for Pad and UpSampling (layouts as in
``nbdl.kernels.cpu.pad_resize``; the per-element math of
``nbdl.kernels.shared.pad_resize`` compiled as device functions): one thread
per output element; Pad's gradient gathers instead of scattering (no atomics, deterministic): one
thread per input element scans the output positions along each axis and
sums those whose source is that element (plain but correct; Pad's gradient
is not a hot path)."""
import math

import numpy as np

from numba import cuda

from ...ops.pad_resize import bilinear_geometry, upsampling_plan
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.pad_resize import (build, pad_layout, py_bilinear_dw, py_bilinear_dx,
                                 py_nearest_sum)
from ..shared.store import py_put, py_unravel4
from ._launch import launcher


_s = build(cuda.jit(device=True))
_source = _s.source
_pad_value = cuda.jit(device=True)(_s.pad_value)
_bilinear_at = cuda.jit(device=True)(_s.bilinear_at)
_nearest_sum = cuda.jit(device=True)(py_nearest_sum)
_bilinear_dx = cuda.jit(device=True)(py_bilinear_dx)
_bilinear_dw = cuda.jit(device=True)(py_bilinear_dw)
_put = cuda.jit(device=True)(py_put)
_unravel4 = cuda.jit(device=True)(py_unravel4)


@cuda.jit
def _pad_forward(x, out, pd, ph, pw, mode, value, req):
    D, H, W = out.shape[1], out.shape[2], out.shape[3]
    for r in range(cuda.grid(1), out.shape[0] * D * H * W, cuda.gridsize(1)):
        b, d, h, w = _unravel4(r, D, H, W)
        v = _pad_value(x, b, d, h, w, pd, ph, pw, mode, value)
        _put(out, (b, d, h, w), v, req == REQ_ADD)


@cuda.jit
def _pad_backward(og, dx, pd, ph, pw, mode, zero, req):
    D, H, W = dx.shape[1], dx.shape[2], dx.shape[3]
    for r in range(cuda.grid(1), dx.shape[0] * D * H * W, cuda.gridsize(1)):
        b, d, h, w = _unravel4(r, D, H, W)
        s = zero
        # every output position whose source is (d, h, w): check each candidate
        for od in range(og.shape[1]):
            if _source(od, pd, D, mode) != d:
                continue
            for oh in range(og.shape[2]):
                if _source(oh, ph, H, mode) != h:
                    continue
                for ow in range(og.shape[3]):
                    if _source(ow, pw, W, mode) == w:
                        s += og[b, od, oh, ow]
        _put(dx, (b, d, h, w), s, req == REQ_ADD)


def _noop(*args):
    pass


def prepare_pad(call):
    view, pview, pads, mode = pad_layout(call.attrs, call.in_shapes[0])
    n = math.prod(pview)
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=[view, pview])
    value = np.dtype(call.out_dtypes[0]).type(call.attrs["constant_value"])
    return Launch(launcher(_pad_forward, n), pads + (mode, value, int(call.req[0])),
                  views=[view, pview])


def prepare_pad_backward(call):
    view, pview, pads, mode = pad_layout(call.attrs, call.out_shapes[0])
    n = math.prod(view)
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=[pview, view])
    zero = np.dtype(call.out_dtypes[0]).type(0)
    return Launch(launcher(_pad_backward, n), pads + (mode, zero, int(call.req[0])),
                  views=[pview, view])


# -- UpSampling (nearest) --------------------------------------------------------------------

@cuda.jit
def _nearest_into(x, out, c0, sh, sw, add):
    C, OH, OW = x.shape[1], out.shape[2], out.shape[3]
    for r in range(cuda.grid(1), x.shape[0] * C * OH * OW, cuda.gridsize(1)):
        n, c, oy, ox = _unravel4(r, C, OH, OW)
        v = x[n, c, oy // sh, ox // sw]
        _put(out, (n, c0 + c, oy, ox), v, add)


@cuda.jit
def _nearest_backward(og, dx, c0, sh, sw, zero, req):
    C, H, W = dx.shape[1], dx.shape[2], dx.shape[3]
    for r in range(cuda.grid(1), dx.shape[0] * C * H * W, cuda.gridsize(1)):
        n, c, iy, ix = _unravel4(r, C, H, W)
        s = _nearest_sum(og, n, c, c0, iy, ix, sh, sw, zero)
        _put(dx, (n, c, iy, ix), s, req == REQ_ADD)


def prepare_upsampling(call):
    if call.attrs["sample_type"] == "bilinear":
        return _prepare_bilinear(call)
    out, plan = upsampling_plan(call.attrs, [tuple(s) for s in call.in_shapes])
    req = int(call.req[0])
    runs = [launcher(_nearest_into, math.prod(s[:2]) * out[2] * out[3]) for s in call.in_shapes]
    sizes = [math.prod(s[:2]) * out[2] * out[3] for s in call.in_shapes]
    summed = call.attrs["multi_input_mode"] == "sum"

    def fn(*arrays):
        if req == REQ_NULL:
            return
        xs, o = arrays[:-1], arrays[-1]
        for i, (x, run, (c0, sh, sw)) in enumerate(zip(xs, runs, plan)):
            if sizes[i]:
                run(x, o, c0, sh, sw, req == REQ_ADD or (summed and i > 0))
    return Launch(fn, ())


def prepare_upsampling_backward(call):
    _, plan = upsampling_plan(dict(call.attrs, sample_type="nearest"),
                              [tuple(s) for s in call.in_shapes[1:]])
    c0, sh, sw = plan[call.attrs["index"]]
    n = math.prod(call.out_shapes[0])
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, ())
    run = launcher(_nearest_backward, n)
    zero = np.dtype(call.out_dtypes[0]).type(0)
    req = int(call.req[0])

    def fn(og, *rest):
        run(og, rest[-1], c0, sh, sw, zero, req)
    return Launch(fn, ())


# -- UpSampling (bilinear) --------------------------------------------------------------------

@cuda.jit
def _bilinear_forward(x, w, out, s, p, zero, req):
    C, OH, OW = out.shape[1], out.shape[2], out.shape[3]
    for r in range(cuda.grid(1), out.shape[0] * C * OH * OW, cuda.gridsize(1)):
        n, c, oy, ox = _unravel4(r, C, OH, OW)
        acc = _bilinear_at(x, w, n, c, oy, ox, s, p, zero)
        _put(out, (n, c, oy, ox), acc, req == REQ_ADD)


@cuda.jit
def _bilinear_data_grad(og, w, dx, s, p, zero, req):
    C, H, W = dx.shape[1], dx.shape[2], dx.shape[3]
    for r in range(cuda.grid(1), dx.shape[0] * C * H * W, cuda.gridsize(1)):
        n, c, iy, ix = _unravel4(r, C, H, W)
        acc = _bilinear_dx(og, w, n, c, iy, ix, s, p, zero)
        _put(dx, (n, c, iy, ix), acc, req == REQ_ADD)


@cuda.jit
def _bilinear_weight_grad(og, x, dw, s, p, zero, req):
    k = dw.shape[2]
    for r in range(cuda.grid(1), dw.shape[0] * k * k, cuda.gridsize(1)):
        kx = r % k
        q = r // k
        ky = q % k
        c = q // k
        acc = _bilinear_dw(og, x, c, ky, kx, s, p, zero)
        _put(dw, (c, 0, ky, kx), acc, req == REQ_ADD)


def _prepare_bilinear(call):
    _, s, p = bilinear_geometry(call.attrs["scale"])
    n = math.prod(call.out_shapes[0])
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, ())
    zero = np.dtype(call.out_dtypes[0]).type(0)
    return Launch(launcher(_bilinear_forward, n), (s, p, zero, int(call.req[0])))


def prepare_bilinear_backward(call):
    _, s, p = bilinear_geometry(call.attrs["scale"])
    r_x, r_w = (int(r) for r in call.req)
    nx, nw = math.prod(call.out_shapes[0]), math.prod(call.out_shapes[1])
    zero = np.dtype(call.out_dtypes[0]).type(0)
    run_x = launcher(_bilinear_data_grad, nx) if r_x != REQ_NULL and nx else None
    run_w = launcher(_bilinear_weight_grad, nw) if r_w != REQ_NULL and nw else None

    def fn(og, x, w, dx, dw):
        if run_x is not None:
            run_x(og, w, dx, s, p, zero, r_x)
        if run_w is not None:
            run_w(og, x, dw, s, p, zero, r_w)
    return Launch(fn, ())
