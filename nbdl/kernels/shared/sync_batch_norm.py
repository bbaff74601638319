"""SyncBatchNorm's per-channel math (plain Python: compiled by ``njit`` for
the CPU and ``cuda.jit(device=True)`` for CUDA) and its prepare-time views
and scalars.

The data is viewed as ``(outer, C, inner)``.  The statistics are float64
sums (a ``(C, 3)`` temp: count, sum, sum of squares; the variance is
``E[x^2] - E[x]^2`` of the totals, which in float64 keeps float32 data's
variance exact to float32 precision unless the mean exceeds the standard
deviation by about 10^4), because partial sums of several ranks can only
be combined by adding them.  What the elementwise loops need per channel
(scale and shift forward; slope, mean of the gradient, mean and the
``xhat`` coefficient backward) goes through a ``(C, 4)`` temp in the data's
dtype, so those loops stay in float32 for float32 data."""
import math

import numpy as np

from ...ops.registry import REQ_ADD, REQ_NULL


def py_sbn_stats_channel(x, sums, c):
    outer = x.shape[0]
    inner = x.shape[2]
    s1 = 0.0
    s2 = 0.0
    for o in range(outer):
        for i in range(inner):
            v = np.float64(x[o, c, i])
            s1 += v
            s2 += v * v
    sums[c, 0] = np.float64(outer * inner)
    sums[c, 1] = s1
    sums[c, 2] = s2


def py_sbn_forward_channel(x, gamma, beta, mm, mv, out, mean, var, sums, coef, c, eps, mom,
                           one, fix_gamma, use_batch, r_out, r_mean, r_var):
    outer = x.shape[0]
    inner = x.shape[2]
    if use_batch:
        n = sums[c, 0]
        m = 0.0
        v = 0.0
        if n > 0.0:
            m = sums[c, 1] / n
            v = sums[c, 2] / n - m * m
            if v < 0.0:
                v = 0.0
            mm[c] = mm[c] * mom + m * (one - mom)
            mv[c] = mv[c] * mom + v * (one - mom)
    else:
        m = np.float64(mm[c])
        v = np.float64(mv[c])
    inv = 1.0 / math.sqrt(v + np.float64(eps))
    g = 1.0 if fix_gamma else np.float64(gamma[c])
    coef[c, 0] = g * inv                         # stored in the data's dtype
    coef[c, 1] = np.float64(beta[c]) - m * g * inv
    scale = coef[c, 0]
    shift = coef[c, 1]
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
        var[c] += v
    elif r_var != REQ_NULL:
        var[c] = v


def py_sbn_grad_sums_channel(og, x, mean, sums, c):
    """This rank's count, sum of og and sum of og * (x - mean) for channel
    ``c`` into ``sums[0, c]``, copied to ``sums[1, c]`` (the part reduced)."""
    outer = x.shape[0]
    inner = x.shape[2]
    m = mean[c]
    sb = 0.0
    sg = 0.0
    for o in range(outer):
        for i in range(inner):
            g = np.float64(og[o, c, i])
            sb += g
            sg += g * np.float64(x[o, c, i] - m)
    sums[0, c, 0] = np.float64(outer * inner)
    sums[0, c, 1] = sb
    sums[0, c, 2] = sg
    for k in range(3):
        sums[1, c, k] = sums[0, c, k]


def py_sbn_backward_channel(og, x, gamma, mean, var, dx, dgamma, dbeta, sums, coef, c, eps,
                            one, fix_gamma, use_batch, r_x, r_g, r_b):
    outer = x.shape[0]
    inner = x.shape[2]
    inv = 1.0 / math.sqrt(np.float64(var[c]) + np.float64(eps))
    g = 1.0 if fix_gamma else np.float64(gamma[c])
    coef[c, 0] = g * inv
    coef[c, 1] = 0.0
    coef[c, 2] = mean[c]
    coef[c, 3] = 0.0
    n = sums[1, c, 0]
    if use_batch and n > 0.0:
        coef[c, 1] = sums[1, c, 1] / n               # mean of og over every rank
        coef[c, 3] = sums[1, c, 2] / n * inv * inv   # mean of og * xhat, times inv
    if r_x != REQ_NULL:
        a = coef[c, 0]
        mb = coef[c, 1]
        m = coef[c, 2]
        k = coef[c, 3]
        for o in range(outer):
            for i in range(inner):
                val = a * (og[o, c, i] - mb - (x[o, c, i] - m) * k)
                if r_x == REQ_ADD:
                    dx[o, c, i] += val
                else:
                    dx[o, c, i] = val
    sg = 0.0 if fix_gamma else sums[0, c, 2] * inv   # this rank's sum of og * xhat
    sb = sums[0, c, 1]
    if r_g == REQ_ADD:
        dgamma[c] += sg
    elif r_g != REQ_NULL:
        dgamma[c] = sg
    if r_b == REQ_ADD:
        dbeta[c] += sb
    elif r_b != REQ_NULL:
        dbeta[c] = sb


def sbn_views(call, forward):
    """``(data view, param view, sums view, coef view)``."""
    shape = tuple(int(d) for d in call.in_shapes[0 if forward else 1])
    outer, c, inner = shape[0], shape[1], math.prod(shape[2:])
    return (outer, c, inner), (c,), ((c, 3) if forward else (2, c, 3)), (c, 4)


def sbn_scalars(call, forward):
    """The kernels' scalars: (eps, [momentum], one, fix_gamma, use_batch, reqs...)."""
    dt = np.dtype(call.in_dtypes[0]).type
    use_batch = bool(call.is_train and not call.attrs["use_global_stats"])
    head = (dt(call.attrs["eps"]),) + ((dt(call.attrs["momentum"]),) if forward else ())
    return head + (dt(1), bool(call.attrs["fix_gamma"]), use_batch) + \
        tuple(int(r) for r in call.req)
