"""Winograd F(2x2, 3x3) for the CPU convolution's forward (3x3 kernel, stride
1, pad 1, no dilation, one group, 2-D): each 2x2 block of outputs ("tile")
is ``A^T [(G g G^T) * (B^T d B)] A`` of the 4x4 input patch ``d`` around it,
so a layer costs 16 products of (F, C) by (C, tiles) instead of im2col's one
of (F, 9C) by (C, 4 tiles): 2.25 times fewer multiplications, and no im2col
table or columns (Lavin & Gray, "Fast Algorithms for Convolutional Neural
Networks", 2016).  ``conv_plan`` picks it for inference forwards of the
shapes where it measured faster (``winograd_ok``).

A call:

1. the weights' transform ``U[xi] = (G g G^T)[xi]`` for every (f, c),
   ``(16, F, C)``, once a call (parameters change between calls and
   nothing records that they did: the same rule as the epilogue's folded
   BatchNorm), split over the threads by output channels;
2. work items are (image, *band*) pairs, a band ``band`` rows of tiles; a
   thread takes a contiguous run of them and, per band, transforms the
   input into its own ``V (16, C, tiles)`` (the four input rows of a tile
   row combined first, ``B^T d``, in a row buffer: unit-stride loops over
   whole rows; then ``. B`` per tile), runs the 16 products
   ``M[xi] = U[xi] . V[xi]`` (BLAS, one thread), and transforms ``M`` back
   (``A^T m A``) two output rows at a time into its row buffer, which is
   written to the output (=|+= under ``REQ_ADD``) and finished through the
   epilogue (``conv_epilogue``: bias, folded BatchNorm, residual, ReLU)
   while in cache.

The transforms add and subtract (and halve, for the weights) only, so the
result differs from im2col's by the products' different rounding: ~1e-6
relative in float32.

Views (prepare): ``img (N, C, 1, H, W)``, ``w (1, F, 9C)``, ``out``/``res
(N, F, 1, H, W)``; scratch ``u (16, F*C + 16)``, and a row a thread of ``v
(16 * (C*T + 16))``, ``m (16 * (F*T + 16))`` and the row buffers, with ``T =
band * (ceil(W/2) + 1)`` tiles a band (``_slots``, ``winograd_scratch``).
"""
import numpy as np
from numba import prange

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL
from ..shared.conv_epilogue import EP_RESIDUAL
from ._blas_threads import blas_get_threads, blas_set_threads
from ._gemm import gemm
from ._parallel import chunk, serial_and_parallel
from .conv_epilogue import finish_run, fold

_U = np.uint64
# The 16 planes of U, V and M are rows of a (16, size + _PAD) array: planes
# a multiple of 4 KiB long put the 16 streams a transform reads or writes in
# the same L1 set (the weight transform of 64 x 64 channels took 30 ns a
# kernel that way); 16 more elements a plane spread them over 16 lines.
_PAD = 16


def tiles_of(h, w):
    """(tile rows, tile columns) of an h x w output."""
    return (h + 1) // 2, (w + 1) // 2


@njit(cache=True, inline="always")
def _slots(nb, w):
    """(tiles, WB) of a band of ``nb`` tile rows of a ``w``-wide output: a
    spare tile a row (``_input_band``), ``WB = 2 (TW + 1)`` buffer columns a
    row."""
    tw1 = (w + 1) // 2 + 1
    return nb * tw1, 2 * tw1


def winograd_scratch(n_c, n_f, w, band, nt):
    """Element counts ``(u, v, m, rb)`` of the scratch (module docstring):
    ``u`` shared, the others per thread (``nt`` rows)."""
    tw1 = (w + 1) // 2 + 1
    t = band * tw1
    return (16 * (n_f * n_c + _PAD), 16 * (n_c * t + _PAD), 16 * (n_f * t + _PAD),
            4 * (band * 2 * tw1 + 2) + w)


# -- the transforms ---------------------------------------------------------------------------

@njit(cache=True, inline="always")
def _gt(a, b, e, half):
    """(row) G^T: [a, (a + b + e) / 2, (a - b + e) / 2, e]."""
    s, d = half * (a + e), half * b
    return a, s + d, s - d, e


