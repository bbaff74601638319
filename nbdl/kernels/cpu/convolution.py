"""CPU kernels for Convolution and Deconvolution (views from
``nbdl.ops.convolution.geometry``: every rank is 3-D, channels split by group).

Three primitives per batch item ``i`` (group ``g = i % G``), all through BLAS:

- forward:  ``cols_i = w_g . im2col(img_i)``            (Fg, P) = (Fg, CK) (CK, P)
- data:     ``img_i += col2im(w_g^T . cols_i)``
- weight:   ``dw_g += cols_i . im2col(img_i)^T``

Convolution is forward (img = data); its gradient is data (cols = out_grad)
and weight.  Deconvolution's forward is the data primitive (cols = data, img
= output); its data gradient is the forward primitive on the out_grad and its
weight gradient the weight primitive with img = out_grad, cols = data.  A 1x1
kernel with stride 1 and no pad skips im2col (the image *is* the columns).

Threading: ``threads == 1`` runs the batch serially and lets BLAS use its own
threads inside each GEMM; ``threads > 1`` splits the batch statically into
``threads`` strided chunks under ``prange`` (chunk ``t`` uses scratch row
``t``; so results do not depend on scheduling), with BLAS held to one thread
for the duration (``blas_threads``), since numba's and BLAS's threads must not
nest.  Scratch (im2col columns, GEMM results for REQ_ADD, per-thread weight
gradient partial sums) comes from the planner, one row per thread.
"""
import numba
import numpy as np
from numba import njit, prange

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ...ops.convolution import geometry
from ._blas_threads import blas_get_threads, blas_set_threads


# -- im2col / col2im -------------------------------------------------------------

@njit(cache=True, inline="always")
def _valid(n_out, stride, off, size):
    """[lo, hi) of output positions o with 0 <= o*stride + off < size."""
    lo = 0 if off >= 0 else (-off + stride - 1) // stride
    hi = 0 if size - off <= 0 else (size - off + stride - 1) // stride
    if hi > n_out:
        hi = n_out
    if lo > hi:
        lo = hi
    return lo, hi


