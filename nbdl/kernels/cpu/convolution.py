"""CPU kernels for Convolution and Deconvolution (views from
``nbdl.ops.convolution.geometry``: every rank is 3-D, channels split by group;
item ``i = n*G + g`` is sample ``n``'s group ``g``; ``P = OD*OH*OW`` columns
an image, ``CK = Cg*KD*KH*KW`` rows).

Three primitives, all through BLAS (``_gemm.gemm``), each on a *block* of
``nb`` samples at a time (one group ``g`` per GEMM):

- forward:  ``cols[blk] = w_g . im2col(img[blk])``       (Fg, nb*P) = (Fg, CK) (CK, nb*P)
- data:     ``img[blk] += col2im(w_g^T . cols[blk])``
- weight:   ``dw_g += cols[blk] . im2col(img[blk])^T``   one GEMM with K = nb*P

A block's columns lie side by side in one buffer (sample ``j`` of the block
at columns ``[j*P, (j+1)*P)``), so small images (an 8x8 output is 64
columns) still make GEMMs of hundreds of columns, and a block's weight
gradient is one GEMM accumulating into ``dw`` (``beta = 1``), not a GEMM and
a sum per image.  The cols side of a block is gathered into (or the GEMM
result scattered from) a second buffer of ``Fg x nb*P``, fused with the bias
and ``REQ_ADD``.  A block of one sample uses the arrays themselves (``beta``
honours ``REQ_ADD``), and a 1x1 kernel with stride 1 and no pad skips im2col
(the image *is* the columns).  A large image is cut into *tiles* of output
positions instead (a block of one sample, positions ``[qa, qb)``), so that a
block's columns stay in cache until its GEMM reads them.

im2col and col2im go through a table, built once a call, of the source
offset of every (kernel tap, output position) in an image channel (-1 in
the padding): one gather/scatter loop a channel, with no per-row bounds
arithmetic (several times faster on small images).  Kernel taps that read
only padding for every output (all but the centre of a padded 3x3 kernel on
a 1x1 image: ResNet's last stage on 32x32 inputs) are left out of the
table, and the weights are compacted to the kept taps at the start of the
call (their gradient spread back, zero for the others), so the GEMMs skip
the multiplications by padding.

Convolution is forward (img = data); its gradient is weight then data (one
gathered block of out_grad serves both).  Deconvolution's forward is the
data primitive (cols = data, img = output); its backward takes the im2col of
out_grad once per block for its data gradient (the forward primitive) and
its weight gradient (cols = data).

Variants (``mode``, picked at prepare time by ``plan``; BLAS is always held
to one thread inside the parallel ones: numba's threads and BLAS's must not
nest, and BLAS's own threads stall badly on a busy machine):

- ``SERIAL``: small convolutions, or one thread; BLAS held to one thread
  when a block's GEMM is small (``_blas_threads.hold_for``);
- ``CHUNKS``: enough columns for every thread: a ``prange`` over ``nt``
  contiguous chunks of samples, each a serial loop over its blocks with
  scratch rows of its own, weight-gradient partial sums per chunk reduced at
  the end.  A chunk's samples are fixed, so results do not depend on
  scheduling.
- ``SPLIT``: few columns (small batches, tiny images): a block at a time,
  im2col/gather split over (sample, channel) pairs, then each GEMM split
  over ``nt`` slices of its rows (output channels; input channels for the
  data product, each slice followed by its col2im or scatter), so the
  weight gradient needs no reduction.

Scratch from the planner (``scratch``, sized for the kept taps): the column
block ``(rows, CK*bs*P)`` (or ``CK*tile``; none for a one-image 1x1 direct
block), the cols-side block ``(rows, Fg*bs*P)`` (only when ``bs > 1``),
backward the partial sums ``(nt, G, Fg, CK)`` (only ``CHUNKS``), the int32
im2col table and tap list ``(kv*P + kv,)``, and the compacted weights (and
backward their gradient) when taps were left out; ``rows`` is ``nt`` for
``CHUNKS``, else 1.
"""
from functools import partial

import numpy as np
from numba import njit, prange

from ...ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, Launch
from ...ops.convolution import geometry
from ._parallel import threads as _threads, twins as _twins
from ._blas_threads import (BLAS_THREAD_CONTROL, blas_get_threads, blas_set_threads, hold_blas,
                            hold_for, release_blas)
from ._gemm import gemm

SERIAL, CHUNKS, SPLIT = 0, 1, 2


# -- the im2col table and one channel's im2col / col2im ------------------------------

@njit(cache=True, inline="always")
def _axis_reads(n_out, stride, off, size):
    """Whether a tap at offset ``off`` reads inside [0, size) for some output."""
    lo = 0 if off >= 0 else (-off + stride - 1) // stride
    return lo < n_out and lo * stride + off < size


@njit(cache=True)
def _make_table(tbl, d_n, h_n, w_n, geo):
    """Fill the im2col table and return the number of taps ``kv`` kept.

    Taps that read only padding (every output position of a 1x1 image but
    the centre tap of a padded 3x3 kernel) are left out: ``tbl[r*P + q]``
    for the kept taps ``r < kv`` is the offset in a (D, H, W) channel read at
    output position q, or -1 in the padding, and ``tbl[kv*P + r]`` is kept tap
    ``r``'s index in the full kernel."""
    od_, oh_, ow_, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw = geo
    p = od_ * oh_ * ow_
    kv = 0
    for a in range(kd):
        if not _axis_reads(od_, sd, a * dd - pd, d_n):
            continue
        for b in range(kh):
            if not _axis_reads(oh_, sh, b * dh - ph, h_n):
                continue
            for e in range(kw):
                if _axis_reads(ow_, sw, e * dw - pw, w_n):
                    kv += 1
    r = 0
    for a in range(kd):
        for b in range(kh):
            for e in range(kw):
                if not (_axis_reads(od_, sd, a * dd - pd, d_n)
                        and _axis_reads(oh_, sh, b * dh - ph, h_n)
                        and _axis_reads(ow_, sw, e * dw - pw, w_n)):
                    continue
                tbl[kv * p + r] = (a * kh + b) * kw + e
                for od in range(od_):
                    z = od * sd - pd + a * dd
                    for oh in range(oh_):
                        y = oh * sh - ph + b * dh
                        inside = z >= 0 and z < d_n and y >= 0 and y < h_n
                        q = r * p + (od * oh_ + oh) * ow_
                        for ow in range(ow_):
                            x = ow * sw - pw + e * dw
                            if inside and x >= 0 and x < w_n:
                                tbl[q + ow] = (z * h_n + y) * w_n + x
                            else:
                                tbl[q + ow] = -1
                r += 1
    return kv


