"""CUDA kernels for LayerNorm (views as in ``nbdl.kernels.cpu.layer_norm``):
one thread per row for the output, mean, std and data gradient; one thread
per position of the normalised axis for the gamma/beta gradients."""
import math

import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.layer_norm import layer_norm_views
from ._launch import launcher


@cuda.jit(device=True)
def _store(arr, o, i, v, req):
    if req == REQ_ADD:
        arr[o, i] += v
    elif req != REQ_NULL:
        arr[o, i] = v


@cuda.jit
def _forward(x, gamma, beta, out, mean, std, eps, nan, nf, r_out, r_mean, r_std):
    n = x.shape[1]
    inner = x.shape[2]
    zero = eps - eps  # a zero of the data's float type
    for r in range(cuda.grid(1), x.shape[0] * inner, cuda.gridsize(1)):
        o = r // inner
        i = r - o * inner
        if n == 0:
            _store(mean, o, i, nan, r_mean)
            _store(std, o, i, nan, r_std)
            continue
        s = zero
        for k in range(n):
            s += x[o, k, i]
        m = s / nf
        v = zero
        for k in range(n):
            d = x[o, k, i] - m
            v += d * d
        sd = math.sqrt(v / nf + eps)
        for k in range(n):
            y = (x[o, k, i] - m) / sd * gamma[k] + beta[k]
            if r_out == REQ_ADD:
                out[o, k, i] += y
            elif r_out != REQ_NULL:
                out[o, k, i] = y
        _store(mean, o, i, m, r_mean)
        _store(std, o, i, sd, r_std)


@cuda.jit
def _data_grad(og, x, gamma, mean, std, dx, zero, nf, add):
    n = x.shape[1]
    inner = x.shape[2]
    for r in range(cuda.grid(1), x.shape[0] * inner, cuda.gridsize(1)):
        o = r // inner
        i = r - o * inner
        m = mean[o, i]
        sd = std[o, i]
        s1 = zero
        s2 = zero
        for k in range(n):
            g = og[o, k, i] * gamma[k]
            s1 += g
            s2 += g * (x[o, k, i] - m) / sd
        s1 = s1 / nf
        s2 = s2 / nf
        for k in range(n):
            v = (og[o, k, i] * gamma[k] - s1 - (x[o, k, i] - m) / sd * s2) / sd
            if add:
                dx[o, k, i] += v
            else:
                dx[o, k, i] = v


@cuda.jit
def _param_grad(og, x, mean, std, dgamma, dbeta, zero, r_gamma, r_beta):
    n = x.shape[1]
    inner = x.shape[2]
    for k in range(cuda.grid(1), n, cuda.gridsize(1)):
        sg = zero
        sb = zero
        for r in range(x.shape[0] * inner):
            o = r // inner
            i = r - o * inner
            g = og[o, k, i]
            sb += g
            sg += g * (x[o, k, i] - mean[o, i]) / std[o, i]
        if r_gamma == REQ_ADD:
            dgamma[k] += sg
        elif r_gamma != REQ_NULL:
            dgamma[k] = sg
        if r_beta == REQ_ADD:
            dbeta[k] += sb
        elif r_beta != REQ_NULL:
            dbeta[k] = sb


def _noop(*args):
    pass


def prepare_layer_norm(call):
    data, stat, param = layer_norm_views(call.attrs, call.in_shapes[0])
    views = [data, param, param, data, stat, stat]
    rows = stat[0] * stat[1]
    if rows == 0 or all(r == REQ_NULL for r in call.req):
        return Launch(_noop, (), views=views)
    dt = np.dtype(call.out_dtypes[0]).type
    scalars = (dt(call.attrs["eps"]), dt(np.nan), dt(data[1])) + tuple(call.req)
    return Launch(launcher(_forward, rows), scalars, views=views)


def prepare_layer_norm_backward(call):
    data, stat, param = layer_norm_views(call.attrs, call.in_shapes[1])
    views = [data, data, param, stat, stat, data, param, param]
    r_x, r_gamma, r_beta = call.req
    rows, n = stat[0] * stat[1], data[1]
    zero = np.dtype(call.out_dtypes[0]).type(0)
    nf = np.dtype(call.out_dtypes[0]).type(n)
    run_x = launcher(_data_grad, rows) if r_x != REQ_NULL and rows and n else None
    run_p = launcher(_param_grad, n) if (r_gamma != REQ_NULL or r_beta != REQ_NULL) and n else None

    def fn(og, x, gamma, mean, std, dx, dgamma, dbeta):
        if run_x is not None:
            run_x(og, x, gamma, mean, std, dx, zero, nf, r_x == REQ_ADD)
        if run_p is not None:
            # the column sums accumulate in float64, as the CPU kernel's
            run_p(og, x, mean, std, dgamma, dbeta, np.float64(0), r_gamma, r_beta)
    return Launch(fn, (), views=views)
