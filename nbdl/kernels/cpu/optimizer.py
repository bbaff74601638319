"""CPU kernels for the optimizers' updates (``nbdl.optimizer``).

Each update is one in-place loop over flat (1-D, contiguous) weight,
gradient and state arrays.  The arithmetic for one element is a separate
``*_step`` function returning the new values; ``nbdl.kernels.cuda.optimizer``
compiles the very same Python functions (``step.py_func``) as CUDA device
functions, so both devices run one formula.

Conventions, as MXNet's fused update kernels:
- ``rescale`` multiplies the raw gradient; ``clip`` < 0 means no clipping
  (the Python side passes -1 for ``clip_gradient=None``), otherwise the
  (rescaled) gradient is clipped to ``[-clip, clip]``;
- every scalar is passed in the weight's dtype and constants are written
  ``np.float32(...)``, so a float32 update stays float32 throughout;
- only ``math``/``min``/``max`` and plain arithmetic appear in a step, so the
  steps compile for CUDA too.
"""
import math

import numpy as np
from numba import njit

# -- per-element steps ---------------------------------------------------------
# (No helper calls inside a step: a CPU dispatcher cannot be called from a
# CUDA device function, so clipping is written out each time.)


@njit(cache=True)
def sgd_step(w, g, lr, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    return (np.float32(1.0) - lr * wd) * w - lr * x


@njit(cache=True)
def sgd_mom_step(w, g, mom, lr, momentum, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    mom = momentum * mom - lr * wd * w - lr * x
    return w + mom, mom


@njit(cache=True)
def nag_mom_step(w, g, mom, lr, momentum, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    x = x + wd * w
    mom = momentum * mom + x
    return w - lr * (momentum * mom + x), mom


@njit(cache=True)
def adam_step(w, g, mean, var, lr, beta1, beta2, epsilon, wd, rescale, clip):
    x = rescale * g + wd * w
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    mean = beta1 * mean + (one - beta1) * x
    var = beta2 * var + (one - beta2) * x * x
    return w - lr * mean / (math.sqrt(var) + epsilon), mean, var


@njit(cache=True)
def adamw_step(w, g, mean, var, lr, eta, beta1, beta2, epsilon, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    mean = beta1 * mean + (one - beta1) * x
    var = beta2 * var + (one - beta2) * x * x
    return w - eta * (lr * mean / (math.sqrt(var) + epsilon) + wd * w), mean, var


@njit(cache=True)
def rmsprop_step(w, g, n, lr, gamma1, epsilon, wd, rescale, clip, clip_weights):
    x = rescale * g + wd * w
    if clip >= 0:
        x = min(max(x, -clip), clip)
    n = (np.float32(1.0) - gamma1) * x * x + gamma1 * n
    w = w - lr * x / math.sqrt(n + epsilon)
    if clip_weights >= 0:
        w = min(max(w, -clip_weights), clip_weights)
    return w, n


@njit(cache=True)
def rmspropalex_step(w, g, n, gs, delta, lr, gamma1, gamma2, epsilon, wd, rescale, clip,
                     clip_weights):
    x = rescale * g + wd * w
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    n = (one - gamma1) * x * x + gamma1 * n
    gs = (one - gamma1) * x + gamma1 * gs
    delta = gamma2 * delta - lr * x / math.sqrt(n - gs * gs + epsilon)
    w = w + delta
    if clip_weights >= 0:
        w = min(max(w, -clip_weights), clip_weights)
    return w, n, gs, delta


@njit(cache=True)
def adagrad_step(w, g, history, lr, epsilon, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    history = history + x * x
    return w - lr * (x / math.sqrt(history + epsilon) + wd * w), history


@njit(cache=True)
def adadelta_step(w, g, acc_g, acc_delta, lr, rho, epsilon, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    x = x + wd * w
    one = np.float32(1.0)
    acc_g = rho * acc_g + (one - rho) * x * x
    d = math.sqrt(acc_delta + epsilon) / math.sqrt(acc_g + epsilon) * x
    acc_delta = rho * acc_delta + (one - rho) * d * d
    return w - lr * d, acc_g, acc_delta


@njit(cache=True)
def adamax_step(w, g, m, u, lr, beta1, beta2, wd, rescale, clip):
    x = rescale * g + wd * w
    if clip >= 0:
        x = min(max(x, -clip), clip)
    m = beta1 * m + (np.float32(1.0) - beta1) * x
    u = max(beta2 * u, abs(x))
    if u > 0:   # u == 0 only when every gradient so far was 0, and then m == 0 too
        w = w - lr * m / u
    return w, m, u


@njit(cache=True)
def nadam_step(w, g, m, v, lr, beta1, beta2, epsilon, wd, rescale, clip, coef_g, coef_m,
               coef_v):
    """``coef_g = (1 - mu_t) / (1 - prod mu_1..t)``, ``coef_m = mu_{t+1} /
    (1 - prod mu_1..t+1)``, ``coef_v = 1 / (1 - beta2**t)`` (from Python)."""
    x = rescale * g + wd * w
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    m = beta1 * m + (one - beta1) * x
    v = beta2 * v + (one - beta2) * x * x
    m_bar = coef_g * x + coef_m * m
    return w - lr * m_bar / (math.sqrt(v * coef_v) + epsilon), m, v


@njit(cache=True)
def lamb_moments_step(g, mean, var, beta1, beta2, rescale, clip):
    """LAMB's moments for one element."""
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    one = np.float32(1.0)
    return beta1 * mean + (one - beta1) * x, beta2 * var + (one - beta2) * x * x


@njit(cache=True)
def lamb_direction(w, mean, var, epsilon, wd, coef1, coef2):
    """``mean_hat / (sqrt(var_hat) + epsilon) + wd * w`` with ``coef1 = 1 /
    (1 - beta1**t)``, ``coef2 = 1 / (1 - beta2**t)`` (1 without bias correction)."""
    return mean * coef1 / (math.sqrt(var * coef2) + epsilon) + wd * w


@njit(cache=True)
def ftrl_step(w, g, z, n, lr, lamda1, beta, wd, rescale, clip):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    z = z + x - (math.sqrt(n + x * x) - math.sqrt(n)) * w / lr
    n = n + x * x
    if abs(z) > lamda1:
        sz = lamda1 if z > 0 else -lamda1
        w = (sz - z) / ((beta + math.sqrt(n)) / lr + wd)
    else:
        w = z * np.float32(0.0)
    return w, z, n


@njit(cache=True)
def signsgd_step(w, g, lr, wd):
    w = (np.float32(1.0) - lr * wd) * w
    if g > 0:
        w = w - lr
    elif g < 0:
        w = w + lr
    return w


@njit(cache=True)
def signum_step(w, g, mom, lr, momentum, wd, rescale, clip, wd_lh):
    x = rescale * g
    if clip >= 0:
        x = min(max(x, -clip), clip)
    keep = np.float32(1.0) - momentum
    mom = momentum * mom - keep * wd * w - keep * x
    w = (np.float32(1.0) - lr * wd_lh) * w
    if mom > 0:
        w = w + lr
    elif mom < 0:
        w = w - lr
    return w, mom


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
def adadelta_update(w, g, acc_g, acc_delta, lr, rho, epsilon, wd, rescale, clip):
    for i in range(w.size):
        w[i], acc_g[i], acc_delta[i] = adadelta_step(w[i], g[i], acc_g[i], acc_delta[i], lr,
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