@njit(cache=True)
def _compact_row(u, w, wc, tbl, k, kv, p):
    """wc[g, f, c*kv + r] = w[g, f, c*K + tap r] for row u = (g, f)."""
    fg = w.shape[1]
    g = u // fg
    f = u - g * fg
    ci = w.shape[2] // k
    taps = tbl[kv * p:kv * p + kv]
    for c in range(ci):
        for r in range(kv):
            wc[g, f, c * kv + r] = w[g, f, c * k + taps[r]]


@njit(cache=True)
def _expand_row(u, part, dw3, tbl, k, kv, p, add):
    """dw3[g, f] (=|+=) the sum over chunks of part[t, g, f], spread back over
    the full kernel (zero for the left-out taps) for row u = (g, f)."""
    fg = dw3.shape[1]
    g = u // fg
    f = u - g * fg
    ci = dw3.shape[2] // k
    taps = tbl[kv * p:kv * p + kv]
    zero = dw3.dtype.type(0)
    if not add:
        for q in range(dw3.shape[2]):
            dw3[g, f, q] = zero
    for c in range(ci):
        for r in range(kv):
            acc = zero
            for t in range(part.shape[0]):
                acc += part[t, g, f, c * kv + r]
            dw3[g, f, c * k + taps[r]] += acc


@njit(cache=True)
def _im2col_channel(src, col, c, off, tbl, k, p, qa, qb):
    """col[c*K + r, off + q] = src[tbl[r*P + q]] (0 where -1) for positions
    q in [qa, qb); src is a flat channel."""
    zero = src.dtype.type(0)
    row = c * k
    for r in range(k):
        t0 = r * p
        for q in range(qa, qb):
            idx = tbl[t0 + q]
            col[row + r, off + q] = src[idx] if idx >= 0 else zero


@njit(cache=True)
def _col2im_channel(col, dst, c, off, tbl, k, p, qa, qb):
    """dst (a flat channel) += its rows of col for positions [qa, qb)
    scattered back (im2col's adjoint)."""
    row = c * k
    for r in range(k):
        t0 = r * p
        for q in range(qa, qb):
            idx = tbl[t0 + q]
            if idx >= 0:
                dst[idx] += col[row + r, off + q]


# -- units of a block, one (sample j, channel) each -------------------------------------
# A block is samples n0 .. n0+nb of group g, output positions [qa, qb) of each (all of
# them when nb > 1); the columns of sample j start at j*(qb - qa).

@njit(cache=True)
def _fill_unit(u, img3, colb, n0, g, g_n, direct, tbl, k, p, qa, qb):
    """Channel c of item (n0+j, g) into its rows and columns of colb."""
    ci = img3.shape[1]
    j = u // ci
    c = u - j * ci
    i = (n0 + j) * g_n + g
    off = j * (qb - qa) - qa
    if direct:
        s = img3[i, c]
        for q in range(qa, qb):
            colb[c, off + q] = s[q]
    else:
        _im2col_channel(img3[i, c], colb, c, off, tbl, k, p, qa, qb)


@njit(cache=True)
def _unfill_unit(u, colb, img3, n0, g, g_n, direct, add, tbl, k, p, qa, qb):
    """Channel c of item (n0+j, g) (=|+=) col2im of its rows/columns of colb
    (a write zeroes the channel with the first positions)."""
    ci = img3.shape[1]
    j = u // ci
    c = u - j * ci
    i = (n0 + j) * g_n + g
    off = j * (qb - qa) - qa
    dst = img3[i, c]
    if direct:
        if add:
            for q in range(qa, qb):
                dst[q] += colb[c, off + q]
        else:
            for q in range(qa, qb):
                dst[q] = colb[c, off + q]
        return
    if not add and qa == 0:
        dst[:] = 0
    _col2im_channel(colb, dst, c, off, tbl, k, p, qa, qb)


@njit(cache=True)
def _scatter_unit(u, res, out3, b, n0, g, g_n, has_bias, add):
    """out3[i, f] (=|+=) res[f, j*P..] (+ bias) for item i = (n0+j, g)."""
    fg, p = out3.shape[1], out3.shape[2]
    j = u // fg
    f = u - j * fg
    i = (n0 + j) * g_n + g
    q0 = j * p
    bv = b[g * fg + f] if has_bias else out3.dtype.type(0)
    o = out3[i, f]
    if add:
        for q in range(p):
            o[q] += res[f, q0 + q] + bv
    else:
        for q in range(p):
            o[q] = res[f, q0 + q] + bv


@njit(cache=True)
def _gather_unit(u, src3, dst, n0, g, g_n):
    """dst[f, j*P..] = src3[i, f] for item i = (n0+j, g)."""
    fg, p = src3.shape[1], src3.shape[2]
    j = u // fg
    f = u - j * fg
    i = (n0 + j) * g_n + g
    q0 = j * p
    s = src3[i, f]
    for q in range(p):
        dst[f, q0 + q] = s[q]


@njit(cache=True, parallel=True)
def _fill_par(n_units, img3, colb, n0, g, g_n, direct, tbl, k, p, qa, qb):
    for u in prange(n_units):
        _fill_unit(u, img3, colb, n0, g, g_n, direct, tbl, k, p, qa, qb)


@njit(cache=True, parallel=True)
def _gather_par(n_units, src3, dst, n0, g, g_n):
    for u in prange(n_units):
        _gather_unit(u, src3, dst, n0, g, g_n)


# -- one block (SERIAL, each CHUNKS chunk, and SPLIT's pieces) ------------------------------

@njit(cache=True)
def _block(flat, rows, m):
    """The first rows*m elements of a scratch row, viewed (rows, m)."""
    return flat[:rows * m].reshape(rows, m)


