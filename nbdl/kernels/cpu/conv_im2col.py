"""The column side of the CPU convolution kernels (``convolution``): the im2col
table, one channel's im2col / col2im through it, the units a block is made of
(one (sample, channel) pair each), the reductions of the weight gradient's
partial sums, the bias, and the per-call set-up that compacts the weights to
the taps that read the image."""
import numpy as np
from numba import prange

from ..shared.jit import njit

from ...ops.registry import REQ_ADD
from ..shared.conv_epilogue import EP_RESIDUAL
from ._parallel import serial_and_parallel
from .conv_epilogue import finish_value


# -- the im2col table and one channel's im2col / col2im ------------------------------

@njit(cache=True, inline="always")
def _axis_reads(n_out, stride, off, size):
    """Whether a tap at offset ``off`` reads inside [0, size) for some output."""
    lo = 0 if off >= 0 else (-off + stride - 1) // stride
    return lo < n_out and lo * stride + off < size


# ``tbl[kv*P + kv + r]`` when kept tap r reads a shifted copy of the channel
# (offset == q + shift wherever it reads inside: stride 1 and output rows as
# long as the input's, a "same" convolution), else NO_SHIFT: im2col then
# copies contiguously instead of gathering (2.5-4x faster).
NO_SHIFT = -(1 << 31)
# below this many positions the gather is as fast (a vector loop's set-up)
_SHIFT_MIN = 16


