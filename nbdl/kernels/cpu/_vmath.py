"""``vexp``, ``vsigmoid``, ``vtanh``: exp, the logistic function and tanh for
``@njit`` loops that LLVM can vectorise.

llvmlite links no vector math library, so ``np.exp``/``np.tanh`` in a loop
are a call per element (the LSTM's gate loop spent more time in them than in
its GEMMs).  For float32 these are written out of arithmetic, ``floor``,
``copysign`` and an integer-to-float bit cast, all of which LLVM vectorises:

- exp: ``x = n ln2 + r`` with ``n = round(x / ln2)`` (ln2 in two parts, so
  ``r`` is exact), ``e^r`` by a degree-7 polynomial on ``[-ln2/2, ln2/2]``
  (relative error 2e-10 before rounding), times ``2^n`` built from exponent
  bits in two halves (so results that overflow are inf and tiny ones
  underflow gradually); inputs are clamped to ``[-104, 89]`` first;
- sigmoid: ``1 / (1 + exp(-x))``;
- tanh: an odd polynomial ``x + x^3 Q(x^2)`` below ``|x| = 0.625`` (relative
  error 6e-10), ``1 - 2 / (e^{2|x|} + 1)`` above, sign copied.

Measured against float64 results rounded to float32 over the whole float32
range (``tests/ops/test_vmath.py``): at most 2 ulp for exp, 3 for
sigmoid and tanh on normal results; NaN, the infinities and signed zeros as
numpy gives them.  float64 arguments get numpy's ``np.exp``/``np.tanh``.

A loop vectorises only in a kernel compiled with ``error_model="numpy"``:
under Numba's default (``"python"``) every float division tests its divisor
for a ZeroDivisionError, and that branch stops LLVM (sigmoid and tanh
divide).

``_exp32`` and ``_tanh32`` are ordinary compiled functions that LLVM inlines
into the calling loop (vectorised as when Numba inlined them into the
caller's IR); inlined at Numba's IR level, their conditional expressions
left variables that the checks of a ``parallel=True`` caller warned about
(NumbaIRAssumptionWarning, printed on a user's first LSTM step).  Only the
one-line overloads are inlined there.
"""
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from ..shared.jit import njit

_F = np.float32
_LOG2E = _F(1.4426950408889634)
_LN2_HI = _F(0.693359375)            # 355/512: n * _LN2_HI is exact for |n| < 2^15
_LN2_LO = _F(-2.12194440e-4)         # ln2 - _LN2_HI
# e^r = 1 + r + r^2 (E0 + E1 r + ... + E5 r^5) on [-ln2/2, ln2/2]
_E = tuple(_F(c) for c in (5.00000001e-01, 1.66666667e-01, 4.16664650e-02, 8.33329848e-03,
                           1.39336414e-03, 1.98992740e-04))
# tanh(x) = x + x^3 (T0 + T1 t + ... + T5 t^5), t = x^2, on [0, 0.625]
_T = tuple(_F(c) for c in (-0.33333334, 0.13333304, -0.05395941, 0.02176996, -0.00834698,
                           0.00229584))
_SMALL = _F(0.625)


@intrinsic
def _f32_from_bits(typingctx, bits):
    """The float32 whose IEEE bits are the int32 ``bits``."""
    if bits != types.int32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.int32), codegen


def vexp(x):
    """exp(x); vectorisable for float32 (see the module docstring)."""
    return np.exp(x)


def vsigmoid(x):
    """1 / (1 + exp(-x)); vectorisable for float32."""
    return 1.0 / (1.0 + np.exp(-x))


def vtanh(x):
    """tanh(x); vectorisable for float32."""
    return np.tanh(x)


@njit(cache=True)
def _horner(c, x):
    """c[0] + c[1] x + ... + c[5] x^5 (six coefficients, lowest first)."""
    return ((((c[5] * x + c[4]) * x + c[3]) * x + c[2]) * x + c[1]) * x + c[0]


@njit(cache=True, error_model="numpy")
def _exp32(x):
    xc = min(max(x, _F(-104.0)), _F(89.0))
    n = np.floor(xc * _LOG2E + _F(0.5))
    r = (xc - n * _LN2_HI) - n * _LN2_LO
    p = _F(1.0) + r + r * r * _horner(_E, r)
    ni = np.int32(n)
    n1 = ni >> 1
    n2 = ni - n1
    y = p * _f32_from_bits(np.int32((n1 + 127) << 23)) * _f32_from_bits(np.int32((n2 + 127) << 23))
    return y if x == x else x


@njit(cache=True, error_model="numpy")
def _tanh32(x):
    ax = abs(x)
    t = ax * ax
    small = ax + ax * t * _horner(_T, t)
    big = _F(1.0) - _F(2.0) / (_exp32(ax + ax) + _F(1.0))
    return np.copysign(small if ax < _SMALL else big, x)


@overload(vexp, inline="always")
def _ov_exp(x):
    if x == types.float32:
        return lambda x: _exp32(x)
    return lambda x: np.exp(x)


@overload(vsigmoid, inline="always")
def _ov_sigmoid(x):
    if x == types.float32:
        return lambda x: _F(1.0) / (_F(1.0) + _exp32(-x))
    return lambda x: 1.0 / (1.0 + np.exp(-x))


@overload(vtanh, inline="always")
def _ov_tanh(x):
    if x == types.float32:
        return lambda x: _tanh32(x)
    return lambda x: np.tanh(x)


@njit(cache=True, error_model="numpy")
def apply(fn_id, x, out):
    """out[i] = f(x[i]) over flat arrays, f by ``fn_id`` (0 exp, 1 sigmoid,
    2 tanh): the loops the tests measure and check."""
    if fn_id == 0:
        for i in range(x.size):
            out[i] = vexp(x[i])
    elif fn_id == 1:
        for i in range(x.size):
            out[i] = vsigmoid(x[i])
    else:
        for i in range(x.size):
            out[i] = vtanh(x[i])


__all__ = ["vexp", "vsigmoid", "vtanh", "apply"]
