"""CPU kernels for LayerNorm and its gradient: (p)range loops over the rows
(and the gamma/beta columns) running the per-row math of
``nbdl.kernels.shared.layer_norm`` (layout there)."""
import math

import numpy as np
from numba import prange

from ..shared.jit import njit

from ._parallel import serial_and_parallel, use_parallel as _parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.layer_norm import build, layer_norm_views


_s = build(njit(cache=True, inline="always"))
_forward_row = njit(cache=True, inline="always")(_s.forward_row)
_data_grad_row = njit(cache=True, inline="always")(_s.data_grad_row)
_param_grad = njit(cache=True, inline="always")(_s.param_grad)


def layer_norm_forward(x, gamma, beta, out, mean, std, eps, r_out, r_mean, r_std):
    inner = x.shape[2]
    for r in prange(x.shape[0] * inner):
        o = r // inner
        _forward_row(x, gamma, beta, out, mean, std, o, r - o * inner, eps, r_out, r_mean, r_std)


layer_norm_forward, layer_norm_forward_parallel = serial_and_parallel(layer_norm_forward)


def layer_norm_backward(og, x, gamma, mean, std, dx, dgamma, dbeta, r_x, r_gamma,
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


layer_norm_backward, layer_norm_backward_parallel = serial_and_parallel(layer_norm_backward)


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
