"""Winograd F(m x m, 3x3), m = 2 or 4, for the CPU convolution's forward (3x3
kernel, stride 1, pad 1, no dilation, one group, 2-D): each m x m block of
outputs ("tile") is ``A^T [(G g G^T) * (B^T d B)] A`` of the (m+2) x (m+2)
input patch ``d`` around it, so a layer costs (m+2)^2 products of (F, C) by
(C, tiles) instead of im2col's one of (F, 9C) by (C, m^2 tiles): 2.25
(F(2x2)) or 4 (F(4x4)) times fewer multiplications, and no im2col table or
columns (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks",
2016).  ``conv_plan.winograd_plan`` picks it, and the tile, for inference
forwards of the shapes where it measured faster.

A call:

1. the weights' transform ``U[xi] = (G g G^T)[xi]`` for every (f, c),
   ``((m+2)^2, F, C)``, once a call (parameters change between calls and
   nothing records that they did: the same rule as the epilogue's folded
   BatchNorm), split over the threads by output channels;
2. work items are (image, *band*) pairs, a band ``band`` rows of tiles; a
   thread takes a contiguous run of them and, per band, transforms the
   input into its own ``V ((m+2)^2, C, tiles)`` (the m+2 input rows of a
   tile row combined first, ``B^T d``, into planes of a row buffer:
   unit-stride loops over whole rows; then ``. B`` for all the band's
   tiles in one loop), runs the products ``M[xi] = U[xi] . V[xi]`` (BLAS,
   one thread), and transforms ``M`` back (``A^T m A``) into m output row
   buffers, which are written to the output (=|+= under ``REQ_ADD``) and
   finished through the epilogue (``conv_epilogue``: bias, folded
   BatchNorm, residual, ReLU) while in cache.  A band that reads an inf or
   a NaN (or every band, for such a weight) is summed directly instead.

F(2x2)'s transforms add and subtract (and halve, for the weights) only, so
its result differs from im2col's by the products' rounding: ~3e-7 of a
layer's largest output in float32; F(4x4)'s G has 1/6, 1/12 and 1/24 and
its products span a wider range: ~4e-6.

Views (prepare): ``img (N, C, 1, H, W)``, ``w (1, F, 9C)``, ``out``/``res
(N, F, 1, H, W)``; scratch ``u ((m+2)^2, F*C + 16)``, and a row a thread of
``v ((m+2)^2 * (C*T + 16))``, ``m ((m+2)^2 * (F*T + 16))`` and the row
buffers, with ``T = band * (ceil(W/m) + 1)`` tiles a band (``_slots``,
``winograd_scratch``).
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
# The (m+2)^2 planes of U, V and M are rows of a ((m+2)^2, size + _PAD) array: planes
# a multiple of 4 KiB long put the streams a transform reads or writes in
# the same L1 set (the weight transform of 64 x 64 channels took 30 ns a
# kernel that way); 16 more elements a plane spread them over different lines.
_PAD = 16


def tiles_of(h, w, m=2):
    """(tile rows, tile columns) of an h x w output in m x m tiles."""
    return -(-h // m), -(-w // m)


@njit(cache=True, inline="always")
def _slots(nb, w, m):
    """(tiles, WB) of a band of ``nb`` tile rows of a ``w``-wide output in
    ``m`` x ``m`` tiles: a spare tile a row (``_input_band``), ``WB = m (TW +
    1)`` buffer columns a row."""
    tw1 = (w + m - 1) // m + 1
    return nb * tw1, m * tw1


def winograd_scratch(n_c, n_f, w, band, nt, m=2, images=1):
    """Element counts ``(u, v, m, rb)`` of the scratch of F(m x m, 3x3)
    (module docstring): ``u`` shared, the others per thread (``nt`` rows;
    for ``phases``, ``v`` and ``m`` hold ``images`` whole images of ``band``
    tile rows and are shared: one row)."""
    a2 = (m + 2) ** 2
    tw1 = -(-w // m) + 1
    t = images * band * tw1
    return (a2 * (n_f * n_c + _PAD), a2 * (n_c * t + _PAD), a2 * (n_f * t + _PAD),
            (m + 2) * (band * m * tw1 + 2) + w)


# -- what both tiles share: the row buffers' padding and output rows --------------------------

@njit(cache=True)
def _zero_pads(rb, planes, plane_n, nb, wb, w):
    """Zero the padding of ``planes`` planes of combined rows in ``rb``
    (``plane_n`` long, ``nb`` rows ``wb`` apart: the column before the image,
    those after it, and the two elements after the last row) and the zero
    row after them; returns that row (``w`` long)."""
    zero = rb.dtype.type(0)
    zrow = rb[planes * plane_n:planes * plane_n + _U(w)]
    for x in range(_U(w)):
        zrow[x] = zero
    for k in range(planes):
        plane = rb[_U(k) * plane_n:_U(k + 1) * plane_n]
        for i in range(nb):
            o = i * wb
            plane[o] = zero
            for x in range(w + 1, wb):
                plane[o + x] = zero
        plane[nb * wb] = zero
        plane[nb * wb + 1] = zero
    return zrow


@njit(cache=True)
def _rows_out(dst, rb, size, tm, i0, i1, h, w, wb, add):
    """dst's output rows of tile rows [i0, i1) (=|+=) the first ``w`` values
    of each row of the ``tm`` row buffers ``rb[k*size:(k+1)*size]`` (buffer
    k holds output row k of every tile row, ``wb`` apart)."""
    for i in range(i0, i1):
        y = tm * i
        src0 = _U((i - i0) * wb)
        for k in range(min(tm, h - y)):
            src = rb[_U(k) * size + src0:_U(k) * size + src0 + _U(w)]
            base = _U((y + k) * w)
            if add:
                for x in range(_U(w)):
                    dst[base + x] += src[x]
            else:
                for x in range(_U(w)):
                    dst[base + x] = src[x]


# -- F(2x2, 3x3): 4x4 patches, 16 products -------------------------------------------------

@njit(cache=True, inline="always")
def _nonfinite9(g0, g1, g2, g3, g4, g5, g6, g7, g8):
    """0 when the nine values of a 3x3 kernel are finite, NaN otherwise (the
    weights' transforms sum it: ``wino_forward`` then sums directly)."""
    return ((g0 - g0) + (g1 - g1) + (g2 - g2) + (g3 - g3) + (g4 - g4) + (g5 - g5)
            + (g6 - g6) + (g7 - g7) + (g8 - g8))


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
            chk += _nonfinite9(g0, g1, g2, g3, g4, g5, g6, g7, g8)
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
def _input_band(img, n, i0, i1, v, rb, c0, c1, col0, nv):
    """v[xi, c*nv + col0 + t] = (B^T d B)[xi] for channels [c0, c1) and the
    tiles of tile rows [i0, i1) of image n (its columns of ``v`` from
    ``col0``, ``nv`` a channel), B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1,
    0], [0, 1, 0, -1]]; tile t = (i - i0) * (TW + 1) + j (``_slots``: a spare
    tile a row).

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
    h, w = img.shape[3], img.shape[4]
    nb = i1 - i0
    tb, wb = _slots(nb, w, 2)
    plane_n = _U(nb * wb + 2)
    zero = rb.dtype.type(0)
    q0, q1 = rb[0:plane_n], rb[plane_n:2 * plane_n]
    q2, q3 = rb[2 * plane_n:3 * plane_n], rb[3 * plane_n:4 * plane_n]
    zrow = _zero_pads(rb, 4, plane_n, nb, wb, w)
    chk = zero
    for c in range(c0, c1):
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
        a = c * nv + col0
        b = a + tb
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
def _output_band(m, f0, f1, out3, r3, st, ep, add, n, i0, i1, h, w, rb, col0, nv):
    """out3[n, f, 2i:2i+2, :] (=|+=) (A^T m A) of the band's tiles (its
    columns of ``m`` from ``col0``, ``nv`` a channel) for f in [f0, f1), A^T =
    [[1, 1, 1, 0], [0, 1, -1, -1]]: a channel's tiles in one loop (as
    ``_input_band``'s) into two row buffers, each tile row's pair of output
    rows then copied out and finished through the epilogue."""
    nb = i1 - i0
    tb, wb = _slots(nb, w, 2)
    half = _U(nb * wb)
    o0, o1 = rb[0:half], rb[half:2 * half]
    for f in range(f0, f1):
        dst = out3[n, f]
        a = f * nv + col0
        b = a + tb
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
        _rows_out(dst, rb, half, 2, i0, i1, h, w, wb, add)
        if ep:
            _finish_rows(dst, r3, st, ep, n, f, 2 * i0, min(h, 2 * i1), w)


# -- F(4x4, 3x3): 6x6 patches, 36 products --------------------------------------------------
#
# B^T = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
#        [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]
# G   = [[1/4, 0, 0], [-1/6, -1/6, -1/6], [-1/6, 1/6, -1/6],
#        [1/24, 1/12, 1/6], [1/24, -1/12, 1/6], [0, 0, 1]]
# A^T = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0],
#        [0, 1, -1, 8, -8, 1]]
# (Lavin & Gray's points 0, 1, -1, 2, -2 and infinity.)  The 1/6, 1/12 and
# 1/24 of G are not exact in binary and the products span a wider range:
# about 4e-6 of a layer's largest output in float32 against 3e-7 for F(2x2).
# The integer coefficients are float32 constants: exact, and a float64
# operand keeps its precision.
_C2, _C4, _C5, _C8 = np.float32(2), np.float32(4), np.float32(5), np.float32(8)

@njit(cache=True, inline="always")
def _bt6(e0, e1, e2, e3, e4, e5):
    """B^T of six values (a column or a row of a patch)."""
    s12, d12, d31, d42 = e1 + e2, e1 - e2, e3 - e1, e4 - e2
    return (_C4 * e0 - _C5 * e2 + e4, (e3 + e4) - _C4 * s12, (e4 - e3) + _C4 * d12,
            d42 + _C2 * d31, d42 - _C2 * d31, _C4 * e1 - _C5 * e3 + e5)


@njit(cache=True, inline="always")
def _g6(a, b, e, q, s6, s12, s24):
    """G of three values (a kernel column or a row of G g); ``q, s6, s12,
    s24`` are 1/4, 1/6, 1/12 and 1/24 in the weights' dtype."""
    r = s24 * a + s6 * e
    return q * a, -s6 * (a + b + e), -s6 * (a - b + e), r + s12 * b, r - s12 * b, e