@njit(cache=True)
def im2col(img, col, od_, oh_, ow_, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """col (Cg*KD*KH*KW, OD*OH*OW) from img (Cg, D, H, W), zero outside."""
    zero = img.dtype.type(0)
    c_n, d_n, h_n, w_n = img.shape
    row = 0
    for c in range(c_n):
        for a in range(kd):
            for b in range(kh):
                for e in range(kw):
                    xoff = e * dw - pw
                    lo, hi = _valid(ow_, sw, xoff, w_n)
                    for od in range(od_):
                        z = od * sd - pd + a * dd
                        for oh in range(oh_):
                            y = oh * sh - ph + b * dh
                            base = (od * oh_ + oh) * ow_
                            if z < 0 or z >= d_n or y < 0 or y >= h_n:
                                for o in range(ow_):
                                    col[row, base + o] = zero
                                continue
                            for o in range(lo):
                                col[row, base + o] = zero
                            for o in range(lo, hi):
                                col[row, base + o] = img[c, z, y, o * sw + xoff]
                            for o in range(hi, ow_):
                                col[row, base + o] = zero
                    row += 1


@njit(cache=True)
def col2im_add(col, img, od_, oh_, ow_, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """img (Cg, D, H, W) += the columns scattered back (im2col's adjoint)."""
    c_n, d_n, h_n, w_n = img.shape
    row = 0
    for c in range(c_n):
        for a in range(kd):
            for b in range(kh):
                for e in range(kw):
                    xoff = e * dw - pw
                    lo, hi = _valid(ow_, sw, xoff, w_n)
                    for od in range(od_):
                        z = od * sd - pd + a * dd
                        if z < 0 or z >= d_n:
                            continue
                        for oh in range(oh_):
                            y = oh * sh - ph + b * dh
                            if y < 0 or y >= h_n:
                                continue
                            base = (od * oh_ + oh) * ow_
                            for o in range(lo, hi):
                                img[c, z, y, o * sw + xoff] += col[row, base + o]
                    row += 1


# -- per-item steps ----------------------------------------------------------------

@njit(cache=True)
def _columns(img_i, col_t, direct, od_, oh_, ow_, kd, kh, kw, sd, sh, sw, pd, ph, pw,
             dd, dh, dw):
    if direct:
        return img_i.reshape(img_i.shape[0], img_i.shape[1] * img_i.shape[2] * img_i.shape[3])
    im2col(img_i, col_t, od_, oh_, ow_, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)
    return col_t


@njit(cache=True)
def _forward_chunk(t, nt, img, w, b, cols, col, gtmp, has_bias, req, direct,
                   kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """cols[i] (=|+=) w[g] . im2col(img[i]) (+ bias) for items i = t, t+nt, ..."""
    n_items, fg = cols.shape[0], cols.shape[1]
    od_, oh_, ow_ = cols.shape[2], cols.shape[3], cols.shape[4]
    g_n = w.shape[0]
    p = od_ * oh_ * ow_
    for i in range(t, n_items, nt):
        g = i % g_n
        src = _columns(img[i], col[t], direct, od_, oh_, ow_, kd, kh, kw, sd, sh, sw,
                       pd, ph, pw, dd, dh, dw)
        out = cols[i].reshape(fg, p)
        if req == REQ_ADD:
            np.dot(w[g], src, gtmp[t])
            out += gtmp[t]
        else:
            np.dot(w[g], src, out)
        if has_bias:
            for f in range(fg):
                bv = b[g * fg + f]
                for q in range(p):
                    out[f, q] += bv


@njit(cache=True)
def _data_chunk(t, nt, cols, w, img, col, req, direct,
                kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """img[i] (=|+=) col2im(w[g]^T . cols[i])."""
    n_items, fg = cols.shape[0], cols.shape[1]
    od_, oh_, ow_ = cols.shape[2], cols.shape[3], cols.shape[4]
    g_n = w.shape[0]
    p = od_ * oh_ * ow_
    for i in range(t, n_items, nt):
        g = i % g_n
        src = cols[i].reshape(fg, p)
        dst = img[i]
        if direct and req != REQ_ADD:
            np.dot(w[g].T, src, dst.reshape(dst.shape[0], p))
            continue
        np.dot(w[g].T, src, col[t])
        if direct:
            dst.reshape(dst.shape[0], p)[:, :] += col[t]
            continue
        if req != REQ_ADD:
            dst[:] = 0
        col2im_add(col[t], dst, od_, oh_, ow_, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def _weight_chunk(t, nt, img, cols, part, wtmp, direct,
                  kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, col):
    """part[t, g] = sum over this chunk's items of cols[i] . im2col(img[i])^T."""
    n_items, fg = cols.shape[0], cols.shape[1]
    od_, oh_, ow_ = cols.shape[2], cols.shape[3], cols.shape[4]
    g_n = part.shape[1]
    p = od_ * oh_ * ow_
    part[t] = 0
    for i in range(t, n_items, nt):
        g = i % g_n
        src = _columns(img[i], col[t], direct, od_, oh_, ow_, kd, kh, kw, sd, sh, sw,
                       pd, ph, pw, dd, dh, dw)
        np.dot(cols[i].reshape(fg, p), src.T, wtmp[t])
        part[t, g] += wtmp[t]


@njit(cache=True)
def _reduce_parts(part, dw, req):
    """dw (G, Fg, CK) (=|+=) the sum of the per-thread partial sums."""
    if req != REQ_ADD:
        dw[:] = part[0]
    else:
        dw += part[0]
    for t in range(1, part.shape[0]):
        dw += part[t]


@njit(cache=True)
def _bias_grad(a, db, g_n, req):
    """db[g*Fg + f] (=|+=) sum of a[i, f, ...] over the items i of group g."""
    n_items, fg = a.shape[0], a.shape[1]
    s = a[0, 0].size if n_items else 0
    flat = a.reshape(n_items, fg, s)
    if req != REQ_ADD:
        db[:] = 0
    for i in range(n_items):
        g = i % g_n
        for f in range(fg):
            acc = a.dtype.type(0)
            for q in range(s):
                acc += flat[i, f, q]
            db[g * fg + f] += acc


# -- entry points (serial / parallel over batch chunks) ------------------------------------

@njit(cache=True)
def conv_forward(img, w, b, cols, col, gtmp, has_bias, req, direct, nt,
                 kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    if req == REQ_NULL:
        return
    _forward_chunk(0, 1, img, w, b, cols, col, gtmp, has_bias, req, direct,
                   kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True, parallel=True)
def conv_forward_parallel(img, w, b, cols, col, gtmp, has_bias, req, direct, nt,
                          kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    if req == REQ_NULL:
        return
    saved = blas_get_threads()
    blas_set_threads(1)
    for t in prange(nt):
        _forward_chunk(t, nt, img, w, b, cols, col, gtmp, has_bias, req, direct,
                       kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)
    blas_set_threads(saved)


@njit(cache=True)
def conv_backward(og, img, w, dimg, dw_, db, col, part, wtmp, gtmp, r_img, r_w, r_b,
                  has_bias, direct, nt, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """Convolution's gradients: og is the cols side, img the data."""
    if r_w != REQ_NULL:
        _weight_chunk(0, 1, img, og, part, wtmp, direct,
                      kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, col)
        _reduce_parts(part, dw_, r_w)
    if r_img != REQ_NULL:
        _data_chunk(0, 1, og, w, dimg, col, r_img, direct,
                    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)
    if has_bias and r_b != REQ_NULL:
        _bias_grad(og, db, w.shape[0], r_b)


@njit(cache=True, parallel=True)
def conv_backward_parallel(og, img, w, dimg, dw_, db, col, part, wtmp, gtmp, r_img, r_w, r_b,
                           has_bias, direct, nt, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    saved = blas_get_threads()
    blas_set_threads(1)
    for t in prange(nt):
        if r_w != REQ_NULL:
            _weight_chunk(t, nt, img, og, part, wtmp, direct,
                          kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, col)
        if r_img != REQ_NULL:
            _data_chunk(t, nt, og, w, dimg, col, r_img, direct,
                        kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)
    blas_set_threads(saved)
    if r_w != REQ_NULL:
        _reduce_parts(part, dw_, r_w)
    if has_bias and r_b != REQ_NULL:
        _bias_grad(og, db, w.shape[0], r_b)


@njit(cache=True)
def _add_bias_img(img, b, g_n):
    n_items, fg = img.shape[0], img.shape[1]
    s = img[0, 0].size if n_items else 0
    flat = img.reshape(n_items, fg, s)
    for i in range(n_items):
        g = i % g_n
        for f in range(fg):
            bv = b[g * fg + f]
            for q in range(s):
                flat[i, f, q] += bv


@njit(cache=True)
def deconv_forward(x, w, b, out, col, gtmp, has_bias, req, direct, nt,
                   kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """Deconvolution: x is the cols side, out the img side."""
    if req == REQ_NULL:
        return
    _data_chunk(0, 1, x, w, out, col, req, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)
    if has_bias:
        _add_bias_img(out, b, w.shape[0])


@njit(cache=True, parallel=True)
def deconv_forward_parallel(x, w, b, out, col, gtmp, has_bias, req, direct, nt,
                            kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    if req == REQ_NULL:
        return
    saved = blas_get_threads()
    blas_set_threads(1)
    for t in prange(nt):
        _data_chunk(t, nt, x, w, out, col, req, direct,
                    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)
    blas_set_threads(saved)
    if has_bias:
        _add_bias_img(out, b, w.shape[0])


@njit(cache=True)
def _deconv_backward_chunk(t, nt, og, x, w, dx, part, col, wtmp, gtmp, r_x, r_w, direct,
                           kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """One im2col of og serves both dx[i] = w[g] . col and part += x[i] . col^T."""
    n_items, fg = x.shape[0], x.shape[1]
    od_, oh_, ow_ = x.shape[2], x.shape[3], x.shape[4]
    g_n = w.shape[0]
    p = od_ * oh_ * ow_
    if r_w != REQ_NULL:
        part[t] = 0
    for i in range(t, n_items, nt):
        g = i % g_n
        src = _columns(og[i], col[t], direct, od_, oh_, ow_, kd, kh, kw, sd, sh, sw,
                       pd, ph, pw, dd, dh, dw)
        if r_w != REQ_NULL:
            np.dot(x[i].reshape(fg, p), src.T, wtmp[t])
            part[t, g] += wtmp[t]
        if r_x != REQ_NULL:
            out = dx[i].reshape(fg, p)
            if r_x == REQ_ADD:
                np.dot(w[g], src, gtmp[t])
                out += gtmp[t]
            else:
                np.dot(w[g], src, out)


@njit(cache=True)
def deconv_backward(og, x, w, dx, dw_, db, col, part, wtmp, gtmp, r_x, r_w, r_b,
                    has_bias, direct, nt, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    if r_x != REQ_NULL or r_w != REQ_NULL:
        _deconv_backward_chunk(0, 1, og, x, w, dx, part, col, wtmp, gtmp, r_x, r_w, direct,
                               kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)
    if r_w != REQ_NULL:
        _reduce_parts(part, dw_, r_w)
    if has_bias and r_b != REQ_NULL:
        _bias_grad(og, db, w.shape[0], r_b)


@njit(cache=True, parallel=True)
def deconv_backward_parallel(og, x, w, dx, dw_, db, col, part, wtmp, gtmp, r_x, r_w, r_b,
                             has_bias, direct, nt, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                             dd, dh, dw):
    if r_x != REQ_NULL or r_w != REQ_NULL:
        saved = blas_get_threads()
        blas_set_threads(1)
        for t in prange(nt):
            _deconv_backward_chunk(t, nt, og, x, w, dx, part, col, wtmp, gtmp, r_x, r_w, direct,
                                   kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)
        blas_set_threads(saved)
    if r_w != REQ_NULL:
        _reduce_parts(part, dw_, r_w)
    if has_bias and r_b != REQ_NULL:
        _bias_grad(og, db, w.shape[0], r_b)


# -- the no-bias signatures (module-level, one each: numba caches by qualified name) ---

@njit(cache=True)
def conv_forward_nobias(
        img, w, out, col, gtmp, req, direct, nt,
        kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    conv_forward(img, w, w[0, 0, :0], out, col, gtmp, 0, req, direct, nt,
                 kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def conv_forward_parallel_nobias(
        img, w, out, col, gtmp, req, direct, nt,
        kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    conv_forward_parallel(img, w, w[0, 0, :0], out, col, gtmp, 0, req, direct, nt,
                          kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def deconv_forward_nobias(
        img, w, out, col, gtmp, req, direct, nt,
        kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    deconv_forward(img, w, w[0, 0, :0], out, col, gtmp, 0, req, direct, nt,
                   kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def deconv_forward_parallel_nobias(
        img, w, out, col, gtmp, req, direct, nt,
        kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    deconv_forward_parallel(img, w, w[0, 0, :0], out, col, gtmp, 0, req, direct, nt,
                            kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def conv_backward_nobias(
        og, img, w, dimg, dw_, col, part, wtmp, gtmp, r_img, r_w, direct, nt,
        kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    conv_backward(og, img, w, dimg, dw_, w[0, 0, :0], col, part, wtmp, gtmp, r_img, r_w,
                  REQ_NULL, 0, direct, nt, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def conv_backward_parallel_nobias(
        og, img, w, dimg, dw_, col, part, wtmp, gtmp, r_img, r_w, direct, nt,
        kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    conv_backward_parallel(og, img, w, dimg, dw_, w[0, 0, :0], col, part, wtmp, gtmp, r_img, r_w,
                           REQ_NULL, 0, direct, nt, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def deconv_backward_nobias(
        og, img, w, dimg, dw_, col, part, wtmp, gtmp, r_img, r_w, direct, nt,
        kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    deconv_backward(og, img, w, dimg, dw_, w[0, 0, :0], col, part, wtmp, gtmp, r_img, r_w,
                    REQ_NULL, 0, direct, nt, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def deconv_backward_parallel_nobias(
        og, img, w, dimg, dw_, col, part, wtmp, gtmp, r_img, r_w, direct, nt,
        kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    deconv_backward_parallel(og, img, w, dimg, dw_, w[0, 0, :0], col, part, wtmp, gtmp, r_img, r_w,
                             REQ_NULL, 0, direct, nt, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


_FORWARD = {(False, False, True): conv_forward, (False, True, True): conv_forward_parallel,
            (False, False, False): conv_forward_nobias,
            (False, True, False): conv_forward_parallel_nobias,
            (True, False, True): deconv_forward, (True, True, True): deconv_forward_parallel,
            (True, False, False): deconv_forward_nobias,
            (True, True, False): deconv_forward_parallel_nobias}
_BACKWARD = {(False, False, True): conv_backward, (False, True, True): conv_backward_parallel,
             (False, False, False): conv_backward_nobias,
             (False, True, False): conv_backward_parallel_nobias,
             (True, False, True): deconv_backward, (True, True, True): deconv_backward_parallel,
             (True, False, False): deconv_backward_nobias,
             (True, True, False): deconv_backward_parallel_nobias}


# -- prepare ----------------------------------------------------------------------------

def _parallel_min_flops():
    from ... import config
    return config.conv_parallel_min_flops()


def choose_threads(geom):
    """1 (serial batch, threaded BLAS per GEMM) or the number of batch chunks
    run under prange with single-threaded BLAS.  The batch split wins when
    there are at least as many items as threads and the work is not tiny
    (each parallel call costs a few microseconds); see the module docstring
    of perf/ or the report for the measurements behind this."""
    threads = numba.get_num_threads()
    items = geom["img"][0]
    flops = 2 * items * geom["w"][1] * geom["ck"] * geom["P"]
    if threads < 2 or items < threads or flops < _parallel_min_flops():
        return 1
    return threads


def _direct(geom):
    return int(geom["k3"] == (1, 1, 1) and geom["s3"] == (1, 1, 1) and geom["p3"] == (0, 0, 0))


def _geom_scalars(geom):
    return tuple(int(v) for v in geom["k3"] + geom["s3"] + geom["p3"] + geom["d3"])


def _prepare(call, transposed, backward):
    from ...ops.convolution import n_threads
    data = call.in_shapes[1] if backward else call.in_shapes[0]
    geom = geometry(call.attrs, data, transposed)
    nt = n_threads(call, geom)
    has_bias = not call.attrs["no_bias"]
    fn = (_BACKWARD if backward else _FORWARD)[(transposed, nt > 1, has_bias)]
    img, cols, w = geom["img"], geom["cols"], geom["w"]
    bias = [None] if has_bias else []
    common = (_direct(geom), nt) + _geom_scalars(geom)
    if not backward:
        x, y = (cols, img) if transposed else (img, cols)
        scal = ((1,) if has_bias else ()) + (call.req[0],) + common
        return Launch(fn, scal, views=[x, w] + bias + [y, None, None])
    x, og = (cols, img) if transposed else (img, cols)
    scal = tuple(call.req[:2]) + ((call.req[2], 1) if has_bias else ()) + common
    return Launch(fn, scal, views=[og, x, w, x, w] + bias + [None] * 4)


def prepare_convolution(call):
    return _prepare(call, False, False)


def prepare_deconvolution(call):
    return _prepare(call, True, False)


def prepare_convolution_backward(call):
    return _prepare(call, False, True)


def prepare_deconvolution_backward(call):
    return _prepare(call, True, True)


__all__ = ["im2col", "col2im_add", "choose_threads"]
