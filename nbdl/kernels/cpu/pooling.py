"""CPU kernels for Pooling and its gradient.

Every spatial layout is handled as 3-D (missing leading dimensions have size
1, kernel 1, stride 1, pad 0).  Data and output are passed flat; a
``(n, c)`` plane starts at ``(n*C + c) * S`` with unit element stride
(channels-first) or at ``n*S*C + c`` with element stride ``C``
(channels-last), ``S`` the plane's spatial size.  Each output is one fused
pass over its window.  Parallel variants split the ``N*C`` planes.

Channels-first max/avg/sum pooling over 1 or 2 spatial axes (LeNet's,
ResNet's) takes a 2-D path: planes ``(N*C, H, W)`` indexed in 2-D, one
fused pass per plane (the backward zeroes a plane and scatters into it
while it is in cache).

Global pooling takes a fast path (``pooling_global``).

The per-window, per-plane and global per-(a, b) functions are
``nbdl.kernels.shared.pooling``'s (``build``), compiled for the CPU in
``pooling_math`` and as device functions by the CUDA module."""
import numpy as np
from numba import prange

from ..shared.jit import njit

from ._parallel import serial_and_parallel, threads as _threads, use_parallel as _parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.pooling import AVG, LP, MAX, pool_params
from .pooling_global import global_kernels
from .pooling_math import (_bounds, _clamped, _divisor, _floor, _key, _pad_zero, _pool_at,
                           _scatter_plane, _sel_max)
from .pooling_rows import max_rows_forward_parallel, scratch_len


@njit(cache=True)
def _pool_plane(x, out, q, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, cl,
                ptype, ip, inv_p, cip, zero, req):
    for od in range(OD):
        for oh in range(OH):
            for ow in range(OW):
                _pool_at(x, out, q, od, oh, ow, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW,
                         PD, PH, PW, cl, ptype, ip, inv_p, cip, zero, req)


def pool_forward(x, out, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH,
                 PW, cl, ptype, ip, inv_p, cip, zero, req):
    if req == REQ_NULL:
        return
    for q in prange(N * C):
        _pool_plane(x, out, q, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW,
                    cl, ptype, ip, inv_p, cip, zero, req)


pool_forward, pool_forward_parallel = serial_and_parallel(pool_forward)


def pool_backward(og, x, y, dx, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD,
                  PH, PW, cl, ptype, ip, inv_p, cip, zero, req):
    if req == REQ_NULL:
        return
    for q in prange(N * C):
        _scatter_plane(og, x, y, dx, q, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD,
                       PH, PW, cl, ptype, ip, cip, zero, req)


pool_backward, pool_backward_parallel = serial_and_parallel(pool_backward)


# -- 2-D (and 1-D) channels-first max/avg/sum: planes (N*C, H, W) --------------
# The common case (LeNet's and ResNet's pooling) with 2-D indexing: the
# outputs whose window lies wholly inside the data in tight loops (2x2 and
# 3x3 max unrolled: runtime-sized window loops this short cost ~5x), the
# border ones through the clipping code; 2x2 and 3x3 max forward (not
# Pooling_v1) clamps every window into the data instead and takes the
# unrolled path for all outputs (2x faster on ResNet's 16x16 stem map, where
# a quarter of the outputs are border ones); the flat 3-D kernels above
# cover the rest (3-D, channels-last, lp).  The helpers called once an output are
# inlined: a compiled call that passes an array costs its reference
# counting (two atomic operations), more than a 3x3 window's search.

# Max pooling's rule (``pooling_math``): the unrolled windows below take
# their elements in a chain of selects (``_sel_max``) from ``_floor``; the
# searches for the first maximum start from the first element ranked by ``_key``.

