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
from .conv_epilogue import channel, relu, store


# -- the im2col table and one channel's im2col / col2im ------------------------------

@njit(cache=True, inline="always")
def _axis_reads(n_out, stride, off, size):
    """Whether a tap at offset ``off`` reads inside [0, size) for some output."""
    lo = 0 if off >= 0 else (-off + stride - 1) // stride
    return lo < n_out and lo * stride + off < size


# The im2col table (int32), for the ``kv`` kept taps of a channel's kernel:
#   tbl[0] ROWS or ELEMENTS (the layout below), tbl[1] the output width OW,
#   tbl[2] the column stride SW;
#   tbl[_HEAD + r]            kept tap r's index in the full kernel;
#   tbl[_HEAD + kv + r]       ELEMENTS: its shift (below); ROWS: ``lo``,
#   tbl[_HEAD + 2*kv + r]     ROWS: ``hi``: the output columns [lo, hi) whose
#                             input column lies inside the image;
#   from ``_HEAD + 3*kv``     ELEMENTS: [r*P + q] the offset read at output
#                             position q (-1 in the padding); ROWS: [r*R + row]
#                             the offset read at column 0 of output row
#                             ``row`` = (od, oh) (column ow reads it + ow*SW),
#                             NO_ROW for a row in the padding.
# ROWS when the output rows are wide (``_ROW_MIN``, a stem at 224px): a row
# is then a copy (strided by SW) with no per-element table reads, and the
# table has R = OD*OH rows a tap instead of P positions (the 7x7/2 stem's
# im2col 1.28 -> 0.59 ms, one thread, most of it the table).  ELEMENTS
# for narrower rows, where a row's set-up costs more than the gather.
ELEMENTS, ROWS = 0, 1
_HEAD = 3
_ROW_MIN = 64
NO_ROW = -(1 << 31)
# An ELEMENTS tap whose offsets are ``q + shift`` wherever it reads inside
# (stride 1 and output rows as long as the input's, a "same" convolution)
# stores its shift, else NO_SHIFT: im2col then copies contiguously instead
# of gathering (2.5-4x faster).
NO_SHIFT = -(1 << 31)
# below this many positions the gather is as fast (a vector loop's set-up)
_SHIFT_MIN = 16


def table_size(kv, out3, rows_ok=True):
    """int32 entries of the im2col table of ``kv`` kept taps for the output
    (OD, OH, OW) (``rows_ok``: the ROWS layout where it applies; the im2col
    ops' kernels read ELEMENTS only)."""
    od, oh, ow = out3
    rows = rows_ok and ow >= _ROW_MIN
    return _HEAD + 3 * kv + kv * od * oh * (1 if rows else ow)


