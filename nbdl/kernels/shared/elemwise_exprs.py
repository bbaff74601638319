"""The scalar expressions of every elementwise op, shared by the CPU and CUDA
kernel generators.

A ``Spec`` names the op's array arguments (in input order), the attributes
passed to the kernel as scalars (cast to the output dtype) and one Python
expression of them.  ``T`` is the output's scalar type, so constants are
written ``T(0.5)``: a bare ``0.5`` would turn a float32 loop into float64.
Only ``math`` functions and the numpy ufuncs ``np.floor/ceil/trunc/cbrt``
are used, because they type float32 -> float32 in Numba and exist on CUDA as
well; ``erfinv`` and ``digamma`` are ``kernels.shared.special``'s, compiled
for each device.  Comparisons and logical ops yield ``T(1)``/``T(0)``.

Integer dtypes: an op whose rules admit them computes ``int_expr`` when it
has one (truncating division, rounding ops that are the identity), else
``expr``; a scalar attribute is cast to the array's dtype first (``int32 *
2.5`` multiplies by 2, as MXNet does).

NaN: ``relu``, ``maximum`` and ``minimum`` (array-array and scalar forms)
propagate a NaN operand, as MXNet 1.9.1's ``relu``, ``broadcast_maximum``
and ``_maximum_scalar`` do; ``Activation(act_type='relu')`` maps NaN to 0, as
MXNet's Activation does.
"""
import math
from typing import NamedTuple

import numpy as np

from ...errors import ArgumentError


class Spec(NamedTuple):
    args: tuple           # array argument names, one per op input
    expr: str             # the value of one output element
    scalars: tuple = ()   # attribute names passed as typed scalars
    int_expr: str = None  # the expression for integer dtypes, when it differs


def _unary(expr, int_expr=None):
    return Spec(("x",), expr, (), int_expr)


def _binary(expr, int_expr=None):
    return Spec(("a", "b"), expr, (), int_expr)


def _scalar(expr, int_expr=None):
    return Spec(("x",), expr, ("scalar",), int_expr)


def _from_output(expr, scalars=()):
    """Backward from (head gradient ``g``, forward output ``y``)."""
    return Spec(("g", "y"), expr, scalars)


def _from_data(expr, scalars=()):
    """Backward from (head gradient ``g``, forward input ``x``)."""
    return Spec(("g", "x"), expr, scalars)


def _compare(op, lhs, rhs):
    return f"T(1) if {lhs} {op} {rhs} else T(0)"


def _logical(op, lhs, rhs):
    """MXNet's logical ops: an operand is true when it is non-zero (NaN is)."""
    return f"T(1) if ({lhs} != T(0)) {op} ({rhs} != T(0)) else T(0)"


def _max(a, b):
    """max with a NaN on either side giving NaN (``a != a`` is false for ints)."""
    return f"{a} if ({a} != {a} or {a} > {b}) else {b}"


def _min(a, b):
    return f"{a} if ({a} != {a} or {a} < {b}) else {b}"


def _mod(a, b):
    """MXNet's mod: the sign follows the divisor (numpy's), 0 for a zero divisor."""
    return f"T(0) if {b} == T(0) else {a} % {b}"


def _int_div(a, b):
    """Integer division truncating toward zero (C's, MXNet's); 0 for a zero divisor."""
    return (f"T(0) if {b} == 0 else ({a} // {b} + (1 if ({a} % {b} != 0 and "
            f"(({a} < 0) != ({b} < 0))) else 0))")


def _int_pow(a, b):
    """Integer power; a negative exponent gives the truncated 1/a**-b."""
    return (f"{a} ** {b} if {b} >= 0 else (T(1) if {a} == 1 else ((T(1) if {b} % 2 == 0 "
            f"else T(-1)) if {a} == -1 else T(0)))")


