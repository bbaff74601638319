"""The pdf ops' math, shared by the CPU and CUDA kernels (``register_jitable``,
float64 inside, as ``kernels/shared/random.py``).

Parameterisations are MXNet 1.9.1's pdf ops' (they differ from the samplers'
in one place: the gamma pdf's ``beta`` is a *rate*, ``b**a x**(a-1) e**(-b x) /
Gamma(a)``, where ``_random_gamma``'s beta is a scale).  Codes are
``kernels.shared.random.DIST_*``.  No support checks (a uniform pdf is
``1 / (high - low)`` everywhere), as MXNet.
"""
import math

import numpy as np

from numba.extending import register_jitable

from . import special
from .random import (DIST_EXPONENTIAL, DIST_GAMMA, DIST_NEGATIVE_BINOMIAL, DIST_NORMAL,
                     DIST_POISSON, DIST_UNIFORM)
from .elemwise_plan import size_of as _size

psi = register_jitable(special.digamma)
_LOG_SQRT_2PI = 0.9189385332046727       # log(sqrt(2 pi))


@register_jitable
def negbin_lpdf(lim, p, x):
    return (math.lgamma(x + lim) - math.lgamma(x + 1.0) - math.lgamma(lim)
            + lim * math.log(p) + x * math.log(1.0 - p))


@register_jitable
def log_pdf(dist, x, a, b):
    """log pdf (or pmf) of ``x`` under distribution ``dist`` with parameters a, b."""
    if dist == DIST_UNIFORM:
        return -math.log(b - a)
    if dist == DIST_NORMAL:
        return -0.5 * (x - a) * (x - a) / (b * b) - _LOG_SQRT_2PI - math.log(b)
    if dist == DIST_GAMMA:
        return a * math.log(b) + (a - 1.0) * math.log(x) - b * x - math.lgamma(a)
    if dist == DIST_EXPONENTIAL:
        return math.log(a) - a * x
    if dist == DIST_POISSON:
        return x * math.log(a) - math.lgamma(x + 1.0) - a
    if dist == DIST_NEGATIVE_BINOMIAL:
        return negbin_lpdf(a, b, x)
    # generalized negative binomial (mu = a, alpha = b)
    return negbin_lpdf(1.0 / b, 1.0 / (a * b + 1.0), x)


@register_jitable
def negbin_grads(lim, p, x, scaling):
    """(d/d limit, d/d p) of the negative binomial log-pmf, times ``scaling``."""
    return (scaling * (psi(x + lim) - psi(lim) + math.log(p)),
            scaling * (lim / p - x / (1.0 - p)))


@register_jitable
def pdf_grads(dist, x, a, b, scaling):
    """(d/dx, d/da, d/db) of the log pdf times ``scaling`` (the head gradient,
    times the pdf itself when the op returns the pdf rather than its log)."""
    if dist == DIST_UNIFORM:
        return 0.0, scaling / (b - a), scaling / (a - b)
    if dist == DIST_NORMAL:
        s2 = b * b
        return (scaling * (a - x) / s2, scaling * (x - a) / s2,
                scaling * ((x - a) * (x - a) - s2) / (s2 * b))
    if dist == DIST_GAMMA:
        return (scaling * ((a - 1.0) / x - b), scaling * (math.log(b) + math.log(x) - psi(a)),
                scaling * (a / b - x))
    if dist == DIST_EXPONENTIAL:
        return -scaling * a, scaling * (1.0 / a - x), 0.0
    if dist == DIST_POISSON:
        return 0.0, scaling * (x / a - 1.0), 0.0
    if dist == DIST_NEGATIVE_BINOMIAL:
        gl, gp = negbin_grads(a, b, x, scaling)
        return 0.0, gl, gp
    den = a * b + 1.0
    gl, gp = negbin_grads(1.0 / b, 1.0 / den, x, scaling)
    return 0.0, -gp * b / (den * den), -gl / (b * b) - gp * a / (den * den)


@register_jitable
def dirichlet_lpdf(sample, alpha, n, s):
    """log pdf of ``sample[n, s, :]`` under Dirichlet(``alpha[n, :]``)."""
    k = alpha.shape[1]
    sum_a = 0.0
    acc = 0.0
    for j in range(k):
        aj = float(alpha[n, j])
        sum_a += aj
        acc += (aj - 1.0) * math.log(float(sample[n, s, j])) - math.lgamma(aj)
    return acc + math.lgamma(sum_a)


@register_jitable
def dirichlet_backward_row(og, sample, alpha, pdf, gs, ga, i, is_log, want_s, want_a):
    """Row ``i`` of the Dirichlet pdf's gradients (float64 inside): to the
    samples ``gs[i]`` (when ``want_s``) and to alpha ``ga[i]`` (when
    ``want_a``); ``og`` scales the log pdf, or the pdf (``pdf``) unless
    ``is_log``."""
    s = sample.shape[1]
    k = sample.shape[2]
    sum_a = 0.0
    for c in range(k):
        sum_a += np.float64(alpha[i, c])
    psi_sum = psi(sum_a)
    for c in range(k):
        ac = np.float64(alpha[i, c])
        acc = 0.0
        for j in range(s):
            sc = np.float64(og[i, j])
            if not is_log:
                sc = sc * np.float64(pdf[i, j])
            x = np.float64(sample[i, j, c])
            acc += sc * (math.log(x) + psi_sum - psi(ac))
            if want_s:
                gs[i, j, c] = sc * (ac - 1.0) / x
        if want_a:
            ga[i, c] = acc


def pdf_views(sample_shape, param_shape, vector):
    """(sample view, parameter view, output view) of a pdf op."""
    if vector:
        k = int(sample_shape[-1])
        n = _size(param_shape[:-1])
        s = _size(sample_shape[:-1]) // n if n else 0
        return (n, s, k), (n, k), (n, s)
    n = _size(param_shape)
    s = _size(sample_shape) // n if n else 0
    return (n, s), (n,), (n, s)


def dist_of(opname):
    return opname.replace("_backward_pdf_", "").replace("_random_pdf_", "")