@njit(cache=True, inline="always")
def _column_block(img3, col, nb, k, qa, qb):
    return _block(col, img3.shape[1] * k, nb * (qb - qa))


@njit(cache=True)
def _columns(img3, col, n0, nb, g, g_n, direct, tbl, k, p, qa, qb):
    """The (CK, nb*(qb-qa)) columns of a block: the image itself for one 1x1
    direct sample, else im2col into the column scratch (``_columns_par``:
    units split by prange; serial kernels never reference it, so they
    compile without a parallel region)."""
    if direct and nb == 1:
        return img3[n0 * g_n + g][:, qa:qb]
    colb = _column_block(img3, col, nb, k, qa, qb)
    for u in range(nb * img3.shape[1]):
        _fill_unit(u, img3, colb, n0, g, g_n, direct, tbl, k, p, qa, qb)
    return colb


@njit(cache=True)
def _columns_par(img3, col, n0, nb, g, g_n, direct, tbl, k, p, qa, qb):
    if direct and nb == 1:
        return img3[n0 * g_n + g][:, qa:qb]
    colb = _column_block(img3, col, nb, k, qa, qb)
    _fill_par(nb * img3.shape[1], img3, colb, n0, g, g_n, direct, tbl, k, p, qa, qb)
    return colb


@njit(cache=True)
def _cols_side(src3, buf, n0, nb, g, g_n, qa, qb):
    """The (Fg, nb*(qb-qa)) cols-side operand of a block: the item itself for
    one sample, else gathered into the block scratch (``_cols_side_par``:
    by prange)."""
    if nb == 1:
        return src3[n0 * g_n + g][:, qa:qb]
    dst = _block(buf, src3.shape[1], nb * src3.shape[2])
    for u in range(nb * src3.shape[1]):
        _gather_unit(u, src3, dst, n0, g, g_n)
    return dst


@njit(cache=True)
def _cols_side_par(src3, buf, n0, nb, g, g_n, qa, qb):
    if nb == 1:
        return src3[n0 * g_n + g][:, qa:qb]
    dst = _block(buf, src3.shape[1], nb * src3.shape[2])
    _gather_par(nb * src3.shape[1], src3, dst, n0, g, g_n)
    return dst


@njit(cache=True)
def _product_cols(wg, src, out3, buf, b, n0, nb, g, g_n, has_bias, add, f0, f1, qa, qb):
    """Rows f0 .. f1 of the block's items on the cols side (=|+=) wg . src (+ bias)."""
    fg, p = out3.shape[1], out3.shape[2]
    if f1 <= f0:
        return
    if nb == 1:
        o = out3[n0 * g_n + g]
        gemm(wg[f0:f1], src, o[f0:f1, qa:qb], 1.0, 1.0 if add else 0.0)
        if has_bias:
            for f in range(f0, f1):
                bv = b[g * fg + f]
                for q in range(qa, qb):
                    o[f, q] += bv
        return
    res = _block(buf, fg, nb * p)
    gemm(wg[f0:f1], src, res[f0:f1], 1.0, 0.0)
    for j in range(nb):
        for f in range(f0, f1):
            _scatter_unit(j * fg + f, res, out3, b, n0, g, g_n, has_bias, add)


@njit(cache=True)
def _product_img(wg, src, img3, col, n0, nb, g, g_n, direct, add, tbl, k, p, c0, c1, qa, qb):
    """Channels c0 .. c1 of the block's items on the img side (=|+=)
    col2im(wg^T . src)."""
    if c1 <= c0:
        return
    ci = img3.shape[1]
    r0, r1 = c0 * k, c1 * k
    wt = wg[:, r0:r1].T
    if direct and nb == 1:
        gemm(wt, src, img3[n0 * g_n + g, c0:c1, qa:qb], 1.0, 1.0 if add else 0.0)
        return
    colb = _block(col, ci * k, nb * (qb - qa))
    gemm(wt, src, colb[r0:r1], 1.0, 0.0)
    for j in range(nb):
        for c in range(c0, c1):
            _unfill_unit(j * ci + c, colb, img3, n0, g, g_n, direct, add, tbl, k, p, qa, qb)


# -- sample ranges, serial over blocks (and over column tiles of one image) -------------------

@njit(cache=True)
def _forward_range(lo, hi, bs, tile, img3, w, b, out3, col, buf, has_bias, add, direct, tbl,
                   k, p):
    g_n, fg = w.shape[0], w.shape[1]
    for n0 in range(lo, hi, bs):
        nb = min(bs, hi - n0)
        for qa in range(0, p, tile):
            qb = min(p, qa + tile)
            for g in range(g_n):
                src = _columns(img3, col, n0, nb, g, g_n, direct, tbl, k, p, qa, qb)
                _product_cols(w[g], src, out3, buf, b, n0, nb, g, g_n, has_bias, add, 0, fg,
                              qa, qb)


@njit(cache=True)
def _data_range(lo, hi, bs, tile, x3, w, img3, col, buf, add, direct, tbl, k, p):
    g_n = w.shape[0]
    for n0 in range(lo, hi, bs):
        nb = min(bs, hi - n0)
        for qa in range(0, p, tile):
            qb = min(p, qa + tile)
            for g in range(g_n):
                src = _cols_side(x3, buf, n0, nb, g, g_n, qa, qb)
                _product_img(w[g], src, img3, col, n0, nb, g, g_n, direct, add, tbl, k, p, 0,
                             img3.shape[1], qa, qb)


@njit(cache=True)
def _conv_backward_range(lo, hi, bs, tile, og3, img3, w, dimg3, dwt, col, buf, r_img, r_w,
                         w_add, direct, tbl, k, p):
    """dwt[g] (=|+=, by w_add for the first block) the sum over blocks of
    og . im2col(img)^T, then dimg (req r_img) col2im(w^T . og)."""
    g_n = w.shape[0]
    for n0 in range(lo, hi, bs):
        nb = min(bs, hi - n0)
        for qa in range(0, p, tile):
            qb = min(p, qa + tile)
            beta = 1.0 if (w_add or n0 > lo or qa > 0) else 0.0
            for g in range(g_n):
                ogb = _cols_side(og3, buf, n0, nb, g, g_n, qa, qb)
                if r_w != REQ_NULL:
                    src = _columns(img3, col, n0, nb, g, g_n, direct, tbl, k, p, qa, qb)
                    gemm(ogb, src.T, dwt[g], 1.0, beta)
                if r_img != REQ_NULL:
                    _product_img(w[g], ogb, dimg3, col, n0, nb, g, g_n, direct,
                                 r_img == REQ_ADD, tbl, k, p, 0, dimg3.shape[1], qa, qb)