@njit(cache=True, inline="always")
def _put6(u, r, k, a, b, e, q, s6, s12, s24):
    """u[6r .. 6r+5, k] = row r of G g (``a, b, e``) times G^T."""
    x0, x1, x2, x3, x4, x5 = _g6(a, b, e, q, s6, s12, s24)
    u[6 * r, k] = x0
    u[6 * r + 1, k] = x1
    u[6 * r + 2, k] = x2
    u[6 * r + 3, k] = x3
    u[6 * r + 4, k] = x4
    u[6 * r + 5, k] = x5


@njit(cache=True, inline="always")
def _at6(m0, m1, m2, m3, m4, m5):
    """A^T of six values."""
    s, d = m1 + m2, m1 - m2
    p, q = m3 + m4, m3 - m4
    return s + p + m0, d + _C2 * q, s + _C4 * p, d + _C8 * q + m5


@njit(cache=True, inline="always")
def _put_at6(o, x, m0, m1, m2, m3, m4, m5):
    """o[x .. x+3] = A^T of six values (a row of an output tile)."""
    y0, y1, y2, y3 = _at6(m0, m1, m2, m3, m4, m5)
    o[x] = y0
    o[x + _U(1)] = y1
    o[x + _U(2)] = y2
    o[x + _U(3)] = y3


