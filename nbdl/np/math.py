"""Elementwise math with numpy's names and broadcasting: arithmetic,
``maximum``/``minimum``, comparisons, unary functions, ``clip`` and
``where``.

Two arrays go to the ``broadcast_*`` ops (``elemwise_*`` when two NDArrays
have one shape); an array and a scalar to the ``_*_scalar`` ops (the
reflected form when the scalar is on the left: ``subtract(1, x)`` is
``_rminus_scalar``); two scalars are computed by numpy and returned as a
0-d NDArray.  Differences from numpy: no type promotion (both arrays must
have one dtype; a scalar takes the array's), and comparisons return 1.0 /
0.0 in the operands' dtype rather than booleans, as MXNet's operators do.
"""
import numpy as np

from ..errors import AttrError
from ..ndarray.invoke import scalar_op as run_scalar_op
from ..ndarray.ndarray import NDArray
from ._dispatch import apply, broadcast_nd, broadcast_shapes, is_scalar, operands, scalar_value

# numpy name -> (array-array op, same-shape NDArray op, array-scalar op, scalar-array op)
_BINARY = {
    "add": ("broadcast_add", "elemwise_add", "_plus_scalar", "_plus_scalar"),
    "subtract": ("broadcast_sub", "elemwise_sub", "_minus_scalar", "_rminus_scalar"),
    "multiply": ("broadcast_mul", "elemwise_mul", "_mul_scalar", "_mul_scalar"),
    "divide": ("broadcast_div", "elemwise_div", "_div_scalar", "_rdiv_scalar"),
    "power": ("broadcast_power", None, "_power_scalar", "_rpower_scalar"),
    "maximum": ("broadcast_maximum", None, "_maximum_scalar", "_maximum_scalar"),
    "minimum": ("broadcast_minimum", None, "_minimum_scalar", "_minimum_scalar"),
    "equal": ("broadcast_equal", None, "_equal_scalar", "_equal_scalar"),
    "not_equal": ("broadcast_not_equal", None, "_not_equal_scalar", "_not_equal_scalar"),
    "greater": ("broadcast_greater", None, "_greater_scalar", "_lesser_scalar"),
    "less": ("broadcast_lesser", None, "_lesser_scalar", "_greater_scalar"),
    "greater_equal": ("broadcast_greater_equal", None, "_greater_equal_scalar",
                      "_lesser_equal_scalar"),
    "less_equal": ("broadcast_lesser_equal", None, "_lesser_equal_scalar",
                   "_greater_equal_scalar"),
    "mod": ("broadcast_mod", None, "_mod_scalar", "_rmod_scalar"),
    "hypot": ("broadcast_hypot", None, "_hypot_scalar", "_hypot_scalar"),
    "logical_and": ("broadcast_logical_and", None, "_logical_and_scalar", "_logical_and_scalar"),
    "logical_or": ("broadcast_logical_or", None, "_logical_or_scalar", "_logical_or_scalar"),
    "logical_xor": ("broadcast_logical_xor", None, "_logical_xor_scalar", "_logical_xor_scalar"),
}

_NUMPY_BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                 "divide": np.divide, "power": np.power, "maximum": np.maximum,
                 "minimum": np.minimum, "equal": np.equal, "not_equal": np.not_equal,
                 "greater": np.greater, "less": np.less, "greater_equal": np.greater_equal,
                 "less_equal": np.less_equal, "mod": np.mod, "hypot": np.hypot,
                 "logical_and": np.logical_and, "logical_or": np.logical_or,
                 "logical_xor": np.logical_xor}


def _both_scalars(fname, x1, x2):
    from .creation import array
    value = _NUMPY_BINARY[fname](scalar_value(x1), scalar_value(x2))
    return array(np.asarray(value, dtype=np.float64))


def _binary(fname, x1, x2):
    bcast, same, scalar_op, rscalar_op = _BINARY[fname]
    t1, t2 = type(x1), type(x2)
    if t1 is NDArray and (t2 is float or t2 is int):     # the common eager case
        return run_scalar_op(scalar_op, x1, x2)
    if t2 is NDArray and (t1 is float or t1 is int):
        return run_scalar_op(rscalar_op, x2, x1)
    if is_scalar(x1) and is_scalar(x2):
        return _both_scalars(fname, x1, x2)
    (a, b), on_symbols = operands([x1, x2], fname)
    if is_scalar(b):
        return apply(scalar_op, [a], {"scalar": float(scalar_value(b))}, on_symbols)
    if is_scalar(a):
        return apply(rscalar_op, [b], {"scalar": float(scalar_value(a))}, on_symbols)
    if not on_symbols and same is not None and a.shape == b.shape:
        return apply(same, [a, b], on_symbols=False)
    return apply(bcast, [a, b], on_symbols=on_symbols)


def _make_binary(fname):
    def fn(x1, x2):
        return _binary(fname, x1, x2)
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = (f"numpy's ``{fname}`` with broadcasting; Python scalars on either side "
                  f"(op ``{_BINARY[fname][0]}`` / ``{_BINARY[fname][2]}``).")
    return fn


add = _make_binary("add")
subtract = _make_binary("subtract")
multiply = _make_binary("multiply")
divide = _make_binary("divide")
true_divide = divide
power = _make_binary("power")
maximum = _make_binary("maximum")
minimum = _make_binary("minimum")
equal = _make_binary("equal")
not_equal = _make_binary("not_equal")
greater = _make_binary("greater")
less = _make_binary("less")
greater_equal = _make_binary("greater_equal")
less_equal = _make_binary("less_equal")
mod = _make_binary("mod")
remainder = mod
hypot = _make_binary("hypot")
logical_and = _make_binary("logical_and")
logical_or = _make_binary("logical_or")
logical_xor = _make_binary("logical_xor")


