"""CUDA kernels for LayerNorm (layout and per-row math in
``nbdl.kernels.shared.layer_norm``): one thread per row for the output, mean, std and data gradient; one thread
per position of the normalised axis for the gamma/beta gradients."""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.layer_norm import build, layer_norm_views
from ._launch import launcher


_s = build(cuda.jit(device=True))
_forward_row = cuda.jit(device=True)(_s.forward_row)
_data_grad_row = cuda.jit(device=True)(_s.data_grad_row)
_param_grad_col = cuda.jit(device=True)(_s.param_grad)


@cuda.jit
def _forward(x, gamma, beta, out, mean, std, eps, r_out, r_mean, r_std):
    inner = x.shape[2]
    for r in range(cuda.grid(1), x.shape[0] * inner, cuda.gridsize(1)):
        o = r // inner
        _forward_row(x, gamma, beta, out, mean, std, o, r - o * inner, eps, r_out, r_mean, r_std)


@cuda.jit
def _data_grad(og, x, gamma, mean, std, dx, add):
    inner = x.shape[2]
    for r in range(cuda.grid(1), x.shape[0] * inner, cuda.gridsize(1)):
        o = r // inner
        _data_grad_row(og, x, gamma, mean, std, dx, o, r - o * inner, add)


@cuda.jit
def _param_grad(og, x, mean, std, dgamma, dbeta, r_gamma, r_beta):
    for k in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _param_grad_col(og, x, mean, std, dgamma, dbeta, k, r_gamma, r_beta)


def _noop(*args):
    pass


def prepare_layer_norm(call):
    data, stat, param = layer_norm_views(call.attrs, call.in_shapes[0])
    views = [data, param, param, data, stat, stat]
    rows = stat[0] * stat[1]
    if rows == 0 or all(r == REQ_NULL for r in call.req):
        return Launch(_noop, (), views=views)
    scalars = (np.dtype(call.out_dtypes[0]).type(call.attrs["eps"]),) + tuple(call.req)
    return Launch(launcher(_forward, rows), scalars, views=views)


def prepare_layer_norm_backward(call):
    data, stat, param = layer_norm_views(call.attrs, call.in_shapes[1])
    views = [data, data, param, stat, stat, data, param, param]
    r_x, r_gamma, r_beta = call.req
    rows, n = stat[0] * stat[1], data[1]
    run_x = launcher(_data_grad, rows) if r_x != REQ_NULL and rows and n else None
    run_p = launcher(_param_grad, n) if (r_gamma != REQ_NULL or r_beta != REQ_NULL) and n else None

    def fn(og, x, gamma, mean, std, dx, dgamma, dbeta):
        if run_x is not None:
            run_x(og, x, gamma, mean, std, dx, r_x == REQ_ADD)
        if run_p is not None:
            run_p(og, x, mean, std, dgamma, dbeta, r_gamma, r_beta)
    return Launch(fn, (), views=views)
