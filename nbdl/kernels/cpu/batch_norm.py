"""CPU kernels for BatchNorm, InstanceNorm, GroupNorm and their gradients.

BatchNorm views the data as ``(outer, C, inner)`` with ``C`` the channel
axis; parameters, moving statistics and the mean/var outputs are ``(C,)``
(the ``var`` output holds the inverse std, as MXNet's CPU operator, and the
gradient reads it back).  Per channel: one pass for the statistics (sums of
the data shifted by the channel's first element, which keeps the variance
free of catastrophic cancellation when the mean is far from 0), then one
pass writing ``x * scale + shift``.  The gradient is one pass for the two
sums and one writing the data gradient.

Where a channel's runs are short (``inner <= ROWS_MAX_INNER``: BatchNorm after a
dense layer, ``inner = 1``, or on the 1x1 to 4x4 maps of a CNN's last
stages) a channel's loop hops across the data and runs inner loops of a few
elements: 70 us for the 64 KB of a (32, 512, 1, 1) batch.  The *rows*
kernels walk each sample's row of ``C * inner`` values in memory order
instead, with a sum (and, for the output pass, the channel's coefficient)
per position in a scratch of ``(4, C * inner)``: the same passes, vectorised
across channels, each thread a block of channels.

InstanceNorm and GroupNorm share kernels: the data is viewed as
``(N, G, J, S)`` (InstanceNorm: ``G = C``, ``J = 1``), the statistics as
``(N, G)``; a row is one ``(n, g)``.  Gamma/beta (and their gradients) are
viewed as ``(G, J)`` when per channel and ``(G, 1)`` when per group
(GroupNorm's MXNet 1.x form); the kernels tell the two apart by that view's
second dimension and read ``gamma[g, j * pj]`` (``pj`` 1 or 0).

The per-channel and per-row functions are plain Python so the CUDA module
compiles the same code as device functions.  Constants come in as typed
scalars (``one``, ``inv_m``) so float32 stays float32."""
from functools import partial
import math

from numba import prange

from ..shared.jit import njit

from ._parallel import serial_and_parallel, twins as _twins, use_parallel as _parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.batch_norm import (STATS_BATCH, bn_apply_scalars, bn_scalars, bn_views,
                                 group_scalars, group_views, py_bn_backward_channel,
                                 py_bn_channel_coef, py_bn_forward_channel, py_bn_grad_coef,
                                 py_bn_grad_inv, py_group_backward_row, py_group_forward_row,
                                 py_group_param)
from ._parallel import chunk, threads


# -- the per-window / per-channel math of kernels/shared, compiled for the CPU --

# ``reassoc`` lets LLVM vectorise a channel's sums (several partial sums, not
# one chain of dependent additions: the statistics and gradient passes were
# bound by the addition latency); ``contract`` fuses x * scale + shift.  NaN
# and inf propagate as before (no ``nnan``/``ninf``).
_SUMS = {"reassoc", "contract"}

_bn_fwd_c = njit(cache=True, inline="always")(py_bn_forward_channel)
_bn_bwd_c = njit(cache=True, inline="always")(py_bn_backward_channel)
_gn_fwd_r = njit(cache=True, inline="always")(py_group_forward_row)
_gn_bwd_r = njit(cache=True, inline="always")(py_group_backward_row)
_gn_param = njit(cache=True, inline="always")(py_group_param)


# -- BatchNorm, BatchNorm_v1, _contrib_BatchNormWithReLU -------------------------
#
# One channel function does all three (``store_var``: v1's variance output;
# ``relu``: the fused ReLU); the entry points differ in their arrays only.

def bn_forward(x, gamma, beta, mm, mv, out, mean, var, eps, mom, one, inv_m,
               fix_gamma, stats, store_var, relu, r_out, r_mean, r_var):
    for c in prange(x.shape[1]):
        _bn_fwd_c(x, gamma, beta, mm, mv, out, mean, var, c, eps, mom, one, inv_m, fix_gamma,
                  stats, store_var, relu, r_out, r_mean, r_var)


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
def bn_relu_forward(x, gamma, beta, mm, mv, out, mean, var, ws, eps, mom, one, inv_m,
                    fix_gamma, stats, store_var, relu, r_out, r_mean, r_var, r_ws):
    bn_forward(x, gamma, beta, mm, mv, out, mean, var, eps, mom, one, inv_m, fix_gamma,
               stats, store_var, relu, r_out, r_mean, r_var)
    _copy_out(out, ws, r_ws)


