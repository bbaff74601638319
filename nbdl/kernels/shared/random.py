"""The samplers' math, shared by the CPU and CUDA kernels (``nbdl.kernels.cpu.random``,
``nbdl.kernels.cuda.random``).

Every sampler is a pure function of a 64-bit ``key`` (one per kernel launch),
the element index and a draw counter: a counter-based generator (the
splitmix64 finaliser applied to ``key`` and ``index * golden + draw``), so an
element's value does not depend on which thread computes it, and a launch
with the same key gives the same numbers on the CPU and on the GPU.  The
keys come from nbdl's kernel RNG state (``random_state``): the CPU kernels
draw theirs from numba's seeded stream inside the kernel, the CUDA ones get
theirs from the device's host-side key stream at each launch.

The functions are ``register_jitable``: callable from ``@njit`` code and from
CUDA kernels (and plain Python under the CUDA simulator).  Values are
computed in float64 and rounded once to the output dtype, as MXNet's
samplers compute in float and cast.

Distributions (``DIST_*`` codes; parameters ``a``, ``b`` as MXNet names them):
uniform (low, high), normal (loc, scale), gamma (alpha shape, beta scale),
exponential (lam rate), poisson (lam), negative binomial (k, p: poisson of a
gamma(k, (1-p)/p) rate), generalized negative binomial (mu, alpha: poisson of
a gamma(1/alpha, mu*alpha) rate; poisson(mu) for alpha 0).  Gamma is
Marsaglia and Tsang's method (alpha < 1 boosted by ``u**(1/alpha)``), Poisson
is Knuth's product method below lam 12 and Hormann's transformed rejection
(PTRS) above.
"""
import math

import numpy as np
from numba.extending import register_jitable
from .elemwise_plan import size_of as _size

DIST_UNIFORM = 0
DIST_NORMAL = 1
DIST_GAMMA = 2
DIST_EXPONENTIAL = 3
DIST_POISSON = 4
DIST_NEGATIVE_BINOMIAL = 5
DIST_GENERALIZED_NEGATIVE_BINOMIAL = 6

DIST_CODES = {"uniform": DIST_UNIFORM, "normal": DIST_NORMAL, "gamma": DIST_GAMMA,
              "exponential": DIST_EXPONENTIAL, "poisson": DIST_POISSON,
              "negative_binomial": DIST_NEGATIVE_BINOMIAL,
              "generalized_negative_binomial": DIST_GENERALIZED_NEGATIVE_BINOMIAL}

_M1 = np.uint64(0xbf58476d1ce4e5b9)
_M2 = np.uint64(0x94d049bb133111eb)
_GOLDEN = np.uint64(0x9e3779b97f4a7c15)
_S11 = np.uint64(11)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_INV53 = 1.0 / 9007199254740992.0          # 2**-53
_TWO_PI = 6.283185307179586