@njit(cache=True, inline="always")
def _win_max(xp, h0, h1, w0, w1, k2, k3, low):
    """Max pooling's value over rows h0..h1, columns w0..w1 of xp (``low``:
    ``_floor(xp)``); k2/k3: a whole 2x2 / 3x3 window starting at (h0, w0),
    unrolled."""
    if k2 or k3:
        v = _sel_max(xp[h0, w0 + 1], _sel_max(xp[h0, w0], low))
        v = _sel_max(xp[h0 + 1, w0 + 1], _sel_max(xp[h0 + 1, w0], v))
        if k3:
            v = _sel_max(xp[h0 + 1, w0 + 2], _sel_max(xp[h0, w0 + 2], v))
            v = _sel_max(xp[h0 + 2, w0 + 2],
                         _sel_max(xp[h0 + 2, w0 + 1], _sel_max(xp[h0 + 2, w0], v)))
        return v
    v = _key(xp[h0, w0], low)
    for h in range(h0, h1):
        for w in range(w0, w1):
            v = _sel_max(xp[h, w], v)
    return v


@njit(cache=True, inline="always")
def _win_argmax(xp, h0, h1, w0, w1, low):
    """(h, w) of the window's first maximum by max pooling's rule (the
    first element when none rises above the floor)."""
    ah, aw = h0, w0
    best = _key(xp[h0, w0], low)
    for h in range(h0, h1):
        for w in range(w0, w1):
            if xp[h, w] > best:
                best = xp[h, w]
                ah, aw = h, w
    return ah, aw


@njit(cache=True)
def _whole_range(n_out, s, p, k, x):
    """[lo, hi) of the outputs whose window lies wholly inside [0, x)."""
    lo = (p + s - 1) // s
    hi = (x + p - k) // s + 1 if x + p >= k else 0
    if hi > n_out:
        hi = n_out
    if lo > hi:
        lo = hi
    return lo, hi


@njit(cache=True, inline="always")
def _window_value(xp, oh, ow, H, W, KH, KW, SH, SW, PH, PW, ptype, cip, zero):
    """One output, any window (clipped to the padding and the data)."""
    h0, h1, nh = _bounds(oh, SH, PH, KH, H)
    w0, w1, nw = _bounds(ow, SW, PW, KW, W)
    if h1 <= h0 or w1 <= w0:
        return zero
    dn = (h1 - h0) * (w1 - w0)
    if ptype == MAX:
        v = _win_max(xp, h0, h1, w0, w1, False, False, _floor(xp))
        if _pad_zero(cip, ptype, dn, KH * KW) and v < zero:
            v = zero
        return v
    v = zero
    for h in range(h0, h1):
        for w in range(w0, w1):
            v += xp[h, w]
    if ptype == AVG:
        v = v / xp.dtype.type(_divisor(cip, 1, nh, nw, dn, KH * KW))
    return v


@njit(cache=True, inline="always")
def _store(op, oh, ow, v, req):
    if req == REQ_ADD:
        op[oh, ow] += v
    else:
        op[oh, ow] = v


@njit(cache=True)
def _plane_max_clamped(x3, out3, q, K, SH, SW, PH, PW, zero, req):
    """One plane of K x K max pooling, K 2 or 3 (not Pooling_v1, whose
    padding zeros take part): each window's rows and columns clamped into
    the data, which repeats border elements instead of leaving them out
    (a repeat does not change a max), so the border outputs take the
    unrolled path too, through unsigned flat offsets.  A window wholly in
    the padding gives 0, as ``_window_value``."""
    H, W = x3.shape[1], x3.shape[2]
    OH, OW = out3.shape[1], out3.shape[2]
    xf = x3[q].reshape(H * W)
    op = out3[q]
    w = np.uintp(W)
    low = _floor(xf)
    for oh in range(OH):
        h0 = oh * SH - PH
        rows = h0 < H and h0 + K > 0
        r0 = _clamped(h0, H) * w
        r1 = _clamped(h0 + 1, H) * w
        r2 = _clamped(h0 + 2, H) * w
        for ow in range(OW):
            w0 = ow * SW - PW
            v = zero
            if rows and w0 < W and w0 + K > 0:
                # a chain from the floor: NaN never enters it (fewer operations
                # than ranking each element for a tree: 146-202 against 217-363 us
                # on ResNet's 16x16 stem map, in one process)
                c0, c1 = _clamped(w0, W), _clamped(w0 + 1, W)
                v = _sel_max(xf[r0 + c1], _sel_max(xf[r0 + c0], low))
                v = _sel_max(xf[r1 + c1], _sel_max(xf[r1 + c0], v))
                if K == 3:
                    c2 = _clamped(w0 + 2, W)
                    v = _sel_max(xf[r1 + c2], _sel_max(xf[r0 + c2], v))
                    v = _sel_max(xf[r2 + c2], _sel_max(xf[r2 + c1], _sel_max(xf[r2 + c0], v)))
            _store(op, oh, ow, v, req)


