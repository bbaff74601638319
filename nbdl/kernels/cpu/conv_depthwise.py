"""Depthwise convolution's forward on the CPU (``num_group`` equal to the input
channels: each output plane reads one input channel), by direct loops
instead of im2col and a one-row GEMM per group (MobileNet's 3x3 layers ran
at a few percent of the machine's rate that way).

Each input plane is first split into its stride *phases*, zero padding
included: phase ``(rd, rh, rw)`` holds the padded plane's elements at
``(i*sd + rd, j*sh + rh, k*sw + rw)`` on a grid of ``(Dq, Hq, Wq)`` (the
output's extent plus the taps' reach).  Kernel tap ``(a, b, e)`` then reads
phase ``(a*dd % sd, b*dh % sh, e*dw % sw)`` at a fixed offset from the
output position, so over the output grid *widened to* ``Wq`` (and ``Hq``
between depth slices) each tap is one contiguous multiply-add of the whole
plane, which vectorises, with no bounds tests; the columns and rows beyond
the output are computed and dropped.  The valid positions are then written
through the epilogue (``conv_epilogue``: bias, folded BatchNorm, residual,
ReLU).  A 2-D 3x3 kernel of stride 1 or 2 with output rows of 16 and more
is summed a row at a time instead, its nine products in registers
(``_row3x3``), and each row finished while it is in L1; one with one filter
a channel and narrower rows runs sixteen channels at a time
(``conv_depthwise_lanes``).

A plane of a small map is little work (1024 planes of 7x7: 0.2 us each),
so what each plane pays besides its multiply-adds is kept small: the plane
and phase functions are inlined into the kernels' loops (a compiled call a
plane passed seven arrays with their reference counts), and each tap's phase
and offset are carried from tap to tap instead of divided out (six integer
divisions a tap).  MobileNet 1.0's depthwise layers alone: 3.1 -> 2.3 ms at
batch 1; the network 0.92 x before.

Views (prepare): ``img (N*G, D, H, W)``, ``w (F, KD*KH*KW)`` with ``F = G*Fg``
output channels, ``out``/``res (N*G*Fg, OD, OH, OW)``: plane ``j = i*Fg + f``
of item ``i = n*G + g`` is output channel ``g*Fg + f``; scratch ``(nt, L)``
per thread (``scratch_size``).
"""
import numpy as np
from numba import prange

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL
from ..shared.conv_epilogue import EP_RESIDUAL
from ._parallel import twins as _twins
from .conv_depthwise_lanes import LANES, lane_group, lanes_scratch, py_uses_lanes, uses_lanes
from .conv_epilogue import channel, fold, relu, store