@njit(cache=True)
def bn_relu_forward_parallel(x, gamma, beta, mm, mv, out, mean, var, ws, eps, mom, one, inv_m,
                             fix_gamma, stats, store_var, relu, r_out, r_mean, r_var, r_ws):
    bn_forward_parallel(x, gamma, beta, mm, mv, out, mean, var, eps, mom, one, inv_m,
                        fix_gamma, stats, store_var, relu, r_out, r_mean, r_var)
    _copy_out(out, ws, r_ws)


def bn_backward(og, x, gamma, mean, st, y, dx, dgamma, dbeta, eps, one, inv_m,
                fix_gamma, use_batch, stored_var, relu, r_x, r_g, r_b):
    for c in prange(x.shape[1]):
        _bn_bwd_c(og, x, gamma, mean, st, y, dx, dgamma, dbeta, c, eps, one, inv_m, fix_gamma,
                  use_batch, stored_var, relu, r_x, r_g, r_b)


bn_backward, bn_backward_parallel = serial_and_parallel(bn_backward, fastmath=_SUMS)


# -- BatchNorm by rows (short channel runs) -----------------------------------------

# the rows kernels for channel runs of at most this many values (measured, 2
# threads: at 16 values (4x4 maps) level with the per-channel loops in parallel,
# 1.7x faster serially; at 4 and 1 value 2-30x faster)
ROWS_MAX_INNER = 16


def bn_forward_rows(x, gamma, beta, mm, mv, out, mean, var, tmp, eps, mom, one, inv_m,
                    fix_gamma, stats, store_var, relu, r_out, r_mean, r_var, nt):
    """``bn_forward`` in memory order (module docstring); ``tmp`` is ``(4, C
    * inner)``: the shift and the two sums per position, then the scale and
    shift; thread ``t`` of ``nt`` takes a block of channels.  (The loops run
    over 1-d slices of the block from 0: indexing the 2-d rows from a
    computed start kept LLVM from vectorising them, 14x slower.)"""
    outer, C, inner = x.shape
    n = C * inner
    x2 = x.reshape((outer, n))
    o2 = out.reshape((outer, n))
    zero = one - one
    batch = stats == STATS_BATCH and outer * inner > 0
    for t in prange(nt):
        c0, c1 = chunk(C, t, nt)
        j0, j1 = c0 * inner, c1 * inner
        w = j1 - j0
        k, s1, s2 = tmp[0, j0:j1], tmp[1, j0:j1], tmp[2, j0:j1]
        if batch:
            first = x2[0, j0:j1]
            for j in range(w):
                k[j] = first[j - j % inner]
                s1[j] = zero
                s2[j] = zero
            for o in range(outer):
                row = x2[o, j0:j1]
                for j in range(w):
                    d = row[j] - k[j]
                    s1[j] += d
                    s2[j] += d * d
        for c in range(c1 - c0):
            a = zero
            b = zero
            kc = zero
            if batch:
                kc = k[c * inner]
                for j in range(c * inner, (c + 1) * inner):
                    a += s1[j]
                    b += s2[j]
            scale, shift = py_bn_channel_coef(c0 + c, a, b, kc, outer * inner, gamma, beta, mm,
                                              mv, mean, var, eps, mom, one, inv_m, fix_gamma,
                                              stats, store_var, r_mean, r_var)
            for j in range(c * inner, (c + 1) * inner):
                s1[j] = scale
                s2[j] = shift
        if r_out != REQ_NULL:
            for o in range(outer):
                row = x2[o, j0:j1]
                dst = o2[o, j0:j1]
                for j in range(w):
                    val = row[j] * s1[j] + s2[j]
                    if relu and val < zero:
                        val = zero
                    if r_out == REQ_ADD:
                        dst[j] += val
                    else:
                        dst[j] = val