@njit(cache=True)
def _plane2d_forward(x3, out3, q, KH, KW, SH, SW, PH, PW, ptype, cip, zero, req):
    H, W = x3.shape[1], x3.shape[2]
    OH, OW = out3.shape[1], out3.shape[2]
    xp = x3[q]
    op = out3[q]
    hlo, hhi = _whole_range(OH, SH, PH, KH, H)
    wlo, whi = _whole_range(OW, SW, PW, KW, W)
    sq2 = ptype == MAX and KH == 2 and KW == 2
    sq3 = ptype == MAX and KH == 3 and KW == 3
    low = _floor(xp)
    for oh in range(OH):
        inner = oh >= hlo and oh < hhi and (sq2 or sq3)
        for ow in range(OW):
            if inner and ow == wlo:
                break
            _store(op, oh, ow, _window_value(xp, oh, ow, H, W, KH, KW, SH, SW, PH, PW, ptype,
                                             cip, zero), req)
        if not inner:
            continue
        for ow in range(whi, OW):
            _store(op, oh, ow, _window_value(xp, oh, ow, H, W, KH, KW, SH, SW, PH, PW, ptype,
                                             cip, zero), req)
        h0 = oh * SH - PH
        if sq2:
            for ow in range(wlo, whi):
                _store(op, oh, ow, _win_max(xp, h0, h0 + 2, ow * SW - PW, 0, True, False, low), req)
        else:
            for ow in range(wlo, whi):
                _store(op, oh, ow, _win_max(xp, h0, h0 + 3, ow * SW - PW, 0, False, True, low), req)


def pool2d_forward(x3, out3, KH, KW, SH, SW, PH, PW, ptype, cip, zero, req):
    if req == REQ_NULL:
        return
    for q in prange(x3.shape[0]):
        _plane2d_forward(x3, out3, q, KH, KW, SH, SW, PH, PW, ptype, cip, zero, req)


pool2d_forward, pool2d_forward_parallel = serial_and_parallel(pool2d_forward)


def max_clamped_forward(x3, out3, KH, KW, SH, SW, PH, PW, ptype, cip, zero, req):
    """2x2 / 3x3 max pooling (not Pooling_v1's): every window clamped into
    the data (``_is_clamped_max``), a kernel of its own so that a model with
    only these poolings (LeNet, ResNet) does not compile ``pool2d_forward``."""
    if req == REQ_NULL:
        return
    for q in prange(x3.shape[0]):
        _plane_max_clamped(x3, out3, q, KH, SH, SW, PH, PW, zero, req)


max_clamped_forward, max_clamped_forward_parallel = serial_and_parallel(max_clamped_forward)


def _is_clamped_max(KH, KW, ptype, cip):
    return ptype == MAX and cip != 2 and KH == KW and (KH == 2 or KH == 3)


# Maps at least this wide take ``pooling_rows`` when the pooling runs in
# parallel (2 threads: SqueezeNet's 111- and 55-wide maps and ResNet's 112
# 1.6-2.3x faster); narrower ones keep the window-at-a-time kernel, which
# was faster at 16 and 28 and level at 27 (perf/README.md, 2026-12-07).
ROWS_MIN_WIDTH = 40


def _rows_plan(call):
    """``(nt, OH, L)`` when ``call`` is a parallel clamped max pooling of maps
    wide enough for ``pooling_rows``, else None (prepare and the temp rule
    ask the same question)."""
    is_global, _, _, scalars = pool_params(call, call.in_shapes[0], call.out_shapes[0])
    planes = _plane2d(is_global, scalars)
    if planes is None or _whole_map(scalars) is not None:
        return None
    _, H, W = planes[0]
    _, OH, OW = planes[1]
    KH, KW, SH, SW, PH, PW, ptype, cip, _ = planes[2]
    if (not _is_clamped_max(KH, KW, ptype, cip) or W < ROWS_MIN_WIDTH
            or not _parallel(int(np.prod(call.in_shapes[0])))):
        return None
    return (_threads(), OH, scratch_len(W, OW, KH, SW, PW))


