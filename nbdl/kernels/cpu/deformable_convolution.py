"""CPU kernels for deformable convolution (v1) and modulated deformable
convolution (v2); the sampling rules are in ``nbdl.ops.deformable_convolution``.

Per image, as Convolution does (``nbdl.kernels.cpu.convolution``), with a
deformable im2col: the columns ``col (C*K, P)`` (row ``c*K + i*kw + j``,
``K = kh*kw``, ``P = OH*OW``) hold each tap's bilinear sample (times the mask
for v2), so

- forward: ``out[n, g] = w[g] . col[g]``               (Fg, P) = (Fg, CgK) (CgK, P)
- columns' gradient: ``cg[g] = w[g]^T . out_grad[n, g]``, from which one pass
  over the taps scatters the data gradient through the bilinear weights and
  sums the offset and mask gradients over the channels of each deformable group;
- weight: ``dw[g] += out_grad[n, g] . col[g]^T``.

Views: data ``(N, C, H, W)``, offset ``(N, 2*DG*K, OH, OW)``, mask ``(N, DG*K,
OH, OW)``, weight ``(G, Fg, CgK)``, output / out_grad ``(N, G, Fg, P)``.  One
core kernel serves both ops and both bias settings: v1 passes the offset as a
(never read) mask and, without a bias, the weight as a (never read) bias, so
every entry point compiles the core with one signature.

Threading: ``nt == 1`` runs the batch serially with BLAS's own threads;
``nt > 1`` splits the batch into ``nt`` strided chunks under ``prange`` with
BLAS held to one thread (chunk ``t`` uses scratch row ``t``, so results do not
depend on scheduling); weight-gradient partial sums are per thread and summed
after.
"""
from functools import partial

import numpy as np
from numba import prange

from ..shared.jit import njit

from ...ops.deformable_convolution import backward_temps, forward_temps, geometry
from ...ops.registry import REQ_NULL, Launch
from ._parallel import threads as _threads
from ._parallel import twins as _twins
from ._blas_threads import BLAS_THREAD_CONTROL, blas_get_threads, blas_set_threads
from ..shared.deformable_convolution import build_scatter, py_coord_terms, py_corners, py_locate
from ..shared.store import py_add_at


# -- sampling ---------------------------------------------------------------------------

_locate = njit(cache=True, inline="always")(py_locate)
_corners = njit(cache=True, inline="always")(py_corners)
_coord_terms = njit(cache=True, inline="always")(py_coord_terms)
_scatter = njit(cache=True, inline="always")(build_scatter(njit(cache=True, inline="always")(py_add_at)))


@njit(cache=True)
def deformable_im2col(img, off, msk, col, has_mask, v1, kh, kw, sh, sw, ph, pw, dh, dw, dg_n):
    """col (C*K, P) from one image img (C, H, W), offsets off (2*DG*K, OH, OW)
    and (v2) the mask msk (DG*K, OH, OW)."""
    c_n, h_n, w_n = img.shape
    oh_n, ow_n = off.shape[1], off.shape[2]
    kk_n = kh * kw
    cpd = c_n // dg_n
    t = img.dtype.type
    one = t(1)
    zero = t(0)
    for d in range(dg_n):
        for i in range(kh):
            for j in range(kw):
                kk = i * kw + j
                oc = 2 * (d * kk_n + kk)
                for oh in range(oh_n):
                    ybase = t(oh * sh - ph + i * dh)
                    for ow in range(ow_n):
                        p = oh * ow_n + ow
                        y = ybase + off[oc, oh, ow]
                        x = t(ow * sw - pw + j * dw) + off[oc + 1, oh, ow]
                        ok, y0, x0, ly, lx, _, _ = _locate(y, x, h_n, w_n, v1)
                        if not ok:
                            for c in range(d * cpd, (d + 1) * cpd):
                                col[c * kk_n + kk, p] = zero
                            continue
                        m = msk[d * kk_n + kk, oh, ow] if has_mask else one
                        hy = one - ly
                        hx = one - lx
                        w00 = hy * hx * m
                        w01 = hy * lx * m
                        w10 = ly * hx * m
                        w11 = ly * lx * m
                        for c in range(d * cpd, (d + 1) * cpd):
                            v00, v01, v10, v11 = _corners(img, c, y0, x0)
                            col[c * kk_n + kk, p] = w00 * v00 + w01 * v01 + w10 * v10 + w11 * v11