@njit(cache=True)
def _deconv_backward_range(lo, hi, bs, tile, og3, x3, w, dx3, dwt, col, buf, r_x, r_w, w_add,
                           direct, tbl, k, p):
    """One im2col of out_grad a block serves dwt[g] += x . col^T and dx = w . col."""
    g_n, fg = w.shape[0], w.shape[1]
    for n0 in range(lo, hi, bs):
        nb = min(bs, hi - n0)
        for qa in range(0, p, tile):
            qb = min(p, qa + tile)
            beta = 1.0 if (w_add or n0 > lo or qa > 0) else 0.0
            for g in range(g_n):
                src = _columns(og3, col, n0, nb, g, g_n, direct, tbl, k, p, qa, qb)
                if r_w != REQ_NULL:
                    xb = _cols_side(x3, buf, n0, nb, g, g_n, qa, qb)
                    gemm(xb, src.T, dwt[g], 1.0, beta)
                if r_x != REQ_NULL:
                    _product_cols(w[g], src, dx3, buf, w[g, 0, :0], n0, nb, g, g_n, False,
                                  r_x == REQ_ADD, 0, fg, qa, qb)


# -- SPLIT: a block at a time, GEMM rows split over threads ------------------------------

@njit(cache=True, inline="always")
def _slice(n, t, nt):
    return n * t // nt, n * (t + 1) // nt


@njit(cache=True, parallel=True)
def _forward_split(nt, bs, img3, w, b, out3, col, buf, has_bias, add, direct, tbl, k, p):
    g_n, fg = w.shape[0], w.shape[1]
    n = img3.shape[0] // g_n
    for n0 in range(0, n, bs):
        nb = min(bs, n - n0)
        for g in range(g_n):
            src = _columns_par(img3, col, n0, nb, g, g_n, direct, tbl, k, p, 0, p)
            for t in prange(nt):
                f0, f1 = _slice(fg, t, nt)
                _product_cols(w[g], src, out3, buf, b, n0, nb, g, g_n, has_bias, add, f0, f1, 0,
                              p)


@njit(cache=True, parallel=True)
def _data_split(nt, bs, x3, w, img3, col, buf, add, direct, tbl, k, p):
    g_n, ci = w.shape[0], img3.shape[1]
    n = x3.shape[0] // g_n
    for n0 in range(0, n, bs):
        nb = min(bs, n - n0)
        for g in range(g_n):
            src = _cols_side_par(x3, buf, n0, nb, g, g_n, 0, p)
            for t in prange(nt):
                c0, c1 = _slice(ci, t, nt)
                _product_img(w[g], src, img3, col, n0, nb, g, g_n, direct, add, tbl, k, p,
                             c0, c1, 0, p)


@njit(cache=True, parallel=True)
def _conv_backward_split(nt, bs, og3, img3, w, dimg3, dw3, col, buf, r_img, r_w, w_add, direct,
                         tbl, k, p):
    g_n, fg, ci = w.shape[0], w.shape[1], img3.shape[1]
    n = img3.shape[0] // g_n
    for n0 in range(0, n, bs):
        nb = min(bs, n - n0)
        for g in range(g_n):
            ogb = _cols_side_par(og3, buf, n0, nb, g, g_n, 0, p)
            if r_w != REQ_NULL:
                src = _columns_par(img3, col, n0, nb, g, g_n, direct, tbl, k, p, 0, p)
                beta = 1.0 if (w_add or n0 > 0) else 0.0
                for t in prange(nt):
                    f0, f1 = _slice(fg, t, nt)
                    if f1 > f0:
                        gemm(ogb[f0:f1], src.T, dw3[g, f0:f1], 1.0, beta)
            if r_img != REQ_NULL:
                for t in prange(nt):
                    c0, c1 = _slice(ci, t, nt)
                    _product_img(w[g], ogb, dimg3, col, n0, nb, g, g_n, direct,
                                 r_img == REQ_ADD, tbl, k, p, c0, c1, 0, p)


@njit(cache=True, parallel=True)
def _deconv_backward_split(nt, bs, og3, x3, w, dx3, dw3, col, buf, r_x, r_w, w_add, direct, tbl,
                           k, p):
    """Thread t owns rows f0 .. f1 of x's block: it reads them for dw, then
    overwrites them with its rows of w . col (same scratch)."""
    g_n, fg = w.shape[0], w.shape[1]
    n = x3.shape[0] // g_n
    for n0 in range(0, n, bs):
        nb = min(bs, n - n0)
        for g in range(g_n):
            src = _columns_par(og3, col, n0, nb, g, g_n, direct, tbl, k, p, 0, p)
            xb = _cols_side_par(x3, buf, n0, nb, g, g_n, 0, p) if r_w != REQ_NULL else src[:0]
            beta = 1.0 if (w_add or n0 > 0) else 0.0
            for t in prange(nt):
                f0, f1 = _slice(fg, t, nt)
                if f1 > f0 and r_w != REQ_NULL:
                    gemm(xb[f0:f1], src.T, dw3[g, f0:f1], 1.0, beta)
                if r_x != REQ_NULL:
                    _product_cols(w[g], src, dx3, buf, w[g, 0, :0], n0, nb, g, g_n, False,
                                  r_x == REQ_ADD, f0, f1, 0, p)


# -- reductions and bias ---------------------------------------------------------------

@njit(cache=True)
def _reduce_row(r, part, dw3, add):
    fg, ck = dw3.shape[1], dw3.shape[2]
    g = r // fg
    f = r - g * fg
    for q in range(ck):
        acc = part[0, g, f, q]
        for t in range(1, part.shape[0]):
            acc += part[t, g, f, q]
        if add:
            dw3[g, f, q] += acc
        else:
            dw3[g, f, q] = acc


