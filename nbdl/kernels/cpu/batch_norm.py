"""CPU kernels for BatchNorm, InstanceNorm and GroupNorm and their gradients.

BatchNorm views the data as ``(outer, C, inner)`` with ``C`` the channel
axis; parameters, moving statistics and the mean/var outputs are ``(C,)``
(the ``var`` output holds the inverse std, as MXNet's CPU operator, and the
gradient reads it back).  The statistics are sums of the data shifted by
each channel's first element (which keeps the variance free of catastrophic
cancellation when the mean is far from 0); the output is ``x * scale +
shift``; the gradient is one pass for two sums and one writing the data
gradient.

The BatchNorm kernels walk the data in memory order, each sample's row of
``C * inner`` values, a block of channels a thread, with the sums and then
the coefficients in a scratch ``tmp``: per channel (``(4, C)``) where a
channel's run is long, held in registers over the run; per position
(``(4, C * inner)``) where runs are short (``inner <= ROWS_MAX_INNER``:
BatchNorm after a dense layer, CNN maps of 4x4 and less), so that the loops
run across channels and vectorise.  (The CPU ran a loop per channel over
its runs before: forward + backward of the 64 KB of a (32, 512, 1, 1) batch
took 75 + 110 us, now 20 + 17 us; of a (512, 2048) batch 10.3 ms, now
0.9 ms; 2 threads.)  The loops index 1-d slices of a block from 0, or
with unsigned offsets (indexing the 2-d rows from a computed signed start
kept LLVM from vectorising them: 14x slower).

InstanceNorm and GroupNorm share kernels: the data is viewed as
``(N, G, J, S)`` (InstanceNorm: ``G = C``, ``J = 1``), the statistics as
``(N, G)``; a row is one ``(n, g)``.  Gamma/beta (and their gradients) are
viewed as ``(G, J)`` when per channel and ``(G, 1)`` when per group
(GroupNorm's MXNet 1.x form); the kernels tell the two apart by that view's
second dimension and read ``gamma[g, j * pj]`` (``pj`` 1 or 0).

BatchNorm's per-channel coefficients and the GroupNorm per-row functions
are ``kernels.shared.batch_norm``'s, which the CUDA module compiles too.
Constants come in as typed scalars (``one``, ``inv_m``) so float32 stays
float32."""
from functools import partial
import math

import numpy as np

from numba import prange

from ..shared.jit import njit

from ._parallel import (chunk, serial_and_parallel, threads, twins as _twins,
                        use_parallel as _parallel)
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.batch_norm import (STATS_BATCH, bn_apply_scalars, bn_scalars, bn_views,
                                 group_scalars, group_views, py_bn_channel_coef, py_bn_grad_coef,
                                 py_bn_grad_inv, py_group_backward_row, py_group_forward_row,
                                 py_group_param)


# -- the per-row math of kernels/shared, compiled for the CPU ------------------------

# ``reassoc`` lets LLVM vectorise the sums (several partial sums, not one
# chain of dependent additions: the statistics and gradient passes were bound
# by the addition latency); ``contract`` fuses x * scale + shift.  NaN and inf
# propagate as before (no ``nnan``/``ninf``).
_SUMS = {"reassoc", "contract"}

_bn_coef = njit(cache=True, inline="always")(py_bn_channel_coef)
_bn_grad_coef = njit(cache=True, inline="always")(py_bn_grad_coef)
_bn_grad_inv = njit(cache=True, inline="always")(py_bn_grad_inv)
_gn_fwd_r = njit(cache=True, inline="always")(py_group_forward_row)
_gn_bwd_r = njit(cache=True, inline="always")(py_group_backward_row)
_gn_param = njit(cache=True, inline="always")(py_group_param)


# -- BatchNorm, BatchNorm_v1, _contrib_BatchNormWithReLU -------------------------
#
# One kernel does all three (``store_var``: v1's variance output; ``relu``: the
# fused ReLU); the entry points differ in their arrays only.