@njit(cache=True)
def _weight_rows(w, u, n_c, f0, f1):
    """u[xi, f, c] = (G g G^T)[xi] of w[0, f, 9c:9c+9] for f in [f0, f1);
    G = [[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]].  Straight-line
    code a (f, c) pair, unit-stride stores along c.  Returns 0 when every
    weight read is finite (NaN otherwise: the sum of ``g - g``)."""
    half = u.dtype.type(0.5)
    chk = u.dtype.type(0)
    for f in range(f0, f1):
        src = w[0, f]
        a, b = f * n_c, (f + 1) * n_c
        u0, u1, u2, u3 = u[0, a:b], u[1, a:b], u[2, a:b], u[3, a:b]
        u4, u5, u6, u7 = u[4, a:b], u[5, a:b], u[6, a:b], u[7, a:b]
        u8, u9, u10, u11 = u[8, a:b], u[9, a:b], u[10, a:b], u[11, a:b]
        u12, u13, u14, u15 = u[12, a:b], u[13, a:b], u[14, a:b], u[15, a:b]
        for c in range(_U(n_c)):
            o = _U(9) * c
            g0, g1, g2 = src[o], src[o + _U(1)], src[o + _U(2)]
            g3, g4, g5 = src[o + _U(3)], src[o + _U(4)], src[o + _U(5)]
            g6, g7, g8 = src[o + _U(6)], src[o + _U(7)], src[o + _U(8)]
            chk += ((g0 - g0) + (g1 - g1) + (g2 - g2) + (g3 - g3) + (g4 - g4) + (g5 - g5)
                    + (g6 - g6) + (g7 - g7) + (g8 - g8))
            # the rows of G g: g's first row, the half sum and half difference
            # of its rows around the middle one, its last row
            p0, p1, p2 = half * (g0 + g6), half * (g1 + g7), half * (g2 + g8)
            q0, q1, q2 = half * g3, half * g4, half * g5
            u0[c], u1[c], u2[c], u3[c] = _gt(g0, g1, g2, half)
            u4[c], u5[c], u6[c], u7[c] = _gt(p0 + q0, p1 + q1, p2 + q2, half)
            u8[c], u9[c], u10[c], u11[c] = _gt(p0 - q0, p1 - q1, p2 - q2, half)
            u12[c], u13[c], u14[c], u15[c] = _gt(g6, g7, g8, half)
    return chk


@njit(cache=True)
def _input_band(img, n, i0, i1, v, rb):
    """v[xi, c*T + t] = (B^T d B)[xi] for the tiles of tile rows [i0, i1) of
    image n, B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]];
    tile t = (i - i0) * (TW + 1) + j (``_slots``: a spare tile a row).

    ``B^T d`` first, a tile row's four input rows at once (a row outside the
    image reads the zero row), into four planes of ``rb`` that hold the
    band's combined rows ``WB = 2 (TW + 1)`` apart, each with the column
    before the image and those after it zero; then ``. B`` for every tile
    of the band in one loop: tile t reads a plane at ``2t .. 2t + 3``, so the
    loop is as long as the band (a tile row alone, 14 tiles of a 28x28 map,
    is too short for a 16-wide vector loop).  The spare tiles read the next
    row's first columns: their columns of ``v`` (and of the products) are
    never used.  Returns 0 when every input value the band reads is finite
    (NaN otherwise)."""
    n_c, h, w = img.shape[1], img.shape[3], img.shape[4]
    nb = i1 - i0
    tb, wb = _slots(nb, w)
    plane_n = _U(nb * wb + 2)
    zero = rb.dtype.type(0)
    q0, q1 = rb[0:plane_n], rb[plane_n:2 * plane_n]
    q2, q3 = rb[2 * plane_n:3 * plane_n], rb[3 * plane_n:4 * plane_n]
    zrow = rb[4 * plane_n:4 * plane_n + _U(w)]
    for x in range(_U(w)):
        zrow[x] = zero
    for k in range(4):
        plane = rb[_U(k) * plane_n:_U(k + 1) * plane_n]
        for i in range(nb):
            o = i * wb
            plane[o] = zero
            for x in range(w + 1, wb):
                plane[o + x] = zero
        plane[nb * wb] = zero
        plane[nb * wb + 1] = zero
    chk = zero
    for c in range(n_c):
        img_c = img[n, c, 0]
        for i in range(i0, i1):
            y0 = 2 * i - 1
            p0 = img_c[y0] if y0 >= 0 else zrow
            p1 = img_c[y0 + 1]
            p2 = img_c[y0 + 2] if y0 + 2 < h else zrow
            p3 = img_c[y0 + 3] if y0 + 3 < h else zrow
            o = _U((i - i0) * wb + 1)
            d0, d1, d2, d3 = q0[o:o + _U(w)], q1[o:o + _U(w)], q2[o:o + _U(w)], q3[o:o + _U(w)]
            # B^T d over whole rows: p0 - p2, p1 + p2, p2 - p1, p1 - p3 (d0 and
            # d3 are finite only when all four rows are: the check, which a
            # finite overflow also trips, to no harm)
            for x in range(_U(w)):
                e1, e2 = p1[x], p2[x]
                f0, f3 = p0[x] - e2, e1 - p3[x]
                chk += (f0 - f0) + (f3 - f3)
                d0[x] = f0
                d1[x] = e1 + e2
                d2[x] = e2 - e1
                d3[x] = f3
        a, b = c * tb, (c + 1) * tb
        for k in range(4):
            row = rb[_U(k) * plane_n:_U(k + 1) * plane_n]
            v0 = v[4 * k, a:b]
            v1 = v[4 * k + 1, a:b]
            v2 = v[4 * k + 2, a:b]
            v3 = v[4 * k + 3, a:b]
            for t in range(_U(tb)):
                x = t + t
                a0, a1 = row[x], row[x + _U(1)]
                a2, a3 = row[x + _U(2)], row[x + _U(3)]
                v0[t] = a0 - a2
                v1[t] = a1 + a2
                v2[t] = a2 - a1
                v3[t] = a1 - a3
    return chk


