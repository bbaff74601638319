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
ReLU).

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
from .conv_epilogue import channel, fold, relu, store


def _grid(geom):
    """``(Dq, Hq, Wq)``: the phase grid of a depthwise convolution."""
    od, oh, ow = geom["cols"][2:]
    reach = tuple((k - 1) * d // s for k, d, s in zip(geom["k3"], geom["d3"], geom["s3"]))
    return od + reach[0], oh + reach[1], ow + reach[2]


def scratch_size(geom):
    """Elements of one thread's scratch: every phase of a plane (one row of
    margin each) and the widened output."""
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
    n_out = od_n * oh_n * ow_n
    dst = out[j].reshape(n_out)
    r_flat = res[j].reshape(n_out) if ep & EP_RESIDUAL else dst
    s, t = channel(st, c, ep)
    for od in range(od_n):
        for oh in range(oh_n):
            store(dst, (od * oh_n + oh) * ow_n, buf, acc0 + (od * hq + oh) * wq, r_flat, ow_n,
                  s, t, ep, add)
    relu(dst, 0, n_out, ep)


@njit(cache=True)
def dw_forward(img, w, b, gamma, beta, mm, mv, res, out, st, scr, has_bias, has_bn, fix_gamma,
               eps, ep, req, fg, g_n, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """out (=|+=) the depthwise convolution of img through the epilogue ``ep``."""
    if req == REQ_NULL:
        return
    fold(st, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps, ep)
    for j in range(out.shape[0]):
        _plane(j, j % fg == 0, img, w, out, res, st, scr[0], ep, req == REQ_ADD, fg, g_n,
               kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


@njit(cache=True, parallel=True)
def dw_forward_parallel(img, w, b, gamma, beta, mm, mv, res, out, st, scr, has_bias, has_bn,
                        fix_gamma, eps, ep, req, fg, g_n, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                        dd, dh, dw):
    if req == REQ_NULL:
        return
    fold(st, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps, ep)
    nt = scr.shape[0]
    n = out.shape[0]
    for t in prange(nt):
        lo = n * t // nt
        for j in range(lo, n * (t + 1) // nt):
            _plane(j, j == lo or j % fg == 0, img, w, out, res, st, scr[t], ep, req == REQ_ADD,
                   fg, g_n,
                   kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw)


_twins((dw_forward_parallel, dw_forward))

__all__ = ["dw_forward", "dw_forward_parallel", "scratch_size"]
