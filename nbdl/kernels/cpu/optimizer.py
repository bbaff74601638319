"""CPU kernels of the optimizer update ops (``nbdl/ops/optimizer.py``).

Each update is one loop over flat (1-D, contiguous) arrays with the op
contract's arguments: the inputs (weight, gradient, states), the output, then
``req`` and the op's ``scalar_attrs`` in the weight's dtype.  The states are
written in place (the op's ``mutates`` inputs); the new weight goes to the
output, which may be the weight itself (the ``(0, 0)`` in-place pair:
element ``i`` is read before it is written).  ``REQ_NULL`` skips the output
but still updates the states, as MXNet does.  The arithmetic for one element
is a ``*_step`` function in ``nbdl.kernels.shared.optimizer``;
``nbdl.kernels.cuda.optimizer`` compiles the same functions for CUDA.

When the output is the weight array itself (``Trainer.step``'s
``out=weight``), a kernel runs a second loop that stores through the weight:
through ``out``, LLVM's vector loop is guarded by an overlap test that an
exact alias fails, and the scalar loop ran (ResNet-18's SGD-momentum
update, 62 tensors of 45 MB in all, 1.8x slower).

Conventions, as MXNet's update kernels: ``rescale`` multiplies the raw
gradient; ``clip`` < 0 means no clipping, otherwise the (rescaled) gradient
is clipped to ``[-clip, clip]``; constants are ``np.float32(...)`` so a
float32 update stays float32.  The ``mp_*`` kernels take float16 weights and
gradients as their uint16 bits (Numba's CPU target cannot type float16
arrays; ``kernels/cpu/_half.py``) and update the float32 master copy.
"""
import numpy as np
from ..shared.jit import njit

from ...ops.registry import REQ_INPLACE, REQ_NULL, Launch
from ..shared import optimizer as _steps
from ..shared.optimizer import (KERNEL_OF_OP, MULTI, flat_views, group_adagrad_plan, multi_scalars,
                                multi_tensor_scalars, update_scalars)
from ._half import f2h, h2f

# -- per-element steps (kernels/shared/optimizer.py), compiled for the CPU ------------

sgd_step = njit(cache=True)(_steps.sgd_step)
sgd_mom_step = njit(cache=True)(_steps.sgd_mom_step)
nag_mom_step = njit(cache=True)(_steps.nag_mom_step)
adam_step = njit(cache=True)(_steps.adam_step)
adamw_step = njit(cache=True)(_steps.adamw_step)
rmsprop_step = njit(cache=True)(_steps.rmsprop_step)
rmspropalex_step = njit(cache=True)(_steps.rmspropalex_step)
adagrad_step = njit(cache=True)(_steps.adagrad_step)
adadelta_step = njit(cache=True)(_steps.adadelta_step)
adamax_step = njit(cache=True)(_steps.adamax_step)
nadam_step = njit(cache=True)(_steps.nadam_step)
lamb_moments_step = njit(cache=True)(_steps.lamb_moments_step)
lamb_direction = njit(cache=True)(_steps.lamb_direction)
lamb_coefs = njit(cache=True)(_steps.lamb_coefs)
lamb_trust_lr = njit(cache=True)(_steps.lamb_trust_lr)
ftrl_step = njit(cache=True)(_steps.ftrl_step)
signsgd_step = njit(cache=True)(_steps.signsgd_step)
signum_step = njit(cache=True)(_steps.signum_step)
ftml_step = njit(cache=True)(_steps.ftml_step)
sgld_step = njit(cache=True)(_steps.sgld_step)
group_adagrad_row = njit(cache=True)(_steps.group_adagrad_row)


# -- one-tensor updates --------------------------------------------------------------


@njit(cache=True)
def _into_weight(out, w, req):
    """Whether the new weight goes into the weight array itself (the
    ``REQ_INPLACE`` call; a float16 call's float32 mirrors are two arrays)."""
    return req != REQ_NULL and out.ctypes.data == w.ctypes.data and out.size == w.size


@njit(cache=True)
def sgd_update(w, g, out, req, lr, wd, rescale, clip):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i] = sgd_step(w[i], g[i], lr, wd, rescale, clip)
    elif req != REQ_NULL:
        for i in range(w.size):
            out[i] = sgd_step(w[i], g[i], lr, wd, rescale, clip)


