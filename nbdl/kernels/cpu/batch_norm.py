"""CPU kernels for BatchNorm, InstanceNorm, GroupNorm and their gradients.

BatchNorm views the data as ``(outer, C, inner)`` with ``C`` the channel
axis; parameters, moving statistics and the mean/var outputs are ``(C,)``
(the ``var`` output holds the inverse std, as MXNet's CPU operator, and the
gradient reads it back).  Per channel: one pass for the statistics (sums of
the data shifted by the channel's first element, which keeps the variance
free of catastrophic cancellation when the mean is far from 0), then one
pass writing ``x * scale + shift``.  The gradient is one pass for the two
sums and one writing the data gradient.

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
from ..shared.batch_norm import (bn_apply_scalars, bn_scalars, bn_views, group_scalars,
                                 group_views, py_bn_backward_channel, py_bn_forward_channel,
                                 py_group_backward_row, py_group_forward_row, py_group_param)


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


def prepare_batch_norm(call):
    """BatchNorm and BatchNorm_v1 (one kernel), _contrib_BatchNormWithReLU (a
    4th output, ``workspace``)."""
    data, param = bn_views(call, call.in_shapes[0])
    views = [data, param, param, param, param, data, param, param]
    scalars = bn_scalars(call, data, True)
    head, reqs = scalars[:7], scalars[7:]
    if len(call.out_shapes) == 4:
        return Launch(_pick(data, bn_relu_forward, bn_relu_forward_parallel),
                      head + (True,) + reqs, views=views + [data])
    return Launch(_pick(data, bn_forward, bn_forward_parallel), head + (False,) + reqs,
                  views=views)


def prepare_batch_norm_apply(call):
    """``_nbdl_BatchNorm_apply``: the forward's kernel on the saved statistics
    (STATS_SAVED: its mean and var arrays are the given mean and invstd)."""
    data, param = bn_views(call, call.in_shapes[0])
    scalars = bn_apply_scalars(call)
    return Launch(_pick(data, bn_forward, bn_forward_parallel),
                  scalars[:7] + (False,) + scalars[7:],
                  views=[data, param, param, param, param, data],
                  args=(0, 1, 2, 3, 4, 5, 3, 4))


def prepare_batch_norm_backward(call):
    """The three ops' gradients (one kernel); BatchNormWithReLU's takes the
    forward output as a 6th input, the others pass the head gradient in its
    place (unread)."""
    data, param = bn_views(call, call.in_shapes[1])
    scalars = bn_scalars(call, data, False)
    head, reqs = scalars[:6], scalars[6:]
    fn = _pick(data, bn_backward, bn_backward_parallel)
    if len(call.in_shapes) == 6:
        return Launch(fn, head + (True,) + reqs,
                      views=[data, data, param, param, param, data, data, param, param])
    return Launch(fn, head + (False,) + reqs,
                  views=[data, data, param, param, param, data, param, param],
                  args=(0, 1, 2, 3, 4, 0, 5, 6, 7))


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