# MXNet's round: half away from zero; rint: nearest, a tie going to the lower
# integer (MXNet's documented rint, not numpy's half-to-even).
_ROUND = "np.trunc(x) + (T(1) if x > T(0) else T(-1)) if abs(x - np.trunc(x)) >= T(0.5) else np.trunc(x)"
_RINT = "np.floor(x) if (x - np.floor(x)) <= (np.ceil(x) - x) else np.ceil(x)"
_SIGN = "T(1) if x > T(0) else (T(-1) if x < T(0) else T(0))"
_DEG = 180.0 / math.pi
_RAD = math.pi / 180.0
_ISQ = "(T(1) / (scalar * scalar))"
_RELU_NAN = "x if (x != x or x > T(0)) else T(0)"
_RELU = "x if x > T(0) else T(0)"
_SIGMOID = "T(1) / (T(1) + math.exp(-x))"
_SOFTSIGN = "x / (T(1) + abs(x))"
# MXNet's softrelu: log(1 + exp(x)), linear above 20 where exp would overflow.
_SOFTRELU = "x if x > T(20) else math.log1p(math.exp(x))"

UNARY = {
    "_copy": _unary("x"),
    "BlockGrad": _unary("x"),
    "zeros_like": _unary("T(0)"),
    "ones_like": _unary("T(1)"),
    "negative": _unary("-x"),
    "abs": _unary("abs(x)"),
    "sign": _unary(_SIGN),
    "round": _unary(_ROUND, "x"),
    "rint": _unary(_RINT, "x"),
    "fix": _unary("np.trunc(x)", "x"),
    "trunc": _unary("np.trunc(x)", "x"),
    "floor": _unary("np.floor(x)", "x"),
    "ceil": _unary("np.ceil(x)", "x"),
    "logical_not": _unary("T(1) if x == T(0) else T(0)"),
    "reciprocal": _unary("T(1) / x"),
    "cbrt": _unary("np.cbrt(x)"),
    "rcbrt": _unary("T(1) / np.cbrt(x)"),
    "expm1": _unary("math.expm1(x)"),
    "log1p": _unary("math.log1p(x)"),
    "log2": _unary("math.log2(x)"),
    "log10": _unary("math.log10(x)"),
    "tan": _unary("math.tan(x)"),
    "arcsin": _unary("math.asin(x)"),
    "arccos": _unary("math.acos(x)"),
    "arctan": _unary("math.atan(x)"),
    "sinh": _unary("math.sinh(x)"),
    "cosh": _unary("math.cosh(x)"),
    "arcsinh": _unary("math.asinh(x)"),
    "arccosh": _unary("math.acosh(x)"),
    "arctanh": _unary("math.atanh(x)"),
    "degrees": _unary(f"x * T({_DEG!r})"),
    "radians": _unary(f"x * T({_RAD!r})"),
    "erf": _unary("math.erf(x)"),
    "erfinv": _unary("erfinv(x)"),
    "gamma": _unary("math.gamma(x)"),
    "gammaln": _unary("math.lgamma(x)"),
    "hard_sigmoid": Spec(("x",), "T(0) if alpha * x + beta <= T(0) else (T(1) if alpha * x + beta "
                         ">= T(1) else alpha * x + beta)", ("alpha", "beta")),
    "exp": _unary("math.exp(x)"),
    "log": _unary("math.log(x)"),
    "sqrt": _unary("math.sqrt(x)"),
    "rsqrt": _unary("T(1) / math.sqrt(x)"),
    "square": _unary("x * x"),
    "tanh": _unary("math.tanh(x)"),
    "sigmoid": _unary(_SIGMOID),
    "relu": _unary(_RELU_NAN),
    "softsign": _unary(_SOFTSIGN),
    "sin": _unary("math.sin(x)"),
    "cos": _unary("math.cos(x)"),
    "clip": Spec(("x",), "a_min if x < a_min else (a_max if x > a_max else x)", ("a_min", "a_max")),
}

# Activation(act_type=...) -> the same expressions.
ACTIVATION = {
    "relu": _unary(_RELU),
    "sigmoid": _unary(_SIGMOID),
    "tanh": _unary("math.tanh(x)"),
    "softrelu": _unary(_SOFTRELU),
    "softsign": _unary(_SOFTSIGN),
}

