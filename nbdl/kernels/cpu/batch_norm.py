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
import math

import numpy as np
from numba import njit, prange

from ...ops.batch_norm import bn_axis, group_dims
from ._parallel import twins as _twins, use_parallel as _parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch


# -- shared code (plain Python; compiled by njit here, cuda.jit there) ------------

def py_bn_forward_channel(x, gamma, beta, mm, mv, out, mean, var, c, eps, mom, one, inv_m,
                          fix_gamma, use_batch, r_out, r_mean, r_var):
    outer = x.shape[0]
    inner = x.shape[2]
    zero = one - one
    if use_batch:
        m = zero
        v = zero
        if outer * inner > 0:
            k = x[0, c, 0]
            s1 = zero
            s2 = zero
            for o in range(outer):
                for i in range(inner):
                    d = x[o, c, i] - k
                    s1 += d
                    s2 += d * d
            d = s1 * inv_m
            m = k + d
            v = s2 * inv_m - d * d
            if v < zero:
                v = zero
            mm[c] = mm[c] * mom + m * (one - mom)
            mv[c] = mv[c] * mom + v * (one - mom)
    else:
        m = mm[c]
        v = mv[c]
    inv = one / math.sqrt(v + eps)
    g = one if fix_gamma else gamma[c]
    scale = g * inv
    shift = beta[c] - m * scale
    if r_out == REQ_ADD:
        for o in range(outer):
            for i in range(inner):
                out[o, c, i] += x[o, c, i] * scale + shift
    elif r_out != REQ_NULL:
        for o in range(outer):
            for i in range(inner):
                out[o, c, i] = x[o, c, i] * scale + shift
    if r_mean == REQ_ADD:
        mean[c] += m
    elif r_mean != REQ_NULL:
        mean[c] = m
    if r_var == REQ_ADD:
        var[c] += inv
    elif r_var != REQ_NULL:
        var[c] = inv


def py_bn_backward_channel(og, x, gamma, mean, invstd, dx, dgamma, dbeta, c, one, inv_m,
                           fix_gamma, use_batch, r_x, r_g, r_b):
    outer = x.shape[0]
    inner = x.shape[2]
    zero = one - one
    m = mean[c]
    inv = invstd[c]
    sb = zero
    sg = zero
    for o in range(outer):
        for i in range(inner):
            g = og[o, c, i]
            sb += g
            sg += g * (x[o, c, i] - m)
    sg = sg * inv                      # sum of og * xhat
    gm = one if fix_gamma else gamma[c]
    a = gm * inv
    if r_x != REQ_NULL:
        mb = zero
        mg = zero
        if use_batch:
            mb = sb * inv_m
            mg = sg * inv_m
        for o in range(outer):
            for i in range(inner):
                val = a * (og[o, c, i] - mb - (x[o, c, i] - m) * inv * mg)
                if r_x == REQ_ADD:
                    dx[o, c, i] += val
                else:
                    dx[o, c, i] = val
    if fix_gamma:
        sg = zero
    if r_g == REQ_ADD:
        dgamma[c] += sg
    elif r_g != REQ_NULL:
        dgamma[c] = sg
    if r_b == REQ_ADD:
        dbeta[c] += sb
    elif r_b != REQ_NULL:
        dbeta[c] = sb


def py_group_forward_row(x, gamma, beta, out, mean, st, n, g, eps, one, inv_m, store_std,
                         r_out, r_mean, r_st):
    J = x.shape[2]
    S = x.shape[3]
    pj = 1 if gamma.shape[1] == J else 0
    zero = one - one
    m = zero
    v = zero
    if J * S > 0:
        k = x[n, g, 0, 0]
        s1 = zero
        s2 = zero
        for j in range(J):
            for s in range(S):
                d = x[n, g, j, s] - k
                s1 += d
                s2 += d * d
        d = s1 * inv_m
        m = k + d
        v = s2 * inv_m - d * d
        if v < zero:
            v = zero
    sd = math.sqrt(v + eps)
    inv = one / sd
    if r_out != REQ_NULL:
        for j in range(J):
            sc = gamma[g, j * pj] * inv
            sh = beta[g, j * pj] - m * sc
            if r_out == REQ_ADD:
                for s in range(S):
                    out[n, g, j, s] += x[n, g, j, s] * sc + sh
            else:
                for s in range(S):
                    out[n, g, j, s] = x[n, g, j, s] * sc + sh
    w = sd if store_std else v
    if r_mean == REQ_ADD:
        mean[n, g] += m
    elif r_mean != REQ_NULL:
        mean[n, g] = m
    if r_st == REQ_ADD:
        st[n, g] += w
    elif r_st != REQ_NULL:
        st[n, g] = w