@njit(cache=True)
def _output_band(m, n_f, out3, r3, st, ep, add, n, i0, i1, h, w, rb):
    """out3[n, f, 2i:2i+2, :] (=|+=) (A^T m A) of the band's tiles, A^T =
    [[1, 1, 1, 0], [0, 1, -1, -1]]: a channel's tiles in one loop (as
    ``_input_band``'s) into two row buffers, each tile row's pair of output
    rows then copied out and finished through the epilogue."""
    nb = i1 - i0
    tb, wb = _slots(nb, w)
    half = _U(nb * wb)
    o0, o1 = rb[0:half], rb[half:2 * half]
    for f in range(n_f):
        dst = out3[n, f]
        a, b = f * tb, (f + 1) * tb
        m0, m1, m2, m3 = m[0, a:b], m[1, a:b], m[2, a:b], m[3, a:b]
        m4, m5, m6, m7 = m[4, a:b], m[5, a:b], m[6, a:b], m[7, a:b]
        m8, m9, m10, m11 = m[8, a:b], m[9, a:b], m[10, a:b], m[11, a:b]
        m12, m13, m14, m15 = m[12, a:b], m[13, a:b], m[14, a:b], m[15, a:b]
        for t in range(_U(tb)):
            # A^T m: the rows' sums, column by column
            s00 = m0[t] + m4[t] + m8[t]
            s01 = m1[t] + m5[t] + m9[t]
            s02 = m2[t] + m6[t] + m10[t]
            s03 = m3[t] + m7[t] + m11[t]
            s10 = m4[t] - m8[t] - m12[t]
            s11 = m5[t] - m9[t] - m13[t]
            s12 = m6[t] - m10[t] - m14[t]
            s13 = m7[t] - m11[t] - m15[t]
            x = t + t
            o0[x] = s00 + s01 + s02
            o0[x + _U(1)] = s01 - s02 - s03
            o1[x] = s10 + s11 + s12
            o1[x + _U(1)] = s11 - s12 - s13
        for i in range(i0, i1):
            y = 2 * i
            rows = min(2, h - y)
            src0 = _U((i - i0) * wb)
            for k in range(rows):
                src = o0 if k == 0 else o1
                base = _U((y + k) * w)
                if add:
                    for x in range(_U(w)):
                        dst[base + x] += src[src0 + x]
                else:
                    for x in range(_U(w)):
                        dst[base + x] = src[src0 + x]
        if ep:
            _finish_rows(dst, r3, st, ep, n, f, 2 * i0, min(h, 2 * i1), w)


@njit(cache=True)
def _finish_rows(dst, r3, st, ep, n, f, y0, y1, w):
    """Output rows [y0, y1) of image n's channel f (``dst``, flat) through
    the epilogue."""
    if ep:
        finish_run(dst, r3[n, f] if ep & EP_RESIDUAL else dst, st, f, ep, y0 * w, y1 * w)


