"""CUDA kernels for deformable convolution (v1) and modulated deformable
convolution (v2), with the sampling rules of ``nbdl.ops.deformable_convolution``.
Direct loops, one thread per element written, no scratch; correctness over
speed.  Views: data ``(N, C, H, W)``, offset ``(N, 2*DG*K, OH, OW)``, mask
``(N, DG*K, OH, OW)`` (v1 passes the offset, never read), weight and its
gradient ``(F, Cg, kh, kw)``, output / out_grad ``(N, F, OH, OW)``.

- ``forward``: one thread per output element, summing over its taps;
- ``data_grad``: one thread per (image, channel, tap, position) adds the
  column gradient (``sum_f w * out_grad``) to the four pixels it sampled,
  with atomics (any position may sample any pixel); ``zero`` clears first;
- ``coord_grad``: one thread per (image, deformable group, tap, position)
  writes the offset and mask gradients;
- ``weight_grad``: one thread per weight element, ``bias_grad`` per channel.

The kernels are made per dtype (``T``: numba's float32 or float64, bound in
the closure) so integer coordinates are cast to the data's precision.
"""
from functools import partial

import numpy as np
from numba import cuda, float32, float64

from ...ops.deformable_convolution import backward_temps, forward_temps, geometry
from ...ops.registry import REQ_NULL, Launch
from ..shared.deformable_convolution import (build_scatter, py_blend, py_coord_terms, py_corners,
                                             py_locate)
from ..shared.store import py_unravel4
from ._launch import atomic_add, launcher


_locate = cuda.jit(device=True)(py_locate)
_corners = cuda.jit(device=True)(py_corners)
_blend = cuda.jit(device=True)(py_blend)
_coord_terms = cuda.jit(device=True)(py_coord_terms)
_scatter = cuda.jit(device=True)(build_scatter(atomic_add))
_unravel4 = cuda.jit(device=True)(py_unravel4)