# per-position sums for channel runs of at most this many values (measured, 2
# threads: at 16 values (4x4 maps) level with per-channel sums, at 4 and 1
# value 2-3x faster; at 64 and more per-channel sums are faster)
ROWS_MAX_INNER = 16


@njit(cache=True, inline="always")
def _put(to, i, val, zero, relu, req):
    """``to[i]`` (=|+=) ``val``, clamped at 0 with ``relu`` (NaN passes)."""
    if relu and val < zero:
        val = zero
    if req == REQ_ADD:
        to[i] += val
    else:
        to[i] = val


@njit(cache=True, inline="always")
def _masked(g, y, zero, relu):
    """The head gradient ``g``, 0 with ``relu`` where the output ``y`` is not positive."""
    return zero if relu and not y > zero else g


@njit(cache=True, inline="always")
def _block(C, inner, t, nt, short):
    """Thread ``t``'s block of ``nt``: channels ``[c0, c1)``, their positions
    ``[j0, j1)`` in a row, and the span ``[a0, a1)`` of the scratch it owns
    (its positions for per-position sums, else its channels)."""
    c0, c1 = chunk(C, t, nt)
    j0, j1 = c0 * inner, c1 * inner
    a0, a1 = (j0, j1) if short else (c0, c1)
    return c0, c1, j0, j1, a0, a1


@njit(cache=True, inline="always")
def _channel_sums(p, r, c, inner, short, zero):
    """Channel ``c``'s span ``[u0, u1)`` in a block's scratch (its positions,
    or its one entry) and the totals of the partial sums ``p`` and ``r`` there."""
    u0, u1 = (c * inner, (c + 1) * inner) if short else (c, c + 1)
    a = zero
    b = zero
    for j in range(u0, u1):
        a += p[j]
        b += r[j]
    return u0, u1, a, b


def bn_forward(x, gamma, beta, mm, mv, out, mean, var, tmp, eps, mom, one, inv_m, fix_gamma,
               stats, store_var, relu, r_out, r_mean, r_var, nt):
    """Statistics (batch, saved or moving: ``py_bn_channel_coef``) and
    ``out = x * scale + shift`` (clamped at 0 with ``relu``; NaN passes);
    ``tmp`` as ``bn_temp``; thread ``t`` of ``nt`` takes a block of channels."""
    outer, C, inner = x.shape
    x2 = x.reshape((outer, C * inner))
    o2 = out.reshape((outer, C * inner))
    zero = one - one
    batch = stats == STATS_BATCH and outer * inner > 0
    short = inner <= ROWS_MAX_INNER
    ui = np.uintp(inner)              # unsigned offsets: no wrap-around checks
    for t in prange(nt):
        c0, c1, j0, j1, a0, a1 = _block(C, inner, t, nt, short)
        nc, w = c1 - c0, j1 - j0
        k, s1, s2 = tmp[0, a0:a1], tmp[1, a0:a1], tmp[2, a0:a1]
        if batch:
            first = x2[0, j0:j1]
            for j in range(a1 - a0):
                k[j] = first[j - j % inner] if short else first[j * inner]
                s1[j] = zero
                s2[j] = zero
            for o in range(outer):
                row = x2[o, j0:j1]
                if short:
                    for j in range(w):
                        d = row[j] - k[j]
                        s1[j] += d
                        s2[j] += d * d
                    continue
                for c in range(nc):
                    base = np.uintp(c) * ui
                    kc = k[c]
                    a = zero
                    b = zero
                    for i in range(ui):
                        d = row[base + i] - kc
                        a += d
                        b += d * d
                    s1[c] += a
                    s2[c] += b
        for c in range(nc):
            u0, u1, a, b = _channel_sums(s1, s2, c, inner, short, zero)
            scale, shift = _bn_coef(c0 + c, a, b, k[u0] if batch else zero, outer * inner,
                                    gamma, beta, mm, mv, mean, var, eps, mom, one, inv_m,
                                    fix_gamma, stats, store_var, r_mean, r_var)
            for j in range(u0, u1):
                s1[j] = scale
                s2[j] = shift
        for o in range(outer if r_out != REQ_NULL else 0):
            row = x2[o, j0:j1]
            dst = o2[o, j0:j1]
            if short:
                for j in range(w):
                    _put(dst, j, row[j] * s1[j] + s2[j], zero, relu, r_out)
                continue
            for c in range(nc):
                base = np.uintp(c) * ui
                sc = s1[c]
                sh = s2[c]
                for i in range(ui):
                    _put(dst, base + i, row[base + i] * sc + sh, zero, relu, r_out)