@register_jitable
def mix64(z):
    """splitmix64's finaliser of the uint64 ``z`` (a bijection with good avalanche)."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@register_jitable
def bits(key, idx, j):
    """64 random bits for draw ``j`` of element ``idx`` under ``key`` (uint64)."""
    return mix64(key ^ mix64(np.uint64(idx) * _GOLDEN + np.uint64(j)))


@register_jitable
def uniform01(key, idx, j):
    """A float64 in [0, 1) (53 random bits)."""
    return np.float64(bits(key, idx, j) >> _S11) * _INV53


@register_jitable
def std_normal(key, idx, j):
    """A standard normal (Box-Muller on draws j, j + 1)."""
    u1 = uniform01(key, idx, j)
    u2 = uniform01(key, idx, j + 1)
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(_TWO_PI * u2)


@register_jitable
def std_gamma(alpha, key, idx, j):
    """(A gamma(alpha, 1) variate, the next free draw counter)."""
    if not alpha > 0.0:
        return math.nan, j
    boost = 1.0
    if alpha < 1.0:
        boost = math.pow(1.0 - uniform01(key, idx, j), 1.0 / alpha)
        j += 1
        alpha += 1.0
    d = alpha - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = std_normal(key, idx, j)
        j += 2
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform01(key, idx, j)
        j += 1
        if math.log(1.0 - u) < 0.5 * x * x + d - d * v + d * math.log(v):
            return boost * d * v, j


@register_jitable
def poisson(lam, key, idx, j):
    """(A Poisson(lam) count as a float64, the next free draw counter)."""
    if lam < 0.0 or lam != lam:
        return math.nan, j
    if lam == 0.0:
        return 0.0, j
    if lam < 12.0:
        limit = math.exp(-lam)
        k = 0.0
        prod = 1.0 - uniform01(key, idx, j)
        j += 1
        while prod > limit:
            k += 1.0
            prod *= 1.0 - uniform01(key, idx, j)
            j += 1
        return k, j
    slam = math.sqrt(lam)
    loglam = math.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    while True:
        uu = uniform01(key, idx, j) - 0.5
        v = uniform01(key, idx, j + 1)
        j += 2
        us = 0.5 - abs(uu)
        k = math.floor((2.0 * a / us + b) * uu + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return k, j
        if k < 0.0 or (us < 0.013 and v > us):
            continue
        if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                <= -lam + k * loglam - math.lgamma(k + 1.0)):
            return k, j


@register_jitable
def draw(dist, a, b, key, idx):
    """One float64 sample of distribution ``dist`` with parameters ``a``, ``b``
    (see the module docstring) for element ``idx`` under ``key``."""
    if dist == DIST_UNIFORM:
        return a + (b - a) * uniform01(key, idx, 0)
    if dist == DIST_NORMAL:
        return a + b * std_normal(key, idx, 0)
    if dist == DIST_GAMMA:
        g, _ = std_gamma(a, key, idx, 0)
        return g * b
    if dist == DIST_EXPONENTIAL:
        return -math.log(1.0 - uniform01(key, idx, 0)) / a
    if dist == DIST_POISSON:
        k, _ = poisson(a, key, idx, 0)
        return k
    if dist == DIST_NEGATIVE_BINOMIAL:
        g, j = std_gamma(a, key, idx, 0)
        k, _ = poisson(g * (1.0 - b) / b, key, idx, j)
        return k
    # generalized negative binomial: a = mu, b = alpha
    if b == 0.0:
        k, _ = poisson(a, key, idx, 0)
        return k
    g, j = std_gamma(1.0 / b, key, idx, 0)
    k, _ = poisson(g * a * b, key, idx, j)
    return k


@register_jitable
def randint(low, high, key, idx):
    """An integer in [low, high) (int64 arithmetic; high > low)."""
    span = np.uint64(high - low)
    return low + np.int64(bits(key, idx, 0) % span)


@register_jitable
def uniform_below(n, key, idx, j):
    """An integer in [0, n) for n >= 1 (Fisher-Yates' draws)."""
    return np.int64(bits(key, idx, j) % np.uint64(n))


@register_jitable
def permutation(perm, key):
    """``perm`` = a Fisher-Yates permutation of ``range(perm.size)`` drawn
    under ``key``."""
    n = perm.size
    for i in range(n):
        perm[i] = i
    for i in range(n - 1, 0, -1):
        j = uniform_below(i + 1, key, 0, i)
        t = perm[i]
        perm[i] = perm[j]
        perm[j] = t


@register_jitable
def fit_uniform(v, a, b):
    """``v`` (a uniform sample rounded to the output dtype) kept inside
    [low, high): rounding to float32 can land on ``high``."""
    if v >= b and b > a:
        return a
    return v


@register_jitable
def pick(probs, r, u):
    """The category of row ``r`` of the 2-d ``probs`` that ``u`` in [0, 1)
    falls in: the first whose running sum (float64) exceeds ``u``, the last
    one when rounding leaves ``u`` above the row's total (MXNet's rule)."""
    k = probs.shape[1]
    acc = 0.0
    for c in range(k):
        acc += probs[r, c]
        if u < acc:
            return c
    return k - 1


@register_jitable
def key_from(seed_bits):
    """A launch key from raw seed bits (an int64 drawn from a seeded stream)."""
    return mix64(np.uint64(seed_bits) + _GOLDEN)


def scalar_params(opname, attrs):
    """(distribution code, a, b) of a ``_random_<dist>`` / ``_random_<dist>_like``
    op from its attributes (a one-parameter distribution repeats ``a``)."""
    dist = opname[len("_random_"):]
    if dist.endswith("_like"):
        dist = dist[:-len("_like")]
    names = _PARAM_NAMES[dist]
    a = float(attrs[names[0]])
    b = float(attrs[names[-1]])
    return DIST_CODES[dist], a, b


def sample_code(opname):
    """The distribution code of a ``_sample_<dist>`` op."""
    return DIST_CODES[opname[len("_sample_"):]]


_PARAM_NAMES = {"uniform": ("low", "high"), "normal": ("loc", "scale"),
                "gamma": ("alpha", "beta"), "exponential": ("lam",), "poisson": ("lam",),
                "negative_binomial": ("k", "p"),
                "generalized_negative_binomial": ("mu", "alpha")}


def sample_views(call):
    """(parameter view, output view, draws per parameter) of a ``_sample_`` op."""
    n = _size(call.in_shapes[0])
    total = _size(call.out_shapes[0])
    per = total // n if n else 0
    return (n,), (total,), per


def multinomial_views(in_shape, out_shape):
    k = int(in_shape[-1])
    rows = _size(in_shape[:-1])
    m = _size(out_shape) // rows if rows else 0
    return (rows, k), (rows, m)


def shuffle_views(shape):
    shape = tuple(shape)
    rows = int(shape[0]) if shape else 1
    rest = _size(shape[1:]) if shape else 1
    return (rows, rest), (rows,)


@register_jitable
def unique_zipfian_row(r, key, samples, tries, seen, log_range_max):
    """Row ``r`` of ``_sample_unique_zipfian`` (MXNet's rejection loop): draw
    ``lround(exp(u * log(range_max))) - 1`` until ``samples.shape[1]``
    distinct classes are found, in the order found; ``tries[r]`` counts the
    draws.  ``seen[r]`` (one byte per class, scratch) is cleared first."""
    for c in range(seen.shape[1]):
        seen[r, c] = 0
    n = samples.shape[1]
    count = 0
    t = 0
    while count < n:
        y = math.exp(uniform01(key, r, t) * log_range_max)
        v = np.int64(math.floor(y + 0.5)) - 1        # lround: y >= 1, halves away from 0
        if seen[r, v] == 0:
            seen[r, v] = 1
            samples[r, count] = v
            count += 1
        t += 1
    tries[r] = t
