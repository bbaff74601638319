"""MXNet 1.x's ``nd.maximum``, ``nd.minimum``, ``nd.power``, ``nd.modulo``,
``nd.add``... : binary functions taking NDArrays or scalars on either side.

Two NDArrays go to the ``broadcast_*`` op; an NDArray and a scalar to the
``_*_scalar`` op (the reflected one, ``_rminus_scalar``, ``_rpower_scalar``,
``_rmod_scalar``..., when the scalar is on the left); two scalars are
computed in Python and the Python number comes back, as in MXNet.
``nd.hypot`` is nbdl's addition (MXNet 1.9.1 has ``sym.hypot`` and
``broadcast_hypot`` but no ``nd.hypot``)."""
import math
import operator

from ..base import binary_dispatch
from .invoke import invoke, scalar_op
from ..array import NDArray


def _pymax(a, b):
    return a if a > b else b


def _pymin(a, b):
    return a if a < b else b


def _cmp(f):
    return lambda a, b: 1 if f(a, b) else 0


def _mod(a, b):
    return 0 if b == 0 else a % b


# name -> (broadcast op, array-scalar op, scalar-array op, Python function)
TABLE = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar", operator.add),
    "subtract": ("broadcast_sub", "_minus_scalar", "_rminus_scalar", operator.sub),
    "multiply": ("broadcast_mul", "_mul_scalar", "_mul_scalar", operator.mul),
    "divide": ("broadcast_div", "_div_scalar", "_rdiv_scalar", operator.truediv),
    "modulo": ("broadcast_mod", "_mod_scalar", "_rmod_scalar", _mod),
    "power": ("broadcast_power", "_power_scalar", "_rpower_scalar", operator.pow),
    "maximum": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar", _pymax),
    "minimum": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar", _pymin),
    "hypot": ("broadcast_hypot", "_hypot_scalar", "_hypot_scalar", math.hypot),
    "equal": ("broadcast_equal", "_equal_scalar", "_equal_scalar", _cmp(operator.eq)),
    "not_equal": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar",
                  _cmp(operator.ne)),
    "greater": ("broadcast_greater", "_greater_scalar", "_lesser_scalar", _cmp(operator.gt)),
    "greater_equal": ("broadcast_greater_equal", "_greater_equal_scalar",
                      "_lesser_equal_scalar", _cmp(operator.ge)),
    "lesser": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar", _cmp(operator.lt)),
    "lesser_equal": ("broadcast_lesser_equal", "_lesser_equal_scalar",
                     "_greater_equal_scalar", _cmp(operator.le)),
    "logical_and": ("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar",
                    _cmp(lambda a, b: bool(a) and bool(b))),
    "logical_or": ("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar",
                   _cmp(lambda a, b: bool(a) or bool(b))),
    "logical_xor": ("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar",
                    _cmp(lambda a, b: bool(a) != bool(b))),
}


def apply(fname, lhs, rhs):
    """``fname`` of ``lhs`` and ``rhs`` (NDArrays or real numbers), as MXNet's
    ``nd.<fname>``.

    Parameters
    ----------
    fname : str
        A key of ``TABLE`` (``"maximum"``, ``"power"``...).
    lhs, rhs : NDArray or float or int
        The operands.
    """
    return binary_dispatch(f"nd.{fname}", TABLE[fname], lhs, rhs, NDArray,
                           lambda op, a, b: invoke(op, [a, b], {}), scalar_op)


def _make(fname):
    def fn(lhs, rhs):
        return apply(fname, lhs, rhs)
    bcast, scalar, rscalar, _ = TABLE[fname]
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = (f"{fname} of ``lhs`` and ``rhs``, with broadcasting.\n\n"
                  f"Two NDArrays run ``{bcast}``; an NDArray and a number ``{scalar}`` "
                  f"(``{rscalar}`` with the number first); two numbers give a number.\n\n"
                  f"Parameters\n----------\nlhs : NDArray or float or int\n    first operand\n"
                  f"rhs : NDArray or float or int\n    second operand\n")
    return fn


add = _make("add")
subtract = _make("subtract")
multiply = _make("multiply")
divide = _make("divide")
true_divide = divide
modulo = _make("modulo")
power = _make("power")
maximum = _make("maximum")
minimum = _make("minimum")
hypot = _make("hypot")
equal = _make("equal")
not_equal = _make("not_equal")
greater = _make("greater")
greater_equal = _make("greater_equal")
lesser = _make("lesser")
lesser_equal = _make("lesser_equal")
logical_and = _make("logical_and")
logical_or = _make("logical_or")
logical_xor = _make("logical_xor")

__all__ = list(TABLE) + ["true_divide"]
