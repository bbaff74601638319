"""The GEMM blocks of the CPU convolution kernels (``convolution``): one block
of samples (``SERIAL``, each ``CHUNKS`` chunk, and ``SPLIT``'s pieces), the
serial loops over a range of samples (and over the column tiles of one
image), and ``SPLIT``'s GEMMs split by rows over threads."""
from numba import prange

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL
from ..shared.conv_epilogue import EP_RESIDUAL
from ._gemm import gemm
from ._parallel import chunk as _slice
from .conv_epilogue import finish_run
from .conv_im2col import (_fill_par, _fill_unit, _gather_par, _gather_unit, _scatter_unit,
                          _unfill_unit)


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
def _product_cols(wg, src, out3, buf, st, r3, n0, nb, g, g_n, ep, add, f0, f1, qa, qb):
    """Rows f0 .. f1 of the block's items on the cols side (=|+=) wg . src,
    through the epilogue ``ep`` (bias, folded BatchNorm, residual ``r3``,
    ReLU: ``conv_epilogue``) while the rows are in cache."""
    fg, p = out3.shape[1], out3.shape[2]
    if f1 <= f0:
        return
    if nb == 1:
        i = n0 * g_n + g
        o = out3[i]
        gemm(wg[f0:f1, :], src[:, :], o[f0:f1, qa:qb], 1.0, 1.0 if add else 0.0)
        if ep:
            for f in range(f0, f1):
                finish_run(o[f], r3[i, f] if ep & EP_RESIDUAL else o[f], st, g * fg + f, ep,
                           qa, qb)
        return
    res = _block(buf, fg, nb * p)
    gemm(wg[f0:f1, :], src[:, :], res[f0:f1, :], 1.0, 0.0)
    for j in range(nb):
        for f in range(f0, f1):
            _scatter_unit(j * fg + f, res, out3, st, r3, n0, g, g_n, ep, add)


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
        gemm(wt, src[:, :], img3[n0 * g_n + g, c0:c1, qa:qb], 1.0, 1.0 if add else 0.0)
        return
    colb = _block(col, ci * k, nb * (qb - qa))
    gemm(wt, src[:, :], colb[r0:r1, :], 1.0, 0.0)
    for j in range(nb):
        for c in range(c0, c1):
            _unfill_unit(j * ci + c, colb, img3, n0, g, g_n, direct, add, tbl, k, p, qa, qb)


# -- sample ranges, serial over blocks (and over column tiles of one image) -------------------

@njit(cache=True)
def _forward_range(lo, hi, bs, tile, img3, w, st, r3, out3, col, buf, ep, add, direct, tbl,
                   k, p):
    g_n, fg = w.shape[0], w.shape[1]
    for n0 in range(lo, hi, bs):
        nb = min(bs, hi - n0)
        for qa in range(0, p, tile):
            qb = min(p, qa + tile)
            for g in range(g_n):
                src = _columns(img3, col, n0, nb, g, g_n, direct, tbl, k, p, qa, qb)
                _product_cols(w[g], src, out3, buf, st, r3, n0, nb, g, g_n, ep, add, 0, fg,
                              qa, qb)


@njit(cache=True)
def _forward_tiles(lo, hi, tile, img3, w, st, r3, out3, col, ep, add, direct, tbl, k, p):
    """Work items ``lo`` .. ``hi`` of the (image, column tile) pairs, in that
    order (``TILES``): each tile's columns, GEMM and epilogue in turn."""
    g_n, fg = w.shape[0], w.shape[1]
    per = -(-p // tile)
    for j in range(lo, hi):
        n0 = j // per
        qa = (j - n0 * per) * tile
        qb = min(p, qa + tile)
        for g in range(g_n):
            src = _columns(img3, col, n0, 1, g, g_n, direct, tbl, k, p, qa, qb)
            _product_cols(w[g], src, out3, col, st, r3, n0, 1, g, g_n, ep, add, 0, fg, qa, qb)


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
                    gemm(ogb[:, :], src.T[:, :], dwt[g, :, :], 1.0, beta)
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
                    gemm(xb[:, :], src.T[:, :], dwt[g, :, :], 1.0, beta)
                if r_x != REQ_NULL:
                    _product_cols(w[g], src, dx3, buf, w[g], dx3, n0, nb, g, g_n, 0,
                                  r_x == REQ_ADD, 0, fg, qa, qb)


# -- SPLIT: a block at a time, GEMM rows split over threads ------------------------------

@njit(cache=True, parallel=True)
def _forward_split(nt, bs, img3, w, st, r3, out3, col, buf, ep, add, direct, tbl, k, p):
    g_n, fg = w.shape[0], w.shape[1]
    n = img3.shape[0] // g_n
    for n0 in range(0, n, bs):
        nb = min(bs, n - n0)
        for g in range(g_n):
            src = _columns_par(img3, col, n0, nb, g, g_n, direct, tbl, k, p, 0, p)
            for t in prange(nt):
                f0, f1 = _slice(fg, t, nt)
                _product_cols(w[g], src, out3, buf, st, r3, n0, nb, g, g_n, ep, add, f0, f1, 0,
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
                        gemm(ogb[f0:f1, :], src.T[:, :], dw3[g, f0:f1, :], 1.0, beta)
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
                    gemm(xb[f0:f1, :], src.T[:, :], dw3[g, f0:f1, :], 1.0, beta)
                if r_x != REQ_NULL:
                    _product_cols(w[g], src, dx3, buf, w[g], dx3, n0, nb, g, g_n, 0,
                                  r_x == REQ_ADD, f0, f1, 0, p)