@njit(cache=True, parallel=True)
def _reduce_parts(part, dw3, add):
    """dw (G, Fg, CK) (=|+=) the sum of the per-chunk partial sums."""
    for r in prange(dw3.shape[0] * dw3.shape[1]):
        _reduce_row(r, part, dw3, add)


@njit(cache=True)
def _bias_channel(ch, a3, db, g_n, add):
    """db[ch] (=|+=) the sum over the items of ch's group of a3[i, f, :]."""
    fg = a3.shape[1]
    g = ch // fg
    f = ch - g * fg
    acc = a3.dtype.type(0)
    for i in range(g, a3.shape[0], g_n):
        for q in range(a3.shape[2]):
            acc += a3[i, f, q]
    if add:
        db[ch] += acc
    else:
        db[ch] = acc


@njit(cache=True)
def _bias_grad(a3, db, g_n, req):
    for ch in range(db.shape[0]):
        _bias_channel(ch, a3, db, g_n, req == REQ_ADD)


@njit(cache=True, parallel=True)
def _bias_grad_par(a3, db, g_n, req):
    for ch in prange(db.shape[0]):
        _bias_channel(ch, a3, db, g_n, req == REQ_ADD)


@njit(cache=True)
def _add_bias_unit(u, a3, b, g_n):
    fg = a3.shape[1]
    i = u // fg
    f = u - i * fg
    bv = b[(i % g_n) * fg + f]
    for q in range(a3.shape[2]):
        a3[i, f, q] += bv


@njit(cache=True)
def _add_bias(a3, b, g_n):
    for u in range(a3.shape[0] * a3.shape[1]):
        _add_bias_unit(u, a3, b, g_n)


@njit(cache=True, parallel=True)
def _add_bias_par(a3, b, g_n):
    for u in prange(a3.shape[0] * a3.shape[1]):
        _add_bias_unit(u, a3, b, g_n)


# -- entry points ---------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _flat3(a):
    return a.reshape(a.shape[0], a.shape[1], a.shape[2] * a.shape[3] * a.shape[4])