@njit(cache=True)
def sgd_mom_update(w, g, mom, out, req, lr, momentum, wd, rescale, clip):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], mom[i] = sgd_mom_step(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip)
        return
    for i in range(w.size):
        a, mom[i] = sgd_mom_step(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def nag_mom_update(w, g, mom, out, req, lr, momentum, wd, rescale, clip):
    inplace = req == REQ_INPLACE
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], mom[i] = nag_mom_step(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip, inplace)
        return
    for i in range(w.size):
        a, mom[i] = nag_mom_step(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip, inplace)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def mp_sgd_update(w, g, w32, out, req, lr, wd, rescale, clip):
    for i in range(w32.size):
        w32[i] = sgd_step(w32[i], h2f(g[i]), lr, wd, rescale, clip)
        if req != REQ_NULL:
            out[i] = f2h(w32[i])


@njit(cache=True)
def mp_sgd_mom_update(w, g, mom, w32, out, req, lr, momentum, wd, rescale, clip):
    for i in range(w32.size):
        w32[i], mom[i] = sgd_mom_step(w32[i], h2f(g[i]), mom[i], lr, momentum, wd, rescale,
                                      clip)
        if req != REQ_NULL:
            out[i] = f2h(w32[i])


@njit(cache=True)
def mp_nag_mom_update(w, g, mom, w32, out, req, lr, momentum, wd, rescale, clip):
    for i in range(w32.size):
        w32[i], mom[i] = nag_mom_step(w32[i], h2f(g[i]), mom[i], lr, momentum, wd, rescale,
                                      clip, True)
        if req != REQ_NULL:
            out[i] = f2h(w32[i])


@njit(cache=True)
def adam_update(w, g, mean, var, out, req, lr, beta1, beta2, epsilon, wd, rescale, clip):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], mean[i], var[i] = adam_step(w[i], g[i], mean[i], var[i], lr, beta1, beta2, epsilon,
                                              wd, rescale, clip)
        return
    for i in range(w.size):
        a, mean[i], var[i] = adam_step(w[i], g[i], mean[i], var[i], lr, beta1, beta2, epsilon,
                                       wd, rescale, clip)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def adamw_update(w, g, mean, var, rescale_grad, out, req, lr, beta1, beta2, epsilon, wd, eta,
                 clip):
    # MXNet's _adamw_update: a rescale factor that is 0 or not finite skips
    # the update (the states keep their values; the output gets the weight)
    rescale = rescale_grad[0]
    skip = rescale == 0 or not np.isfinite(rescale)
    if _into_weight(out, w, req):     # see the module's note
        if not skip:
            for i in range(w.size):
                w[i], mean[i], var[i] = adamw_step(w[i], g[i], mean[i], var[i], lr, eta, beta1,
                                                   beta2, epsilon, wd, rescale, clip)
        return
    for i in range(w.size):
        if skip:
            a = w[i]
        else:
            a, mean[i], var[i] = adamw_step(w[i], g[i], mean[i], var[i], lr, eta, beta1, beta2,
                                            epsilon, wd, rescale, clip)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def rmsprop_update(w, g, n, out, req, lr, gamma1, epsilon, wd, rescale, clip, clip_weights):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], n[i] = rmsprop_step(w[i], g[i], n[i], lr, gamma1, epsilon, wd, rescale, clip,
                                      clip_weights)
        return
    for i in range(w.size):
        a, n[i] = rmsprop_step(w[i], g[i], n[i], lr, gamma1, epsilon, wd, rescale, clip,
                               clip_weights)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def rmspropalex_update(w, g, n, gs, delta, out, req, lr, gamma1, gamma2, epsilon, wd, rescale,
                       clip, clip_weights):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], n[i], gs[i], delta[i] = rmspropalex_step(
                w[i], g[i], n[i], gs[i], delta[i], lr, gamma1, gamma2, epsilon, wd, rescale, clip,
                clip_weights)
        return
    for i in range(w.size):
        a, n[i], gs[i], delta[i] = rmspropalex_step(
            w[i], g[i], n[i], gs[i], delta[i], lr, gamma1, gamma2, epsilon, wd, rescale, clip,
            clip_weights)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def ftrl_update(w, g, z, n, out, req, lr, lamda1, beta, wd, rescale, clip):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], z[i], n[i] = ftrl_step(w[i], g[i], z[i], n[i], lr, lamda1, beta, wd, rescale, clip)
        return
    for i in range(w.size):
        a, z[i], n[i] = ftrl_step(w[i], g[i], z[i], n[i], lr, lamda1, beta, wd, rescale, clip)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def signsgd_update(w, g, out, req, lr, wd, rescale, clip):
    # as MXNet's signsgd_update, rescale_grad and clip_gradient change nothing
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i] = signsgd_step(w[i], g[i], lr, wd)
    elif req != REQ_NULL:
        for i in range(w.size):
            out[i] = signsgd_step(w[i], g[i], lr, wd)