def py_group_backward_row(og, x, gamma, mean, st, dx, n, g, eps, one, inv_m, is_std, add):
    J = x.shape[2]
    S = x.shape[3]
    pj = 1 if gamma.shape[1] == J else 0
    zero = one - one
    m = mean[n, g]
    if is_std:
        inv = one / st[n, g]
    else:
        inv = one / math.sqrt(st[n, g] + eps)
    s1 = zero
    s2 = zero
    for j in range(J):
        for s in range(S):
            gg = og[n, g, j, s] * gamma[g, j * pj]
            s1 += gg
            s2 += gg * (x[n, g, j, s] - m)
    s1 = s1 * inv_m
    s2 = s2 * inv * inv_m
    for j in range(J):
        for s in range(S):
            val = (og[n, g, j, s] * gamma[g, j * pj] - s1 - (x[n, g, j, s] - m) * inv * s2) * inv
            if add:
                dx[n, g, j, s] += val
            else:
                dx[n, g, j, s] = val


def py_group_param(og, x, mean, st, dgamma, dbeta, g, q, eps, one, is_std, r_g, r_b):
    """Gradients of gamma/beta entry ``(g, q)``: channel ``q`` of group ``g``
    when per channel, the whole group (``q = 0``) when per group."""
    N = x.shape[0]
    J = x.shape[2]
    S = x.shape[3]
    j0 = q
    j1 = q + 1
    if dgamma.shape[1] != J:
        j0 = 0
        j1 = J
    zero = one - one
    sg = zero
    sb = zero
    for n in range(N):
        m = mean[n, g]
        if is_std:
            inv = one / st[n, g]
        else:
            inv = one / math.sqrt(st[n, g] + eps)
        for j in range(j0, j1):
            for s in range(S):
                v = og[n, g, j, s]
                sb += v
                sg += v * (x[n, g, j, s] - m) * inv
    if r_g == REQ_ADD:
        dgamma[g, q] += sg
    elif r_g != REQ_NULL:
        dgamma[g, q] = sg
    if r_b == REQ_ADD:
        dbeta[g, q] += sb
    elif r_b != REQ_NULL:
        dbeta[g, q] = sb


_bn_fwd_c = njit(cache=True, inline="always")(py_bn_forward_channel)
_bn_bwd_c = njit(cache=True, inline="always")(py_bn_backward_channel)
_gn_fwd_r = njit(cache=True, inline="always")(py_group_forward_row)
_gn_bwd_r = njit(cache=True, inline="always")(py_group_backward_row)
_gn_param = njit(cache=True, inline="always")(py_group_param)


# -- BatchNorm -------------------------------------------------------------------

@njit(cache=True)
def bn_forward(x, gamma, beta, mm, mv, out, mean, var, eps, mom, one, inv_m, fix_gamma,
               use_batch, r_out, r_mean, r_var):
    for c in range(x.shape[1]):
        _bn_fwd_c(x, gamma, beta, mm, mv, out, mean, var, c, eps, mom, one, inv_m, fix_gamma,
                  use_batch, r_out, r_mean, r_var)


@njit(cache=True, parallel=True)
def bn_forward_parallel(x, gamma, beta, mm, mv, out, mean, var, eps, mom, one, inv_m,
                        fix_gamma, use_batch, r_out, r_mean, r_var):
    for c in prange(x.shape[1]):
        _bn_fwd_c(x, gamma, beta, mm, mv, out, mean, var, c, eps, mom, one, inv_m, fix_gamma,
                  use_batch, r_out, r_mean, r_var)


@njit(cache=True)
def bn_backward(og, x, gamma, mean, invstd, dx, dgamma, dbeta, one, inv_m, fix_gamma,
                use_batch, r_x, r_g, r_b):
    for c in range(x.shape[1]):
        _bn_bwd_c(og, x, gamma, mean, invstd, dx, dgamma, dbeta, c, one, inv_m, fix_gamma,
                  use_batch, r_x, r_g, r_b)


@njit(cache=True, parallel=True)
def bn_backward_parallel(og, x, gamma, mean, invstd, dx, dgamma, dbeta, one, inv_m,
                         fix_gamma, use_batch, r_x, r_g, r_b):
    for c in prange(x.shape[1]):
        _bn_bwd_c(og, x, gamma, mean, invstd, dx, dgamma, dbeta, c, one, inv_m, fix_gamma,
                  use_batch, r_x, r_g, r_b)


# -- InstanceNorm / GroupNorm ------------------------------------------------------