@njit(cache=True)
def _weight_rows4(w, u, n_c, f0, f1):
    """u[xi, f*C + c] = (G g G^T)[xi] (6x6, xi = 6 r + s) of w[0, f, 9c:9c+9]
    for f in [f0, f1); returns 0 when every weight read is finite (NaN
    otherwise)."""
    t = u.dtype.type
    q, s6, s12, s24 = t(0.25), t(1.0 / 6.0), t(1.0 / 12.0), t(1.0 / 24.0)
    chk = t(0)
    for f in range(f0, f1):
        src = w[0, f]
        base = _U(f * n_c)
        for c in range(_U(n_c)):
            o = _U(9) * c
            g0, g1, g2 = src[o], src[o + _U(1)], src[o + _U(2)]
            g3, g4, g5 = src[o + _U(3)], src[o + _U(4)], src[o + _U(5)]
            g6, g7, g8 = src[o + _U(6)], src[o + _U(7)], src[o + _U(8)]
            chk += _nonfinite9(g0, g1, g2, g3, g4, g5, g6, g7, g8)
            # G g: G on each kernel column (rows r of the result)
            c00, c10, c20, c30, c40, c50 = _g6(g0, g3, g6, q, s6, s12, s24)
            c01, c11, c21, c31, c41, c51 = _g6(g1, g4, g7, q, s6, s12, s24)
            c02, c12, c22, c32, c42, c52 = _g6(g2, g5, g8, q, s6, s12, s24)
            k = base + c
            _put6(u, 0, k, c00, c01, c02, q, s6, s12, s24)
            _put6(u, 1, k, c10, c11, c12, q, s6, s12, s24)
            _put6(u, 2, k, c20, c21, c22, q, s6, s12, s24)
            _put6(u, 3, k, c30, c31, c32, q, s6, s12, s24)
            _put6(u, 4, k, c40, c41, c42, q, s6, s12, s24)
            _put6(u, 5, k, c50, c51, c52, q, s6, s12, s24)
    return chk