@njit(cache=True)
def signum_update(w, g, mom, out, req, lr, momentum, wd, rescale, clip, wd_lh):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], mom[i] = signum_step(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip, wd_lh)
        return
    for i in range(w.size):
        a, mom[i] = signum_step(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip, wd_lh)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def ftml_update(w, g, d, v, z, out, req, lr, beta1, beta2, epsilon, t, wd, rescale, clip):
    one = np.float32(1.0)
    coef1 = one - beta1 ** t
    coef2 = one - beta2 ** t
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], d[i], v[i], z[i] = ftml_step(w[i], g[i], d[i], v[i], z[i], lr, beta1, beta2, epsilon,
                                               wd, rescale, clip, coef1, coef2)
        return
    for i in range(w.size):
        a, d[i], v[i], z[i] = ftml_step(w[i], g[i], d[i], v[i], z[i], lr, beta1, beta2, epsilon,
                                        wd, rescale, clip, coef1, coef2)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def lamb_update_phase1(w, g, mean, var, out, req, beta1, beta2, epsilon, t, bias_correction, wd,
                       rescale, clip):
    coef1, coef2 = lamb_coefs(beta1, beta2, t, bias_correction)
    for i in range(w.size):
        mean[i], var[i] = lamb_moments_step(g[i], mean[i], var[i], beta1, beta2, rescale, clip)
        if req != REQ_NULL:
            out[i] = lamb_direction(w[i], mean[i], var[i], epsilon, wd, coef1, coef2)


@njit(cache=True)
def lamb_update_phase2(w, g, r1, r2, out, req, lr, lower_bound, upper_bound):
    step = lamb_trust_lr(r1[0], r2[0], lr, lower_bound, upper_bound)
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i] = w[i] - step * g[i]
    elif req != REQ_NULL:
        for i in range(w.size):
            out[i] = w[i] - step * g[i]


@njit(cache=True)
def mp_lamb_update_phase1(w, g, mean, var, w32, out, req, beta1, beta2, epsilon, t,
                          bias_correction, wd, rescale, clip):
    """``g`` float16 bits; the moments and the direction (``out``) float32."""
    coef1, coef2 = lamb_coefs(beta1, beta2, t, bias_correction)
    for i in range(w32.size):
        mean[i], var[i] = lamb_moments_step(h2f(g[i]), mean[i], var[i], beta1, beta2, rescale,
                                            clip)
        if req != REQ_NULL:
            out[i] = lamb_direction(w32[i], mean[i], var[i], epsilon, wd, coef1, coef2)


@njit(cache=True)
def mp_lamb_update_phase2(w, g, r1, r2, w32, out, req, lr, lower_bound, upper_bound):
    """``weight32 -= step * g`` in place, ``out`` (float16 bits) its rounding."""
    step = lamb_trust_lr(r1[0], r2[0], lr, lower_bound, upper_bound)
    for i in range(w32.size):
        w32[i] = w32[i] - step * g[i]
        if req != REQ_NULL:
            out[i] = f2h(w32[i])


@njit(cache=True)
def group_adagrad_update(w, g, history, out, req, row_len, lr, rescale, clip, epsilon):
    for r in range(w.shape[0]):
        group_adagrad_row(w, g, history, out, r, lr, rescale, clip, epsilon, row_len,
                          req != REQ_NULL)


# nbdl's own (hidden) updates: optimizers MXNet 1.x runs as Python arithmetic