@njit(cache=True)
def _make_table(tbl, d_n, h_n, w_n, geo):
    """Fill the im2col table and return the number of taps ``kv`` kept.

    Taps that read only padding (every output position of a 1x1 image but
    the centre tap of a padded 3x3 kernel) are left out: ``tbl[r*P + q]``
    for the kept taps ``r < kv`` is the offset in a (D, H, W) channel read at
    output position q, or -1 in the padding, ``tbl[kv*P + r]`` is kept tap
    ``r``'s index in the full kernel and ``tbl[kv*P + kv + r]`` its shift
    (``NO_SHIFT`` above)."""
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
                # the columns whose x = ow*sw + xo lies in [0, w_n): [lo, hi)
                xo = e * dw - pw
                lo = min(ow_, 0 if xo >= 0 else (-xo + sw - 1) // sw)
                hi = max(lo, min(ow_, (w_n - 1 - xo) // sw + 1))
                for od in range(od_):
                    z = od * sd - pd + a * dd
                    for oh in range(oh_):
                        y = oh * sh - ph + b * dh
                        row = tbl[r * p + (od * oh_ + oh) * ow_:r * p + (od * oh_ + oh + 1) * ow_]
                        if z >= 0 and z < d_n and y >= 0 and y < h_n:
                            at = (z * h_n + y) * w_n + xo
                            row[:lo] = -1
                            for ow in range(lo, hi):
                                row[ow] = at + ow * sw
                            row[hi:] = -1
                        else:
                            row[:] = -1
                # offset - q = od*(sd*H*W - OH*OW) + oh*(sh*W - OW) + ow*(sw - 1) + c:
                # a shift (c) when every axis with more than one output adds nothing
                # (computed, not checked per entry: that check doubled the table's time)
                if ((ow_ == 1 or sw == 1) and (oh_ == 1 or sh * w_n == ow_)
                        and (od_ == 1 or sd * h_n * w_n == oh_ * ow_)):
                    tbl[kv * p + kv + r] = ((a * dd - pd) * h_n + b * dh - ph) * w_n + e * dw - pw
                else:
                    tbl[kv * p + kv + r] = NO_SHIFT
                r += 1
    return kv


@njit(cache=True)
def _compact_row(u, w, wc, tbl, k, kv, p):
    """wc[g, f, c*kv + r] = w[g, f, c*K + tap r] for row u = (g, f)."""
    fg = w.shape[1]
    g = u // fg
    f = u - g * fg
    src, dst = w[g, f], wc[g, f]
    taps = tbl[kv * p:kv * p + kv]
    uk, ukv = np.uintp(k), np.uintp(kv)
    for c in range(np.uintp(w.shape[2] // k)):
        a, b = c * ukv, c * uk
        for r in range(ukv):
            dst[a + r] = src[b + np.uintp(taps[r])]


@njit(cache=True)
def _expand_row(u, part, dw3, tbl, k, kv, p, add):
    """dw3[g, f] (=|+=) the sum over chunks of part[t, g, f], spread back over
    the full kernel (zero for the left-out taps) for row u = (g, f)."""
    fg = dw3.shape[1]
    g = u // fg
    f = u - g * fg
    d = dw3[g, f]
    taps = tbl[kv * p:kv * p + kv]
    zero = dw3.dtype.type(0)
    if not add:
        d[:] = zero
    uk, ukv = np.uintp(k), np.uintp(kv)
    for c in range(np.uintp(dw3.shape[2] // k)):
        a, b = c * ukv, c * uk
        for r in range(ukv):
            acc = zero
            for t in range(part.shape[0]):
                acc += part[t, g, f][a + r]
            d[b + np.uintp(taps[r])] += acc


@njit(cache=True)
def _im2col_channel(src, col, c, off, tbl, k, p, qa, qb):
    """col[c*K + r, off + q] = src[tbl[r*P + q]] (0 where -1) for positions
    q in [qa, qb), a contiguous copy (masked) for a tap with a shift; src is
    a flat channel.  Indices are ``np.uintp`` from row views (none is
    negative: ``off + qa >= 0``), so Numba checks none for wrap-around: 2.8x
    faster than signed 2-D indexing."""
    zero = src.dtype.type(0)
    row = c * k
    n = np.uintp(qb - qa)
    o = np.uintp(off + qa)
    for r in range(k):
        t = np.uintp(r * p + qa)
        d = col[row + r]
        shift = tbl[k * p + k + r]
        if shift != NO_SHIFT and n >= _SHIFT_MIN:
            a = np.uintp(qa + shift)       # wraps for q outside; never read there
            for q in range(n):
                d[o + q] = src[a + q] if tbl[t + q] >= 0 else zero
        else:
            for q in range(n):
                idx = tbl[t + q]
                d[o + q] = src[np.uintp(idx)] if idx >= 0 else zero


@njit(cache=True)
def _col2im_channel(col, dst, c, off, tbl, k, p, qa, qb):
    """dst (a flat channel) += its rows of col for positions [qa, qb)
    scattered back (im2col's adjoint; unsigned indices and shifts as
    there)."""
    row = c * k
    n = np.uintp(qb - qa)
    o = np.uintp(off + qa)
    for r in range(k):
        t = np.uintp(r * p + qa)
        s = col[row + r]
        shift = tbl[k * p + k + r]
        if shift != NO_SHIFT and n >= _SHIFT_MIN:
            a = np.uintp(qa + shift)
            for q in range(n):
                if tbl[t + q] >= 0:
                    dst[a + q] += s[o + q]
        else:
            for q in range(n):
                idx = tbl[t + q]
                if idx >= 0:
                    dst[np.uintp(idx)] += s[o + q]


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
        s, d = img3[i, c], colb[c]
        o, a = np.uintp(off + qa), np.uintp(qa)
        for q in range(np.uintp(qb - qa)):
            d[o + q] = s[a + q]
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
        s = colb[c]
        o, a, n = np.uintp(off + qa), np.uintp(qa), np.uintp(qb - qa)
        if add:
            for q in range(n):
                dst[a + q] += s[o + q]
        else:
            for q in range(n):
                dst[a + q] = s[o + q]
        return
    if not add and qa == 0:
        dst[:] = 0
    _col2im_channel(colb, dst, c, off, tbl, k, p, qa, qb)


@njit(cache=True)
def _scatter_unit(u, res, out3, st, r3, n0, g, g_n, ep, add):
    """out3[i, f] (=|+=) res[f, j*P..] through the epilogue (bias, folded
    BatchNorm, residual r3[i, f], ReLU: ``conv_epilogue``) for item
    i = (n0+j, g)."""
    fg, p = out3.shape[1], out3.shape[2]
    j = u // fg
    f = u - j * fg
    i = (n0 + j) * g_n + g
    q0, n = np.uintp(j * p), np.uintp(p)
    c = g * fg + f
    o, src = out3[i, f], res[f]
    if ep == 0:                        # (training: no epilogue)
        if add:
            for q in range(n):
                o[q] += src[q0 + q]
        else:
            for q in range(n):
                o[q] = src[q0 + q]
        return
    r = r3[i, f] if ep & EP_RESIDUAL else o
    if add:
        for q in range(n):
            o[q] += finish_value(src[q0 + q], r[q], st, c, ep)
    else:
        for q in range(n):
            o[q] = finish_value(src[q0 + q], r[q], st, c, ep)


@njit(cache=True)
def _gather_unit(u, src3, dst, n0, g, g_n):
    """dst[f, j*P..] = src3[i, f] for item i = (n0+j, g)."""
    fg, p = src3.shape[1], src3.shape[2]
    j = u // fg
    f = u - j * fg
    i = (n0 + j) * g_n + g
    q0 = np.uintp(j * p)
    s, d = src3[i, f], dst[f]
    for q in range(np.uintp(p)):
        d[q0 + q] = s[q]


@njit(cache=True, parallel=True)
def _fill_par(n_units, img3, colb, n0, g, g_n, direct, tbl, k, p, qa, qb):
    for u in prange(n_units):
        _fill_unit(u, img3, colb, n0, g, g_n, direct, tbl, k, p, qa, qb)


@njit(cache=True, parallel=True)
def _gather_par(n_units, src3, dst, n0, g, g_n):
    for u in prange(n_units):
        _gather_unit(u, src3, dst, n0, g, g_n)


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


def _bias_grad(a3, db, g_n, req):
    for ch in prange(db.shape[0]):
        _bias_channel(ch, a3, db, g_n, req == REQ_ADD)


_bias_grad, _bias_grad_par = serial_and_parallel(_bias_grad, suffix="_par")


@njit(cache=True)
def _add_bias_unit(u, a3, b, g_n):
    fg = a3.shape[1]
    i = u // fg
    f = u - i * fg
    bv = b[(i % g_n) * fg + f]
    for q in range(a3.shape[2]):
        a3[i, f, q] += bv


def _add_bias(a3, b, g_n):
    for u in prange(a3.shape[0] * a3.shape[1]):
        _add_bias_unit(u, a3, b, g_n)


_add_bias, _add_bias_par = serial_and_parallel(_add_bias, suffix="_par")


# -- set-up and weight-gradient finish ------------------------------------------------------

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