@njit(cache=True)
def deformable_col2im_grads(img, off, msk, cg, dimg, doff, dmsk, r_x, r_off, r_m,
                            has_mask, v1, kh, kw, sh, sw, ph, pw, dh, dw, dg_n):
    """From the columns' gradient cg (C*K, P) of one image: dimg (C, H, W) +=
    the scatter through the bilinear weights (the caller zeroes it), and doff
    (2*DG*K, OH, OW) / dmsk (DG*K, OH, OW) = the sampling coordinates' and
    the mask's gradients (written for every position)."""
    c_n, h_n, w_n = img.shape
    oh_n, ow_n = off.shape[1], off.shape[2]
    kk_n = kh * kw
    cpd = c_n // dg_n
    t = img.dtype.type
    one = t(1)
    zero = t(0)
    need_coord = r_off != REQ_NULL or r_m != REQ_NULL
    for d in range(dg_n):
        for i in range(kh):
            for j in range(kw):
                kk = i * kw + j
                oc = 2 * (d * kk_n + kk)
                mc = d * kk_n + kk
                for oh in range(oh_n):
                    ybase = t(oh * sh - ph + i * dh)
                    for ow in range(ow_n):
                        p = oh * ow_n + ow
                        y = ybase + off[oc, oh, ow]
                        x = t(ow * sw - pw + j * dw) + off[oc + 1, oh, ow]
                        ok, y0, x0, ly, lx, cy, cx = _locate(y, x, h_n, w_n, v1)
                        if not ok:
                            if r_off != REQ_NULL:
                                doff[oc, oh, ow] = zero
                                doff[oc + 1, oh, ow] = zero
                            if r_m != REQ_NULL:
                                dmsk[mc, oh, ow] = zero
                            continue
                        m = msk[mc, oh, ow] if has_mask else one
                        gy = zero
                        gx = zero
                        gm = zero
                        for c in range(d * cpd, (d + 1) * cpd):
                            gv = cg[c * kk_n + kk, p]
                            if need_coord:
                                v00, v01, v10, v11 = _corners(img, c, y0, x0)
                                tm, ty, tx = _coord_terms(gv, v00, v01, v10, v11, ly, lx, one)
                                gm += tm
                                gy += ty
                                gx += tx
                            if r_x != REQ_NULL:
                                _scatter(dimg, c, y0, x0, ly, lx, gv * m, one)
                        if r_off != REQ_NULL:
                            doff[oc, oh, ow] = zero if cy else gy * m
                            doff[oc + 1, oh, ow] = zero if cx else gx * m
                        if r_m != REQ_NULL:
                            dmsk[mc, oh, ow] = gm


# -- per-chunk steps -----------------------------------------------------------------------

@njit(cache=True)
def _forward_chunk(t, nt, data, off, msk, w, b, out, col, has_mask, has_bias, v1,
                   kh, kw, sh, sw, ph, pw, dh, dw, dg_n):
    """out[n] = w . deformable_im2col(data[n]) (+ bias) for n = t, t+nt, ..."""
    g_n, fg, ck = w.shape
    p_n = out.shape[3]
    colt = col[t]
    flat = colt.reshape(g_n * ck, p_n)
    for n in range(t, data.shape[0], nt):
        deformable_im2col(data[n], off[n], msk[n], flat, has_mask, v1,
                          kh, kw, sh, sw, ph, pw, dh, dw, dg_n)
        for g in range(g_n):
            np.dot(w[g], colt[g], out[n, g])
            if has_bias:
                for f in range(fg):
                    bv = b[g * fg + f]
                    for q in range(p_n):
                        out[n, g, f, q] += bv


