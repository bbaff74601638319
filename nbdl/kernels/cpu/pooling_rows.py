"""2x2 and 3x3 max pooling by rows (``Pooling``'s clamped windows), CPU, for
maps at least ``pooling.ROWS_MIN_WIDTH`` wide when the pooling runs in
parallel (SqueezeNet's and ResNet's pools at 224 pixels).

Per output row, the maximum of each column over the window's rows goes to a
scratch row (a contiguous pass that LLVM vectorises), then each output takes
the maximum of ``K`` neighbours of that row: about ``K/S + K`` operations an
output instead of the ``K*K`` of a window read one by one (SqueezeNet's and
ResNet's 3x3/2 pools 1.6-2.3x faster; perf/README.md, 2026-12-07, fifth
session).

Windows are clamped into the data (a repeated border row or column does
not change a maximum); the scratch row holds the padding on both sides as
the dtype's lowest value, so columns need no clamping.  Max pooling's NaN
rule is the other kernels' (``pooling_math``): the column maxima are chains
of selects from the lowest value, which a NaN never enters, and a window
with no element in the data gives 0.

The scratch is ``(nt, 2, OH, L)`` from the planner: two planes' column
maxima per thread, ``L`` the padded row's length (``scratch_len``); the parallel
variant splits the planes into ``nt`` contiguous runs.
"""
import numpy as np
from numba import prange

from ..shared.jit import njit

from ._parallel import serial_and_parallel
from ...ops.registry import REQ_ADD, REQ_NULL
from .pooling_math import _clamped, _floor, _sel_max


@njit(cache=True, inline="always")
def _column_maxima(xp, h0, K, row, low):
    """``row[w]``: the maximum over rows ``h0 .. h0 + K - 1`` (clamped) of
    column ``w`` of the plane ``xp``, from ``low``."""
    H, W = xp.shape
    a = xp[_clamped(h0, H)]
    b = xp[_clamped(h0 + 1, H)]
    if K == 3:
        c = xp[_clamped(h0 + 2, H)]
        for w in range(W):
            row[w] = _sel_max(c[w], _sel_max(b[w], _sel_max(a[w], low)))
    else:
        for w in range(W):
            row[w] = _sel_max(b[w], _sel_max(a[w], low))


@njit(cache=True)
def _window_maxima(mp, o, lo, hi, K, SW, req):
    """``o[ow]`` for ``lo <= ow < hi``: the maximum of ``mp[ow*SW : ow*SW + K]``
    (stored, or added for ``REQ_ADD``); unsigned indices, and a 2x2 window's
    third read repeats its second, so the loops hold no branch (stride 2
    written out: the vectoriser then sees interleaved loads)."""
    one = np.uintp(1)
    k2 = np.uintp(2) if K == 3 else one
    s = np.uintp(SW)
    if req == REQ_ADD:
        for ow in range(np.uintp(lo), np.uintp(hi)):
            j = ow * s
            o[ow] += max(max(mp[j], mp[j + one]), mp[j + k2])
    elif SW == 2:
        for ow in range(np.uintp(lo), np.uintp(hi)):
            j = ow + ow
            o[ow] = max(max(mp[j], mp[j + one]), mp[j + k2])
    else:
        for ow in range(np.uintp(lo), np.uintp(hi)):
            j = ow * s
            o[ow] = max(max(mp[j], mp[j + one]), mp[j + k2])


@njit(cache=True)
def _columns(xp, blk, K, SH, PH, PW):
    """Every output row's column maxima of the plane ``xp`` into ``blk``'s
    rows (whose padding columns hold the lowest value already)."""
    H, W = xp.shape
    low = _floor(xp)
    for oh in range(blk.shape[0]):
        h0 = oh * SH - PH
        if h0 < H and h0 + K > 0:
            _column_maxima(xp, h0, K, blk[oh, PW:PW + W], low)


@njit(cache=True)
def _windows(blk, op, H, W, K, SH, SW, PH, PW, zero, req):
    """The output plane ``op`` from the column maxima in ``blk``."""
    OH, OW = op.shape
    # the outputs whose window holds a column of the data (others: 0)
    lo = min(max(0, (PW - K) // SW + 1), OW)
    hi = max(min(OW, (W + PW - 1) // SW + 1), lo)
    for oh in range(OH):
        h0 = oh * SH - PH
        o = op[oh]
        lo_r, hi_r = 0, 0
        if h0 < H and h0 + K > 0:
            lo_r, hi_r = lo, hi
            _window_maxima(blk[oh], o, lo_r, hi_r, K, SW, req)
        if req != REQ_ADD:
            for ow in range(lo_r):
                o[ow] = zero
            for ow in range(hi_r, OW):
                o[ow] = zero


def max_rows_forward(x3, out3, scratch, K, SH, SW, PH, PW, zero, req):
    """2x2 / 3x3 max pooling of the planes ``x3`` into ``out3``
    (``_is_clamped_max``), ``scratch`` ``(nt, 2, OH, L)``: a thread takes
    plane ``q``'s column maxima while plane ``q - 1``'s wait in the other
    half (read back at once, a small plane's rows stalled on store
    forwarding: 16x16 maps ran 4x slower)."""
    if req == REQ_NULL:
        return
    nt = scratch.shape[0]
    P, H, W = x3.shape
    low = _floor(x3)
    for t in prange(nt):
        st = scratch[t]
        for b in range(2):
            for r in range(st.shape[1]):
                for w in range(PW):
                    st[b, r, w] = low
                for w in range(PW + W, st.shape[2]):
                    st[b, r, w] = low
        q0, q1 = t * P // nt, (t + 1) * P // nt
        for q in range(q0, q1 + 1):
            if q < q1:
                _columns(x3[q], st[q & 1], K, SH, PH, PW)
            if q > q0:
                _windows(st[(q - 1) & 1], out3[q - 1], H, W, K, SH, SW, PH, PW, zero, req)


max_rows_forward, max_rows_forward_parallel = serial_and_parallel(max_rows_forward)


def scratch_len(W, OW, K, SW, PW):
    """Elements of a scratch row: the padding before, the data's row, and
    whatever the last window reaches past it."""
    return max(PW + W, (OW - 1) * SW + K)


__all__ = ["max_rows_forward", "max_rows_forward_parallel", "scratch_len"]