def _grid(geom):
    """``(Dq, Hq, Wq)``: the phase grid of a depthwise convolution."""
    od, oh, ow = geom["cols"][2:]
    reach = tuple((k - 1) * d // s for k, d, s in zip(geom["k3"], geom["d3"], geom["s3"]))
    return od + reach[0], oh + reach[1], ow + reach[2]


def _lanes(geom):
    """Whether ``conv_depthwise_lanes`` runs this convolution."""
    (kd, kh, kw), (_, dh, dw) = geom["k3"], geom["d3"]
    return py_uses_lanes(geom["w"][1], kd, kh, kw, dh, dw, geom["cols"][4], geom["img"][2],
                         geom["cols"][2])


def scratch_size(geom):
    """Elements of one thread's scratch: every phase of a plane (one row of
    margin each) and the widened output, or the lanes variant's."""
    if _lanes(geom):
        return lanes_scratch(*geom["cols"][3:5], *geom["s3"][1:])
    dq, hq, wq = _grid(geom)
    sd, sh, sw = geom["s3"]
    od, oh = geom["cols"][2:4]
    return sd * sh * sw * (dq * hq * wq + wq) + ((od - 1) * hq + oh) * wq


# Index arithmetic in the loops below is unsigned (``_U``): Numba wraps a
# negative signed index around (``a[-1]``), and the test for it in a loop
# over ``a[base + q]`` stops LLVM vectorising that loop (5x slower); a plain
# loop variable, or an unsigned sum, has no such test.
_U = np.uint64


@njit(cache=True, inline="always")
def _fill_phases(src, buf, dq, hq, wq, sd, sh, sw, pd, ph, pw, d_n, h_n, w_n):
    """Phase (rd, rh, rw) of the padded plane ``src`` (flat, D*H*W) at
    buf[r*S:], r in (rd, rh, rw) order, S = Dq*Hq*Wq + Wq."""
    size = dq * hq * wq + wq
    zero = buf.dtype.type(0)
    for q in range(_U(sd * sh * sw * size)):
        buf[q] = zero
    r = 0
    for rd in range(sd):
        for rh in range(sh):
            for rw in range(sw):
                # columns k whose source x = k*sw + rw - pw is inside [0, w_n)
                k0 = min(wq, max(0, (pw - rw + sw - 1) // sw))
                k1 = max(k0, min(wq, (w_n - 1 - rw + pw) // sw + 1))
                n = _U(k1 - k0)
                x0 = k0 * sw + rw - pw
                for i in range(dq):
                    z = i * sd + rd - pd
                    if z < 0 or z >= d_n:
                        continue
                    for j in range(hq):
                        y = j * sh + rh - ph
                        if y < 0 or y >= h_n:
                            continue
                        dst = _U(r * size + (i * hq + j) * wq + k0)
                        at = _U((z * h_n + y) * w_n + x0)
                        if sw == 1:
                            for k in range(n):
                                buf[dst + k] = src[at + k]
                        else:
                            step = _U(sw)
                            for k in range(n):
                                buf[dst + k] = src[at + k * step]
                r += 1


# output positions a strip: a strip's sums stay in L1 while every tap adds to them
_STRIP = 256
# output rows at least this wide are summed a row at a time (``_row3x3``);
# narrower ones (7x7 maps) by strips, which cover several rows a loop
_ROW_MIN = 16


@njit(cache=True, inline="always")
def _carry(qt, r, s):
    """(quotient, remainder) of ``qt * s + r`` by ``s``, for 0 <= r: the next
    tap's phase and offset along an axis, without a division."""
    while r >= s:
        r -= s
        qt += 1
    return qt, r


@njit(cache=True, inline="always")
def _plane(j, fill, img, w, out, res, st, buf, ep, add, fg, g_n,
           kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """Output plane j (of ``out``, flat ``(planes, OD*OH*OW)``) from its
    input plane (``img`` flat ``(items, D*H*W)``) through ``buf`` (one
    thread's scratch); ``fill``: the phases there are not its input plane's
    yet (the planes of one input channel follow each other)."""
    i = j // fg
    c = (i % g_n) * fg + (j - i * fg)
    wr = w[c]
    od_n, oh_n, ow_n = out.shape[1], out.shape[2], out.shape[3]
    d_n, h_n, w_n = img.shape[1], img.shape[2], img.shape[3]
    dq = od_n + (kd - 1) * dd // sd
    hq = oh_n + (kh - 1) * dh // sh
    wq = ow_n + (kw - 1) * dw // sw
    size = dq * hq * wq + wq
    n_q = ((od_n - 1) * hq + oh_n) * wq
    acc0 = sd * sh * sw * size
    if fill:
        _fill_phases(img[i].reshape(d_n * h_n * w_n), buf, dq, hq, wq, sd, sh, sw, pd, ph, pw,
                     d_n, h_n, w_n)
    n_out = od_n * oh_n * ow_n
    dst = out[j].reshape(n_out)
    r_flat = res[j].reshape(n_out) if ep & EP_RESIDUAL else dst
    s, t = channel(st, c, ep)
    if (kd == 1 and kh == 3 and kw == 3 and dh == 1 and dw == 1 and sh == sw and sh <= 2
            and d_n == 1 and od_n == 1 and ow_n >= _ROW_MIN):
        # a row's sums, then its epilogue while they are in L1
        phases, sums = buf[:acc0], buf[acc0:acc0 + ow_n]
        for oh in range(oh_n):
            _row3x3(phases, sums, wr, oh, ow_n, wq, size, sh)
            store(dst, oh * ow_n, sums, 0, r_flat, ow_n, s, t, ep, add)
            relu(dst, oh * ow_n, ow_n, ep)
        return
    _strips(buf, acc0, n_q, wr, size, hq, wq, kd, kh, kw, sd, sh, sw, dd, dh, dw)
    for od in range(od_n):
        for oh in range(oh_n):
            store(dst, (od * oh_n + oh) * ow_n, buf, acc0 + (od * hq + oh) * wq, r_flat, ow_n,
                  s, t, ep, add)
    relu(dst, 0, n_out, ep)


@njit(cache=True, inline="always")
def _row3x3(src, d, wr, oh, n, wq, size, s):
    """d[:n] = output row ``oh`` of a 3x3 kernel (stride ``s`` of 1 or
    2 both ways, no dilation) from the phases ``src``: the nine products
    summed in registers, one store a position (the strips' loops load and
    store the sums once a tap: MobileNet's 112x112 planes 6.6 -> 2.7 us).
    ``src`` and ``d`` are separate views, and the offsets unsigned with
    unsigned constants (``x + 1`` with a signed 1 is a float64 index in
    Numba), or LLVM does not vectorise the loop."""
    w0, w1, w2, w3, w4, w5 = wr[0], wr[1], wr[2], wr[3], wr[4], wr[5]
    w6, w7, w8 = wr[6], wr[7], wr[8]
    one, two = _U(1), _U(2)
    if s == 1:
        a, b, c = _U(oh * wq), _U((oh + 1) * wq), _U((oh + 2) * wq)
        for x in range(_U(n)):
            d[x] = (w0 * src[a + x] + w1 * src[a + x + one] + w2 * src[a + x + two]
                    + w3 * src[b + x] + w4 * src[b + x + one] + w5 * src[b + x + two]
                    + w6 * src[c + x] + w7 * src[c + x + one] + w8 * src[c + x + two])
        return
    # stride 2: tap (b, e) reads phase (b % 2, e % 2) at row oh + b // 2,
    # column x + e // 2; phase (rh, rw) starts at (rh*2 + rw) * size
    a0, a1 = _U(oh * wq), _U(size + oh * wq)
    b0, b1 = _U(2 * size + oh * wq), _U(3 * size + oh * wq)
    c0, c1 = _U((oh + 1) * wq), _U(size + (oh + 1) * wq)
    for x in range(_U(n)):
        d[x] = (w0 * src[a0 + x] + w1 * src[a1 + x] + w2 * src[a0 + x + one]
                + w3 * src[b0 + x] + w4 * src[b1 + x] + w5 * src[b0 + x + one]
                + w6 * src[c0 + x] + w7 * src[c1 + x] + w8 * src[c0 + x + one])


@njit(cache=True, inline="always")
def _strips(buf, acc0, n_q, wr, size, hq, wq, kd, kh, kw, sd, sh, sw, dd, dh, dw):
    """The widened output ``buf[acc0:acc0+n_q]`` of any kernel, a strip of
    ``_STRIP`` positions at a time, one tap's multiply-add over the strip
    after another."""
    zero = buf.dtype.type(0)
    for q0 in range(0, n_q, _STRIP):
        m = _U(min(n_q - q0, _STRIP))
        a_at = _U(acc0 + q0)
        for q in range(m):
            buf[a_at + q] = zero
        # tap (a, b, e) reads phase (a*dd % sd, ...) at (a*dd // sd, ...): the
        # quotients and remainders carried from tap to tap (a division a
        # tap and axis cost more than a small plane's multiply-adds)
        qa, ra = 0, 0
        for a in range(kd):
            qb, rb = 0, 0
            for b in range(kh):
                qe, re = 0, 0
                for e in range(kw):
                    p_at = _U(((ra * sh + rb) * sw + re) * size + (qa * hq + qb) * wq + qe + q0)
                    wv = wr[(a * kh + b) * kw + e]
                    for q in range(m):
                        buf[a_at + q] += wv * buf[p_at + q]
                    qe, re = _carry(qe, re + dw, sw)
                qb, rb = _carry(qb, rb + dh, sh)
            qa, ra = _carry(qa, ra + dd, sd)


@njit(cache=True)
def _flat_planes(out, res, ep):
    """The output and residual planes flat, ``(planes, OD*OH*OW)`` (the
    residual only with ``EP_RESIDUAL``)."""
    n_out = out.shape[1] * out.shape[2] * out.shape[3]
    out2 = out.reshape(out.shape[0], n_out)
    return out2, (res.reshape(res.shape[0], n_out) if ep & EP_RESIDUAL else out2)


@njit(cache=True)
def dw_forward(img, w, b, gamma, beta, mm, mv, res, out, st, scr, has_bias, has_bn, fix_gamma,
               eps, ep, req, fg, g_n, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """out (=|+=) the depthwise convolution of img through the epilogue ``ep``."""
    if req == REQ_NULL:
        return
    fold(st, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps, ep)
    add = req == REQ_ADD
    if uses_lanes(fg, kd, kh, kw, dh, dw, out.shape[3], img.shape[1], out.shape[1]):
        out2, res2 = _flat_planes(out, res, ep)
        for u in range(img.shape[0] // g_n * ((g_n + LANES - 1) // LANES)):
            lane_group(u, img, w, out2, res2, st, scr[0], ep, add, g_n, out.shape[2],
                       out.shape[3], sh, sw, ph, pw)
        return
    for j in range(out.shape[0]):
        _plane(j, j % fg == 0, img, w, out, res, st, scr[0], ep, add, fg, g_n,
               kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True, parallel=True)
def dw_forward_parallel(img, w, b, gamma, beta, mm, mv, res, out, st, scr, has_bias, has_bn,
                        fix_gamma, eps, ep, req, fg, g_n, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                        dd, dh, dw):
    if req == REQ_NULL:
        return
    fold(st, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps, ep)
    nt = scr.shape[0]
    add = req == REQ_ADD
    if uses_lanes(fg, kd, kh, kw, dh, dw, out.shape[3], img.shape[1], out.shape[1]):
        out2, res2 = _flat_planes(out, res, ep)
        n = img.shape[0] // g_n * ((g_n + LANES - 1) // LANES)
        for t in prange(nt):
            for u in range(n * t // nt, n * (t + 1) // nt):
                lane_group(u, img, w, out2, res2, st, scr[t], ep, add, g_n, out.shape[2],
                           out.shape[3], sh, sw, ph, pw)
        return
    n = out.shape[0]
    for t in prange(nt):
        lo = n * t // nt
        for j in range(lo, n * (t + 1) // nt):
            _plane(j, j == lo or j % fg == 0, img, w, out, res, st, scr[t], ep, add,
                   fg, g_n,
                   kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


_twins((dw_forward_parallel, dw_forward))

__all__ = ["dw_forward", "dw_forward_parallel", "scratch_size"]
