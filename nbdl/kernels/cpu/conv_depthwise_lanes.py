"""Depthwise 3x3 convolutions of small maps on the CPU, sixteen channels at a
time (``conv_depthwise`` runs the others a plane at a time).

A plane of a 14x14 or 7x7 map has rows shorter than a vector, so a
plane's loops (its padded copy, its taps, its epilogue) run mostly in their
scalar remainders: 7-21 cycles an output against 2 on 112x112 planes.
Here a *group* of 16 consecutive channels of one image is first
interleaved, zero padding included, into ``(Hp, Wp, 16)`` (a position's 16
channels one vector), so every output position's nine taps are nine vector
multiply-adds whatever the width and stride; the sums, ``(OH*OW, 16)``, are
then taken out a channel at a time through the epilogue
(``conv_epilogue``: bias, folded BatchNorm, residual, ReLU).  A last group
of fewer than 16 channels leaves its other lanes zero.

Scratch a thread (``lanes_scratch``): the interleaved input, the
interleaved sums and the group's weights ``(9, 16)``.
"""
import numpy as np

from ..shared.jit import njit

from ..shared.conv_epilogue import EP_RESIDUAL
from .conv_epilogue import channel, relu

LANES = 16
# output rows narrower than this run by lanes (one thread, ns a plane, lanes
# against ``conv_depthwise``'s planes: 1024 channels at 7x7 73 / 209, 512 at
# 14x14 230 / 352 and stride 2 130 / 264).  At 28x28 a group's interleaved
# input and sums (110 KB) leave L1: 256 channels there ran 1.3-2.8x slower
# bound in a graph at batch 16 than by planes' rows, though faster alone on
# one thread (769 / 1299 ns a plane)
LANES_BELOW = 16
_U = np.uint64


def py_uses_lanes(fg, kd, kh, kw, dh, dw, ow, d_in, d_out):
    """Whether a depthwise forward runs by lanes: one filter a channel, a
    2-D 3x3 kernel without dilation (any stride and padding; ``d_in`` and
    ``d_out``, the input's and output's depth, 1), output rows narrower than
    ``LANES_BELOW``."""
    return (fg == 1 and kd == 1 and kh == 3 and kw == 3 and dh == 1 and dw == 1
            and d_in == 1 and d_out == 1 and ow < LANES_BELOW)


uses_lanes = njit(cache=True, inline="always")(py_uses_lanes)


@njit(cache=True, inline="always")
def _span(o_n, s):
    """Input positions a 3x3 kernel of stride ``s`` reads for ``o_n`` outputs."""
    return (o_n - 1) * s + 3


def lanes_scratch(oh, ow, sh, sw):
    """Elements of one thread's scratch for the lanes variant."""
    hp, wp = (oh - 1) * sh + 3, (ow - 1) * sw + 3
    return LANES * (hp * wp + oh * ow + 9)


@njit(cache=True, inline="always")
def _interleave(img, i0, nc, pin, hp, wp, ph, pw):
    """pin[(y*Wp + x)*16 + c] = channel i0 + c's input at (y - ph, x - pw),
    0 outside the image and for lanes c >= nc."""
    h_n, w_n = img.shape[2], img.shape[3]
    zero = pin.dtype.type(0)
    lanes = _U(LANES)
    for q in range(_U(hp * wp * LANES)):
        pin[q] = zero
    y0, y1 = max(0, ph), min(hp, h_n + ph)
    x0, x1 = max(0, pw), min(wp, w_n + pw)
    n = _U(max(0, x1 - x0))
    for c in range(nc):
        src = img[i0 + c, 0]
        uc = _U(c)
        for y in range(y0, y1):
            row = src[y - ph]
            at = _U(y * wp + x0) * lanes + uc
            sx = _U(x0 - pw)
            for x in range(n):
                pin[at + x * lanes] = row[sx + x]


@njit(cache=True, inline="always")
def _lane_weights(w, c0, nc, wl):
    """wl[t*16 + c] = tap t of channel c0 + c (0 for lanes c >= nc)."""
    zero = wl.dtype.type(0)
    for t in range(9):
        for c in range(LANES):
            wl[t * LANES + c] = w[c0 + c, t] if c < nc else zero


