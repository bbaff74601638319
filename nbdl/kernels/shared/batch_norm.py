"""BatchNorm / GroupNorm per-channel and per-row math (plain Python: compiled by
``njit`` for the CPU, by ``cuda.jit`` for CUDA) and their prepare-time views and
scalars.  BatchNorm's per-channel coefficients are plain functions both
devices compile; CUDA's per-channel loops are made on them by
``build_channel``."""
import math
from types import SimpleNamespace

import numpy as np

from ...ops.batch_norm import bn_axis, group_dims
from ...ops.registry import REQ_ADD, REQ_NULL


# Where BatchNorm's forward takes its statistics from (its ``stats`` scalar).
STATS_MOVING = 0     # the moving mean and variance (inference, use_global_stats)
STATS_BATCH = 1      # the batch's, updating the moving ones (training)
# the mean and inverse std a training forward wrote to ``mean``/``var``, read
# back (``_nbdl_BatchNorm_apply``: a memory budget's recompute, bitwise the
# forward's output, the moving statistics untouched)
STATS_SAVED = 2


def py_bn_channel_coef(c, s1, s2, k, count, gamma, beta, mm, mv, mean, var, eps, mom, one,
                       inv_m, fix_gamma, stats, store_var, r_mean, r_var):
    """Channel ``c``'s ``(scale, shift)`` (``out = x * scale + shift``) from
    its statistics: the batch's (``STATS_BATCH``: ``s1``, ``s2`` the sums of
    its ``count`` values shifted by ``k``, ``d`` and ``d * d``; the moving
    statistics updated), the saved ones (``STATS_SAVED``) or the moving ones.
    Writes the ``mean`` output and, in ``var``, the inverse std (BatchNorm)
    or the variance (``store_var``: BatchNorm_v1)."""
    zero = one - one
    if stats == STATS_BATCH:
        m = zero
        v = zero
        if count > 0:
            d = s1 * inv_m
            m = k + d
            v = s2 * inv_m - d * d
            if v < zero:
                v = zero
            mm[c] = mm[c] * mom + m * (one - mom)
            mv[c] = mv[c] * mom + v * (one - mom)
        inv = one / math.sqrt(v + eps)
    elif stats == STATS_SAVED:
        m = mean[c]
        inv = var[c]
        v = zero                       # (not written back: only the output is)
    else:
        m = mm[c]
        v = mv[c]
        inv = one / math.sqrt(v + eps)
    g = one if fix_gamma else gamma[c]
    scale = g * inv
    shift = beta[c] - m * scale
    if r_mean == REQ_ADD:
        mean[c] += m
    elif r_mean != REQ_NULL:
        mean[c] = m
    w = v if store_var else inv
    if r_var == REQ_ADD:
        var[c] += w
    elif r_var != REQ_NULL:
        var[c] = w
    return scale, shift


def py_bn_grad_coef(c, sb, sg, inv, gamma, dgamma, dbeta, one, inv_m, fix_gamma, use_batch,
                    r_g, r_b):
    """Channel ``c``'s ``(a, mb, mg)`` (``dx = a * (g - mb - (x - mean) * inv
    * mg)``) from ``sb``, the sum of its head gradient ``g``, and ``sg``, the
    sum of ``g * (x - mean)``; writes the gamma and beta gradients."""
    zero = one - one
    sg = sg * inv                      # sum of og * xhat
    gm = one if fix_gamma else gamma[c]
    a = gm * inv
    mb = zero
    mg = zero
    if use_batch:
        mb = sb * inv_m
        mg = sg * inv_m
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
    return a, mb, mg


def py_bn_grad_inv(c, st, eps, one, stored_var):
    """Channel ``c``'s inverse std from the saved ``st``: itself, or (BatchNorm_v1,
    ``stored_var``) from the variance."""
    return one / math.sqrt(st[c] + eps) if stored_var else st[c]


