"""CUDA kernels of the optimizer update ops (``nbdl/ops/optimizer.py``).

The per-element arithmetic is ``nbdl.kernels.shared.optimizer``'s: each
``*_step`` there is a plain Python function, compiled here as a CUDA device
function and by ``kernels.cpu.optimizer`` with ``njit``, so one formula serves
both devices.  Each kernel has the CPU kernel's arguments (flat inputs, the
output, ``req``, then the scalars in the weight's dtype) and is a grid-stride
loop; the states are written in place, the output may be the weight.  The
``mp_*`` kernels read float16 weights/gradients and write the float16 output
from the float32 master copy.
"""
import numpy as np
from numba import cuda, float32

from ...ops.registry import REQ_INPLACE, REQ_NULL, Launch
from ..shared import optimizer as _steps
from ..shared.optimizer import (KERNEL_OF_OP, MULTI, flat_views, group_adagrad_plan, multi_scalars,
                                multi_tensor_scalars, update_scalars)
from ._launch import grid1d


def _device(step):
    return cuda.jit(device=True)(step)


_sgd = _device(_steps.sgd_step)
_sgd_mom = _device(_steps.sgd_mom_step)
_nag_mom = _device(_steps.nag_mom_step)
_adam = _device(_steps.adam_step)
_adamw = _device(_steps.adamw_step)
_rmsprop = _device(_steps.rmsprop_step)
_rmspropalex = _device(_steps.rmspropalex_step)
_adagrad = _device(_steps.adagrad_step)
_adadelta = _device(_steps.adadelta_step)
_adamax = _device(_steps.adamax_step)
_nadam = _device(_steps.nadam_step)
_lamb_moments = _device(_steps.lamb_moments_step)
_lamb_direction = _device(_steps.lamb_direction)
_lamb_coefs = _device(_steps.lamb_coefs)
_lamb_trust_lr = _device(_steps.lamb_trust_lr)
_ftrl = _device(_steps.ftrl_step)
_signsgd = _device(_steps.signsgd_step)
_signum = _device(_steps.signum_step)
_ftml = _device(_steps.ftml_step)
_sgld = _device(_steps.sgld_step)
_group_adagrad_row = _device(_steps.group_adagrad_row)


# -- kernels ---------------------------------------------------------------------