bn_forward, bn_forward_parallel = serial_and_parallel(bn_forward, fastmath=_SUMS)


@njit(cache=True)
def _copy_out(out, ws, r_ws):
    """BatchNormWithReLU's ``workspace`` output: a copy of the output (MXNet's
    MKL-DNN kernel keeps its own scratch there)."""
    if r_ws != REQ_NULL:
        o = out.reshape(out.size)
        w = ws.reshape(ws.size)
        for i in range(w.size):
            if r_ws == REQ_ADD:
                w[i] += o[i]
            else:
                w[i] = o[i]


@njit(cache=True)
def bn_relu_forward(x, gamma, beta, mm, mv, out, mean, var, ws, tmp, eps, mom, one, inv_m,
                    fix_gamma, stats, store_var, relu, r_out, r_mean, r_var, r_ws, nt):
    bn_forward(x, gamma, beta, mm, mv, out, mean, var, tmp, eps, mom, one, inv_m, fix_gamma,
               stats, store_var, relu, r_out, r_mean, r_var, nt)
    _copy_out(out, ws, r_ws)


@njit(cache=True)
def bn_relu_forward_parallel(x, gamma, beta, mm, mv, out, mean, var, ws, tmp, eps, mom, one,
                             inv_m, fix_gamma, stats, store_var, relu, r_out, r_mean, r_var,
                             r_ws, nt):
    bn_forward_parallel(x, gamma, beta, mm, mv, out, mean, var, tmp, eps, mom, one, inv_m,
                        fix_gamma, stats, store_var, relu, r_out, r_mean, r_var, nt)
    _copy_out(out, ws, r_ws)