@njit(cache=True)
def adagrad_update(w, g, history, out, req, lr, epsilon, wd, rescale, clip):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], history[i] = adagrad_step(w[i], g[i], history[i], lr, epsilon, wd, rescale, clip)
        return
    for i in range(w.size):
        a, history[i] = adagrad_step(w[i], g[i], history[i], lr, epsilon, wd, rescale, clip)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def adadelta_update(w, g, acc_g, acc_delta, out, req, rho, epsilon, wd, rescale, clip):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], acc_g[i], acc_delta[i] = adadelta_step(w[i], g[i], acc_g[i], acc_delta[i], rho,
                                                         epsilon, wd, rescale, clip)
        return
    for i in range(w.size):
        a, acc_g[i], acc_delta[i] = adadelta_step(w[i], g[i], acc_g[i], acc_delta[i], rho,
                                                  epsilon, wd, rescale, clip)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def adamax_update(w, g, m, u, out, req, lr, beta1, beta2, wd, rescale, clip):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], m[i], u[i] = adamax_step(w[i], g[i], m[i], u[i], lr, beta1, beta2, wd, rescale, clip)
        return
    for i in range(w.size):
        a, m[i], u[i] = adamax_step(w[i], g[i], m[i], u[i], lr, beta1, beta2, wd, rescale, clip)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def nadam_update(w, g, m, v, out, req, lr, beta1, beta2, epsilon, wd, rescale, clip, coef_g,
                 coef_m, coef_v):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i], m[i], v[i] = nadam_step(w[i], g[i], m[i], v[i], lr, beta1, beta2, epsilon, wd,
                                          rescale, clip, coef_g, coef_m, coef_v)
        return
    for i in range(w.size):
        a, m[i], v[i] = nadam_step(w[i], g[i], m[i], v[i], lr, beta1, beta2, epsilon, wd,
                                   rescale, clip, coef_g, coef_m, coef_v)
        if req != REQ_NULL:
            out[i] = a


@njit(cache=True)
def sgld_update(w, g, noise, out, req, lr, wd, rescale, clip):
    if _into_weight(out, w, req):     # see the module's note
        for i in range(w.size):
            w[i] = sgld_step(w[i], g[i], noise[i], lr, wd, rescale, clip)
    elif req != REQ_NULL:
        for i in range(w.size):
            out[i] = sgld_step(w[i], g[i], noise[i], lr, wd, rescale, clip)


# -- prepare -------------------------------------------------------------------------

_KERNELS = {op: globals()[name] for op, name in KERNEL_OF_OP.items()}


def _half_bits(kernel):
    """``kernel`` called with its float16 arrays as their uint16 bits."""
    def run(*args):
        return kernel(*[a.view(np.uint16) if isinstance(a, np.ndarray)
                        and a.dtype == np.float16 else a for a in args])
    return run


def prepare_update(call):
    """A one-tensor update: the op's kernel over flat views, ``(req,
    *scalar_attrs)`` in the weight's dtype (float32 for ``mp_*``, which
    compute in the float32 master copy)."""
    name = call.op.name
    kernel = _KERNELS.get(name) or globals()[name]
    if name.startswith("mp_"):
        return Launch(_half_bits(kernel), update_scalars(call, np.float32), flat_views(call))
    return Launch(kernel, update_scalars(call, call.in_dtypes[0]), flat_views(call))


def prepare_group_adagrad(call):
    views, scalars, _ = group_adagrad_plan(call)
    return Launch(group_adagrad_update, scalars, views)


def prepare_multi(call):
    """``multi_*``: the one-tensor kernel once per weight (a Python launcher),
    each weight with its own ``lrs[k]``/``wds[k]``."""
    name = call.op.name
    per, single = MULTI[name]
    kernel = globals()[single]
    n = len(call.out_shapes)
    mp = single.startswith("mp_")
    if mp:
        kernel = _half_bits(kernel)
    t = np.float32 if mp else np.dtype(call.in_dtypes[0]).type

    def run(*args):
        reqs, lrs, wds, *rest = args[per * n + n:]
        for k in range(n):
            sc = multi_tensor_scalars(name, k, lrs, wds, rest)
            kernel(*args[per * k:per * k + per], args[per * n + k], reqs[k],
                   *[t(s) for s in sc])
    return Launch(run, multi_scalars(call), flat_views(call))


__all__ = ["prepare_update", "prepare_multi"]