@njit(cache=True)
def _backward_chunk(t, nt, og, data, off, msk, w, dx, doff, dmsk, cgb, col, part, wtmp,
                    r_x, r_off, r_m, r_w, has_mask, v1, kh, kw, sh, sw, ph, pw, dh, dw, dg_n):
    """The data / offset / mask gradients of images n = t, t+nt, ... and the
    chunk's weight-gradient partial sum part[t]."""
    g_n, fg, ck = w.shape
    p_n = og.shape[3]
    need_cols = r_x != REQ_NULL or r_off != REQ_NULL or r_m != REQ_NULL
    if r_w != REQ_NULL:
        part[t] = 0
    for n in range(t, data.shape[0], nt):
        if need_cols:
            cgt = cgb[t]
            for g in range(g_n):
                np.dot(w[g].T, og[n, g], cgt[g])
            if r_x != REQ_NULL:
                dx[n] = 0
            deformable_col2im_grads(data[n], off[n], msk[n], cgt.reshape(g_n * ck, p_n), dx[n],
                                    doff[n], dmsk[n], r_x, r_off, r_m, has_mask, v1,
                                    kh, kw, sh, sw, ph, pw, dh, dw, dg_n)
        if r_w != REQ_NULL:
            colt = col[t]
            deformable_im2col(data[n], off[n], msk[n], colt.reshape(g_n * ck, p_n), has_mask, v1,
                              kh, kw, sh, sw, ph, pw, dh, dw, dg_n)
            for g in range(g_n):
                np.dot(og[n, g], colt[g].T, wtmp[t])
                part[t, g] += wtmp[t]


@njit(cache=True)
def _reduce_parts(part, dwt):
    dwt[:] = part[0]
    for t in range(1, part.shape[0]):
        dwt += part[t]


@njit(cache=True)
def _bias_grad(og, db):
    """db[g*Fg + f] = sum of og[n, g, f, :] over the batch."""
    n_n, g_n, fg, p_n = og.shape
    db[:] = 0
    for n in range(n_n):
        for g in range(g_n):
            for f in range(fg):
                acc = og.dtype.type(0)
                for q in range(p_n):
                    acc += og[n, g, f, q]
                db[g * fg + f] += acc


# -- the entry points: serial (chunks in turn) and parallel (chunks under prange) --------
# One compiled kernel of each serves v1 and v2, with and without a bias: v1 gets the
# offsets in the mask's place (never read: has_mask = 0), no bias an empty array
# (Launch.args), as flags the kernel reads at run time.

@njit(cache=True)
def deform_forward(data, off, msk, w, b, out, col, has_mask, has_bias, v1, req, nt,
                   kh, kw, sh, sw, ph, pw, dh, dw, dg_n):
    if req == REQ_NULL:
        return
    for t in range(nt):
        _forward_chunk(t, nt, data, off, msk, w, b, out, col, has_mask, has_bias, v1,
                       kh, kw, sh, sw, ph, pw, dh, dw, dg_n)


@njit(cache=True, parallel=True)
def deform_forward_parallel(data, off, msk, w, b, out, col, has_mask, has_bias, v1, req, nt,
                            kh, kw, sh, sw, ph, pw, dh, dw, dg_n):
    if req == REQ_NULL:
        return
    saved = blas_get_threads()
    blas_set_threads(1)
    for t in prange(nt):
        _forward_chunk(np.int64(t), nt, data, off, msk, w, b, out, col, has_mask, has_bias, v1,
                       kh, kw, sh, sw, ph, pw, dh, dw, dg_n)
    blas_set_threads(saved)


@njit(cache=True)
def _backward_tail(og, dwt, db, part, r_w, r_b, has_bias):
    if r_w != REQ_NULL:
        _reduce_parts(part, dwt)
    if has_bias and r_b != REQ_NULL:
        _bias_grad(og, db)


@njit(cache=True)
def deform_backward(og, data, off, msk, w, dx, doff, dmsk, dwt, db, cgb, col, part, wtmp,
                    r_x, r_off, r_m, r_w, r_b, has_mask, has_bias, v1, nt,
                    kh, kw, sh, sw, ph, pw, dh, dw, dg_n):
    if r_x != REQ_NULL or r_off != REQ_NULL or r_m != REQ_NULL or r_w != REQ_NULL:
        for t in range(nt):
            _backward_chunk(t, nt, og, data, off, msk, w, dx, doff, dmsk, cgb, col, part, wtmp,
                            r_x, r_off, r_m, r_w, has_mask, v1,
                            kh, kw, sh, sw, ph, pw, dh, dw, dg_n)
    _backward_tail(og, dwt, db, part, r_w, r_b, has_bias)