@njit(cache=True)
def _input_band4(img, n, i0, i1, v, rb, c0, c1, col0, nv):
    """F(4x4, 3x3)'s ``_input_band``: v[xi, c*nv + col0 + t] = (B^T d B)[xi] of the
    6x6 patches of tile rows [i0, i1) of image n, six planes of combined
    rows in ``rb`` (tile t reads a plane at ``4t .. 4t + 5``)."""
    h, w = img.shape[3], img.shape[4]
    nb = i1 - i0
    tb, wb = _slots(nb, w, 4)
    plane_n = _U(nb * wb + 2)
    zero = rb.dtype.type(0)
    zrow = _zero_pads(rb, 6, plane_n, nb, wb, w)
    q0, q1, q2 = rb[0:plane_n], rb[plane_n:2 * plane_n], rb[2 * plane_n:3 * plane_n]
    q3, q4, q5 = rb[3 * plane_n:4 * plane_n], rb[4 * plane_n:5 * plane_n], \
        rb[5 * plane_n:6 * plane_n]
    chk = zero
    for c in range(c0, c1):
        img_c = img[n, c, 0]
        for i in range(i0, i1):
            y0 = 4 * i - 1
            p0 = img_c[y0] if y0 >= 0 else zrow
            p1 = img_c[y0 + 1]
            p2 = img_c[y0 + 2] if y0 + 2 < h else zrow
            p3 = img_c[y0 + 3] if y0 + 3 < h else zrow
            p4 = img_c[y0 + 4] if y0 + 4 < h else zrow
            p5 = img_c[y0 + 5] if y0 + 5 < h else zrow
            o = _U((i - i0) * wb + 1)
            n_w = _U(w)
            d0, d1, d2 = q0[o:o + n_w], q1[o:o + n_w], q2[o:o + n_w]
            d3, d4, d5 = q3[o:o + n_w], q4[o:o + n_w], q5[o:o + n_w]
            for x in range(n_w):
                t0, t1, t2, t3, t4, t5 = _bt6(p0[x], p1[x], p2[x], p3[x], p4[x], p5[x])
                chk += (t0 - t0) + (t5 - t5)      # t0 reads rows 0, 2, 4; t5 1, 3, 5
                d0[x] = t0
                d1[x] = t1
                d2[x] = t2
                d3[x] = t3
                d4[x] = t4
                d5[x] = t5
        a = c * nv + col0
        b = a + tb
        for k in range(6):
            row = rb[_U(k) * plane_n:_U(k + 1) * plane_n]
            v0, v1, v2 = v[6 * k, a:b], v[6 * k + 1, a:b], v[6 * k + 2, a:b]
            v3, v4, v5 = v[6 * k + 3, a:b], v[6 * k + 4, a:b], v[6 * k + 5, a:b]
            for t in range(_U(tb)):
                x = _U(4) * t
                y0_, y1_, y2_, y3_, y4_, y5_ = _bt6(row[x], row[x + _U(1)], row[x + _U(2)],
                                                    row[x + _U(3)], row[x + _U(4)],
                                                    row[x + _U(5)])
                v0[t] = y0_
                v1[t] = y1_
                v2[t] = y2_
                v3[t] = y3_
                v4[t] = y4_
                v5[t] = y5_
    return chk