def bn_backward(og, x, gamma, mean, st, y, dx, dgamma, dbeta, tmp, eps, one, inv_m, fix_gamma,
                use_batch, stored_var, relu, r_x, r_g, r_b, nt):
    """The data, gamma and beta gradients; ``st`` holds the inverse std, or
    the variance (``stored_var``: BatchNorm_v1); with ``relu`` the head
    gradient only flows where the forward output ``y`` is positive.
    ``tmp`` as ``bn_temp``: the mean and the two sums, then the channel's
    ``a``, ``mb`` and ``inv * mg`` (``py_bn_grad_coef``)."""
    outer, C, inner = x.shape
    og2 = og.reshape((outer, C * inner))
    x2 = x.reshape((outer, C * inner))
    y2 = y.reshape((outer, y.size // max(outer, 1)))
    dx2 = dx.reshape((outer, C * inner))
    zero = one - one
    short = inner <= ROWS_MAX_INNER
    ui = np.uintp(inner)
    for t in prange(nt):
        c0, c1, j0, j1, a0, a1 = _block(C, inner, t, nt, short)
        nc, w = c1 - c0, j1 - j0
        mj, sb, sg, q = tmp[0, a0:a1], tmp[1, a0:a1], tmp[2, a0:a1], tmp[3, a0:a1]
        for j in range(a1 - a0):
            mj[j] = mean[c0 + j // inner] if short else mean[c0 + j]
            sb[j] = zero
            sg[j] = zero
        for o in range(outer):
            grow, xrow, yrow = og2[o, j0:j1], x2[o, j0:j1], y2[o, j0:j1]
            if short:
                for j in range(w):
                    g = _masked(grow[j], yrow[j], zero, relu)
                    sb[j] += g
                    sg[j] += g * (xrow[j] - mj[j])
                continue
            for c in range(nc):
                base = np.uintp(c) * ui
                m = mj[c]
                b = zero
                s = zero
                for i in range(ui):
                    g = _masked(grow[base + i], yrow[base + i], zero, relu)
                    b += g
                    s += g * (xrow[base + i] - m)
                sb[c] += b
                sg[c] += s
        for c in range(nc):
            u0, u1, b, s = _channel_sums(sb, sg, c, inner, short, zero)
            inv = _bn_grad_inv(c0 + c, st, eps, one, stored_var)
            a, mb, mg = _bn_grad_coef(c0 + c, b, s, inv, gamma, dgamma, dbeta, one, inv_m,
                                      fix_gamma, use_batch, r_g, r_b)
            for j in range(u0, u1):
                sb[j] = a
                sg[j] = mb
                q[j] = inv * mg
        for o in range(outer if r_x != REQ_NULL else 0):
            grow, xrow, yrow, drow = og2[o, j0:j1], x2[o, j0:j1], y2[o, j0:j1], dx2[o, j0:j1]
            if short:
                for j in range(w):
                    g = _masked(grow[j], yrow[j], zero, relu)
                    _put(drow, j, sb[j] * (g - sg[j] - (xrow[j] - mj[j]) * q[j]), zero, False,
                         r_x)
                continue
            for c in range(nc):
                base = np.uintp(c) * ui
                a, mb, m, f = sb[c], sg[c], mj[c], q[c]
                for i in range(ui):
                    g = _masked(grow[base + i], yrow[base + i], zero, relu)
                    _put(drow, base + i, a * (g - mb - (xrow[base + i] - m) * f), zero, False,
                         r_x)


bn_backward, bn_backward_parallel = serial_and_parallel(bn_backward, fastmath=_SUMS)


# -- InstanceNorm / GroupNorm ------------------------------------------------------

def group_forward(x, gamma, beta, out, mean, st, eps, one, inv_m, store_std, r_out,
                  r_mean, r_st):
    G = x.shape[1]
    for r in prange(x.shape[0] * G):
        n = r // G
        _gn_fwd_r(x, gamma, beta, out, mean, st, n, r - n * G, eps, one, inv_m, store_std,
                  r_out, r_mean, r_st)


group_forward, group_forward_parallel = serial_and_parallel(group_forward)


def group_backward(og, x, gamma, mean, st, dx, dgamma, dbeta, eps, one, inv_m, is_std,
                   r_x, r_g, r_b):
    G = x.shape[1]
    P = dgamma.shape[1]
    if r_x != REQ_NULL:
        for r in prange(x.shape[0] * G):
            n = r // G
            _gn_bwd_r(og, x, gamma, mean, st, dx, n, r - n * G, eps, one, inv_m, is_std,
                      r_x == REQ_ADD)
    if r_g != REQ_NULL or r_b != REQ_NULL:
        for q in prange(G * P):
            g = q // P
            _gn_param(og, x, mean, st, dgamma, dbeta, g, q - g * P, eps, one, is_std, r_g, r_b)


group_backward, group_backward_parallel = serial_and_parallel(group_backward)


# -- prepare -------------------------------------------------------------------


def _bn_kernel(data, serial, parallel):
    """(kernel, blocks of channels) for the view ``data``."""
    nt = min(threads(), data[1]) if _parallel(math.prod(data)) and data[1] > 1 else 1
    return (parallel if nt > 1 else serial), nt


def bn_temp(data):
    """Shape of the BatchNorm kernels' scratch for the view ``data``: ``(4,
    C * inner)`` for per-position sums (``inner <= ROWS_MAX_INNER``), else
    ``(4, C)``."""
    _, C, inner = data
    return (4, C * inner if inner <= ROWS_MAX_INNER else C)


def temp_batch_norm(call):
    """The forward's scratch (``bn_temp``) in the data's dtype."""
    return [(bn_temp(bn_views(call, call.in_shapes[0])[0]), call.in_dtypes[0])]


def temp_batch_norm_backward(call):
    """The gradient's scratch (``bn_temp``; the data is input 1)."""
    return [(bn_temp(bn_views(call, call.in_shapes[1])[0]), call.in_dtypes[1])]


def prepare_batch_norm(call):
    """BatchNorm and BatchNorm_v1 (one kernel), _contrib_BatchNormWithReLU (a
    4th output, ``workspace``); the arrays end with the scratch."""
    data, param = bn_views(call, call.in_shapes[0])
    views = [data, param, param, param, param, data, param, param]
    scalars = bn_scalars(call, data, True)
    head, reqs = scalars[:7], scalars[7:]
    if len(call.out_shapes) == 4:
        fn, nt = _bn_kernel(data, bn_relu_forward, bn_relu_forward_parallel)
        return Launch(fn, head + (True,) + reqs + (nt,), views=views + [data, bn_temp(data)])
    fn, nt = _bn_kernel(data, bn_forward, bn_forward_parallel)
    return Launch(fn, head + (False,) + reqs + (nt,), views=views + [bn_temp(data)])


def prepare_batch_norm_apply(call):
    """``_nbdl_BatchNorm_apply``: the forward's kernel on the saved statistics
    (STATS_SAVED: its mean and var arrays are the given mean and invstd)."""
    data, param = bn_views(call, call.in_shapes[0])
    scalars = bn_apply_scalars(call)
    fn, nt = _bn_kernel(data, bn_forward, bn_forward_parallel)
    return Launch(fn, scalars[:7] + (False,) + scalars[7:] + (nt,),
                  views=[data, param, param, param, param, data, bn_temp(data)],
                  args=(0, 1, 2, 3, 4, 5, 3, 4, 6))


def prepare_batch_norm_backward(call):
    """The three ops' gradients (one kernel); BatchNormWithReLU's takes the
    forward output as a 6th input, the others pass the head gradient in its
    place (unread)."""
    data, param = bn_views(call, call.in_shapes[1])
    scalars = bn_scalars(call, data, False)
    head, reqs = scalars[:6], scalars[6:]
    fn, nt = _bn_kernel(data, bn_backward, bn_backward_parallel)
    scal = head + (len(call.in_shapes) == 6,) + reqs + (nt,)
    if len(call.in_shapes) == 6:
        return Launch(fn, scal, views=[data, data, param, param, param, data, data, param,
                                       param, bn_temp(data)])
    return Launch(fn, scal, views=[data, data, param, param, param, data, param, param,
                                   bn_temp(data)],
                  args=(0, 1, 2, 3, 4, 0, 5, 6, 7, 8))


def _group_forward(call, is_std):
    data, param, stat = group_views(call, call.in_shapes[0], call.in_shapes[1])
    fn = group_forward_parallel if _parallel(math.prod(data)) else group_forward
    return Launch(fn, group_scalars(call, data, is_std),
                  views=[data, param, param, data, stat, stat])


def _group_backward(call, is_std):
    data, param, stat = group_views(call, call.in_shapes[1], call.in_shapes[2])
    fn = group_backward_parallel if _parallel(math.prod(data)) else group_backward
    return Launch(fn, group_scalars(call, data, is_std),
                  views=[data, data, param, stat, stat, data, param, param])


prepare_instance_norm = partial(_group_forward, is_std=False)
prepare_instance_norm_backward = partial(_group_backward, is_std=False)
prepare_group_norm = partial(_group_forward, is_std=True)
prepare_group_norm_backward = partial(_group_backward, is_std=True)


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((bn_relu_forward_parallel, bn_relu_forward))
