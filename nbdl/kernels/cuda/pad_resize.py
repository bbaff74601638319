"""CUDA kernels for Pad and nearest UpSampling (layouts as in
``nbdl.kernels.cpu.pad_resize``): one thread per output element; Pad's
gradient gathers instead of scattering (no atomics, deterministic): one
thread per input element scans the output positions along each axis and
sums those whose source is that element (plain but correct; Pad's gradient
is not a hot path)."""
import math

import numpy as np

from numba import cuda

from ...ops.pad_resize import bilinear_geometry, upsampling_plan
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.pad_resize import pad_layout
from ._launch import launcher


@cuda.jit(device=True)
def _source(o, before, n, mode):
    i = o - before
    if 0 <= i < n:
        return i
    if mode == 0:
        return -1
    if mode == 1:
        return 0 if i < 0 else n - 1
    return -i if i < 0 else 2 * (n - 1) - i


@cuda.jit
def _pad_forward(x, out, pd, ph, pw, mode, value, req):
    D, H, W = out.shape[1], out.shape[2], out.shape[3]
    for r in range(cuda.grid(1), out.shape[0] * D * H * W, cuda.gridsize(1)):
        w = r % W
        q = r // W
        h = q % H
        q = q // H
        d = q % D
        b = q // D
        sd = _source(d, pd, x.shape[1], mode)
        sh = _source(h, ph, x.shape[2], mode)
        sw = _source(w, pw, x.shape[3], mode)
        v = value if sd < 0 or sh < 0 or sw < 0 else x[b, sd, sh, sw]
        if req == REQ_ADD:
            out[b, d, h, w] += v
        else:
            out[b, d, h, w] = v


@cuda.jit
def _pad_backward(og, dx, pd, ph, pw, mode, zero, req):
    D, H, W = dx.shape[1], dx.shape[2], dx.shape[3]
    for r in range(cuda.grid(1), dx.shape[0] * D * H * W, cuda.gridsize(1)):
        w = r % W
        q = r // W
        h = q % H
        q = q // H
        d = q % D
        b = q // D
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
        if req == REQ_ADD:
            dx[b, d, h, w] += s
        else:
            dx[b, d, h, w] = s


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
        ox = r % OW
        q = r // OW
        oy = q % OH
        q = q // OH
        c = q % C
        n = q // C
        v = x[n, c, oy // sh, ox // sw]
        if add:
            out[n, c0 + c, oy, ox] += v
        else:
            out[n, c0 + c, oy, ox] = v


@cuda.jit
def _nearest_backward(og, dx, c0, sh, sw, zero, req):
    C, H, W = dx.shape[1], dx.shape[2], dx.shape[3]
    for r in range(cuda.grid(1), dx.shape[0] * C * H * W, cuda.gridsize(1)):
        ix = r % W
        q = r // W
        iy = q % H
        q = q // H
        c = q % C
        n = q // C
        s = zero
        for a in range(sh):
            for b in range(sw):
                s += og[n, c0 + c, iy * sh + a, ix * sw + b]
        if req == REQ_ADD:
            dx[n, c, iy, ix] += s
        else:
            dx[n, c, iy, ix] = s


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
    k = w.shape[2]
    for r in range(cuda.grid(1), out.shape[0] * C * OH * OW, cuda.gridsize(1)):
        ox = r % OW
        q = r // OW
        oy = q % OH
        q = q // OH
        c = q % C
        n = q // C
        acc = zero
        for iy in range(x.shape[2]):
            ky = oy + p - iy * s
            if 0 <= ky < k:
                for ix in range(x.shape[3]):
                    kx = ox + p - ix * s
                    if 0 <= kx < k:
                        acc += x[n, c, iy, ix] * w[c, 0, ky, kx]
        if req == REQ_ADD:
            out[n, c, oy, ox] += acc
        else:
            out[n, c, oy, ox] = acc


@cuda.jit
def _bilinear_data_grad(og, w, dx, s, p, zero, req):
    C, H, W = dx.shape[1], dx.shape[2], dx.shape[3]
    k = w.shape[2]
    for r in range(cuda.grid(1), dx.shape[0] * C * H * W, cuda.gridsize(1)):
        ix = r % W
        q = r // W
        iy = q % H
        q = q // H
        c = q % C
        n = q // C
        acc = zero
        for ky in range(k):
            oy = iy * s - p + ky
            if 0 <= oy < og.shape[2]:
                for kx in range(k):
                    ox = ix * s - p + kx
                    if 0 <= ox < og.shape[3]:
                        acc += og[n, c, oy, ox] * w[c, 0, ky, kx]
        if req == REQ_ADD:
            dx[n, c, iy, ix] += acc
        else:
            dx[n, c, iy, ix] = acc


@cuda.jit
def _bilinear_weight_grad(og, x, dw, s, p, zero, req):
    k = dw.shape[2]
    for r in range(cuda.grid(1), dw.shape[0] * k * k, cuda.gridsize(1)):
        kx = r % k
        q = r // k
        ky = q % k
        c = q // k
        acc = zero
        for n in range(x.shape[0]):
            for iy in range(x.shape[2]):
                oy = iy * s - p + ky
                if 0 <= oy < og.shape[2]:
                    for ix in range(x.shape[3]):
                        ox = ix * s - p + kx
                        if 0 <= ox < og.shape[3]:
                            acc += og[n, c, oy, ox] * x[n, c, iy, ix]
        if req == REQ_ADD:
            dw[c, 0, ky, kx] += acc
        else:
            dw[c, 0, ky, kx] = acc


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