def build_channel(jit):
    """BatchNorm's per-channel forward and backward (one channel's whole
    computation: what a CUDA thread runs) on the coefficient functions
    compiled with ``jit``; plain functions for the caller to compile.

    Parameters
    ----------
    jit : callable
        The decorator applied to ``py_bn_channel_coef``, ``py_bn_grad_coef``
        and ``py_bn_grad_inv`` (``cuda.jit(device=True)``).

    Returns
    -------
    SimpleNamespace
        ``forward_channel(x, gamma, beta, mm, mv, out, mean, var, c, eps, mom,
        one, inv_m, fix_gamma, stats, store_var, relu, r_out, r_mean, r_var)``
        and ``backward_channel(og, x, gamma, mean, st, y, dx, dgamma, dbeta, c,
        eps, one, inv_m, fix_gamma, use_batch, stored_var, relu, r_x, r_g,
        r_b)``.
    """
    coef, grad_coef, grad_inv = jit(py_bn_channel_coef), jit(py_bn_grad_coef), \
        jit(py_bn_grad_inv)

    def forward_channel(x, gamma, beta, mm, mv, out, mean, var, c, eps, mom, one, inv_m,
                        fix_gamma, stats, store_var, relu, r_out, r_mean, r_var):
        """Channel ``c``: statistics (batch or moving), ``out = x * scale + shift``
        (clamped at 0 with ``relu``: BatchNormWithReLU; NaN passes), ``mean``
        and ``var`` (``py_bn_channel_coef``)."""
        outer = x.shape[0]
        inner = x.shape[2]
        zero = one - one
        k = zero
        s1 = zero
        s2 = zero
        if stats == STATS_BATCH and outer * inner > 0:
            k = x[0, c, 0]
            for o in range(outer):
                for i in range(inner):
                    d = x[o, c, i] - k
                    s1 += d
                    s2 += d * d
        scale, shift = coef(c, s1, s2, k, outer * inner, gamma, beta, mm, mv, mean, var, eps,
                            mom, one, inv_m, fix_gamma, stats, store_var, r_mean, r_var)
        if r_out != REQ_NULL:
            for o in range(outer):
                for i in range(inner):
                    val = x[o, c, i] * scale + shift
                    if relu and val < zero:
                        val = zero
                    if r_out == REQ_ADD:
                        out[o, c, i] += val
                    else:
                        out[o, c, i] = val

    def backward_channel(og, x, gamma, mean, st, y, dx, dgamma, dbeta, c, eps, one, inv_m,
                         fix_gamma, use_batch, stored_var, relu, r_x, r_g, r_b):
        """Channel ``c``'s gradients; ``st`` holds the inverse std, or the
        variance (``stored_var``: BatchNorm_v1); with ``relu`` the head gradient
        only flows where the forward output ``y`` is positive."""
        outer = x.shape[0]
        inner = x.shape[2]
        zero = one - one
        m = mean[c]
        inv = grad_inv(c, st, eps, one, stored_var)
        sb = zero
        sg = zero
        for o in range(outer):
            for i in range(inner):
                g = og[o, c, i]
                if relu and not y[o, c, i] > zero:
                    g = zero
                sb += g
                sg += g * (x[o, c, i] - m)
        a, mb, mg = grad_coef(c, sb, sg, inv, gamma, dgamma, dbeta, one, inv_m, fix_gamma,
                              use_batch, r_g, r_b)
        if r_x != REQ_NULL:
            for o in range(outer):
                for i in range(inner):
                    g = og[o, c, i]
                    if relu and not y[o, c, i] > zero:
                        g = zero
                    val = a * (g - mb - (x[o, c, i] - m) * inv * mg)
                    if r_x == REQ_ADD:
                        dx[o, c, i] += val
                    else:
                        dx[o, c, i] = val

    return SimpleNamespace(forward_channel=forward_channel, backward_channel=backward_channel)


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


def bn_views(call, shape):
    shape = tuple(int(d) for d in shape)
    a = bn_axis(call.op.name, call.attrs, shape, call.in_shapes)
    outer, inner = math.prod(shape[:a]), math.prod(shape[a + 1:])
    return (outer, shape[a], inner), (shape[a],)


def bn_scalars(call, data, forward):
    """The BatchNorm kernels' scalars: forward ``eps, momentum, one, inv_m,
    fix_gamma, stats, store_var``, backward ``eps, one, inv_m, fix_gamma,
    use_batch, stored_var`` (BatchNorm_v1 keeps the variance, the others the
    inverse std, which the backward reads back without eps), then one req
    per output."""
    dt = np.dtype(call.in_dtypes[0]).type
    count = data[0] * data[2]
    use_batch = bool(call.is_train and not call.attrs["use_global_stats"])
    inv_m = dt(1.0 / count) if count else dt(0)
    keeps_var = call.op.name in ("BatchNorm_v1", "_backward_BatchNorm_v1")
    eps = dt(call.attrs["eps"]) if "eps" in call.attrs else dt(0)
    if forward:
        head = (eps, dt(call.attrs["momentum"]))
        stats = STATS_BATCH if use_batch else STATS_MOVING
    else:
        head, stats = (eps,), use_batch
    return head + (dt(1), inv_m, bool(call.attrs["fix_gamma"]), stats, keeps_var) + \
        tuple(int(r) for r in call.req)


def bn_apply_scalars(call):
    """``bn_forward``'s scalars for ``_nbdl_BatchNorm_apply``: the saved
    statistics, only the output written."""
    dt = np.dtype(call.in_dtypes[0]).type
    return (dt(0), dt(0), dt(1), dt(0), bool(call.attrs["fix_gamma"]), STATS_SAVED, False,
            int(call.req[0]), REQ_NULL, REQ_NULL)


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