# -- unary ------------------------------------------------------------------------------

_UNARY = {"negative": (np.negative, "negative"), "abs": (np.abs, "abs"),
          "exp": (np.exp, "exp"), "log": (np.log, "log"), "sqrt": (np.sqrt, "sqrt"),
          "square": (np.square, "square"), "tanh": (np.tanh, "tanh"), "sin": (np.sin, "sin"),
          "cos": (np.cos, "cos")}
# numpy's names of the ops of ``nbdl.ops.elemwise_math`` (sign: 0 for NaN, as MXNet's)
_UNARY.update({n: (getattr(np, n), n) for n in (
    "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
    "expm1", "log1p", "log2", "log10", "reciprocal", "cbrt", "degrees", "radians", "sign",
    "floor", "ceil", "trunc", "fix", "logical_not")})
_UNARY.update({"deg2rad": (np.deg2rad, "radians"), "rad2deg": (np.rad2deg, "degrees")})


def _make_unary(fname):
    ref, op = _UNARY[fname]

    def fn(x):
        if is_scalar(x):
            from .creation import array
            return array(np.asarray(ref(np.float64(scalar_value(x)))))
        (a,), on_symbols = operands([x], fname)
        return apply(op, [a], on_symbols=on_symbols)
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"numpy's ``{fname}``, elementwise (op ``{op}``)."
    return fn


negative = _make_unary("negative")
abs = _make_unary("abs")  # noqa: A001  (numpy's name)
absolute = abs
exp = _make_unary("exp")
log = _make_unary("log")
sqrt = _make_unary("sqrt")
square = _make_unary("square")
tanh = _make_unary("tanh")
sin = _make_unary("sin")
cos = _make_unary("cos")
tan = _make_unary("tan")
arcsin = _make_unary("arcsin")
arccos = _make_unary("arccos")
arctan = _make_unary("arctan")
sinh = _make_unary("sinh")
cosh = _make_unary("cosh")
arcsinh = _make_unary("arcsinh")
arccosh = _make_unary("arccosh")
arctanh = _make_unary("arctanh")
expm1 = _make_unary("expm1")
log1p = _make_unary("log1p")
log2 = _make_unary("log2")
log10 = _make_unary("log10")
reciprocal = _make_unary("reciprocal")
cbrt = _make_unary("cbrt")
degrees = _make_unary("degrees")
radians = _make_unary("radians")
deg2rad = _make_unary("deg2rad")
rad2deg = _make_unary("rad2deg")
sign = _make_unary("sign")
floor = _make_unary("floor")
ceil = _make_unary("ceil")
trunc = _make_unary("trunc")
fix = _make_unary("fix")
logical_not = _make_unary("logical_not")


def clip(a, a_min, a_max):
    """Limit ``a`` to ``[a_min, a_max]``; either bound may be None (not both),
    and bounds may be arrays (then ``minimum(maximum(a, a_min), a_max)``)."""
    if a_min is None and a_max is None:
        raise AttrError("clip: a_min and a_max cannot both be None")
    if (a_min is None or is_scalar(a_min)) and (a_max is None or is_scalar(a_max)):
        (x,), on_symbols = operands([a], "clip")
        if a_min is not None and a_max is not None:
            return apply("clip", [x], {"a_min": float(scalar_value(a_min)),
                                       "a_max": float(scalar_value(a_max))}, on_symbols)
        if a_min is not None:
            return apply("_maximum_scalar", [x], {"scalar": float(scalar_value(a_min))},
                         on_symbols)
        return apply("_minimum_scalar", [x], {"scalar": float(scalar_value(a_max))}, on_symbols)
    out = a if a_min is None else maximum(a, a_min)
    return out if a_max is None else minimum(out, a_max)


def where(condition, x, y):
    """``x`` where ``condition`` is non-zero, else ``y``, broadcasting all three
    (numpy's three-argument ``where``); ``x`` / ``y`` may be scalars.

    On NDArrays the operands are broadcast with ``broadcast_to`` first.  On
    Symbols each operand is broadcast by adding zeros of the common shape
    (``x + (0*x + 0*y + 0*condition)``), which needs no shapes, so the graph
    stays valid when it is later bound with other shapes (a ``-0.0`` operand
    comes out as ``0.0``)."""
    from .creation import full, full_like
    ops, on_symbols = operands([condition, x, y], "where")
    cond, xa, ya = ops
    arrays = [v for v in (cond, xa, ya) if not is_scalar(v)]
    if not arrays:
        return full((), scalar_value(x if scalar_value(cond) else y))
    like = next(v for v in (xa, ya, cond) if not is_scalar(v))
    if is_scalar(cond):
        cond = full_like(like, 1.0 if scalar_value(cond) else 0.0)
    if is_scalar(xa):
        xa = full_like(like, scalar_value(xa))
    if is_scalar(ya):
        ya = full_like(like, scalar_value(ya))
    if not on_symbols:
        target = broadcast_shapes([cond.shape, xa.shape, ya.shape], "where")
        cond, xa, ya = (broadcast_nd(v, target) for v in (cond, xa, ya))
        return apply("where", [cond, xa, ya], on_symbols=False)
    zero = apply("broadcast_add", [apply("zeros_like", [xa]), apply("zeros_like", [ya])])
    zero = apply("broadcast_add", [zero, apply("zeros_like", [cond])])
    cond, xa, ya = (apply("broadcast_add", [v, zero]) for v in (cond, xa, ya))
    return apply("where", [cond, xa, ya])