@njit(cache=True, inline="always")
def _lane_sums(pin, wl, sums, oh_n, ow_n, wp, sh, sw):
    """sums[(y*OW + x)*16 + c]: the nine taps of every output position, a
    vector of 16 channels each."""
    lanes = _U(LANES)
    rowv = _U(wp) * lanes
    o1, o2 = lanes, _U(2) * lanes
    for y in range(oh_n):
        for x in range(ow_n):
            a = _U(y * sh * wp + x * sw) * lanes
            b = a + rowv
            c = b + rowv
            o = _U(y * ow_n + x) * lanes
            for k in range(lanes):
                sums[o + k] = (wl[k] * pin[a + k] + wl[o1 + k] * pin[a + o1 + k]
                               + wl[o2 + k] * pin[a + o2 + k]
                               + wl[_U(3) * lanes + k] * pin[b + k]
                               + wl[_U(4) * lanes + k] * pin[b + o1 + k]
                               + wl[_U(5) * lanes + k] * pin[b + o2 + k]
                               + wl[_U(6) * lanes + k] * pin[c + k]
                               + wl[_U(7) * lanes + k] * pin[c + o1 + k]
                               + wl[_U(8) * lanes + k] * pin[c + o2 + k])


@njit(cache=True, inline="always")
def lane_group(u, img, w, out2, res2, st, buf, ep, add, g_n, oh_n, ow_n, sh, sw, ph, pw):
    """Group ``u`` (image ``u // ceil(G/16)``, its channels from 16 times
    ``u``'s rank in the image) through ``buf`` (one thread's scratch):
    ``out2`` (=|+=) the depthwise 3x3 convolution through the epilogue
    ``ep``; ``out2``/``res2`` are the output and residual planes flat,
    ``(planes, OH*OW)`` (a view made once a call: a reshape a plane cost
    more than a 7x7 plane's sums)."""
    per = (g_n + LANES - 1) // LANES
    n = u // per
    c0 = (u - n * per) * LANES
    nc = min(LANES, g_n - c0)
    i0 = n * g_n + c0
    hp, wp = _span(oh_n, sh), _span(ow_n, sw)
    n_out = oh_n * ow_n
    a1 = hp * wp * LANES
    a2 = a1 + n_out * LANES
    pin, sums, wl = buf[:a1], buf[a1:a2], buf[a2:a2 + 9 * LANES]
    _interleave(img, i0, nc, pin, hp, wp, ph, pw)
    _lane_weights(w, c0, nc, wl)
    # the common strides as constants (LLVM then strength-reduces the
    # positions' offsets: 7x7 maps 109 -> 66 ns a plane)
    if sh == 1 and sw == 1:
        _lane_sums(pin, wl, sums, oh_n, ow_n, wp, 1, 1)
    elif sh == 2 and sw == 2:
        _lane_sums(pin, wl, sums, oh_n, ow_n, wp, 2, 2)
    else:
        _lane_sums(pin, wl, sums, oh_n, ow_n, wp, sh, sw)
    _take_out(sums, out2, res2, st, i0, c0, nc, n_out, ep, add)


@njit(cache=True, inline="always")
def _take_out(sums, out2, res2, st, i0, c0, nc, n_out, ep, add):
    """Lane k of the sums into output plane i0 + k through channel c0 + k's
    epilogue (as ``conv_epilogue.store`` then ``relu``, the lane read
    straight from the sums)."""
    lanes = _U(LANES)
    n = _U(n_out)
    for k in range(nc):
        j = i0 + k
        uk = _U(k)
        dst = out2[j]
        s, t = channel(st, c0 + k, ep)
        if add:
            for q in range(n):
                dst[q] += sums[q * lanes + uk] * s + t
        elif ep & EP_RESIDUAL:
            r = res2[j]
            for q in range(n):
                dst[q] = sums[q * lanes + uk] * s + t + r[q]
        else:
            for q in range(n):
                dst[q] = sums[q * lanes + uk] * s + t
        relu(dst, 0, n_out, ep)


__all__ = ["LANES", "LANES_BELOW", "lane_group", "lanes_scratch", "py_uses_lanes",
           "uses_lanes"]
