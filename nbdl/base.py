"""MXNet 1.x's ``mxnet.base`` names that user code imports.

``MXNetError`` *is* ``nbdl.errors.NbdlError`` (the same class, not a copy),
so ``except mx.base.MXNetError`` catches every error nbdl raises on bad
input and ``raise MXNetError(...)`` raises an nbdl error.  Unlike MXNet's it
does not derive from ``RuntimeError``: nbdl's errors derive from the builtin
that fits each (``ShapeError`` is a ``ValueError``, ``DTypeError`` a
``TypeError``, ...).

Only the pure-Python helpers of ``mxnet.base`` are here; the ctypes handles
and ``_LIB`` of MXNet's C library have no counterpart in nbdl.
"""
import numbers as _numbers

import numpy as _np

from ._docs import shared_doc
from .errors import ArgumentError, GraphError, NbdlError

MXNetError = NbdlError

# MXNet's Python 2/3 compatibility tuples, as used by code in isinstance checks.
string_types = (str,)
integer_types = (int, _np.int32, _np.int64)
numeric_types = (float, int, _np.generic)

mx_real_t = _np.float32


def py_str(x):
    """Decode bytes from a C string into ``str`` (``str`` passes through).

    Parameters
    ----------
    x : bytes or str
        UTF-8 bytes (MXNet's C API returned these) or an already decoded str.

    Returns
    -------
    str
    """
    return x.decode("utf-8") if isinstance(x, (bytes, bytearray)) else x


def _as_list(obj):
    """``obj`` itself when it is a list or tuple, else ``[obj]``.

    Parameters
    ----------
    obj : object
    """
    if isinstance(obj, (list, tuple)):
        return obj
    return [obj]


# the arguments of the two _UnsupportedCall errors
_CALL = """
function : callable
    The function called.
alias : str or None
    The operator it stands for, if any.
*args
    The arguments it was called with (only their types are kept).
"""


class _UnsupportedCall:
    """What ``NotImplementedForSymbol`` and ``NotSupportedForSparseNDArray``
    share: the call they describe, and MXNet's message for it (``_where``
    names what the function does not support)."""
    _where = ""

    def __init__(self, function, alias=None, *args):
        super().__init__()
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = f"Function {self.function}"
        if self.alias:
            msg += f' (namely operator "{self.alias}")'
        if self.args:
            msg += f" with arguments ({', '.join(self.args)})"
        return msg + f" is not {self._where} and only available in NDArray."


@shared_doc(call=_CALL)
class NotImplementedForSymbol(_UnsupportedCall, GraphError):
    """A function that works on NDArrays but not on Symbols (``bool(sym)``).
    An ``MXNetError`` (``NbdlError``) and a ``GraphError``.

    Parameters
    ----------
    {call}
    """
    _where = "implemented for Symbol"


@shared_doc(call=_CALL)
class NotSupportedForSparseNDArray(_UnsupportedCall, MXNetError):
    """A function that sparse NDArrays do not support (nbdl is dense only,
    so nbdl itself never raises it; it exists for code that catches it).

    Parameters
    ----------
    {call}
    """
    _where = "supported for SparseNDArray"


def binary_dispatch(where, row, lhs, rhs, kind, on_arrays, on_scalar):
    """A binary function of arrays and real numbers, as MXNet's
    ``nd.maximum`` / ``sym.maximum``: two ``kind`` operands run
    ``on_arrays(row[0], lhs, rhs)``; an operand and a number
    ``on_scalar(row[1], lhs, rhs)`` (``on_scalar(row[2], rhs, lhs)``, the
    reflected op, when the number comes first); two numbers give
    ``row[3](lhs, rhs)``.

    Parameters
    ----------
    where : str
        The function's name in the error raised for other operands (``nd.power``).
    row : tuple
        ``(two-array op, array-number op, number-array op, Python function)``.
    lhs, rhs : kind or float or int
        The operands.
    kind : type
        The array type (``NDArray`` or ``Symbol``).
    on_arrays, on_scalar : callable
        Make the result from an op name and the operands.
    """
    if isinstance(lhs, kind):
        if isinstance(rhs, kind):
            return on_arrays(row[0], lhs, rhs)
        if isinstance(rhs, _numbers.Real):
            return on_scalar(row[1], lhs, rhs)
    elif isinstance(lhs, _numbers.Real):
        if isinstance(rhs, kind):
            return on_scalar(row[2], rhs, lhs)
        if isinstance(rhs, _numbers.Real):
            return row[3](lhs, rhs)
    raise ArgumentError(f"{where}: operands must be {kind.__name__}s or numbers, got "
                        f"{type(lhs).__name__} and {type(rhs).__name__}")


__all__ = ["MXNetError", "string_types", "integer_types", "numeric_types", "mx_real_t",
           "py_str", "NotImplementedForSymbol", "NotSupportedForSparseNDArray"]
