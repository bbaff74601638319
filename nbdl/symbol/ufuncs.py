"""MXNet 1.x's ``sym.maximum``, ``sym.minimum``, ``sym.power`` / ``sym.pow``
and ``sym.hypot``: two Symbols make the same-shape node MXNet makes
(``_maximum``, ``_power``, ``_hypot``), a Symbol and a number the scalar node
(``_rpower_scalar`` for ``power(2, x)``), two numbers a Python number."""
import math
import operator

from ..base import binary_dispatch
from .construct import create
from .symbol import Symbol

# name -> (Symbol-Symbol op, Symbol-scalar op, scalar-Symbol op, Python function)
TABLE = {
    "maximum": ("_maximum", "_maximum_scalar", "_maximum_scalar", lambda a, b: a if a > b else b),
    "minimum": ("_minimum", "_minimum_scalar", "_minimum_scalar", lambda a, b: a if a < b else b),
    "power": ("_power", "_power_scalar", "_rpower_scalar", operator.pow),
    "hypot": ("_hypot", "_hypot_scalar", "_hypot_scalar", math.hypot),
}


def apply(fname, left, right):
    """``fname`` of ``left`` and ``right`` (Symbols or real numbers).

    Parameters
    ----------
    fname : str
        A key of ``TABLE``.
    left, right : Symbol or float or int
        The operands.
    """
    return binary_dispatch(f"sym.{fname}", TABLE[fname], left, right, Symbol,
                           lambda op, a, b: create(op, a, b),
                           lambda op, a, number: create(op, a, scalar=number))


def _make(fname):
    def fn(left, right):
        return apply(fname, left, right)
    both, scalar, rscalar, _ = TABLE[fname]
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = (f"{fname} of ``left`` and ``right``: ``{both}`` of two Symbols (same shape), "
                  f"``{scalar}`` / ``{rscalar}`` with a number.\n\nParameters\n----------\n"
                  f"left : Symbol or float or int\n    first operand\n"
                  f"right : Symbol or float or int\n    second operand\n")
    return fn


maximum = _make("maximum")
minimum = _make("minimum")
power = _make("power")
pow = power  # noqa: A001  (MXNet's name)
hypot = _make("hypot")

__all__ = ["maximum", "minimum", "power", "pow", "hypot"]