def temp_pooling(call):
    """Pooling's scratch: ``pooling_rows``'s two planes of column maxima per
    thread when it runs (``_rows_plan``), else none."""
    rows = _rows_plan(call)
    if rows is None:
        return []
    nt, oh, n = rows
    return [((nt, 2, oh, n), call.out_dtypes[0])]


@njit(cache=True, inline="always")
def _put_argmax2(xp, dp, h0, w0, g, zero, add):
    """A whole 2x2 max window of disjoint windows: its first maximum (of the
    value the forward's unrolled 2x2 max gives) gets g, the others 0,
    written directly: no zeroing pass, no read-modify-write through a
    computed address, no data-dependent branch."""
    low = _floor(xp)
    a, b = _key(xp[h0, w0], low), _key(xp[h0, w0 + 1], low)
    c, d = _key(xp[h0 + 1, w0], low), _key(xp[h0 + 1, w0 + 1], low)
    m = _sel_max(_sel_max(a, b), _sel_max(c, d))
    ka = a == m
    kb = b == m and not ka
    kc = c == m and not ka and not kb
    kd = not ka and not kb and not kc
    if add:
        dp[h0, w0] += g if ka else zero
        dp[h0, w0 + 1] += g if kb else zero
        dp[h0 + 1, w0] += g if kc else zero
        dp[h0 + 1, w0 + 1] += g if kd else zero
    else:
        dp[h0, w0] = g if ka else zero
        dp[h0, w0 + 1] = g if kb else zero
        dp[h0 + 1, w0] = g if kc else zero
        dp[h0 + 1, w0 + 1] = g if kd else zero


@njit(cache=True, inline="always")
def _later_max(v, i, best, at):
    """(v, i) if v > best else (best, at), as selects: one step of the first
    maximum's search (``_win_argmax``'s order and comparison)."""
    t = v > best
    return (v if t else best), (i if t else at)


@njit(cache=True, inline="always")
def _add_argmax3(xf, df, b, w, g):
    """A whole 3x3 max window starting at flat offset ``b`` of a plane of
    row length ``w`` (both ``np.uintp``: no wrap-around checks): g added at
    its first maximum (``_win_argmax``'s choice), as a chain of selects
    (random data mispredicts branches)."""
    one = np.uintp(1)
    two = one + one
    best, at = _key(xf[b], _floor(xf)), b
    for r in (b, b + w, b + w + w):
        if r != b:
            best, at = _later_max(xf[r], r, best, at)
        best, at = _later_max(xf[r + one], r + one, best, at)
        best, at = _later_max(xf[r + two], r + two, best, at)
    df[at] += g


@njit(cache=True)
def _plane3x3_backward(og3, x3, dx3, q, SH, SW, PH, PW, cip, zero, add):
    """One plane of 3x3 max pooling's gradient (overlapping windows:
    ResNet's stem): the plane zeroed (write), then each output's gradient
    added at its window's first maximum, flat-indexed for the windows
    inside the data (``_add_argmax3``), clipped for the border ones
    (``_scatter_one``'s rule: Pooling_v1's padding zeros take part)."""
    H, W = x3.shape[1], x3.shape[2]
    OH, OW = og3.shape[1], og3.shape[2]
    xp, gp, dp = x3[q], og3[q], dx3[q]
    xf, df = xp.reshape(H * W), dp.reshape(H * W)
    low = _floor(xp)
    if not add:
        for i in range(H * W):
            df[i] = zero
    hlo, hhi = _whole_range(OH, SH, PH, 3, H)
    wlo, whi = _whole_range(OW, SW, PW, 3, W)
    w = np.uintp(W)
    for oh in range(OH):
        h0 = oh * SH - PH
        for ow in range(OW):
            w0 = ow * SW - PW
            if oh >= hlo and oh < hhi and ow >= wlo and ow < whi:
                _add_argmax3(xf, df, np.uintp(h0 * W + w0), w, gp[oh, ow])
                continue
            ha, hb = max(h0, 0), min(h0 + 3, H)
            wa, wb = max(w0, 0), min(w0 + 3, W)
            if hb > ha and wb > wa:
                ah, aw = _win_argmax(xp, ha, hb, wa, wb, low)
                if not (_pad_zero(cip, MAX, (hb - ha) * (wb - wa), 9)
                        and _key(xp[ah, aw], low) < zero):
                    dp[ah, aw] += gp[oh, ow]