@njit(cache=True)
def _output_band4(m, f0, f1, out3, r3, st, ep, add, n, i0, i1, h, w, rb, col0, nv):
    """F(4x4, 3x3)'s ``_output_band``: out3[n, f, 4i:4i+4, :] (=|+=) (A^T m
    A) of the band's tiles through four row buffers, then the epilogue."""
    nb = i1 - i0
    tb, wb = _slots(nb, w, 4)
    size = _U(nb * wb)
    o0, o1, o2, o3 = rb[0:size], rb[size:2 * size], rb[2 * size:3 * size], \
        rb[3 * size:4 * size]
    for f in range(f0, f1):
        dst = out3[n, f]
        a = f * nv + col0
        b = a + tb
        m0, m1, m2, m3, m4, m5 = \
            m[0, a:b], m[1, a:b], m[2, a:b], m[3, a:b], m[4, a:b], m[5, a:b]
        m6, m7, m8, m9, m10, m11 = \
            m[6, a:b], m[7, a:b], m[8, a:b], m[9, a:b], m[10, a:b], m[11, a:b]
        m12, m13, m14, m15, m16, m17 = \
            m[12, a:b], m[13, a:b], m[14, a:b], m[15, a:b], m[16, a:b], m[17, a:b]
        m18, m19, m20, m21, m22, m23 = \
            m[18, a:b], m[19, a:b], m[20, a:b], m[21, a:b], m[22, a:b], m[23, a:b]
        m24, m25, m26, m27, m28, m29 = \
            m[24, a:b], m[25, a:b], m[26, a:b], m[27, a:b], m[28, a:b], m[29, a:b]
        m30, m31, m32, m33, m34, m35 = \
            m[30, a:b], m[31, a:b], m[32, a:b], m[33, a:b], m[34, a:b], m[35, a:b]
        for t in range(_U(tb)):
            a00, a10, a20, a30 = _at6(m0[t], m6[t], m12[t], m18[t], m24[t], m30[t])
            a01, a11, a21, a31 = _at6(m1[t], m7[t], m13[t], m19[t], m25[t], m31[t])
            a02, a12, a22, a32 = _at6(m2[t], m8[t], m14[t], m20[t], m26[t], m32[t])
            a03, a13, a23, a33 = _at6(m3[t], m9[t], m15[t], m21[t], m27[t], m33[t])
            a04, a14, a24, a34 = _at6(m4[t], m10[t], m16[t], m22[t], m28[t], m34[t])
            a05, a15, a25, a35 = _at6(m5[t], m11[t], m17[t], m23[t], m29[t], m35[t])
            x = _U(4) * t
            _put_at6(o0, x, a00, a01, a02, a03, a04, a05)
            _put_at6(o1, x, a10, a11, a12, a13, a14, a15)
            _put_at6(o2, x, a20, a21, a22, a23, a24, a25)
            _put_at6(o3, x, a30, a31, a32, a33, a34, a35)
        _rows_out(dst, rb, size, 4, i0, i1, h, w, wb, add)
        if ep:
            _finish_rows(dst, r3, st, ep, n, f, 4 * i0, min(h, 4 * i1), w)


# -- the driver -----------------------------------------------------------------------------

@njit(cache=True)
def _finish_rows(dst, r3, st, ep, n, f, y0, y1, w):
    """Output rows [y0, y1) of image n's channel f (``dst``, flat) through
    the epilogue."""
    if ep:
        finish_run(dst, r3[n, f] if ep & EP_RESIDUAL else dst, st, f, ep, y0 * w, y1 * w)