@njit(cache=True)
def _make_table(tbl, d_n, h_n, w_n, geo, rows_ok):
    """Fill the im2col table (layout above) and return the number of taps
    ``kv`` kept.  Taps that read only padding (every output position of a
    1x1 image but the centre tap of a padded 3x3 kernel) are left out.
    (Plain loops, one pass over the taps to find them: slice assignments
    and six inlined axis tests made this the costliest compilation of a
    convolution, about a second.)"""
    od_, oh_, ow_, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw = geo
    p = od_ * oh_ * ow_
    nr = od_ * oh_
    rows = rows_ok and ow_ >= _ROW_MIN
    k = kd * kh * kw
    kv = 0
    for t in range(k):
        a, b, e = t // (kh * kw), (t // kw) % kh, t % kw
        if (_axis_reads(od_, sd, a * dd - pd, d_n) and _axis_reads(oh_, sh, b * dh - ph, h_n)
                and _axis_reads(ow_, sw, e * dw - pw, w_n)):
            tbl[_HEAD + kv] = t
            kv += 1
    tbl[0] = ROWS if rows else ELEMENTS
    tbl[1] = ow_
    tbl[2] = sw
    body = _HEAD + 3 * kv
    same = ((ow_ == 1 or sw == 1) and (oh_ == 1 or sh * w_n == ow_)
            and (od_ == 1 or sd * h_n * w_n == oh_ * ow_))
    for r in range(kv):
        t = tbl[_HEAD + r]
        a, b, e = t // (kh * kw), (t // kw) % kh, t % kw
        # the columns whose x = ow*sw + xo lies in [0, w_n): [lo, hi)
        xo = e * dw - pw
        lo = 0 if xo >= 0 else (-xo + sw - 1) // sw
        if lo > ow_:
            lo = ow_
        hi = (w_n - 1 - xo) // sw + 1
        if hi > ow_:
            hi = ow_
        if hi < lo:
            hi = lo
        if rows:
            tbl[_HEAD + kv + r] = lo
            tbl[_HEAD + 2 * kv + r] = hi
        for od in range(od_):
            z = od * sd - pd + a * dd
            for oh in range(oh_):
                y = oh * sh - ph + b * dh
                inside = z >= 0 and z < d_n and y >= 0 and y < h_n
                at = (z * h_n + y) * w_n + xo
                if rows:
                    tbl[body + r * nr + od * oh_ + oh] = at if inside else NO_ROW
                    continue
                o = body + r * p + (od * oh_ + oh) * ow_
                for ow in range(ow_):
                    tbl[o + ow] = at + ow * sw if (inside and lo <= ow < hi) else -1
        if not rows:
            # offset - q = od*(sd*H*W - OH*OW) + oh*(sh*W - OW) + ow*(sw - 1) + c:
            # a shift (c) when every axis with more than one output adds nothing
            # (computed, not checked per entry: that check doubled the table's time)
            tbl[_HEAD + kv + r] = (((a * dd - pd) * h_n + b * dh - ph) * w_n + e * dw - pw
                                   if same else NO_SHIFT)
    return kv


@njit(cache=True)
def _compact_row(u, w, wc, tbl, k, kv, p):
    """wc[g, f, c*kv + r] = w[g, f, c*K + tap r] for row u = (g, f)."""
    fg = w.shape[1]
    g = u // fg
    f = u - g * fg
    src, dst = w[g, f], wc[g, f]
    taps = tbl[_HEAD:_HEAD + kv]
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
    taps = tbl[_HEAD:_HEAD + kv]
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
    """col[c*K + r, off + q] = the table's value of (tap r, position q) read
    from src (0 in the padding) for positions q in [qa, qb): per element
    through the table, a contiguous copy (masked) for a tap with a shift, a
    copy per output row in the ROWS layout; src is a flat channel.  Indices
    are ``np.uintp`` from row views (none is negative: ``off + qa >= 0``),
    so Numba checks none for wrap-around: 2.8x faster than signed 2-D
    indexing."""
    if tbl[0] == ROWS:
        _im2col_rows(src, col, c, off, tbl, k, p, qa, qb)
        return
    zero = src.dtype.type(0)
    row = c * k
    n = np.uintp(qb - qa)
    o = np.uintp(off + qa)
    body = _HEAD + 3 * k
    for r in range(k):
        t = np.uintp(body + r * p + qa)
        d = col[row + r]
        shift = tbl[_HEAD + k + r]
        if shift != NO_SHIFT and n >= _SHIFT_MIN:
            a = np.uintp(qa + shift)       # wraps for q outside; never read there
            for q in range(n):
                d[o + q] = src[a + q] if tbl[t + q] >= 0 else zero
        else:
            for q in range(n):
                idx = tbl[t + q]
                d[o + q] = src[np.uintp(idx)] if idx >= 0 else zero


@njit(cache=True, inline="always")
def _row_span(rr, ow_, qa, qb):
    """Output row rr's columns [s0, s1) inside positions [qa, qb)."""
    base = rr * ow_
    return max(qa - base, 0), min(qb - base, ow_)