@njit(cache=True, inline="always")
def _scatter_one(xp, gp, dp, oh, ow, H, W, KH, KW, SH, SW, PH, PW, ptype, cip):
    """Add output (oh, ow)'s gradient to its window, any window."""
    h0, h1, nh = _bounds(oh, SH, PH, KH, H)
    w0, w1, nw = _bounds(ow, SW, PW, KW, W)
    if h1 <= h0 or w1 <= w0:
        return
    g = gp[oh, ow]
    dn = (h1 - h0) * (w1 - w0)
    if ptype == MAX:
        low = _floor(xp)
        ah, aw = _win_argmax(xp, h0, h1, w0, w1, low)
        if not (_pad_zero(cip, ptype, dn, KH * KW) and _key(xp[ah, aw], low) < xp.dtype.type(0)):
            dp[ah, aw] += g
        return
    if ptype == AVG:
        g = g / xp.dtype.type(_divisor(cip, 1, nh, nw, dn, KH * KW))
    for h in range(h0, h1):
        for w in range(w0, w1):
            dp[h, w] += g


@njit(cache=True)
def _plane2d_backward(og3, x3, dx3, q, KH, KW, SH, SW, PH, PW, ptype, cip, zero, req):
    """One plane: each output's gradient added to its window, into a plane
    zeroed (write) while it is in cache.  2x2 max windows with stride 2
    (disjoint) that lie inside the data are written directly instead, and
    only the rest of the plane is zeroed."""
    H, W = x3.shape[1], x3.shape[2]
    OH, OW = og3.shape[1], og3.shape[2]
    xp = x3[q]
    gp = og3[q]
    dp = dx3[q]
    add = req == REQ_ADD
    hlo, hhi = _whole_range(OH, SH, PH, KH, H)
    wlo, whi = _whole_range(OW, SW, PW, KW, W)
    disjoint2 = ptype == MAX and KH == 2 and KW == 2 and SH == 2 and SW == 2
    r0, r1, c0, c1 = 0, 0, 0, 0      # rows/columns the direct writes cover
    if disjoint2 and hhi > hlo and whi > wlo:
        r0, r1 = hlo * 2 - PH, hhi * 2 - PH
        c0, c1 = wlo * 2 - PW, whi * 2 - PW
    if not add:
        for h in range(H):
            if h < r0 or h >= r1:
                for w in range(W):
                    dp[h, w] = zero
            else:
                for w in range(c0):
                    dp[h, w] = zero
                for w in range(c1, W):
                    dp[h, w] = zero
    for oh in range(OH):
        inner = disjoint2 and oh >= hlo and oh < hhi
        for ow in range(OW):
            if inner and ow == wlo:
                break
            _scatter_one(xp, gp, dp, oh, ow, H, W, KH, KW, SH, SW, PH, PW, ptype, cip)
        if not inner:
            continue
        for ow in range(whi, OW):
            _scatter_one(xp, gp, dp, oh, ow, H, W, KH, KW, SH, SW, PH, PW, ptype, cip)
        h0 = oh * 2 - PH
        if add:
            for ow in range(wlo, whi):
                _put_argmax2(xp, dp, h0, ow * 2 - PW, gp[oh, ow], zero, True)
        else:
            for ow in range(wlo, whi):
                _put_argmax2(xp, dp, h0, ow * 2 - PW, gp[oh, ow], zero, False)


def pool2d_backward(og3, x3, y3, dx3, KH, KW, SH, SW, PH, PW, ptype, cip, zero, req):
    if req == REQ_NULL:
        return
    for q in prange(x3.shape[0]):
        _plane2d_backward(og3, x3, dx3, q, KH, KW, SH, SW, PH, PW, ptype, cip, zero, req)


pool2d_backward, pool2d_backward_parallel = serial_and_parallel(pool2d_backward)


