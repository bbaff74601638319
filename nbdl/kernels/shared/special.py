"""Special functions the elementwise expressions call that neither Numba's
CPU target nor its CUDA target provides: ``erfinv`` and ``digamma``.

They are plain Python over ``math`` scalars, computed in float64, so one
source serves both devices: the CPU generator wraps them with ``njit`` and
the CUDA generator with ``cuda.jit(device=True)``.  (Pure Python; this module
imports neither device.)
"""
import math

_SQRT_PI_2 = 0.8862269254527580   # sqrt(pi) / 2


def erfinv(y):
    """Inverse error function of a float ``y`` in [-1, 1]: ``erfinv(+-1)`` is
    +-inf, anything outside (and NaN) gives NaN.

    A rational first guess in ``w = -log(1 - y*y)`` (single-precision
    polynomials in the form published by M. Giles, 2010), refined by two
    Newton steps on ``erf(x) - y`` in float64.

    Parameters
    ----------
    y : float
        The value whose inverse error function is wanted.
    """
    y = float(y)
    if not (y >= -1.0 and y <= 1.0):
        return math.nan
    if y == 1.0:
        return math.inf
    if y == -1.0:
        return -math.inf
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5.0:
        w = w - 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * w
        p = -3.5233877e-06 + p * w
        p = -4.39150654e-06 + p * w
        p = 0.00021858087 + p * w
        p = -0.00125372503 + p * w
        p = -0.00417768164 + p * w
        p = 0.246640727 + p * w
        p = 1.50140941 + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        p = 0.000100950558 + p * w
        p = 0.00134934322 + p * w
        p = -0.00367342844 + p * w
        p = 0.00573950773 + p * w
        p = -0.0076224613 + p * w
        p = 0.00943887047 + p * w
        p = 1.00167406 + p * w
        p = 2.83297682 + p * w
    x = p * y
    for _ in range(2):
        slope = math.exp(-x * x) / _SQRT_PI_2
        if slope > 0.0:
            x = x - (math.erf(x) - y) / slope
    return x


def digamma(x):
    """The digamma function psi(x) = d/dx log|Gamma(x)| of a float ``x``
    (NaN at 0 and the negative integers, where Gamma has poles).

    Reflection below 0, the recurrence ``psi(x) = psi(x + 1) - 1/x`` up to 6,
    then the asymptotic series, in float64.

    Parameters
    ----------
    x : float
        The argument.
    """
    x = float(x)
    if x != x:
        return math.nan
    acc = 0.0
    if x <= 0.0:
        if x == math.floor(x):
            return math.nan
        # psi(x) = psi(1 - x) - pi / tan(pi x)
        acc = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    if x == math.inf:
        return math.inf
    while x < 6.0:
        acc -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240
                                                                      + f * (-1.0 / 132)))))
    return acc + math.log(x) - 0.5 / x + series