@njit(cache=True, inline="always")
def _rows_tap(tbl, k, p, r):
    """ROWS layout, kept tap r of k: (OW, SW, lo, hi, index of its first
    output row's offset) (P = p positions)."""
    ow_ = tbl[1]
    return (ow_, tbl[2], tbl[_HEAD + k + r], tbl[_HEAD + 2 * k + r],
            _HEAD + 3 * k + r * (p // ow_))


@njit(cache=True)
def _im2col_rows(src, col, c, off, tbl, k, p, qa, qb):
    """``_im2col_channel`` in the ROWS layout: each output row of a tap a
    copy of one input row (strided by SW), zeros where it reads padding."""
    zero = src.dtype.type(0)
    for r in range(k):
        d = col[c * k + r]
        ow_, sw, lo, hi, at_r = _rows_tap(tbl, k, p, r)
        usw = np.uintp(sw)
        for rr in range(qa // ow_, (qb - 1) // ow_ + 1):
            s0, s1 = _row_span(rr, ow_, qa, qb)
            o = np.uintp(off + rr * ow_)
            at = tbl[at_r + rr]
            a0 = max(s0, lo) if at != NO_ROW else s1
            a1 = max(a0, min(s1, hi))
            for x in range(np.uintp(s0), np.uintp(a0)):
                d[o + x] = zero
            n = np.uintp(a1 - a0)
            oo = o + np.uintp(a0)
            if sw == 1:
                sa = np.uintp(at + a0)
                for x in range(n):
                    d[oo + x] = src[sa + x]
            else:
                sa = np.uintp(at + a0 * sw)
                for x in range(n):
                    d[oo + x] = src[sa + x * usw]
            for x in range(np.uintp(a1), np.uintp(s1)):
                d[o + x] = zero


@njit(cache=True)
def _col2im_channel(col, dst, c, off, tbl, k, p, qa, qb):
    """dst (a flat channel) += its rows of col for positions [qa, qb)
    scattered back (im2col's adjoint; unsigned indices, shifts and the ROWS
    layout as there)."""
    if tbl[0] == ROWS:
        _col2im_rows(col, dst, c, off, tbl, k, p, qa, qb)
        return
    row = c * k
    n = np.uintp(qb - qa)
    o = np.uintp(off + qa)
    body = _HEAD + 3 * k
    for r in range(k):
        t = np.uintp(body + r * p + qa)
        s = col[row + r]
        shift = tbl[_HEAD + k + r]
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


@njit(cache=True)
def _col2im_rows(col, dst, c, off, tbl, k, p, qa, qb):
    """``_col2im_channel`` in the ROWS layout (a tap's output columns read
    distinct input columns of a row: no two of a row's adds collide)."""
    for r in range(k):
        s = col[c * k + r]
        ow_, sw, lo, hi, at_r = _rows_tap(tbl, k, p, r)
        usw = np.uintp(sw)
        for rr in range(qa // ow_, (qb - 1) // ow_ + 1):
            at = tbl[at_r + rr]
            if at == NO_ROW:
                continue
            s0, s1 = _row_span(rr, ow_, qa, qb)
            a0 = max(s0, lo)
            a1 = max(a0, min(s1, hi))
            n = np.uintp(a1 - a0)
            oo = np.uintp(off + rr * ow_ + a0)
            sa = np.uintp(at + a0 * sw)
            if sw == 1:
                for x in range(n):
                    dst[sa + x] += s[oo + x]
            else:
                for x in range(n):
                    dst[sa + x * usw] += s[oo + x]


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
    # the epilogue's vector loops (``finish_run``'s): a value at a time
    # through the epilogue's branches (a scalar loop) took 1x1 layers of
    # 7x7 maps at batch 16, blocks of 3 images, 2-2.4x longer (perf/README.md,
    # tenth session)
    s, t = channel(st, c, ep)
    store(o, 0, src, q0, r3[i, f] if ep & EP_RESIDUAL else o, n, s, t, ep, add)
    relu(o, 0, n, ep)


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
        kv = _make_table(tbl, img.shape[2], img.shape[3], img.shape[4], geo, True)
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