@njit(cache=True, parallel=True)
def deform_backward_parallel(og, data, off, msk, w, dx, doff, dmsk, dwt, db, cgb, col, part,
                             wtmp, r_x, r_off, r_m, r_w, r_b, has_mask, has_bias, v1, nt,
                             kh, kw, sh, sw, ph, pw, dh, dw, dg_n):
    if r_x != REQ_NULL or r_off != REQ_NULL or r_m != REQ_NULL or r_w != REQ_NULL:
        saved = blas_get_threads()
        blas_set_threads(1)
        for t in prange(nt):
            _backward_chunk(np.int64(t), nt, og, data, off, msk, w, dx, doff, dmsk, cgb, col,
                            part, wtmp, r_x, r_off, r_m, r_w, has_mask, v1,
                            kh, kw, sh, sw, ph, pw, dh, dw, dg_n)
        blas_set_threads(saved)
    _backward_tail(og, dwt, db, part, r_w, r_b, has_bias)


# -- prepare --------------------------------------------------------------------------------

def choose_threads(geom):
    """1 (serial batch, threaded BLAS per GEMM) or the number of batch chunks
    run under prange with single-threaded BLAS: Convolution's rule (enough
    images and work; ``NBDL_CONV_PARALLEL_MIN_FLOPS``), and only where the BLAS
    can be held to one thread."""
    from ... import config
    threads = _threads()
    flops = 2 * geom["N"] * geom["F"] * geom["CgK"] * geom["P"]
    if (threads < 2 or geom["N"] < threads or flops < config.conv_parallel_min_flops()
            or not BLAS_THREAD_CONTROL):
        return 1
    return threads


def temp_forward(call):
    return forward_temps(call, choose_threads(geometry(call.attrs, call.in_shapes[0])))


def temp_backward(call):
    return backward_temps(call, choose_threads(geometry(call.attrs, call.in_shapes[1])))


def _prepare(call, modulated, backward):
    geom = geometry(call.attrs, call.in_shapes[1] if backward else call.in_shapes[0])
    nt = choose_threads(geom)
    has_bias = not call.attrs["no_bias"]
    w_view = (geom["G"], geom["Fg"], geom["CgK"])
    y_view = (geom["N"], geom["G"], geom["Fg"], geom["P"])
    n_lead = 3 if modulated else 2          # data, offset, (mask)
    bias = [None] if has_bias else []
    flags = (int(modulated), int(has_bias), int(not modulated))
    if not backward:
        fn = deform_forward_parallel if nt > 1 else deform_forward
        views = [None] * n_lead + [w_view] + bias + [y_view, None]
        # arrays: data, offset, [mask], weight, [bias], out, col
        ix = list(range(len(views)))
        if not modulated:
            ix.insert(2, 1)                 # the offsets in the mask's place
        if not has_bias:
            ix.insert(4, (ix[3], (0,)))    # an empty bias
        pick = None if modulated and has_bias else tuple(ix)
        return Launch(fn, flags + (call.req[0], nt) + geom["scalars"], views=views, args=pick)
    fn = deform_backward_parallel if nt > 1 else deform_backward
    views = [y_view] + [None] * n_lead + [w_view] + [None] * n_lead + [w_view] + bias + [None] * 4
    # arrays: og, data, offset, [mask], weight, d data, d offset, [d mask], d weight, [d bias],
    # 4 temps; the kernel takes all of them, v1's mask (gradient) being its offset's
    ix = list(range(len(views)))
    req = list(call.req)
    if not modulated:
        ix.insert(3, 2)                     # mask := offset
        ix.insert(7, ix[6])                 # d mask := d offset (r_m = REQ_NULL: never written)
        req.insert(2, REQ_NULL)
    if not has_bias:
        ix.insert(9, (ix[8], (0,)))         # an empty bias gradient
        req.insert(4, REQ_NULL)
    pick = None if modulated and has_bias else tuple(ix)
    return Launch(fn, tuple(req[:5]) + flags + (nt,) + geom["scalars"], views=views, args=pick)


prepare_deformableconvolution = partial(_prepare, modulated=False, backward=False)
prepare_modulateddeformableconvolution = partial(_prepare, modulated=True, backward=False)
prepare_deformableconvolution_backward = partial(_prepare, modulated=False, backward=True)
prepare_modulateddeformableconvolution_backward = partial(_prepare, modulated=True, backward=True)


_twins((deform_forward_parallel, deform_forward), (deform_backward_parallel, deform_backward))


__all__ = ["deformable_im2col", "deformable_col2im_grads", "choose_threads"]