def max3x3_backward(og3, x3, y3, dx3, KH, KW, SH, SW, PH, PW, ptype, cip, zero, req):
    """3x3 max pooling's gradient (``pool2d_backward``'s parameters): a kernel
    of its own, so that only graphs with such a pooling compile it."""
    if req == REQ_NULL:
        return
    for q in prange(x3.shape[0]):
        _plane3x3_backward(og3, x3, dx3, q, SH, SW, PH, PW, cip, zero, req == REQ_ADD)


max3x3_backward, max3x3_backward_parallel = serial_and_parallel(max3x3_backward)


def _plane2d(is_global, scalars):
    """The 2-D planes view ``(views, out views, scalars)`` when the pooling is
    channels-first max/avg/sum over at most 2 spatial axes, else None."""
    if is_global:
        return None
    (N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, cl, ptype, ip, inv_p, cip,
     zero) = scalars
    if cl or ptype == LP or D != 1 or OD != 1 or KD != 1 or PD != 0:
        return None
    return ((N * C, H, W), (N * C, OH, OW), (KH, KW, SH, SW, PH, PW, ptype, cip, zero))


def _whole_map(scalars):
    """Global pooling's ``(view, out view, scalars)`` when a 2-D plane pooling's
    one window is the whole unpadded map (SqueezeNet's ``AvgPool2D(13)``
    head): the same reduction, by rows; else None."""
    (N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, cl, ptype, ip, inv_p, cip,
     zero) = scalars
    if OH != 1 or OW != 1 or KH != H or KW != W or PH != 0 or PW != 0:
        return None
    return (N * C, H * W, 1), (N * C, 1), (ptype, ip, inv_p, zero)


# -- prepare -------------------------------------------------------------------


def prepare_pooling(call):
    is_global, view, oview, scalars = pool_params(call, call.in_shapes[0], call.out_shapes[0])
    big = _parallel(int(np.prod(call.in_shapes[0])))
    planes = _plane2d(is_global, scalars)
    whole = _whole_map(scalars) if planes is not None else None
    if whole is not None:
        return Launch(global_kernels(False, 1, big), whole[2] + (int(call.req[0]),),
                      views=[whole[0], whole[1]])
    if planes is not None:
        KH, KW, SH, SW, PH, PW, ptype, cip, zero = planes[2]
        if _rows_plan(call) is not None:
            return Launch(max_rows_forward_parallel, (KH, SH, SW, PH, PW, zero, int(call.req[0])),
                          views=[planes[0], planes[1], None])
        if _is_clamped_max(KH, KW, ptype, cip):
            fn = max_clamped_forward_parallel if big else max_clamped_forward
        else:
            fn = pool2d_forward_parallel if big else pool2d_forward
        return Launch(fn, planes[2] + (int(call.req[0]),), views=[planes[0], planes[1]])
    if is_global:
        fn = global_kernels(False, view[2], big)
    else:
        fn = pool_forward_parallel if big else pool_forward
    return Launch(fn, scalars + (int(call.req[0]),), views=[view, oview])


def prepare_pooling_backward(call):
    is_global, view, oview, scalars = pool_params(call, call.in_shapes[1], call.in_shapes[0])
    big = _parallel(int(np.prod(call.in_shapes[1])))
    planes = _plane2d(is_global, scalars)
    whole = _whole_map(scalars) if planes is not None else None
    if whole is not None:
        v, ov = whole[0], whole[1]
        return Launch(global_kernels(True, 1, big), whole[2] + (int(call.req[0]),),
                      views=[ov, v, ov, v])
    if planes is not None:
        KH, KW, ptype = planes[2][0], planes[2][1], planes[2][6]
        if ptype == MAX and KH == 3 and KW == 3:
            fn = max3x3_backward_parallel if big else max3x3_backward
        else:
            fn = pool2d_backward_parallel if big else pool2d_backward
        xv, ov = planes[0], planes[1]
        return Launch(fn, planes[2] + (int(call.req[0]),), views=[ov, xv, ov, xv])
    if is_global:
        fn = global_kernels(True, view[2], big)
    else:
        fn = pool_backward_parallel if big else pool_backward
    return Launch(fn, scalars + (int(call.req[0]),), views=[oview, view, oview, view])