# Hidden backward ops: prefer the forward output (the planner can then free
# the input); softsign, abs, square, sin, cos and clip need the input.
UNARY_BACKWARD = {
    # the relu op passes a NaN through (g * NaN); Activation's relu output is never NaN
    "_backward_relu": _from_output("g * y if y != y else (g if y > T(0) else T(0))"),
    "_backward_sigmoid": _from_output("g * y * (T(1) - y)"),
    "_backward_tanh": _from_output("g * (T(1) - y * y)"),
    # d/dx log(1 + e^x) = sigmoid(x) = 1 - exp(-y)
    "_backward_softrelu": _from_output("-g * math.expm1(-y)"),
    "_backward_sqrt": _from_output("g / (T(2) * y)"),
    "_backward_rsqrt": _from_output("T(-0.5) * g * y * y * y"),
    "_backward_softsign": _from_data("g / ((T(1) + abs(x)) * (T(1) + abs(x)))"),
    "_backward_abs": _from_data("g if x > T(0) else (-g if x < T(0) else T(0))"),
    "_backward_square": _from_data("T(2) * g * x"),
    "_backward_sin": _from_data("g * math.cos(x)"),
    "_backward_cos": _from_data("-g * math.sin(x)"),
    # MXNet passes the gradient on the closed interval [a_min, a_max].
    "_backward_clip": _from_data("T(0) if (x < a_min or x > a_max) else g", ("a_min", "a_max")),
    "_backward_reciprocal": _from_data("-g / (x * x)"),
    "_backward_cbrt": _from_output("g / (T(3) * y * y)"),
    "_backward_rcbrt": _from_data("-g / (T(3) * x * np.cbrt(x))"),
    "_backward_expm1": _from_data("g * math.exp(x)"),
    "_backward_log1p": _from_data("g / (T(1) + x)"),
    "_backward_log2": _from_data(f"g / (x * T({math.log(2.0)!r}))"),
    "_backward_log10": _from_data(f"g / (x * T({math.log(10.0)!r}))"),
    "_backward_tan": _from_output("g * (T(1) + y * y)"),
    "_backward_arcsin": _from_data("g / math.sqrt(T(1) - x * x)"),
    "_backward_arccos": _from_data("-g / math.sqrt(T(1) - x * x)"),
    "_backward_arctan": _from_data("g / (T(1) + x * x)"),
    "_backward_sinh": _from_data("g * math.cosh(x)"),
    "_backward_cosh": _from_data("g * math.sinh(x)"),
    "_backward_arcsinh": _from_data("g / math.sqrt(x * x + T(1))"),
    "_backward_arccosh": _from_data("g / math.sqrt(x * x - T(1))"),
    "_backward_arctanh": _from_data("g / (T(1) - x * x)"),
    "_backward_degrees": _from_data(f"g * T({_DEG!r})"),
    "_backward_radians": _from_data(f"g * T({_RAD!r})"),
    "_backward_erf": _from_data(f"g * T({2 / math.sqrt(math.pi)!r}) * math.exp(-x * x)"),
    "_backward_erfinv": _from_output(f"g * T({math.sqrt(math.pi) / 2!r}) * math.exp(y * y)"),
    "_backward_gamma": _from_data("g * math.gamma(x) * digamma(x)"),
    "_backward_gammaln": _from_data("g * digamma(x)"),
    # the slope alpha where 0 < alpha * x + beta < 1, as MXNet's
    "_backward_hard_sigmoid": _from_data("g * alpha if (alpha * x + beta > T(0) and "
                                         "alpha * x + beta < T(1)) else T(0)", ("alpha", "beta")),
}

