"""CUDA kernels for BatchNorm, InstanceNorm and GroupNorm (views and scalars
as in ``nbdl.kernels.shared.batch_norm``, whose per-channel and per-row
functions are compiled here as device functions): BatchNorm runs one thread
per channel; InstanceNorm/GroupNorm one thread per ``(n, g)`` row for the
output and data gradient and one per gamma/beta entry (a channel, or a group
for GroupNorm's per-group form) for their gradients."""
from functools import partial
import math

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.batch_norm import (bn_apply_scalars, bn_scalars, bn_views, build_channel,
                                 group_scalars, group_views, py_group_backward_row,
                                 py_group_forward_row, py_group_param)
from ._launch import copy_kernel, launcher

_ch = build_channel(cuda.jit(device=True))
_bn_fwd_c = cuda.jit(device=True)(_ch.forward_channel)
_bn_bwd_c = cuda.jit(device=True)(_ch.backward_channel)
_gn_fwd_r = cuda.jit(device=True)(py_group_forward_row)
_gn_bwd_r = cuda.jit(device=True)(py_group_backward_row)
_gn_param = cuda.jit(device=True)(py_group_param)


@cuda.jit
def _bn_forward(x, gamma, beta, mm, mv, out, mean, var, eps, mom, one, inv_m, fix_gamma,
                stats, store_var, relu, r_out, r_mean, r_var):
    for c in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _bn_fwd_c(x, gamma, beta, mm, mv, out, mean, var, c, eps, mom, one, inv_m, fix_gamma,
                  stats, store_var, relu, r_out, r_mean, r_var)


@cuda.jit
def _bn_apply(x, gamma, beta, mean, invstd, out, eps, mom, one, inv_m, fix_gamma, stats,
              store_var, r_out, r_mean, r_var):
    # the forward's per-channel function on the saved statistics (STATS_SAVED)
    for c in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _bn_fwd_c(x, gamma, beta, mean, invstd, out, mean, invstd, c, eps, mom, one, inv_m,
                  fix_gamma, stats, store_var, False, r_out, r_mean, r_var)


@cuda.jit
def _bn_backward(og, x, gamma, mean, st, y, dx, dgamma, dbeta, eps, one, inv_m, fix_gamma,
                 use_batch, stored_var, relu, r_x, r_g, r_b):
    for c in range(cuda.grid(1), x.shape[1], cuda.gridsize(1)):
        _bn_bwd_c(og, x, gamma, mean, st, y, dx, dgamma, dbeta, c, eps, one, inv_m, fix_gamma,
                  use_batch, stored_var, relu, r_x, r_g, r_b)


@cuda.jit
def _group_forward(x, gamma, beta, out, mean, st, eps, one, inv_m, store_std, r_out, r_mean,
                   r_st):
    G = x.shape[1]
    for r in range(cuda.grid(1), x.shape[0] * G, cuda.gridsize(1)):
        n = r // G
        _gn_fwd_r(x, gamma, beta, out, mean, st, n, r - n * G, eps, one, inv_m, store_std,
                  r_out, r_mean, r_st)


@cuda.jit
def _group_data_grad(og, x, gamma, mean, st, dx, eps, one, inv_m, is_std, add):
    G = x.shape[1]
    for r in range(cuda.grid(1), x.shape[0] * G, cuda.gridsize(1)):
        n = r // G
        _gn_bwd_r(og, x, gamma, mean, st, dx, n, r - n * G, eps, one, inv_m, is_std, add)


@cuda.jit
def _group_param_grad(og, x, mean, st, dgamma, dbeta, eps, one, is_std, r_g, r_b):
    P = dgamma.shape[1]
    for q in range(cuda.grid(1), x.shape[1] * P, cuda.gridsize(1)):
        g = q // P
        _gn_param(og, x, mean, st, dgamma, dbeta, g, q - g * P, eps, one, is_std, r_g, r_b)


def _noop(*args):
    pass


def temp_batch_norm(call):
    """No scratch: one thread per channel."""
    return []