@cuda.jit
def sgd_update(w, g, out, req, lr, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        if req != REQ_NULL:
            out[i] = _sgd(w[i], g[i], lr, wd, rescale, clip)


@cuda.jit
def sgd_mom_update(w, g, mom, out, req, lr, momentum, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b = _sgd_mom(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip)
        mom[i] = b
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def nag_mom_update(w, g, mom, out, req, lr, momentum, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b = _nag_mom(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip, req == REQ_INPLACE)
        mom[i] = b
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def mp_sgd_update(w, g, w32, out, req, lr, wd, rescale, clip):
    for i in range(cuda.grid(1), w32.size, cuda.gridsize(1)):
        a = _sgd(w32[i], float32(g[i]), lr, wd, rescale, clip)
        w32[i] = a
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def mp_sgd_mom_update(w, g, mom, w32, out, req, lr, momentum, wd, rescale, clip):
    for i in range(cuda.grid(1), w32.size, cuda.gridsize(1)):
        a, b = _sgd_mom(w32[i], float32(g[i]), mom[i], lr, momentum, wd, rescale, clip)
        w32[i] = a
        mom[i] = b
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def mp_nag_mom_update(w, g, mom, w32, out, req, lr, momentum, wd, rescale, clip):
    for i in range(cuda.grid(1), w32.size, cuda.gridsize(1)):
        a, b = _nag_mom(w32[i], float32(g[i]), mom[i], lr, momentum, wd, rescale, clip, True)
        w32[i] = a
        mom[i] = b
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def adam_update(w, g, mean, var, out, req, lr, beta1, beta2, epsilon, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c = _adam(w[i], g[i], mean[i], var[i], lr, beta1, beta2, epsilon, wd, rescale, clip)
        mean[i] = b
        var[i] = c
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def adamw_update(w, g, mean, var, rescale_grad, out, req, lr, beta1, beta2, epsilon, wd, eta,
                 clip):
    rescale = rescale_grad[0]
    skip = rescale == 0 or rescale != rescale or rescale - rescale != 0   # 0, NaN or inf
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a = w[i]
        if not skip:
            a, b, c = _adamw(w[i], g[i], mean[i], var[i], lr, eta, beta1, beta2, epsilon, wd,
                             rescale, clip)
            mean[i] = b
            var[i] = c
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def rmsprop_update(w, g, n, out, req, lr, gamma1, epsilon, wd, rescale, clip, clip_weights):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b = _rmsprop(w[i], g[i], n[i], lr, gamma1, epsilon, wd, rescale, clip, clip_weights)
        n[i] = b
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def rmspropalex_update(w, g, n, gs, delta, out, req, lr, gamma1, gamma2, epsilon, wd, rescale,
                       clip, clip_weights):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c, d = _rmspropalex(w[i], g[i], n[i], gs[i], delta[i], lr, gamma1, gamma2, epsilon,
                                  wd, rescale, clip, clip_weights)
        n[i] = b
        gs[i] = c
        delta[i] = d
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def ftrl_update(w, g, z, n, out, req, lr, lamda1, beta, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c = _ftrl(w[i], g[i], z[i], n[i], lr, lamda1, beta, wd, rescale, clip)
        z[i] = b
        n[i] = c
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def signsgd_update(w, g, out, req, lr, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        if req != REQ_NULL:
            out[i] = _signsgd(w[i], g[i], lr, wd)


@cuda.jit
def signum_update(w, g, mom, out, req, lr, momentum, wd, rescale, clip, wd_lh):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b = _signum(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip, wd_lh)
        mom[i] = b
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def ftml_update(w, g, d, v, z, out, req, lr, beta1, beta2, epsilon, t, wd, rescale, clip):
    coef1 = 1 - beta1 ** t
    coef2 = 1 - beta2 ** t
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c, e = _ftml(w[i], g[i], d[i], v[i], z[i], lr, beta1, beta2, epsilon, wd, rescale,
                           clip, coef1, coef2)
        d[i] = b
        v[i] = c
        z[i] = e
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def lamb_update_phase1(w, g, mean, var, out, req, beta1, beta2, epsilon, t, bias_correction, wd,
                       rescale, clip):
    coef1, coef2 = _lamb_coefs(beta1, beta2, t, bias_correction)
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        m, v = _lamb_moments(g[i], mean[i], var[i], beta1, beta2, rescale, clip)
        mean[i] = m
        var[i] = v
        if req != REQ_NULL:
            out[i] = _lamb_direction(w[i], m, v, epsilon, wd, coef1, coef2)


@cuda.jit
def lamb_update_phase2(w, g, r1, r2, out, req, lr, lower_bound, upper_bound):
    step = _lamb_trust_lr(r1[0], r2[0], lr, lower_bound, upper_bound)
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        if req != REQ_NULL:
            out[i] = w[i] - step * g[i]


@cuda.jit
def adagrad_update(w, g, history, out, req, lr, epsilon, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b = _adagrad(w[i], g[i], history[i], lr, epsilon, wd, rescale, clip)
        history[i] = b
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def adadelta_update(w, g, acc_g, acc_delta, out, req, rho, epsilon, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c = _adadelta(w[i], g[i], acc_g[i], acc_delta[i], rho, epsilon, wd, rescale, clip)
        acc_g[i] = b
        acc_delta[i] = c
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def adamax_update(w, g, m, u, out, req, lr, beta1, beta2, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c = _adamax(w[i], g[i], m[i], u[i], lr, beta1, beta2, wd, rescale, clip)
        m[i] = b
        u[i] = c
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def nadam_update(w, g, m, v, out, req, lr, beta1, beta2, epsilon, wd, rescale, clip, coef_g,
                 coef_m, coef_v):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c = _nadam(w[i], g[i], m[i], v[i], lr, beta1, beta2, epsilon, wd, rescale, clip,
                         coef_g, coef_m, coef_v)
        m[i] = b
        v[i] = c
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def sgld_update(w, g, noise, out, req, lr, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        if req != REQ_NULL:
            out[i] = _sgld(w[i], g[i], noise[i], lr, wd, rescale, clip)


@cuda.jit
def mp_lamb_update_phase1(w, g, mean, var, w32, out, req, beta1, beta2, epsilon, t,
                          bias_correction, wd, rescale, clip):
    coef1, coef2 = _lamb_coefs(beta1, beta2, t, bias_correction)
    for i in range(cuda.grid(1), w32.size, cuda.gridsize(1)):
        m, v = _lamb_moments(float32(g[i]), mean[i], var[i], beta1, beta2, rescale, clip)
        mean[i] = m
        var[i] = v
        if req != REQ_NULL:
            out[i] = _lamb_direction(w32[i], m, v, epsilon, wd, coef1, coef2)


@cuda.jit
def mp_lamb_update_phase2(w, g, r1, r2, w32, out, req, lr, lower_bound, upper_bound):
    step = _lamb_trust_lr(r1[0], r2[0], lr, lower_bound, upper_bound)
    for i in range(cuda.grid(1), w32.size, cuda.gridsize(1)):
        a = w32[i] - step * g[i]
        w32[i] = a
        if req != REQ_NULL:
            out[i] = a


@cuda.jit
def group_adagrad_update(w, g, history, out, req, row_len, lr, rescale, clip, epsilon):
    for r in range(cuda.grid(1), w.shape[0], cuda.gridsize(1)):
        _group_adagrad_row(w, g, history, out, r, lr, rescale, clip, epsilon, row_len,
                           req != REQ_NULL)


# -- prepare ---------------------------------------------------------------------

_KERNELS = {op: globals()[name] for op, name in KERNEL_OF_OP.items()}


def _launcher(kernel, n):
    """``fn(*args)`` launching ``kernel`` over ``n`` elements (configured at
    call time, see ``_launch.launcher``); nothing for ``n == 0``."""
    def fn(*args):
        if n:
            blocks, threads = grid1d(n)
            kernel[blocks, threads](*args)
    return fn


def _size(call):
    return int(np.prod(call.out_shapes[0], dtype=np.int64))


def prepare_update(call):
    """As the CPU ``prepare_update``: the op's kernel, ``(req,
    *scalar_attrs)`` in the weight's dtype (float32 for ``mp_*``)."""
    name = call.op.name
    kernel = _KERNELS.get(name) or globals()[name]
    dt = np.float32 if name.startswith("mp_") else call.in_dtypes[0]
    return Launch(_launcher(kernel, _size(call)), update_scalars(call, dt), flat_views(call))


def prepare_group_adagrad(call):
    views, scalars, rows = group_adagrad_plan(call)
    return Launch(_launcher(group_adagrad_update, rows), scalars, views)


def prepare_multi(call):
    """``multi_*``: the one-tensor kernel launched once per weight."""
    name = call.op.name
    per, single = MULTI[name]
    kernel = globals()[single]
    n = len(call.out_shapes)
    t = np.float32 if single.startswith("mp_") else np.dtype(call.in_dtypes[0]).type
    sizes = [int(np.prod(s, dtype=np.int64)) for s in call.out_shapes]

    def run(*args):
        reqs, lrs, wds, *rest = args[per * n + n:]
        for k in range(n):
            if sizes[k]:
                blocks, threads = grid1d(sizes[k])
                sc = multi_tensor_scalars(name, k, lrs, wds, rest)
                kernel[blocks, threads](*args[per * k:per * k + per], args[per * n + k], reqs[k],
                                        *[t(s) for s in sc])
    return Launch(run, multi_scalars(call), flat_views(call))


__all__ = ["prepare_update", "prepare_multi"]
