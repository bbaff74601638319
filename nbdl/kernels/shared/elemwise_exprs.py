"""The scalar expressions of every elementwise op, shared by the CPU and CUDA
kernel generators.

A ``Spec`` names the op's array arguments (in input order), the attributes
passed to the kernel as scalars (cast to the output dtype) and one Python
expression of them.  ``T`` is the output's scalar type, so constants are
written ``T(0.5)``: a bare ``0.5`` would turn a float32 loop into float64.
Only ``math`` functions are used, because they type float32 -> float32 in
Numba and exist on CUDA as well.  Comparisons yield ``T(1)``/``T(0)``.
"""
from typing import NamedTuple


class Spec(NamedTuple):
    args: tuple           # array argument names, one per op input
    expr: str             # the value of one output element
    scalars: tuple = ()   # attribute names passed as typed scalars


def _unary(expr):
    return Spec(("x",), expr)


def _binary(expr):
    return Spec(("a", "b"), expr)


def _scalar(expr):
    return Spec(("x",), expr, ("scalar",))


def _from_output(expr, scalars=()):
    """Backward from (head gradient ``g``, forward output ``y``)."""
    return Spec(("g", "y"), expr, scalars)


def _from_data(expr, scalars=()):
    """Backward from (head gradient ``g``, forward input ``x``)."""
    return Spec(("g", "x"), expr, scalars)


def _compare(op, lhs, rhs):
    return f"T(1) if {lhs} {op} {rhs} else T(0)"


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
    "exp": _unary("math.exp(x)"),
    "log": _unary("math.log(x)"),
    "sqrt": _unary("math.sqrt(x)"),
    "rsqrt": _unary("T(1) / math.sqrt(x)"),
    "square": _unary("x * x"),
    "tanh": _unary("math.tanh(x)"),
    "sigmoid": _unary(_SIGMOID),
    "relu": _unary(_RELU),
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
    "_backward_relu": _from_output("g if y > T(0) else T(0)"),
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
}

SCALAR = {
    "_plus_scalar": _scalar("x + scalar"),
    "_minus_scalar": _scalar("x - scalar"),
    "_rminus_scalar": _scalar("scalar - x"),
    "_mul_scalar": _scalar("x * scalar"),
    "_div_scalar": _scalar("x / scalar"),
    "_rdiv_scalar": _scalar("scalar / x"),
    "_power_scalar": _scalar("x ** scalar"),
    "_rpower_scalar": _scalar("scalar ** x"),
    "_maximum_scalar": _scalar("x if x > scalar else scalar"),
    "_minimum_scalar": _scalar("x if x < scalar else scalar"),
    "_equal_scalar": _scalar(_compare("==", "x", "scalar")),
    "_not_equal_scalar": _scalar(_compare("!=", "x", "scalar")),
    "_greater_scalar": _scalar(_compare(">", "x", "scalar")),
    "_greater_equal_scalar": _scalar(_compare(">=", "x", "scalar")),
    "_lesser_scalar": _scalar(_compare("<", "x", "scalar")),
    "_lesser_equal_scalar": _scalar(_compare("<=", "x", "scalar")),
    "_backward_rdiv_scalar": _from_data("-g * scalar / (x * x)", ("scalar",)),
    "_backward_power_scalar": _from_data("g * scalar * x ** (scalar - T(1))", ("scalar",)),
    "_backward_rpower_scalar": _from_output("g * y * math.log(scalar)", ("scalar",)),
    "_backward_maximum_scalar": _from_data("g if x >= scalar else T(0)", ("scalar",)),
    "_backward_minimum_scalar": _from_data("g if x <= scalar else T(0)", ("scalar",)),
}

_ARITH = {"add": "a + b", "sub": "a - b", "mul": "a * b", "div": "a / b"}

BINARY = {f"elemwise_{k}": _binary(v) for k, v in _ARITH.items()}
BINARY.update({f"broadcast_{k}": _binary(v) for k, v in _ARITH.items()})
BINARY.update({
    "broadcast_maximum": _binary("a if a > b else b"),
    "broadcast_minimum": _binary("a if a < b else b"),
    "broadcast_power": _binary("a ** b"),
    "broadcast_equal": _binary(_compare("==", "a", "b")),
    "broadcast_not_equal": _binary(_compare("!=", "a", "b")),
    "broadcast_greater": _binary(_compare(">", "a", "b")),
    "broadcast_greater_equal": _binary(_compare(">=", "a", "b")),
    "broadcast_lesser": _binary(_compare("<", "a", "b")),
    "broadcast_lesser_equal": _binary(_compare("<=", "a", "b")),
    # d(a**b)/da and d(a**b)/db, broadcast (MXNet's power_grad / power_rgrad)
    "_broadcast_power_grad_lhs": _binary("b * a ** (b - T(1))"),
    "_broadcast_power_grad_rhs": _binary("a ** b * math.log(a)"),
})

WHERE = Spec(("c", "a", "b"), "a if c != 0 else b")

MAPS = {**UNARY, **UNARY_BACKWARD, **SCALAR, **BINARY, "where": WHERE}


def add_n(k):
    """ElementWiseSum of ``k`` arrays, summed left to right as MXNet does."""
    names = tuple(f"x{i}" for i in range(k))
    return Spec(names, " + ".join(names))


def spec_of(call):
    """The expression of the op being prepared (Activation by act_type)."""
    name = call.op.name
    if name == "Activation":
        return ACTIVATION[call.attrs["act_type"]]
    return MAPS[name]


def kernel_name(call):
    name = call.op.name
    if name == "Activation":
        return "act_" + call.attrs["act_type"]
    return name