@njit(cache=True)
def _direct_band(img, wt, out3, r3, st, ep, add, n, y0, y1):
    """Output rows [y0, y1) of image n summed directly, tap by tap (what
    im2col's product computes: padding multiplied as zeros, the taps that
    read only padding left out), then through the epilogue: the band's
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
                        if h == 1 and a != 1:       # a tap im2col leaves out
                            continue
                        yy = y + a - 1
                        for e in range(3):
                            if w == 1 and e != 1:
                                continue
                            xx = x + e - 1
                            # padding is a zero im2col multiplies (inf * 0 = NaN)
                            v = plane[yy, xx] if 0 <= yy < h and 0 <= xx < w else zero
                            acc += kern[9 * c + 3 * a + e] * v
                if add:
                    dst[y * w + x] += acc
                else:
                    dst[y * w + x] = acc
        _finish_rows(dst, r3, st, ep, n, f, y0, y1, w)


@njit(cache=True, inline="always")
def _weights(tm, w, u, n_c, f0, f1):
    """F(tm x tm)'s weight transform of output channels [f0, f1)."""
    if tm == 2:
        return _weight_rows(w, u, n_c, f0, f1)
    return _weight_rows4(w, u, n_c, f0, f1)


@njit(cache=True, inline="always")
def _inputs(tm, img, n, i0, i1, v, rb, c0, c1, col0, nv):
    """F(tm x tm)'s input transform (``_input_band``)."""
    if tm == 2:
        return _input_band(img, n, i0, i1, v, rb, c0, c1, col0, nv)
    return _input_band4(img, n, i0, i1, v, rb, c0, c1, col0, nv)


@njit(cache=True, inline="always")
def _outputs(tm, m, f0, f1, out3, r3, st, ep, add, n, i0, i1, h, w, rb, col0, nv):
    """F(tm x tm)'s output transform (``_output_band``)."""
    if tm == 2:
        _output_band(m, f0, f1, out3, r3, st, ep, add, n, i0, i1, h, w, rb, col0, nv)
    else:
        _output_band4(m, f0, f1, out3, r3, st, ep, add, n, i0, i1, h, w, rb, col0, nv)


@njit(cache=True)
def _products(u, v, m, n_f, n_c, nv, x0, x1):
    """M[xi] = U[xi] . V[xi] for planes [x0, x1), ``nv`` columns (BLAS)."""
    for xi in range(x0, x1):
        gemm(u[xi, :n_f * n_c].reshape(n_f, n_c)[:, :],
             v[xi, :n_c * nv].reshape(n_c, nv)[:, :],
             m[xi, :n_f * nv].reshape(n_f, nv)[:, :], 1.0, 0.0)


@njit(cache=True)
def _bands(lo, hi, per, band, tm, img, wt, u, wbad, n_f, out3, r3, st, ep, add, v, m, rb):
    """Work items [lo, hi) of the (image, band) pairs (``per`` bands an
    image) of F(tm x tm, 3x3): input transform, the (tm + 2)^2 products,
    output transform; a band that reads a value that is not finite (or any
    band, ``wbad``, when a weight is not) is summed directly instead
    (``_direct_band``)."""
    n_c, h, w = img.shape[1], img.shape[3], img.shape[4]
    th = (h + tm - 1) // tm
    zero = v.dtype.type(0)
    for item in range(lo, hi):
        n = item // per
        i0 = (item - n * per) * band
        i1 = min(th, i0 + band)
        nt_ = _slots(i1 - i0, w, tm)[0]
        if wbad or _inputs(tm, img, n, i0, i1, v, rb, 0, n_c, 0, nt_) != zero:
            _direct_band(img, wt, out3, r3, st, ep, add, n, tm * i0, min(h, tm * i1))
            continue
        _products(u, v, m, n_f, n_c, nt_, 0, (tm + 2) * (tm + 2))
        _outputs(tm, m, 0, n_f, out3, r3, st, ep, add, n, i0, i1, h, w, rb, 0, nt_)