@njit(cache=True)
def group_forward(x, gamma, beta, out, mean, st, eps, one, inv_m, store_std, r_out, r_mean,
                  r_st):
    G = x.shape[1]
    for r in range(x.shape[0] * G):
        n = r // G
        _gn_fwd_r(x, gamma, beta, out, mean, st, n, r - n * G, eps, one, inv_m, store_std,
                  r_out, r_mean, r_st)


@njit(cache=True, parallel=True)
def group_forward_parallel(x, gamma, beta, out, mean, st, eps, one, inv_m, store_std, r_out,
                           r_mean, r_st):
    G = x.shape[1]
    for r in prange(x.shape[0] * G):
        n = r // G
        _gn_fwd_r(x, gamma, beta, out, mean, st, n, r - n * G, eps, one, inv_m, store_std,
                  r_out, r_mean, r_st)


@njit(cache=True)
def group_backward(og, x, gamma, mean, st, dx, dgamma, dbeta, eps, one, inv_m, is_std, r_x,
                   r_g, r_b):
    G = x.shape[1]
    P = dgamma.shape[1]
    if r_x != REQ_NULL:
        for r in range(x.shape[0] * G):
            n = r // G
            _gn_bwd_r(og, x, gamma, mean, st, dx, n, r - n * G, eps, one, inv_m, is_std,
                      r_x == REQ_ADD)
    if r_g != REQ_NULL or r_b != REQ_NULL:
        for q in range(G * P):
            g = q // P
            _gn_param(og, x, mean, st, dgamma, dbeta, g, q - g * P, eps, one, is_std, r_g, r_b)


@njit(cache=True, parallel=True)
def group_backward_parallel(og, x, gamma, mean, st, dx, dgamma, dbeta, eps, one, inv_m, is_std,
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


# -- prepare -------------------------------------------------------------------

def bn_views(call, shape):
    shape = tuple(int(d) for d in shape)
    a = bn_axis(call.op.name, call.attrs, shape, call.in_shapes)
    outer, inner = math.prod(shape[:a]), math.prod(shape[a + 1:])
    return (outer, shape[a], inner), (shape[a],)


def bn_scalars(call, data, forward):
    dt = np.dtype(call.in_dtypes[0]).type
    count = data[0] * data[2]
    use_batch = bool(call.is_train and not call.attrs["use_global_stats"])
    inv_m = dt(1.0 / count) if count else dt(0)
    # the backward reads the inverse std the forward wrote: no eps there
    s = (dt(call.attrs["eps"]), dt(call.attrs["momentum"])) if forward else ()
    return s + (dt(1), inv_m, bool(call.attrs["fix_gamma"]), use_batch) + \
        tuple(int(r) for r in call.req)


def prepare_batch_norm(call):
    data, param = bn_views(call, call.in_shapes[0])
    fn = bn_forward_parallel if _parallel(math.prod(data)) and data[1] > 1 else bn_forward
    return Launch(fn, bn_scalars(call, data, True),
                  views=[data, param, param, param, param, data, param, param])


def prepare_batch_norm_backward(call):
    data, param = bn_views(call, call.in_shapes[1])
    fn = bn_backward_parallel if _parallel(math.prod(data)) and data[1] > 1 else bn_backward
    return Launch(fn, bn_scalars(call, data, False),
                  views=[data, data, param, param, param, data, param, param])


def group_views(call, shape, param_shape):
    """Views of the data, gamma/beta (per channel ``(G, J)``, per group
    ``(G, 1)``) and the statistics."""
    N, C, G, S = group_dims(call.op.name, call.attrs, shape, call.in_shapes)
    J = C // G if G else 0
    per_channel = param_shape is None or tuple(param_shape) == (C,)
    return (N, G, J, S), (G, J) if per_channel else (G, 1), (N, G)


def group_scalars(call, data, is_std):
    dt = np.dtype(call.in_dtypes[0]).type
    count = data[2] * data[3]
    inv_m = dt(1.0 / count) if count else dt(0)
    return (dt(call.attrs["eps"]), dt(1), inv_m, is_std) + tuple(int(r) for r in call.req)


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


def prepare_instance_norm(call):
    return _group_forward(call, False)


def prepare_instance_norm_backward(call):
    return _group_backward(call, False)


def prepare_group_norm(call):
    return _group_forward(call, True)


def prepare_group_norm_backward(call):
    return _group_backward(call, True)


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((bn_forward_parallel, bn_forward),
       (bn_backward_parallel, bn_backward),
       (group_forward_parallel, group_forward),
       (group_backward_parallel, group_backward))
