"""CPU kernels for the optimizers' updates (``nbdl.optimizer``).

Each update is one in-place loop over flat (1-D, contiguous) weight,
gradient and state arrays.  The arithmetic for one element is a separate
``*_step`` function returning the new values, written once in
``nbdl.kernels.shared.optimizer``; ``nbdl.kernels.cuda.optimizer`` compiles the
very same functions as CUDA device functions, so both devices run one formula.

Conventions, as MXNet's fused update kernels:
- ``rescale`` multiplies the raw gradient; ``clip`` < 0 means no clipping
  (the Python side passes -1 for ``clip_gradient=None``), otherwise the
  (rescaled) gradient is clipped to ``[-clip, clip]``;
- every scalar is passed in the weight's dtype and constants are written
  ``np.float32(...)``, so a float32 update stays float32 throughout;
- only ``math``/``min``/``max`` and plain arithmetic appear in a step, so the
  steps compile for CUDA too.
"""

from numba import njit

from ..shared import optimizer as _steps

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
ftrl_step = njit(cache=True)(_steps.ftrl_step)
signsgd_step = njit(cache=True)(_steps.signsgd_step)
signum_step = njit(cache=True)(_steps.signum_step)
ftml_step = njit(cache=True)(_steps.ftml_step)
sgld_step = njit(cache=True)(_steps.sgld_step)


# -- in-place updates over flat arrays ---------------------------------------------


@njit(cache=True)
def sgd_update(w, g, lr, wd, rescale, clip):
    for i in range(w.size):
        w[i] = sgd_step(w[i], g[i], lr, wd, rescale, clip)


@njit(cache=True)
def sgd_mom_update(w, g, mom, lr, momentum, wd, rescale, clip):
    for i in range(w.size):
        w[i], mom[i] = sgd_mom_step(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip)


@njit(cache=True)
def nag_mom_update(w, g, mom, lr, momentum, wd, rescale, clip):
    for i in range(w.size):
        w[i], mom[i] = nag_mom_step(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip)


@njit(cache=True)
def adam_update(w, g, mean, var, lr, beta1, beta2, epsilon, wd, rescale, clip):
    for i in range(w.size):
        w[i], mean[i], var[i] = adam_step(w[i], g[i], mean[i], var[i], lr, beta1, beta2,
                                          epsilon, wd, rescale, clip)


@njit(cache=True)
def adamw_update(w, g, mean, var, lr, eta, beta1, beta2, epsilon, wd, rescale, clip):
    for i in range(w.size):
        w[i], mean[i], var[i] = adamw_step(w[i], g[i], mean[i], var[i], lr, eta, beta1, beta2,
                                           epsilon, wd, rescale, clip)


@njit(cache=True)
def rmsprop_update(w, g, n, lr, gamma1, epsilon, wd, rescale, clip, clip_weights):
    for i in range(w.size):
        w[i], n[i] = rmsprop_step(w[i], g[i], n[i], lr, gamma1, epsilon, wd, rescale, clip,
                                  clip_weights)


@njit(cache=True)
def rmspropalex_update(w, g, n, gs, delta, lr, gamma1, gamma2, epsilon, wd, rescale, clip,
                       clip_weights):
    for i in range(w.size):
        w[i], n[i], gs[i], delta[i] = rmspropalex_step(
            w[i], g[i], n[i], gs[i], delta[i], lr, gamma1, gamma2, epsilon, wd, rescale, clip,
            clip_weights)


@njit(cache=True)
def adagrad_update(w, g, history, lr, epsilon, wd, rescale, clip):
    for i in range(w.size):
        w[i], history[i] = adagrad_step(w[i], g[i], history[i], lr, epsilon, wd, rescale, clip)


@njit(cache=True)
def adadelta_update(w, g, acc_g, acc_delta, rho, epsilon, wd, rescale, clip):
    for i in range(w.size):
        w[i], acc_g[i], acc_delta[i] = adadelta_step(w[i], g[i], acc_g[i], acc_delta[i],
                                                     rho, epsilon, wd, rescale, clip)


@njit(cache=True)
def adamax_update(w, g, m, u, lr, beta1, beta2, wd, rescale, clip):
    for i in range(w.size):
        w[i], m[i], u[i] = adamax_step(w[i], g[i], m[i], u[i], lr, beta1, beta2, wd, rescale,
                                       clip)


@njit(cache=True)
def nadam_update(w, g, m, v, lr, beta1, beta2, epsilon, wd, rescale, clip, coef_g, coef_m,
                 coef_v):
    for i in range(w.size):
        w[i], m[i], v[i] = nadam_step(w[i], g[i], m[i], v[i], lr, beta1, beta2, epsilon, wd,
                                      rescale, clip, coef_g, coef_m, coef_v)


@njit(cache=True)
def lamb_phase1(w, g, mean, var, beta1, beta2, epsilon, wd, rescale, clip, coef1, coef2):
    """Update the moments; return the squared norms of ``w`` and of the
    direction, summed in float64.  (The CUDA module's ``lamb_phase1``
    returns the same pair.)"""
    r1 = 0.0
    r2 = 0.0
    for i in range(w.size):
        mean[i], var[i] = lamb_moments_step(g[i], mean[i], var[i], beta1, beta2, rescale, clip)
        d = lamb_direction(w[i], mean[i], var[i], epsilon, wd, coef1, coef2)
        r1 += float(w[i]) * float(w[i])
        r2 += float(d) * float(d)
    return r1, r2


@njit(cache=True)
def lamb_phase2(w, mean, var, step, epsilon, wd, coef1, coef2):
    """``w -= step * direction``, the direction recomputed from the new
    moments (so no scratch array holds it); ``step = lr * trust ratio``."""
    for i in range(w.size):
        w[i] = w[i] - step * lamb_direction(w[i], mean[i], var[i], epsilon, wd, coef1, coef2)


@njit(cache=True)
def ftrl_update(w, g, z, n, lr, lamda1, beta, wd, rescale, clip):
    for i in range(w.size):
        w[i], z[i], n[i] = ftrl_step(w[i], g[i], z[i], n[i], lr, lamda1, beta, wd, rescale, clip)


@njit(cache=True)
def signsgd_update(w, g, lr, wd):
    for i in range(w.size):
        w[i] = signsgd_step(w[i], g[i], lr, wd)


@njit(cache=True)
def signum_update(w, g, mom, lr, momentum, wd, rescale, clip, wd_lh):
    for i in range(w.size):
        w[i], mom[i] = signum_step(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip, wd_lh)


@njit(cache=True)
def ftml_update(w, g, d, v, z, lr, beta1, beta2, epsilon, wd, rescale, clip, coef1, coef2):
    for i in range(w.size):
        w[i], d[i], v[i], z[i] = ftml_step(w[i], g[i], d[i], v[i], z[i], lr, beta1, beta2,
                                           epsilon, wd, rescale, clip, coef1, coef2)


@njit(cache=True)
def sgld_update(w, g, noise, lr, wd, rescale, clip):
    for i in range(w.size):
        w[i] = sgld_step(w[i], g[i], noise[i], lr, wd, rescale, clip)