def wino_forward(img, w, b, gamma, beta, mm, mv, res, cols, u, v, m, rb, st, has_bias,
                 has_bn, fix_gamma, eps, ep, req, nt, band, phases, tm):
    """cols (=|+=) the 3x3 "same" convolution of img by w, through the
    epilogue ``ep`` (as ``convolution.conv_forward``), by F(tm x tm, 3x3)
    (``tm`` 2 or 4); ``nt`` threads (``prange`` parts; 1 in the serial
    compilation's callers), ``band`` tile rows a work item; or, with
    ``phases``, the whole batch at once in three parallel phases (input
    transform split by channels, products by planes, output transform by
    output channels: few tiles, where splitting them would leave each thread
    products of a few columns, and each thread would read every weight
    plane)."""
    if req == REQ_NULL:
        return
    fold(st, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps, ep)
    n_img, h, w_n = img.shape[0], img.shape[3], img.shape[4]
    n_f = w.shape[1]
    out3 = cols.reshape(cols.shape[0], cols.shape[1], h * w_n)
    r3 = res.reshape(res.shape[0], res.shape[1], res.shape[2] * res.shape[3] * res.shape[4])
    add = req == REQ_ADD
    per = -(-((h + tm - 1) // tm) // band)
    items = n_img * per
    saved = blas_get_threads()
    if nt > 1:
        blas_set_threads(1)
    chk = u.dtype.type(0)
    for t in prange(nt):
        f0, f1 = chunk(n_f, t, nt)
        chk += _weights(tm, w, u, img.shape[1], f0, f1)
    wbad = chk != u.dtype.type(0)
    a2 = (tm + 2) * (tm + 2)
    if phases:
        n_c = img.shape[1]
        th = (h + tm - 1) // tm
        one = _slots(th, w_n, tm)[0]
        nv = n_img * one
        vv = v[0].reshape(a2, v.shape[1] // a2)
        mv_ = m[0].reshape(a2, m.shape[1] // a2)
        chk2 = u.dtype.type(0)
        for t in prange(nt):
            c0, c1 = chunk(n_c, t, nt)
            for n in range(n_img):
                chk2 += _inputs(tm, img, n, 0, th, vv, rb[t], c0, c1, n * one, nv)
        if wbad or chk2 != u.dtype.type(0):
            for t in prange(nt):
                n0, n1 = chunk(n_img, t, nt)
                for n in range(n0, n1):
                    _direct_band(img, w, out3, r3, st, ep, add, n, 0, h)
        else:
            for t in prange(nt):
                x0, x1 = chunk(a2, t, nt)
                _products(u, vv, mv_, n_f, n_c, nv, x0, x1)
            for t in prange(nt):
                f0, f1 = chunk(n_f, t, nt)
                for n in range(n_img):
                    _outputs(tm, mv_, f0, f1, out3, r3, st, ep, add, n, 0, th, h, w_n, rb[t],
                             n * one, nv)
    else:
        for t in prange(nt):
            lo, hi = chunk(items, t, nt)
            _bands(lo, hi, per, band, tm, img, w, u, wbad, n_f, out3, r3, st, ep, add,
                   v[t].reshape(a2, v.shape[1] // a2), m[t].reshape(a2, m.shape[1] // a2),
                   rb[t])
    if nt > 1:
        blas_set_threads(saved)


wino_forward, wino_forward_parallel = serial_and_parallel(wino_forward)
# what ``debug_str`` lists for the nodes that run these (``nbdl.executor.debug``)
def describe(scalars):
    """What ``debug_str`` says of a node that runs these kernels (their
    launch's ``scalars``, which end with ``nt, band, phases, tm``)."""
    nt, band, phases, tm = scalars[-4:]
    how = "the batch in three phases" if phases else f"bands of {band} tile rows"
    return (f"Winograd F({tm}x{tm}, 3x3), {how} on {nt} thread(s) "
            f"(NBDL_CONV_WINOGRAD=0: im2col + GEMM)")


wino_forward.nbdl_describe = wino_forward_parallel.nbdl_describe = describe


__all__ = ["wino_forward", "wino_forward_parallel", "winograd_scratch", "tiles_of", "describe"]