SCALAR = {
    "_plus_scalar": _scalar("x + scalar"),
    "_minus_scalar": _scalar("x - scalar"),
    "_rminus_scalar": _scalar("scalar - x"),
    "_mul_scalar": _scalar("x * scalar"),
    "_div_scalar": _scalar("x / scalar", _int_div("x", "scalar")),
    "_rdiv_scalar": _scalar("scalar / x", _int_div("scalar", "x")),
    "_mod_scalar": _scalar(_mod("x", "scalar")),
    "_rmod_scalar": _scalar(_mod("scalar", "x")),
    "_power_scalar": _scalar("x ** scalar", _int_pow("x", "scalar")),
    "_rpower_scalar": _scalar("scalar ** x", _int_pow("scalar", "x")),
    "_hypot_scalar": _scalar("math.hypot(x, scalar)"),
    "_maximum_scalar": _scalar(_max("x", "scalar")),
    "_minimum_scalar": _scalar(_min("x", "scalar")),
    "_logical_and_scalar": _scalar(_logical("and", "x", "scalar")),
    "_logical_or_scalar": _scalar(_logical("or", "x", "scalar")),
    "_logical_xor_scalar": _scalar(_logical("!=", "x", "scalar")),
    "_equal_scalar": _scalar(_compare("==", "x", "scalar")),
    "_not_equal_scalar": _scalar(_compare("!=", "x", "scalar")),
    "_greater_scalar": _scalar(_compare(">", "x", "scalar")),
    "_greater_equal_scalar": _scalar(_compare(">=", "x", "scalar")),
    "_lesser_scalar": _scalar(_compare("<", "x", "scalar")),
    "_lesser_equal_scalar": _scalar(_compare("<=", "x", "scalar")),
    "_backward_rdiv_scalar": _from_data("-g * scalar / (x * x)", ("scalar",)),
    "_backward_power_scalar": _from_data("g * scalar * x ** (scalar - T(1))", ("scalar",)),
    "_backward_rpower_scalar": _from_output("g * y * math.log(scalar)", ("scalar",)),
    # d(scalar % x)/dx = -floor(scalar / x), as MXNet's rmod_grad
    "_backward_rmod_scalar": _from_data("-g * np.floor(scalar / x)", ("scalar",)),
    "_backward_hypot_scalar": _from_data("g * x / math.hypot(x, scalar)", ("scalar",)),
    # MXNet's smooth_l1_loss with sigma = scalar: quadratic inside |x| <= 1 / sigma**2
    "smooth_l1": _scalar(f"x - T(0.5) * {_ISQ} if x > {_ISQ} else (-x - T(0.5) * {_ISQ} if "
                         f"x < -{_ISQ} else T(0.5) * x * x * (scalar * scalar))"),
    "_backward_smooth_l1": _from_data(f"g if x > {_ISQ} else (-g if x < -{_ISQ} else "
                                      f"g * ((scalar * scalar) * x))", ("scalar",)),
    "_backward_maximum_scalar": _from_data("g if x >= scalar else T(0)", ("scalar",)),
    "_backward_minimum_scalar": _from_data("g if x <= scalar else T(0)", ("scalar",)),
}

_ARITH = {"add": _binary("a + b"), "sub": _binary("a - b"), "mul": _binary("a * b"),
          "div": _binary("a / b", _int_div("a", "b"))}

# The ops that exist both as broadcast_<name> and as the same-shape _<name>.
BINARY_MATH = {
    "mod": _binary(_mod("a", "b")),
    "power": _binary("a ** b", _int_pow("a", "b")),
    "maximum": _binary(_max("a", "b")),
    "minimum": _binary(_min("a", "b")),
    "hypot": _binary("math.hypot(a, b)"),
    "equal": _binary(_compare("==", "a", "b")),
    "not_equal": _binary(_compare("!=", "a", "b")),
    "greater": _binary(_compare(">", "a", "b")),
    "greater_equal": _binary(_compare(">=", "a", "b")),
    "lesser": _binary(_compare("<", "a", "b")),
    "lesser_equal": _binary(_compare("<=", "a", "b")),
    "logical_and": _binary(_logical("and", "a", "b")),
    "logical_or": _binary(_logical("or", "a", "b")),
    "logical_xor": _binary(_logical("!=", "a", "b")),
}

BINARY = {f"elemwise_{k}": v for k, v in _ARITH.items()}
BINARY.update({f"broadcast_{k}": v for k, v in _ARITH.items()})
BINARY.update({f"broadcast_{k}": v for k, v in BINARY_MATH.items()})
BINARY.update({f"_{k}": v for k, v in BINARY_MATH.items()})
BINARY.update({
    # d(a**b)/da and d(a**b)/db, broadcast (MXNet's power_grad / power_rgrad)
    "_broadcast_power_grad_lhs": _binary("b * a ** (b - T(1))"),
    "_broadcast_power_grad_rhs": _binary("a ** b * math.log(a)"),
    # d(a % b)/da = 1 and d/db = -floor(a / b) (MXNet's mod_grad / mod_rgrad),
    # both 0 for integers, as MXNet's are
    "_broadcast_mod_grad_lhs": _binary("T(1)", "T(0)"),
    "_broadcast_mod_grad_rhs": _binary("-np.floor(a / b)", "T(0)"),
    "_broadcast_hypot_grad_lhs": _binary("a / math.hypot(a, b)"),
    "_broadcast_hypot_grad_rhs": _binary("b / math.hypot(a, b)"),
})