temp_batch_norm_backward = temp_batch_norm


def prepare_batch_norm(call):
    """BatchNorm, BatchNorm_v1 and _contrib_BatchNormWithReLU (whose 4th
    output, ``workspace``, gets a copy of the output)."""
    data, param = bn_views(call, call.in_shapes[0])
    views = [data, param, param, param, param, data, param, param]
    relu = len(call.out_shapes) == 4
    if relu:
        views.append(None)
    if data[1] == 0:
        return Launch(_noop, (), views=views)
    run = launcher(_bn_forward, data[1])
    scalars = bn_scalars(call, data, True)
    head, reqs = scalars[:7], scalars[7:10]
    n = math.prod(data)
    r_ws = call.req[3] if relu else REQ_NULL
    copy = launcher(copy_kernel, n) if n else None

    def fn(x, gamma, beta, mm, mv, out, mean, var, *ws):
        run(x, gamma, beta, mm, mv, out, mean, var, *head, relu, *reqs)
        if r_ws != REQ_NULL and copy is not None:
            copy(out.reshape(n), ws[0].reshape(n), r_ws)
    return Launch(fn, (), views=views)


def prepare_batch_norm_apply(call):
    data, param = bn_views(call, call.in_shapes[0])
    views = [data, param, param, param, param, data]
    if data[1] == 0:
        return Launch(_noop, (), views=views)
    return Launch(launcher(_bn_apply, data[1]), bn_apply_scalars(call), views=views)


def prepare_batch_norm_backward(call):
    """The three ops' gradients; BatchNormWithReLU's takes the forward output
    as a 6th input."""
    data, param = bn_views(call, call.in_shapes[1])
    relu = len(call.in_shapes) == 6
    views = [data, data, param, param, param] + ([data] if relu else []) + [data, param, param]
    if data[1] == 0 or all(r == REQ_NULL for r in call.req):
        return Launch(_noop, (), views=views)
    run = launcher(_bn_backward, data[1])
    scalars = bn_scalars(call, data, False)
    head, reqs = scalars[:6], scalars[6:]

    def fn(og, x, gamma, mean, st, *rest):
        y = rest[0] if relu else og
        dx, dgamma, dbeta = rest[-3:]
        run(og, x, gamma, mean, st, y, dx, dgamma, dbeta, *head, relu, *reqs)
    return Launch(fn, (), views=views)


def _forward(call, is_std):
    data, param, stat = group_views(call, call.in_shapes[0], call.in_shapes[1])
    views = [data, param, param, data, stat, stat]
    rows = data[0] * data[1]
    if rows == 0 or all(r == REQ_NULL for r in call.req):
        return Launch(_noop, (), views=views)
    return Launch(launcher(_group_forward, rows), group_scalars(call, data, is_std), views=views)


def _backward(call, is_std):
    data, param, stat = group_views(call, call.in_shapes[1], call.in_shapes[2])
    views = [data, data, param, stat, stat, data, param, param]
    eps, one, inv_m, is_std, r_x, r_g, r_b = group_scalars(call, data, is_std)
    rows, chans = data[0] * data[1], param[0] * param[1]
    run_x = launcher(_group_data_grad, rows) if r_x != REQ_NULL and rows and math.prod(data) \
        else None
    run_p = launcher(_group_param_grad, chans) if (r_g != REQ_NULL or r_b != REQ_NULL) and chans \
        else None

    def fn(og, x, gamma, mean, st, dx, dgamma, dbeta):
        if run_x is not None:
            run_x(og, x, gamma, mean, st, dx, eps, one, inv_m, is_std, r_x == REQ_ADD)
        if run_p is not None:
            run_p(og, x, mean, st, dgamma, dbeta, eps, one, is_std, r_g, r_b)
    return Launch(fn, (), views=views)


prepare_instance_norm = partial(_forward, is_std=False)
prepare_instance_norm_backward = partial(_backward, is_std=False)
prepare_group_norm = partial(_forward, is_std=True)
prepare_group_norm_backward = partial(_backward, is_std=True)
