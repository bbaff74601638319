"""CUDA kernels for the optimizers' updates (``nbdl.optimizer``).

The per-element arithmetic is ``nbdl.kernels.shared.optimizer``'s: each
``*_step`` there is a plain Python function, compiled here as a CUDA device
function and by ``kernels.cpu.optimizer`` with ``njit``, so one formula serves
both devices.  Each
``*_update`` below has the CPU function's name and arguments (flat arrays,
then scalars in the weight's dtype) and launches one grid-stride kernel; the
caller enters the weight's GPU context.
"""
import numpy as np
from numba import cuda, float64

from ..shared import optimizer as _steps
from ._launch import THREADS, grid1d


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
_ftrl = _device(_steps.ftrl_step)
_signsgd = _device(_steps.signsgd_step)
_signum = _device(_steps.signum_step)
_ftml = _device(_steps.ftml_step)
_sgld = _device(_steps.sgld_step)


def _launch(kernel, n, *args):
    if n == 0:
        return
    blocks, threads = grid1d(n)
    kernel[blocks, threads](*args)


# -- kernels ---------------------------------------------------------------------


@cuda.jit
def _sgd_kernel(w, g, lr, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        w[i] = _sgd(w[i], g[i], lr, wd, rescale, clip)


@cuda.jit
def _sgd_mom_kernel(w, g, mom, lr, momentum, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b = _sgd_mom(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip)
        w[i] = a
        mom[i] = b


@cuda.jit
def _nag_mom_kernel(w, g, mom, lr, momentum, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b = _nag_mom(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip)
        w[i] = a
        mom[i] = b


@cuda.jit
def _adam_kernel(w, g, mean, var, lr, beta1, beta2, epsilon, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c = _adam(w[i], g[i], mean[i], var[i], lr, beta1, beta2, epsilon, wd, rescale, clip)
        w[i] = a
        mean[i] = b
        var[i] = c


@cuda.jit
def _adamw_kernel(w, g, mean, var, lr, eta, beta1, beta2, epsilon, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c = _adamw(w[i], g[i], mean[i], var[i], lr, eta, beta1, beta2, epsilon, wd,
                         rescale, clip)
        w[i] = a
        mean[i] = b
        var[i] = c


@cuda.jit
def _rmsprop_kernel(w, g, n, lr, gamma1, epsilon, wd, rescale, clip, clip_weights):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b = _rmsprop(w[i], g[i], n[i], lr, gamma1, epsilon, wd, rescale, clip, clip_weights)
        w[i] = a
        n[i] = b


@cuda.jit
def _rmspropalex_kernel(w, g, n, gs, delta, lr, gamma1, gamma2, epsilon, wd, rescale, clip,
                        clip_weights):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c, d = _rmspropalex(w[i], g[i], n[i], gs[i], delta[i], lr, gamma1, gamma2, epsilon,
                                  wd, rescale, clip, clip_weights)
        w[i] = a
        n[i] = b
        gs[i] = c
        delta[i] = d


@cuda.jit
def _adagrad_kernel(w, g, history, lr, epsilon, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b = _adagrad(w[i], g[i], history[i], lr, epsilon, wd, rescale, clip)
        w[i] = a
        history[i] = b


@cuda.jit
def _adadelta_kernel(w, g, acc_g, acc_delta, rho, epsilon, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c = _adadelta(w[i], g[i], acc_g[i], acc_delta[i], rho, epsilon, wd, rescale,
                            clip)
        w[i] = a
        acc_g[i] = b
        acc_delta[i] = c


@cuda.jit
def _adamax_kernel(w, g, m, u, lr, beta1, beta2, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c = _adamax(w[i], g[i], m[i], u[i], lr, beta1, beta2, wd, rescale, clip)
        w[i] = a
        m[i] = b
        u[i] = c


@cuda.jit
def _nadam_kernel(w, g, m, v, lr, beta1, beta2, epsilon, wd, rescale, clip, coef_g, coef_m,
                  coef_v):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c = _nadam(w[i], g[i], m[i], v[i], lr, beta1, beta2, epsilon, wd, rescale, clip,
                         coef_g, coef_m, coef_v)
        w[i] = a
        m[i] = b
        v[i] = c


@cuda.jit
def _lamb_phase1_kernel(w, g, mean, var, beta1, beta2, epsilon, wd, rescale, clip, coef1, coef2,
                        norms):
    # Each thread sums its elements, the block reduces in shared memory, and
    # one atomic per block adds to the two float64 totals.
    s1 = cuda.shared.array(THREADS, float64)
    s2 = cuda.shared.array(THREADS, float64)
    tid = cuda.threadIdx.x
    a = 0.0
    b = 0.0
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        m, v = _lamb_moments(g[i], mean[i], var[i], beta1, beta2, rescale, clip)
        mean[i] = m
        var[i] = v
        d = float(_lamb_direction(w[i], m, v, epsilon, wd, coef1, coef2))
        x = float(w[i])
        a += x * x
        b += d * d
    s1[tid] = a
    s2[tid] = b
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:
        if tid < half:
            s1[tid] += s1[tid + half]
            s2[tid] += s2[tid + half]
        cuda.syncthreads()
        half //= 2
    if tid == 0:
        cuda.atomic.add(norms, 0, s1[0])
        cuda.atomic.add(norms, 1, s2[0])


@cuda.jit
def _lamb_phase2_kernel(w, mean, var, step, epsilon, wd, coef1, coef2):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        w[i] = w[i] - step * _lamb_direction(w[i], mean[i], var[i], epsilon, wd, coef1, coef2)


@cuda.jit
def _ftrl_kernel(w, g, z, n, lr, lamda1, beta, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c = _ftrl(w[i], g[i], z[i], n[i], lr, lamda1, beta, wd, rescale, clip)
        w[i] = a
        z[i] = b
        n[i] = c


@cuda.jit
def _signsgd_kernel(w, g, lr, wd):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        w[i] = _signsgd(w[i], g[i], lr, wd)


@cuda.jit
def _signum_kernel(w, g, mom, lr, momentum, wd, rescale, clip, wd_lh):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b = _signum(w[i], g[i], mom[i], lr, momentum, wd, rescale, clip, wd_lh)
        w[i] = a
        mom[i] = b


@cuda.jit
def _ftml_kernel(w, g, d, v, z, lr, beta1, beta2, epsilon, wd, rescale, clip, coef1, coef2):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        a, b, c, e = _ftml(w[i], g[i], d[i], v[i], z[i], lr, beta1, beta2, epsilon, wd, rescale,
                           clip, coef1, coef2)
        w[i] = a
        d[i] = b
        v[i] = c
        z[i] = e


@cuda.jit
def _sgld_kernel(w, g, noise, lr, wd, rescale, clip):
    for i in range(cuda.grid(1), w.size, cuda.gridsize(1)):
        w[i] = _sgld(w[i], g[i], noise[i], lr, wd, rescale, clip)


# -- the CPU module's interface --------------------------------------------------


def sgd_update(w, g, *scalars):
    _launch(_sgd_kernel, w.size, w, g, *scalars)


def sgd_mom_update(w, g, mom, *scalars):
    _launch(_sgd_mom_kernel, w.size, w, g, mom, *scalars)


def nag_mom_update(w, g, mom, *scalars):
    _launch(_nag_mom_kernel, w.size, w, g, mom, *scalars)


def adam_update(w, g, mean, var, *scalars):
    _launch(_adam_kernel, w.size, w, g, mean, var, *scalars)


def adamw_update(w, g, mean, var, *scalars):
    _launch(_adamw_kernel, w.size, w, g, mean, var, *scalars)


def rmsprop_update(w, g, n, *scalars):
    _launch(_rmsprop_kernel, w.size, w, g, n, *scalars)


def rmspropalex_update(w, g, n, gs, delta, *scalars):
    _launch(_rmspropalex_kernel, w.size, w, g, n, gs, delta, *scalars)


def adagrad_update(w, g, history, *scalars):
    _launch(_adagrad_kernel, w.size, w, g, history, *scalars)


def adadelta_update(w, g, acc_g, acc_delta, *scalars):
    _launch(_adadelta_kernel, w.size, w, g, acc_g, acc_delta, *scalars)


def adamax_update(w, g, m, u, *scalars):
    _launch(_adamax_kernel, w.size, w, g, m, u, *scalars)


def nadam_update(w, g, m, v, *scalars):
    _launch(_nadam_kernel, w.size, w, g, m, v, *scalars)


_norms = {}   # GPU id -> a 2-element float64 device array (LAMB's norm totals)


def lamb_phase1(w, g, mean, var, *scalars):
    """As the CPU ``lamb_phase1``: returns (sum of w**2, sum of direction**2)."""
    # (the simulator's device has no id; it simulates a single GPU)
    dev = getattr(cuda.get_current_device(), "id", 0)
    norms = _norms.get(dev)
    if norms is None:
        norms = _norms[dev] = cuda.device_array(2, np.float64)
    norms.copy_to_device(np.zeros(2, np.float64))
    _launch(_lamb_phase1_kernel, w.size, w, g, mean, var, *scalars, norms)
    host = norms.copy_to_host()
    return float(host[0]), float(host[1])


def lamb_phase2(w, mean, var, *scalars):
    _launch(_lamb_phase2_kernel, w.size, w, mean, var, *scalars)


def ftrl_update(w, g, z, n, *scalars):
    _launch(_ftrl_kernel, w.size, w, g, z, n, *scalars)


def signsgd_update(w, g, *scalars):
    _launch(_signsgd_kernel, w.size, w, g, *scalars)


def signum_update(w, g, mom, *scalars):
    _launch(_signum_kernel, w.size, w, g, mom, *scalars)


def ftml_update(w, g, d, v, z, *scalars):
    _launch(_ftml_kernel, w.size, w, g, d, v, z, *scalars)


def sgld_update(w, g, noise, *scalars):
    _launch(_sgld_kernel, w.size, w, g, noise, *scalars)