WHERE = Spec(("c", "a", "b"), "a if c != 0 else b")

# The contrib elementwise layers (nbdl.ops.contrib_elemwise).
CONTRIB = {
    "_contrib_quadratic": Spec(("x",), "a * x * x + b * x + c", ("a", "b", "c")),
    "_backward_contrib_quadratic": _from_data("g * (T(2) * a * x + b)", ("a", "b")),
    # the identity forward (prepare_copy's float16 path generates it)
    "_contrib_gradientmultiplier": _unary("x"),
    # ``scale`` is sqrt(last axis), worked out at prepare time
    "_contrib_div_sqrt_dim": Spec(("x",), "x / scale", ("scale",)),
    # straight-through estimators: round / sign forward, the identity's gradient
    "_contrib_round_ste": _unary(_ROUND, "x"),
    "_contrib_sign_ste": _unary(_SIGN),
}

MAPS = {**UNARY, **UNARY_BACKWARD, **SCALAR, **BINARY, **CONTRIB, "where": WHERE}


def add_n(k):
    """ElementWiseSum of ``k`` arrays, summed left to right as MXNet does."""
    names = tuple(f"x{i}" for i in range(k))
    return Spec(names, " + ".join(names))


def is_int(dtype):
    """Whether ``dtype`` is an integer dtype."""
    return np.issubdtype(np.dtype(dtype), np.integer)


def spec_of(call):
    """The expression of the op being prepared (Activation by act_type), its
    integer form for an integer output."""
    name = call.op.name
    if name == "Activation":
        return ACTIVATION[call.attrs["act_type"]]
    spec = MAPS[name]
    if spec.int_expr is not None and is_int(call.out_dtypes[0]):
        return spec._replace(expr=spec.int_expr, int_expr=None)
    return spec


def cast_scalar(where, name, value, dtype):
    """Attribute ``name`` = ``value`` as a scalar of ``dtype``: floats as is
    (float16: rounded to it, as a float32), integers truncated toward zero
    and wrapped to the dtype's range, as C's cast in MXNet's kernels does
    (``int32`` array ``* 2.5`` multiplies by 2).

    Parameters
    ----------
    where : str
        The op (and node) named in an error.
    name : str
        The attribute's name.
    value : float
        Its value.
    dtype : numpy dtype
        The array's dtype.
    """
    dt = np.dtype(dtype)
    if dt == np.float16:   # rounded to float16, passed as float32 (the kernels compute in it)
        return np.float32(np.float16(value))
    if not is_int(dt):
        return dt.type(value)
    v = float(value)
    if v != v or v in (math.inf, -math.inf):
        raise ArgumentError(f"{where}: {name}={value!r} cannot be used with a {dt} array "
                            f"(it has no integer value)")
    info = np.iinfo(dt)
    span = int(info.max) - int(info.min) + 1
    return dt.type((int(v) - int(info.min)) % span + int(info.min))


def typed_scalars(call, spec):
    """The attributes a kernel takes, cast to the output dtype (the input's for
    the comparisons, which have the same)."""
    dt = call.out_dtypes[0]
    return tuple(cast_scalar(call.where(), s, call.attrs[s], dt) for s in spec.scalars)


def kernel_name(call):
    name = call.op.name
    if name == "Activation":
        return "act_" + call.attrs["act_type"]
    return name


def div_sqrt_dim_attrs(call):
    """``_contrib_div_sqrt_dim``'s attributes for its map kernel: ``scale`` =
    sqrt of the input's last axis (1 for a 0-d input).

    Parameters
    ----------
    call : nbdl.ops.registry.Call
        The prepared call.
    """
    shape = tuple(call.in_shapes[0])
    return {"scale": math.sqrt(shape[-1]) if shape else 1.0}