bn_forward_rows, bn_forward_rows_parallel = serial_and_parallel(bn_forward_rows,
                                                                fastmath=_SUMS)


@njit(cache=True)
def bn_relu_forward_rows(x, gamma, beta, mm, mv, out, mean, var, ws, tmp, eps, mom, one, inv_m,
                         fix_gamma, stats, store_var, relu, r_out, r_mean, r_var, r_ws, nt):
    bn_forward_rows(x, gamma, beta, mm, mv, out, mean, var, tmp, eps, mom, one, inv_m,
                    fix_gamma, stats, store_var, relu, r_out, r_mean, r_var, nt)
    _copy_out(out, ws, r_ws)


@njit(cache=True)
def bn_relu_forward_rows_parallel(x, gamma, beta, mm, mv, out, mean, var, ws, tmp, eps, mom,
                                  one, inv_m, fix_gamma, stats, store_var, relu, r_out, r_mean,
                                  r_var, r_ws, nt):
    bn_forward_rows_parallel(x, gamma, beta, mm, mv, out, mean, var, tmp, eps, mom, one, inv_m,
                             fix_gamma, stats, store_var, relu, r_out, r_mean, r_var, nt)
    _copy_out(out, ws, r_ws)


def bn_backward_rows(og, x, gamma, mean, st, y, dx, dgamma, dbeta, tmp, eps, one, inv_m,
                     fix_gamma, use_batch, stored_var, relu, r_x, r_g, r_b, nt):
    """``bn_backward`` in memory order; ``tmp`` is ``(4, C * inner)``: the
    mean and the two sums per position, then the channel's ``a``, ``mb``
    and ``inv * mg`` (``py_bn_grad_coef``)."""
    outer, C, inner = x.shape
    n = C * inner
    og2 = og.reshape((outer, n))
    x2 = x.reshape((outer, n))
    y2 = y.reshape((outer, y.size // max(outer, 1)))
    dx2 = dx.reshape((outer, n))
    zero = one - one
    for t in prange(nt):
        c0, c1 = chunk(C, t, nt)
        j0, j1 = c0 * inner, c1 * inner
        w = j1 - j0
        mj, sb, sg, q = tmp[0, j0:j1], tmp[1, j0:j1], tmp[2, j0:j1], tmp[3, j0:j1]
        for j in range(w):
            mj[j] = mean[c0 + j // inner]
            sb[j] = zero
            sg[j] = zero
        for o in range(outer):
            grow = og2[o, j0:j1]
            xrow = x2[o, j0:j1]
            yrow = y2[o, j0:j1]
            for j in range(w):
                g = grow[j]
                if relu and not yrow[j] > zero:
                    g = zero
                sb[j] += g
                sg[j] += g * (xrow[j] - mj[j])
        for c in range(c1 - c0):
            b = zero
            s = zero
            for j in range(c * inner, (c + 1) * inner):
                b += sb[j]
                s += sg[j]
            inv = py_bn_grad_inv(c0 + c, st, eps, one, stored_var)
            a, mb, mg = py_bn_grad_coef(c0 + c, b, s, inv, gamma, dgamma, dbeta, one, inv_m,
                                        fix_gamma, use_batch, r_g, r_b)
            for j in range(c * inner, (c + 1) * inner):
                sb[j] = a
                sg[j] = mb
                q[j] = inv * mg
        if r_x != REQ_NULL:
            for o in range(outer):
                grow = og2[o, j0:j1]
                xrow = x2[o, j0:j1]
                yrow = y2[o, j0:j1]
                dst = dx2[o, j0:j1]
                for j in range(w):
                    g = grow[j]
                    if relu and not yrow[j] > zero:
                        g = zero
                    val = sb[j] * (g - sg[j] - (xrow[j] - mj[j]) * q[j])
                    if r_x == REQ_ADD:
                        dst[j] += val
                    else:
                        dst[j] = val


bn_backward_rows, bn_backward_rows_parallel = serial_and_parallel(bn_backward_rows,
                                                                  fastmath=_SUMS)


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


def _pick(data, serial, parallel):
    return parallel if _parallel(math.prod(data)) and data[1] > 1 else serial


def _by_rows(data):
    """Whether BatchNorm on the view ``data`` runs the rows kernels."""
    return data[2] <= ROWS_MAX_INNER


def _rows(data, serial, parallel):
    """(kernel, threads) of the rows kernels for the view ``data``."""
    nt = min(threads(), data[1]) if _parallel(math.prod(data)) and data[1] > 1 else 1
    return (parallel if nt > 1 else serial), nt


def _rows_temp(data, dtype):
    return [((4, data[1] * data[2]), dtype)] if _by_rows(data) else []


def temp_batch_norm(call):
    """The rows kernels' scratch (``(4, C * inner)``), none for the per-channel ones."""
    return _rows_temp(bn_views(call, call.in_shapes[0])[0], call.in_dtypes[0])


def temp_batch_norm_backward(call):
    """As ``temp_batch_norm``, for the gradient (the data is input 1)."""
    return _rows_temp(bn_views(call, call.in_shapes[1])[0], call.in_dtypes[1])


def prepare_batch_norm(call):
    """BatchNorm and BatchNorm_v1 (one kernel), _contrib_BatchNormWithReLU (a
    4th output, ``workspace``)."""
    data, param = bn_views(call, call.in_shapes[0])
    views = [data, param, param, param, param, data, param, param]
    scalars = bn_scalars(call, data, True)
    head, reqs = scalars[:7], scalars[7:]
    relu = len(call.out_shapes) == 4
    if _by_rows(data):
        tmp = [(4, data[1] * data[2])]
        if relu:
            fn, nt = _rows(data, bn_relu_forward_rows, bn_relu_forward_rows_parallel)
            return Launch(fn, head + (True,) + reqs + (nt,), views=views + [data] + tmp)
        fn, nt = _rows(data, bn_forward_rows, bn_forward_rows_parallel)
        return Launch(fn, head + (False,) + reqs + (nt,), views=views + tmp)
    if relu:
        return Launch(_pick(data, bn_relu_forward, bn_relu_forward_parallel),
                      head + (True,) + reqs, views=views + [data])
    return Launch(_pick(data, bn_forward, bn_forward_parallel), head + (False,) + reqs,
                  views=views)


def prepare_batch_norm_apply(call):
    """``_nbdl_BatchNorm_apply``: the forward's kernel on the saved statistics
    (STATS_SAVED: its mean and var arrays are the given mean and invstd)."""
    data, param = bn_views(call, call.in_shapes[0])
    scalars = bn_apply_scalars(call)
    views = [data, param, param, param, param, data]
    args = (0, 1, 2, 3, 4, 5, 3, 4)
    if _by_rows(data):
        fn, nt = _rows(data, bn_forward_rows, bn_forward_rows_parallel)
        return Launch(fn, scalars[:7] + (False,) + scalars[7:] + (nt,),
                      views=views + [(4, data[1] * data[2])], args=args + (6,))
    return Launch(_pick(data, bn_forward, bn_forward_parallel),
                  scalars[:7] + (False,) + scalars[7:], views=views, args=args)


def prepare_batch_norm_backward(call):
    """The three ops' gradients (one kernel); BatchNormWithReLU's takes the
    forward output as a 6th input, the others pass the head gradient in its
    place (unread)."""
    data, param = bn_views(call, call.in_shapes[1])
    scalars = bn_scalars(call, data, False)
    head, reqs = scalars[:6], scalars[6:]
    relu = len(call.in_shapes) == 6
    views = [data, data, param, param, param] + ([data] if relu else []) + \
        [data, param, param]
    args = None if relu else (0, 1, 2, 3, 4, 0, 5, 6, 7)
    if _by_rows(data):
        fn, nt = _rows(data, bn_backward_rows, bn_backward_rows_parallel)
        views.append((4, data[1] * data[2]))
        args = args if args is None else args + (8,)
        return Launch(fn, head + (relu,) + reqs + (nt,), views=views, args=args)
    fn = _pick(data, bn_backward, bn_backward_parallel)
    return Launch(fn, head + (relu,) + reqs, views=views, args=args)


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
_twins((bn_relu_forward_parallel, bn_relu_forward),
       (bn_relu_forward_rows_parallel, bn_relu_forward_rows))