@njit(cache=True)
def _direct_band(img, wt, out3, r3, st, ep, add, n, y0, y1):
    """Output rows [y0, y1) of image n summed directly, tap by tap (what
    im2col's product computes), then through the epilogue: the band's
    input or the weights hold an inf or a NaN, which the transforms would
    spread as NaN where the direct sum gives an inf (``inf - inf``) and into
    outputs whose window does not hold it (``0 * inf``)."""
    n_c, h, w = img.shape[1], img.shape[3], img.shape[4]
    zero = out3.dtype.type(0)
    for f in range(out3.shape[1]):
        dst = out3[n, f]
        kern = wt[0, f]
        for y in range(y0, y1):
            for x in range(w):
                acc = zero
                for c in range(n_c):
                    plane = img[n, c, 0]
                    for a in range(3):
                        yy = y + a - 1
                        if yy < 0 or yy >= h:
                            continue
                        for e in range(3):
                            xx = x + e - 1
                            if xx >= 0 and xx < w:
                                acc += kern[9 * c + 3 * a + e] * plane[yy, xx]
                if add:
                    dst[y * w + x] += acc
                else:
                    dst[y * w + x] = acc
        _finish_rows(dst, r3, st, ep, n, f, y0, y1, w)


@njit(cache=True)
def _bands(lo, hi, per, band, img, wt, u, wbad, n_f, out3, r3, st, ep, add, v, m, rb):
    """Work items [lo, hi) of the (image, band) pairs (``per`` bands an
    image): input transform, the 16 products, output transform; a band that
    reads a value that is not finite (or any band, ``wbad``, when a weight is
    not) is summed directly instead (``_direct_band``)."""
    n_c, h, w = img.shape[1], img.shape[3], img.shape[4]
    th = (h + 1) // 2
    zero = v.dtype.type(0)
    for item in range(lo, hi):
        n = item // per
        i0 = (item - n * per) * band
        i1 = min(th, i0 + band)
        nt_ = _slots(i1 - i0, w)[0]
        if wbad or _input_band(img, n, i0, i1, v, rb) != zero:
            _direct_band(img, wt, out3, r3, st, ep, add, n, 2 * i0, min(h, 2 * i1))
            continue
        for xi in range(16):
            gemm(u[xi, :n_f * n_c].reshape(n_f, n_c)[:, :],
                 v[xi, :n_c * nt_].reshape(n_c, nt_)[:, :],
                 m[xi, :n_f * nt_].reshape(n_f, nt_)[:, :], 1.0, 0.0)
        _output_band(m, n_f, out3, r3, st, ep, add, n, i0, i1, h, w, rb)


def wino_forward(img, w, b, gamma, beta, mm, mv, res, cols, u, v, m, rb, st, has_bias,
                     has_bn, fix_gamma, eps, ep, req, nt, band):
    """cols (=|+=) the 3x3 "same" convolution of img by w, through the
    epilogue ``ep`` (as ``convolution.conv_forward``); ``nt`` threads
    (``prange`` parts; 1 in the serial compilation's callers), ``band``
    tile rows a work item."""
    if req == REQ_NULL:
        return
    fold(st, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps, ep)
    n_img, h, w_n = img.shape[0], img.shape[3], img.shape[4]
    n_f = w.shape[1]
    out3 = cols.reshape(cols.shape[0], cols.shape[1], h * w_n)
    r3 = res.reshape(res.shape[0], res.shape[1], res.shape[2] * res.shape[3] * res.shape[4])
    add = req == REQ_ADD
    per = -(-((h + 1) // 2) // band)
    items = n_img * per
    saved = blas_get_threads()
    if nt > 1:
        blas_set_threads(1)
    chk = u.dtype.type(0)
    for t in prange(nt):
        f0, f1 = chunk(n_f, t, nt)
        chk += _weight_rows(w, u, img.shape[1], f0, f1)
    wbad = chk != u.dtype.type(0)
    for t in prange(nt):
        lo, hi = chunk(items, t, nt)
        _bands(lo, hi, per, band, img, w, u, wbad, n_f, out3, r3, st, ep, add,
               v[t].reshape(16, v.shape[1] // 16), m[t].reshape(16, m.shape[1] // 16), rb[t])
    if nt > 1:
        blas_set_threads(saved)


wino_forward, wino_forward_parallel = serial_and_parallel(wino_forward)
# what ``debug_str`` lists for the nodes that run these (``nbdl.executor.debug``)
wino_forward.nbdl_algorithm = wino_forward_parallel.nbdl_algorithm = \
    "Winograd F(2x2, 3x3) (NBDL_CONV_WINOGRAD=0: im2col + GEMM)"


__all__ = ["wino_forward", "wino_forward_parallel", "winograd_scratch", "tiles_of"]