@njit(cache=True)
def _setup(img, cols, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """(weights, K, kv, P): the im2col table filled unless direct, and, when
    taps that read only padding were left out (kv < K), the weights
    compacted to the kv kept taps in ``wsc[0]``."""
    geo = (cols.shape[2], cols.shape[3], cols.shape[4], kd, kh, kw, sd, sh, sw, pd, ph, pw,
           dd, dh, dw)
    k = kd * kh * kw
    p = cols.shape[2] * cols.shape[3] * cols.shape[4]
    kv = k
    if not direct:
        kv = _make_table(tbl, img.shape[2], img.shape[3], img.shape[4], geo)
    if kv == k:
        return w, k, kv, p
    wc = wsc[0]
    for u in range(w.shape[0] * w.shape[1]):
        _compact_row(u, w, wc, tbl, k, kv, p)
    return wc, k, kv, p


@njit(cache=True)
def _finish_weight(part, dw3, tbl, k, kv, p, add):
    """dw3 (=|+=) the sum of the partial sums (spread back over the full
    kernel when taps were left out); ``_finish_weight_par``: by prange."""
    if kv == k:
        for r in range(dw3.shape[0] * dw3.shape[1]):
            _reduce_row(r, part, dw3, add)
    else:
        for r in range(dw3.shape[0] * dw3.shape[1]):
            _expand_row(r, part, dw3, tbl, k, kv, p, add)


@njit(cache=True)
def _finish_weight_par(part, dw3, tbl, k, kv, p, add):
    if kv == k:
        _reduce_parts(part, dw3, add)
    else:
        _expand_par(part, dw3, tbl, k, kv, p, add)


@njit(cache=True, parallel=True)
def _expand_par(part, dw3, tbl, k, kv, p, add):
    for r in prange(dw3.shape[0] * dw3.shape[1]):
        _expand_row(r, part, dw3, tbl, k, kv, p, add)


@njit(cache=True)
def conv_forward(img, w, b, cols, col, buf, tbl, wsc, has_bias, req, direct, mode, nt, bs, tile, hold,
                 kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """cols (=|+=) w . im2col(img) (+ b); ``mode``/``nt``/``bs`` from ``plan``."""
    if req == REQ_NULL:
        return
    wk, k, kv, p = _setup(img, cols, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = img.shape[0] // w.shape[0]
    prev = hold_blas(hold)
    _forward_range(0, n, bs, tile, _flat3(img), wk, b, _flat3(cols), col[0], buf[0], has_bias,
                   req == REQ_ADD, direct, tbl, kv, p)
    release_blas(prev)


@njit(cache=True, parallel=True)
def conv_forward_parallel(img, w, b, cols, col, buf, tbl, wsc, has_bias, req, direct, mode, nt,
                          bs, tile, hold, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    if req == REQ_NULL:
        return
    wk, k, kv, p = _setup(img, cols, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = img.shape[0] // w.shape[0]
    img3, out3, add = _flat3(img), _flat3(cols), req == REQ_ADD
    saved = blas_get_threads()
    blas_set_threads(1)
    if mode == SPLIT:
        _forward_split(nt, bs, img3, wk, b, out3, col[0], buf[0], has_bias, add, direct, tbl,
                       kv, p)
    else:
        for t in prange(nt):
            lo, hi = _slice(n, t, nt)
            _forward_range(lo, hi, bs, tile, img3, wk, b, out3, col[t], buf[t], has_bias, add,
                           direct, tbl, kv, p)
    blas_set_threads(saved)


@njit(cache=True)
def conv_backward(og, img, w, dimg, dw_, db, col, part, buf, tbl, wsc, r_img, r_w, r_b,
                  has_bias, direct, mode, nt, bs, tile, hold,
                  kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """Convolution's gradients: og is the cols side, img the data."""
    wk, k, kv, p = _setup(img, og, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = img.shape[0] // w.shape[0]
    og3 = _flat3(og)
    compact = kv < k
    if r_w == REQ_WRITE and n == 0:
        dw_[:] = 0
    if r_w != REQ_NULL or r_img != REQ_NULL:
        prev = hold_blas(hold)
        _conv_backward_range(0, n, bs, tile, og3, _flat3(img), wk, _flat3(dimg),
                             wsc[1] if compact else dw_, col[0], buf[0], r_img, r_w,
                             r_w == REQ_ADD and not compact, direct, tbl, kv, p)
        release_blas(prev)
        if compact and r_w != REQ_NULL and n > 0:
            _finish_weight(wsc[1:2], dw_, tbl, k, kv, p, r_w == REQ_ADD)
    if has_bias and r_b != REQ_NULL:
        _bias_grad(og3, db, w.shape[0], r_b)


@njit(cache=True, parallel=True)
def conv_backward_parallel(og, img, w, dimg, dw_, db, col, part, buf, tbl, wsc, r_img, r_w, r_b,
                           has_bias, direct, mode, nt, bs, tile, hold,
                           kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    wk, k, kv, p = _setup(img, og, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = img.shape[0] // w.shape[0]
    og3, img3, dimg3 = _flat3(og), _flat3(img), _flat3(dimg)
    compact = kv < k
    if r_w == REQ_WRITE and n == 0:
        dw_[:] = 0
    if r_w != REQ_NULL or r_img != REQ_NULL:
        saved = blas_get_threads()
        blas_set_threads(1)
        if mode == SPLIT:
            _conv_backward_split(nt, bs, og3, img3, wk, dimg3, wsc[1] if compact else dw_,
                                 col[0], buf[0], r_img, r_w, r_w == REQ_ADD and not compact,
                                 direct, tbl, kv, p)
        else:
            for t in prange(nt):
                lo, hi = _slice(n, t, nt)
                if r_w != REQ_NULL and hi == lo:
                    part[t] = 0
                _conv_backward_range(lo, hi, bs, tile, og3, img3, wk, dimg3,
                                     part[t] if r_w != REQ_NULL else dw_, col[t], buf[t],
                                     r_img, r_w, False, direct, tbl, kv, p)
        blas_set_threads(saved)
        if r_w != REQ_NULL and n > 0:
            if mode != SPLIT:
                _finish_weight_par(part, dw_, tbl, k, kv, p, r_w == REQ_ADD)
            elif compact:
                _finish_weight_par(wsc[1:2], dw_, tbl, k, kv, p, r_w == REQ_ADD)
    if has_bias and r_b != REQ_NULL:
        _bias_grad_par(og3, db, w.shape[0], r_b)


@njit(cache=True)
def deconv_forward(x, w, b, out, col, buf, tbl, wsc, has_bias, req, direct, mode, nt, bs, tile, hold,
                   kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """Deconvolution: x is the cols side, out the img side."""
    if req == REQ_NULL:
        return
    wk, k, kv, p = _setup(out, x, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = out.shape[0] // w.shape[0]
    out3 = _flat3(out)
    prev = hold_blas(hold)
    _data_range(0, n, bs, tile, _flat3(x), wk, out3, col[0], buf[0], req == REQ_ADD, direct, tbl, kv,
                p)
    release_blas(prev)
    if has_bias:
        _add_bias(out3, b, w.shape[0])


@njit(cache=True, parallel=True)
def deconv_forward_parallel(x, w, b, out, col, buf, tbl, wsc, has_bias, req, direct, mode, nt,
                            bs, tile, hold, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    if req == REQ_NULL:
        return
    wk, k, kv, p = _setup(out, x, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = out.shape[0] // w.shape[0]
    x3, out3, add = _flat3(x), _flat3(out), req == REQ_ADD
    saved = blas_get_threads()
    blas_set_threads(1)
    if mode == SPLIT:
        _data_split(nt, bs, x3, wk, out3, col[0], buf[0], add, direct, tbl, kv, p)
    else:
        for t in prange(nt):
            lo, hi = _slice(n, t, nt)
            _data_range(lo, hi, bs, tile, x3, wk, out3, col[t], buf[t], add, direct, tbl, kv, p)
    blas_set_threads(saved)
    if has_bias:
        _add_bias_par(out3, b, w.shape[0])


@njit(cache=True)
def deconv_backward(og, x, w, dx, dw_, db, col, part, buf, tbl, wsc, r_x, r_w, r_b, has_bias,
                    direct, mode, nt, bs, tile, hold, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """Deconvolution's gradients: og is the img side, x (the data) the cols side."""
    wk, k, kv, p = _setup(og, x, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = x.shape[0] // w.shape[0]
    og3 = _flat3(og)
    compact = kv < k
    if r_w == REQ_WRITE and n == 0:
        dw_[:] = 0
    if r_x != REQ_NULL or r_w != REQ_NULL:
        prev = hold_blas(hold)
        _deconv_backward_range(0, n, bs, tile, og3, _flat3(x), wk, _flat3(dx),
                               wsc[1] if compact else dw_, col[0], buf[0], r_x, r_w,
                               r_w == REQ_ADD and not compact, direct, tbl, kv, p)
        release_blas(prev)
        if compact and r_w != REQ_NULL and n > 0:
            _finish_weight(wsc[1:2], dw_, tbl, k, kv, p, r_w == REQ_ADD)
    if has_bias and r_b != REQ_NULL:
        _bias_grad(og3, db, w.shape[0], r_b)


@njit(cache=True, parallel=True)
def deconv_backward_parallel(og, x, w, dx, dw_, db, col, part, buf, tbl, wsc, r_x, r_w, r_b,
                             has_bias, direct, mode, nt, bs, tile, hold,
                             kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    wk, k, kv, p = _setup(og, x, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = x.shape[0] // w.shape[0]
    og3, x3, dx3 = _flat3(og), _flat3(x), _flat3(dx)
    compact = kv < k
    if r_w == REQ_WRITE and n == 0:
        dw_[:] = 0
    if r_x != REQ_NULL or r_w != REQ_NULL:
        saved = blas_get_threads()
        blas_set_threads(1)
        if mode == SPLIT:
            _deconv_backward_split(nt, bs, og3, x3, wk, dx3, wsc[1] if compact else dw_,
                                   col[0], buf[0], r_x, r_w, r_w == REQ_ADD and not compact,
                                   direct, tbl, kv, p)
        else:
            for t in prange(nt):
                lo, hi = _slice(n, t, nt)
                if r_w != REQ_NULL and hi == lo:
                    part[t] = 0
                _deconv_backward_range(lo, hi, bs, tile, og3, x3, wk, dx3,
                                       part[t] if r_w != REQ_NULL else dw_, col[t], buf[t],
                                       r_x, r_w, False, direct, tbl, kv, p)
        blas_set_threads(saved)
        if r_w != REQ_NULL and n > 0:
            if mode != SPLIT:
                _finish_weight_par(part, dw_, tbl, k, kv, p, r_w == REQ_ADD)
            elif compact:
                _finish_weight_par(wsc[1:2], dw_, tbl, k, kv, p, r_w == REQ_ADD)
    if has_bias and r_b != REQ_NULL:
        _bias_grad_par(og3, db, w.shape[0], r_b)


# -- the no-bias signatures (module-level, one each: numba caches by qualified name) ---

@njit(cache=True)
def conv_forward_nobias(img, w, out, col, buf, tbl, wsc, req, direct, mode, nt, bs, tile, hold,
                        kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    conv_forward(img, w, w[0, 0, :0], out, col, buf, tbl, wsc, 0, req, direct, mode, nt, bs, tile, hold,
                 kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def conv_forward_parallel_nobias(img, w, out, col, buf, tbl, wsc, req, direct, mode, nt, bs, tile, hold,
                                 kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    conv_forward_parallel(img, w, w[0, 0, :0], out, col, buf, tbl, wsc, 0, req, direct, mode, nt,
                          bs, tile, hold, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def deconv_forward_nobias(x, w, out, col, buf, tbl, wsc, req, direct, mode, nt, bs, tile, hold,
                          kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    deconv_forward(x, w, w[0, 0, :0], out, col, buf, tbl, wsc, 0, req, direct, mode, nt, bs, tile, hold,
                   kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def deconv_forward_parallel_nobias(x, w, out, col, buf, tbl, wsc, req, direct, mode, nt, bs, tile, hold,
                                   kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    deconv_forward_parallel(x, w, w[0, 0, :0], out, col, buf, tbl, wsc, 0, req, direct, mode, nt,
                            bs, tile, hold, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def conv_backward_nobias(og, img, w, dimg, dw_, col, part, buf, tbl, wsc, r_img, r_w, direct, mode,
                         nt, bs, tile, hold, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    conv_backward(og, img, w, dimg, dw_, w[0, 0, :0], col, part, buf, tbl, wsc, r_img, r_w,
                  REQ_NULL, 0, direct, mode, nt, bs, tile, hold,
                  kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def conv_backward_parallel_nobias(og, img, w, dimg, dw_, col, part, buf, tbl, wsc, r_img, r_w,
                                  direct, mode, nt, bs, tile, hold,
                                  kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    conv_backward_parallel(og, img, w, dimg, dw_, w[0, 0, :0], col, part, buf, tbl, wsc, r_img,
                           r_w, REQ_NULL, 0, direct, mode, nt, bs, tile, hold,
                           kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True)
def deconv_backward_nobias(og, x, w, dx, dw_, col, part, buf, tbl, wsc, r_x, r_w, direct, mode, nt,
                           bs, tile, hold, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    deconv_backward(og, x, w, dx, dw_, w[0, 0, :0], col, part, buf, tbl, wsc, r_x, r_w, REQ_NULL,
                    0, direct, mode, nt, bs, tile, hold, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh,
                    dw)


@njit(cache=True)
def deconv_backward_parallel_nobias(og, x, w, dx, dw_, col, part, buf, tbl, wsc, r_x, r_w, direct,
                                    mode, nt, bs, tile, hold,
                                    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    deconv_backward_parallel(og, x, w, dx, dw_, w[0, 0, :0], col, part, buf, tbl, wsc, r_x, r_w,
                             REQ_NULL, 0, direct, mode, nt, bs, tile, hold,
                             kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


# (transposed, parallel, has_bias) -> entry point
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


# -- plan and scratch (prepare time) ---------------------------------------------------------

def is_direct(geom):
    """1x1 kernel, stride 1, no pad: the image is its own column matrix."""
    return int(geom["k3"] == (1, 1, 1) and geom["s3"] == (1, 1, 1) and geom["p3"] == (0, 0, 0))


def plan(geom, itemsize=4):
    """``(mode, nt, bs, tile)`` for a convolution of geometry ``geom`` (see the
    module docstring): ``SERIAL`` below ``NBDL_CONV_PARALLEL_MIN_FLOPS`` (or
    on one thread, or when BLAS's threads cannot be held), ``CHUNKS`` when
    every thread gets at least ``NBDL_CONV_BLOCK_COLS`` columns of its own
    samples, else ``SPLIT``.  ``bs``: samples a block, to make blocks of
    about ``NBDL_CONV_BLOCK_COLS`` columns (a quarter of that for 1x1 direct
    convolutions; ``SPLIT``: the whole batch), within a chunk and within
    ``NBDL_CONV_BLOCK_BYTES`` of columns.
    ``tile``: output positions a block; an image of more than twice
    ``NBDL_CONV_BLOCK_COLS`` is cut into tiles of about that many (``SERIAL``
    and ``CHUNKS``, unless 1x1 direct: the columns of a tile stay in cache
    until its GEMM)."""
    from ... import config
    threads = _threads()
    n, p = geom["N"], max(geom["P"], 1)
    g_n, fg, ck = geom["w"]
    flops = 2 * n * g_n * fg * ck * p
    target = max(1, config.conv_block_cols())
    by_bytes = max(1, config.conv_block_bytes() // max(1, ck * p * itemsize))
    # a 1x1 direct convolution multiplies the images in place; a block of
    # several costs copies in and out, worth it only for the smallest images
    per_block = -(-(max(1, target // 4) if is_direct(geom) else target) // p)
    if threads < 2 or not BLAS_THREAD_CONTROL or flops < config.conv_parallel_min_flops():
        mode, nt, bs = SERIAL, 1, min(n, per_block)
    elif n >= threads and n * p >= threads * config.conv_chunk_min_cols():
        mode, nt = CHUNKS, threads
        bs = min(-(-n // nt), per_block)
    else:
        mode, nt, bs = SPLIT, threads, n
    bs = max(1, min(bs, by_bytes))
    tile = p
    if mode != SPLIT and bs == 1 and p > 2 * target and not is_direct(geom):
        tiles = -(-p // target)
        tile = -(-p // tiles)
    return mode, nt, bs, tile


def kept_taps(geom):
    """Kernel taps that read inside the image for some output position (all
    of them but for tiny padded images); ``_make_table``'s rule."""
    def axis(n_out, stride, off, size):
        lo = 0 if off >= 0 else (-off + stride - 1) // stride
        return lo < n_out and lo * stride + off < size
    (kd, kh, kw), (sd, sh, sw) = geom["k3"], geom["s3"]
    (pd, ph, pw), (dd, dh, dw) = geom["p3"], geom["d3"]
    (d_n, h_n, w_n), (od, oh, ow) = geom["img"][2:], geom["cols"][2:]
    return [(a * kh + b) * kw + e for a in range(kd) for b in range(kh) for e in range(kw)
            if axis(od, sd, a * dd - pd, d_n) and axis(oh, sh, b * dh - ph, h_n)
            and axis(ow, sw, e * dw - pw, w_n)]


def scratch(geom, the_plan, backward, need_weight, dtype):
    """``[(shape, dtype)]`` of the kernels' scratch for ``plan``'s choice:
    ``[col, buf, table, wsc]`` forward, ``[col, part, buf, table, wsc]``
    backward (zero-sized where the variant does not use one).  ``wsc``
    holds the weights compacted to the kept taps (and backward their
    gradient) when some taps read only padding; the column block, the
    partial sums and the table are sized for the kept taps."""
    mode, nt, bs, tile = the_plan
    g_n, fg, ck = geom["w"]
    p = geom["P"]
    k = int(np.prod(geom["k3"]))
    rows = nt if mode == CHUNKS else 1
    direct = is_direct(geom)
    kv = k if direct else len(kept_taps(geom))
    ckv = ck // k * kv
    col = ((rows, 0 if (direct and bs == 1) else ckv * (bs * p if tile == p else tile)), dtype)
    buf = ((rows, fg * bs * p if bs > 1 else 0), dtype)
    tbl = ((0 if direct else kv * p + kv,), np.int32)
    wsc = ((0 if kv == k else (2 if backward else 1), g_n, fg, ckv), dtype)
    if not backward:
        return [col, buf, tbl, wsc]
    part = ((nt if (mode == CHUNKS and need_weight) else 0, g_n, fg, ckv), dtype)
    return [col, part, buf, tbl, wsc]


# -- prepare ----------------------------------------------------------------------------

def _geom_scalars(geom):
    return tuple(int(v) for v in geom["k3"] + geom["s3"] + geom["p3"] + geom["d3"])


def cpu_plan(call, geom):
    """``(mode, nt, bs, tile)`` of these kernels for ``call`` (``plan`` for its
    dtype); ``prepare`` and the temp rules both ask this, so the scratch
    matches the variant."""
    dt = call.out_dtypes[0] if call.out_dtypes and call.out_dtypes[0] is not None else "float32"
    return plan(geom, np.dtype(dt).itemsize)


def _temps(call, transposed, backward):
    """``[col, buf, table, wsc]`` forward, ``[col, part, buf, table, wsc]``
    backward: the im2col column block (Deconvolution forward: the GEMM result
    before col2im), backward the per-chunk weight-gradient partial sums, the
    cols-side block (gathered or GEMM result), the int32 im2col table, and the
    weights (and gradient) compacted to the taps that read the image."""
    geom = geometry(call.attrs, call.in_shapes[1 if backward else 0], transposed)
    return scratch(geom, cpu_plan(call, geom), backward, backward and call.req[1] != 0,
                   call.out_dtypes[0])


temp_convolution = partial(_temps, transposed=False, backward=False)
temp_deconvolution = partial(_temps, transposed=True, backward=False)
temp_convolution_backward = partial(_temps, transposed=False, backward=True)
temp_deconvolution_backward = partial(_temps, transposed=True, backward=True)


def _prepare(call, transposed, backward):
    data = call.in_shapes[1] if backward else call.in_shapes[0]
    geom = geometry(call.attrs, data, transposed)
    mode, nt, bs, tile = cpu_plan(call, geom)
    has_bias = not call.attrs["no_bias"]
    fn = (_BACKWARD if backward else _FORWARD)[(transposed, mode != SERIAL, has_bias)]
    img, cols, w = geom["img"], geom["cols"], geom["w"]
    # SERIAL: BLAS's own threads only for GEMMs big enough (one block's)
    gemm_flops = 2 * w[1] * w[2] * (bs * geom["P"] if tile == geom["P"] else tile)
    hold = hold_for(gemm_flops) if mode == SERIAL else 0
    bias = [None] if has_bias else []
    common = (is_direct(geom), mode, nt, bs, tile, hold) + _geom_scalars(geom)
    if not backward:
        x, y = (cols, img) if transposed else (img, cols)
        scal = ((1,) if has_bias else ()) + (call.req[0],) + common
        return Launch(fn, scal, views=[x, w] + bias + [y] + [None] * 4)
    x, og = (cols, img) if transposed else (img, cols)
    scal = tuple(call.req[:2]) + ((call.req[2], 1) if has_bias else ()) + common
    return Launch(fn, scal, views=[og, x, w, x, w] + bias + [None] * 5)


def prepare_convolution(call):
    return _prepare(call, False, False)


def prepare_deconvolution(call):
    return _prepare(call, True, False)


def prepare_convolution_backward(call):
    return _prepare(call, False, True)


def prepare_deconvolution_backward(call):
    return _prepare(call, True, True)


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((conv_forward_parallel, conv_forward),
       (conv_forward_parallel_nobias, conv_forward_nobias),
       (conv_backward_parallel, conv_backward),
       (conv_backward_parallel_nobias, conv_backward_nobias),
       (deconv_forward_parallel, deconv_forward),
       (deconv_forward_parallel_nobias, deconv_forward_nobias),
       (deconv_backward_parallel, deconv_backward),
       (deconv_backward_parallel_nobias, deconv_backward_nobias))


__all__ = ["plan", "scratch", "kept_taps", "is_direct", "SERIAL", "CHUNKS", "SPLIT"]
