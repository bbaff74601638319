"""CPU kernels for LayerNorm and its gradient.

The data is viewed as ``(outer, n, inner)`` with ``n`` the normalised axis;
a row is one ``(outer, inner)`` pair, mean and std are ``(outer, inner)``,
gamma/beta and their gradients ``(n,)``.  Mean and variance are two passes
over the row (the variance of the centred values), in the data's dtype.
Each output honours its own req; a null mean/std output is never written
(the planner gives such an output no storage of its own)."""
import math

import numpy as np
from numba import prange

from ..shared.jit import njit

from ._parallel import twins as _twins, use_parallel as _parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.layer_norm import layer_norm_views


@njit(cache=True, inline="always")
def _store(arr, o, i, v, req):
    if req == REQ_ADD:
        arr[o, i] += v
    elif req != REQ_NULL:
        arr[o, i] = v


@njit(cache=True, inline="always")
def _forward_row(x, gamma, beta, out, mean, std, o, i, eps, r_out, r_mean, r_std):
    n = x.shape[1]
    zero = x.dtype.type(0)
    if n == 0:
        nan = x.dtype.type(np.nan)   # numpy: the mean of nothing is nan
        _store(mean, o, i, nan, r_mean)
        _store(std, o, i, nan, r_std)
        return
    nf = x.dtype.type(n)   # dividing by an int would promote float32 to float64
    s = zero
    for k in range(n):
        s += x[o, k, i]
    m = s / nf
    v = zero
    for k in range(n):
        d = x[o, k, i] - m
        v += d * d
    sd = np.sqrt(v / nf + eps)
    inv = x.dtype.type(1) / sd
    if r_out == REQ_ADD:
        for k in range(n):
            out[o, k, i] += (x[o, k, i] - m) * inv * gamma[k] + beta[k]
    elif r_out != REQ_NULL:
        for k in range(n):
            out[o, k, i] = (x[o, k, i] - m) * inv * gamma[k] + beta[k]
    _store(mean, o, i, m, r_mean)
    _store(std, o, i, sd, r_std)


@njit(cache=True)
def layer_norm_forward(x, gamma, beta, out, mean, std, eps, r_out, r_mean, r_std):
    inner = x.shape[2]
    for r in range(x.shape[0] * inner):
        o = r // inner
        _forward_row(x, gamma, beta, out, mean, std, o, r - o * inner, eps, r_out, r_mean, r_std)


@njit(cache=True, parallel=True)
def layer_norm_forward_parallel(x, gamma, beta, out, mean, std, eps, r_out, r_mean, r_std):
    inner = x.shape[2]
    for r in prange(x.shape[0] * inner):
        o = r // inner
        _forward_row(x, gamma, beta, out, mean, std, o, r - o * inner, eps, r_out, r_mean, r_std)


@njit(cache=True, inline="always")
def _data_grad_row(og, x, gamma, mean, std, dx, o, i, add):
    """dx = (g - mean(g) - xhat * mean(g * xhat)) / std with g = og * gamma."""
    n = x.shape[1]
    if n == 0:
        return
    m = mean[o, i]
    inv = x.dtype.type(1) / std[o, i]
    s1 = x.dtype.type(0)
    s2 = x.dtype.type(0)
    for k in range(n):
        g = og[o, k, i] * gamma[k]
        s1 += g
        s2 += g * (x[o, k, i] - m) * inv
    nf = x.dtype.type(n)
    s1 /= nf
    s2 /= nf
    for k in range(n):
        v = (og[o, k, i] * gamma[k] - s1 - (x[o, k, i] - m) * inv * s2) * inv
        if add:
            dx[o, k, i] += v
        else:
            dx[o, k, i] = v


@njit(cache=True, inline="always")
def _param_grad(og, x, mean, std, dgamma, dbeta, k, r_gamma, r_beta):
    """gamma_grad[k] = sum over rows of og * xhat, beta_grad[k] = sum of og.

    The sums run over every row (thousands): accumulated in float64, as
    MXNet's compensated (Kahan) sum reducer keeps them accurate."""
    inner = x.shape[2]
    sg = np.float64(0)
    sb = np.float64(0)
    for r in range(x.shape[0] * inner):
        o = r // inner
        i = r - o * inner
        g = og[o, k, i]
        sb += g
        sg += g * (x[o, k, i] - mean[o, i]) / std[o, i]
    sg = dgamma.dtype.type(sg)
    sb = dbeta.dtype.type(sb)
    if r_gamma == REQ_ADD:
        dgamma[k] += sg
    elif r_gamma != REQ_NULL:
        dgamma[k] = sg
    if r_beta == REQ_ADD:
        dbeta[k] += sb
    elif r_beta != REQ_NULL:
        dbeta[k] = sb


@njit(cache=True)
def layer_norm_backward(og, x, gamma, mean, std, dx, dgamma, dbeta, r_x, r_gamma, r_beta):
    inner = x.shape[2]
    if r_x != REQ_NULL:
        add = r_x == REQ_ADD
        for r in range(x.shape[0] * inner):
            o = r // inner
            _data_grad_row(og, x, gamma, mean, std, dx, o, r - o * inner, add)
    if r_gamma != REQ_NULL or r_beta != REQ_NULL:
        for k in range(x.shape[1]):
            _param_grad(og, x, mean, std, dgamma, dbeta, k, r_gamma, r_beta)


@njit(cache=True, parallel=True)
def layer_norm_backward_parallel(og, x, gamma, mean, std, dx, dgamma, dbeta, r_x, r_gamma,
                                 r_beta):
    inner = x.shape[2]
    if r_x != REQ_NULL:
        add = r_x == REQ_ADD
        for r in prange(x.shape[0] * inner):
            o = r // inner
            _data_grad_row(og, x, gamma, mean, std, dx, o, r - o * inner, add)
    if r_gamma != REQ_NULL or r_beta != REQ_NULL:
        for k in prange(x.shape[1]):
            _param_grad(og, x, mean, std, dgamma, dbeta, k, r_gamma, r_beta)


# -- prepare -------------------------------------------------------------------


def prepare_layer_norm(call):
    data, stat, param = layer_norm_views(call.attrs, call.in_shapes[0])
    fn = layer_norm_forward_parallel if _parallel(math.prod(data)) else layer_norm_forward
    eps = np.dtype(call.out_dtypes[0]).type(call.attrs["eps"])
    return Launch(fn, (eps,) + tuple(call.req), views=[data, param, param, data, stat, stat])


def prepare_layer_norm_backward(call):
    data, stat, param = layer_norm_views(call.attrs, call.in_shapes[1])
    fn = layer_norm_backward_parallel if _parallel(math.prod(data)) else layer_norm_backward
    return Launch(fn, tuple(call.req),
                  views=[data, data, param, stat, stat, data, param, param])


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((layer_norm_forward_parallel, layer_norm_forward),
       (layer_norm_backward_parallel, layer_norm_backward))