def _make(T):
    @cuda.jit(device=True)
    def point(off, n, d, kk, kk_n, oh, ow, i, j, sh, sw, ph, pw, dh, dw):
        oc = 2 * (d * kk_n + kk)
        y = T(oh * sh - ph + i * dh) + off[n, oc, oh, ow]
        x = T(ow * sw - pw + j * dw) + off[n, oc + 1, oh, ow]
        return y, x

    @cuda.jit(device=True)
    def sample(data, off, msk, n, c, d, kk, kk_n, oh, ow, i, j, has_mask, v1, sh, sw, ph, pw,
               dh, dw):
        """Tap (i, j) of channel c at output (oh, ow) of image n: its bilinear
        sample (times the mask for v2), 0 outside the image."""
        y, x = point(off, n, d, kk, kk_n, oh, ow, i, j, sh, sw, ph, pw, dh, dw)
        ok, y0, x0, ly, lx, cy, cx = _locate(y, x, data.shape[2], data.shape[3], v1)
        if not ok:
            return T(0)
        v00, v01, v10, v11 = _corners(data[n], c, y0, x0)
        v = _blend(v00, v01, v10, v11, ly, lx, T(1))
        if has_mask:
            v *= msk[n, d * kk_n + kk, oh, ow]
        return v

    @cuda.jit
    def forward(data, off, msk, w, b, out, has_mask, has_bias, v1, req,
                kh, kw, sh, sw, ph, pw, dh, dw, dg_n, g_n):
        n_n, f_n, oh_n, ow_n = out.shape
        c_n = data.shape[1]
        cg = w.shape[1]
        fg = f_n // g_n
        cpd = c_n // dg_n
        kk_n = kh * kw
        for idx in range(cuda.grid(1), n_n * f_n * oh_n * ow_n, cuda.gridsize(1)):
            ow = idx % ow_n
            r = idx // ow_n
            oh = r % oh_n
            r //= oh_n
            f = r % f_n
            n = r // f_n
            g = f // fg
            acc = T(0)
            if has_bias:
                acc = b[f]
            for cl in range(cg):
                c = g * cg + cl
                d = c // cpd
                for i in range(kh):
                    for j in range(kw):
                        kk = i * kw + j
                        acc += w[f, cl, i, j] * sample(data, off, msk, n, c, d, kk, kk_n, oh, ow,
                                                       i, j, has_mask, v1, sh, sw, ph, pw, dh, dw)
            if req != REQ_NULL:
                out[n, f, oh, ow] = acc

    @cuda.jit
    def zero(flat):
        for idx in range(cuda.grid(1), flat.size, cuda.gridsize(1)):
            flat[idx] = T(0)

    @cuda.jit(device=True)
    def col_grad(og, w, n, c, i, j, cg, fg, oh, ow):
        """sum over the filters f of c's group of w[f, c % Cg, i, j] * og[n, f, oh, ow]."""
        g = c // cg
        cl = c - g * cg
        acc = T(0)
        for fl in range(fg):
            f = g * fg + fl
            acc += w[f, cl, i, j] * og[n, f, oh, ow]
        return acc

    @cuda.jit
    def data_grad(og, data, off, msk, w, dx, has_mask, v1, kh, kw, sh, sw, ph, pw, dh, dw, dg_n, g_n):
        n_n, c_n, h_n, w_n = dx.shape
        f_n, oh_n, ow_n = og.shape[1], og.shape[2], og.shape[3]
        cg = w.shape[1]
        fg = f_n // g_n
        cpd = c_n // dg_n
        kk_n = kh * kw
        one = T(1)
        total = n_n * c_n * kk_n * oh_n * ow_n
        for idx in range(cuda.grid(1), total, cuda.gridsize(1)):
            nc, kk, oh, ow = _unravel4(idx, kk_n, oh_n, ow_n)
            n = nc // c_n
            c = nc - n * c_n
            i = kk // kw
            j = kk - i * kw
            d = c // cpd
            y, x = point(off, n, d, kk, kk_n, oh, ow, i, j, sh, sw, ph, pw, dh, dw)
            ok, y0, x0, ly, lx, cy, cx = _locate(y, x, h_n, w_n, v1)
            if not ok:
                continue
            a = col_grad(og, w, n, c, i, j, cg, fg, oh, ow)
            if has_mask:
                a *= msk[n, d * kk_n + kk, oh, ow]
            _scatter(dx[n], c, y0, x0, ly, lx, a, one)

    @cuda.jit
    def coord_grad(og, data, off, msk, w, doff, dmsk, r_off, r_m, has_mask, v1,
                   kh, kw, sh, sw, ph, pw, dh, dw, dg_n, g_n):
        n_n, c_n, h_n, w_n = data.shape
        f_n, oh_n, ow_n = og.shape[1], og.shape[2], og.shape[3]
        cg = w.shape[1]
        fg = f_n // g_n
        cpd = c_n // dg_n
        kk_n = kh * kw
        one = T(1)
        total = n_n * dg_n * kk_n * oh_n * ow_n
        for idx in range(cuda.grid(1), total, cuda.gridsize(1)):
            nd, kk, oh, ow = _unravel4(idx, kk_n, oh_n, ow_n)
            n = nd // dg_n
            d = nd - n * dg_n
            i = kk // kw
            j = kk - i * kw
            oc = 2 * (d * kk_n + kk)
            mc = d * kk_n + kk
            y, x = point(off, n, d, kk, kk_n, oh, ow, i, j, sh, sw, ph, pw, dh, dw)
            ok, y0, x0, ly, lx, cy, cx = _locate(y, x, h_n, w_n, v1)
            gy = T(0)
            gx = T(0)
            gm = T(0)
            m = one
            if ok:
                if has_mask:
                    m = msk[n, mc, oh, ow]
                for c in range(d * cpd, (d + 1) * cpd):
                    gv = col_grad(og, w, n, c, i, j, cg, fg, oh, ow)
                    v00, v01, v10, v11 = _corners(data[n], c, y0, x0)
                    tm, ty, tx = _coord_terms(gv, v00, v01, v10, v11, ly, lx, one)
                    gm += tm
                    gy += ty
                    gx += tx
                if cy:
                    gy = T(0)
                if cx:
                    gx = T(0)
            if r_off != REQ_NULL:
                doff[n, oc, oh, ow] = gy * m
                doff[n, oc + 1, oh, ow] = gx * m
            if r_m != REQ_NULL:
                dmsk[n, mc, oh, ow] = gm

    @cuda.jit
    def weight_grad(og, data, off, msk, dwt, has_mask, v1, kh, kw, sh, sw, ph, pw, dh, dw, dg_n, g_n):
        f_n, cg = dwt.shape[0], dwt.shape[1]
        n_n, c_n, h_n, w_n = data.shape
        oh_n, ow_n = og.shape[2], og.shape[3]
        fg = f_n // g_n
        cpd = c_n // dg_n
        kk_n = kh * kw
        for idx in range(cuda.grid(1), f_n * cg * kk_n, cuda.gridsize(1)):
            kk = idx % kk_n
            r = idx // kk_n
            cl = r % cg
            f = r // cg
            i = kk // kw
            j = kk - i * kw
            c = (f // fg) * cg + cl
            d = c // cpd
            acc = T(0)
            for n in range(n_n):
                for oh in range(oh_n):
                    for ow in range(ow_n):
                        acc += og[n, f, oh, ow] * sample(data, off, msk, n, c, d, kk, kk_n, oh,
                                                         ow, i, j, has_mask, v1, sh, sw, ph, pw,
                                                         dh, dw)
            dwt[f, cl, i, j] = acc

    @cuda.jit
    def bias_grad(og, db):
        n_n, f_n, oh_n, ow_n = og.shape
        for f in range(cuda.grid(1), f_n, cuda.gridsize(1)):
            acc = T(0)
            for n in range(n_n):
                for oh in range(oh_n):
                    for ow in range(ow_n):
                        acc += og[n, f, oh, ow]
            db[f] = acc

    return {"forward": forward, "zero": zero, "data_grad": data_grad,
            "coord_grad": coord_grad, "weight_grad": weight_grad, "bias_grad": bias_grad}


_KERNELS = {}


def _kernels(dtype):
    dt = np.dtype(dtype)
    k = _KERNELS.get(dt)
    if k is None:
        k = _KERNELS[dt] = _make(float32 if dt == np.float32 else float64)
    return k


def _size(shape):
    return int(np.prod(shape))


def _prepare_forward(call, modulated):
    geom = geometry(call.attrs, call.in_shapes[0])
    scal = geom["scalars"] + (geom["G"],)
    has_bias = not call.attrs["no_bias"]
    req = int(call.req[0])
    n_out = _size(call.out_shapes[0])
    run = launcher(_kernels(call.out_dtypes[0])["forward"], n_out) if n_out else None

    def fn(data, off, *rest):
        msk, rest = (rest[0], rest[1:]) if modulated else (off, rest)
        w = rest[0]
        b, out = (rest[1], rest[2]) if has_bias else (w.reshape(w.size), rest[1])
        if run is None or req == REQ_NULL:
            return
        run(data, off, msk, w, b, out, modulated, has_bias, not modulated, req, *scal)
    return Launch(fn, ())


def _prepare_backward(call, modulated):
    geom = geometry(call.attrs, call.in_shapes[1])
    scal = geom["scalars"] + (geom["G"],)
    has_bias = not call.attrs["no_bias"]
    n_lead = 3 if modulated else 2
    reqs = [int(r) for r in call.req]
    r_x, r_off = reqs[0], reqs[1]
    r_m = reqs[2] if modulated else REQ_NULL
    r_w = reqs[n_lead]
    r_b = reqs[n_lead + 1] if has_bias else REQ_NULL
    k = _kernels(call.out_dtypes[0])
    n, c, h, w = geom["N"], geom["C"], geom["H"], geom["W"]
    kk, p, dg = _size(call.attrs["kernel"]), geom["P"], geom["DG"]
    n_x = n * c * h * w
    run_zero = launcher(k["zero"], n_x) if n_x and r_x != REQ_NULL else None
    run_x = launcher(k["data_grad"], n * c * kk * p) if n * c * p and r_x != REQ_NULL else None
    need_coord = r_off != REQ_NULL or r_m != REQ_NULL
    run_c = launcher(k["coord_grad"], n * dg * kk * p) if n * p and need_coord else None
    n_w = geom["F"] * (c // geom["G"]) * kk
    run_w = launcher(k["weight_grad"], n_w) if n_w and r_w != REQ_NULL else None
    run_b = launcher(k["bias_grad"], geom["F"]) if has_bias and r_b != REQ_NULL else None
    v1 = not modulated

    def fn(og, data, off, *rest):
        if modulated:
            msk, wt, dx, doff, dmsk = rest[:5]
            rest = rest[5:]
        else:
            wt, dx, doff = rest[:3]
            msk, dmsk = off, doff
            rest = rest[3:]
        dwt = rest[0]
        db = rest[1] if has_bias else None
        if run_zero is not None:
            run_zero(dx.reshape(dx.size))
        if run_x is not None:
            run_x(og, data, off, msk, wt, dx, modulated, v1, *scal)
        if run_c is not None:
            run_c(og, data, off, msk, wt, doff, dmsk, r_off, r_m, modulated, v1, *scal)
        if run_w is not None:
            run_w(og, data, off, msk, dwt, modulated, v1, *scal)
        if run_b is not None:
            run_b(og, db)
    return Launch(fn, ())


def temp_forward(call):
    return forward_temps(call, 0)       # no scratch on the GPU


def temp_backward(call):
    return backward_temps(call, 0)


prepare_deformableconvolution = partial(_prepare_forward, modulated=False)
prepare_modulateddeformableconvolution = partial(_prepare_forward, modulated=True)
prepare_deformableconvolution_backward = partial(_prepare_backward, modulated=False)
prepare_modulateddeformableconvolution_backward = partial(_prepare_backward, modulated=True)
