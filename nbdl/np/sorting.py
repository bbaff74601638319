"""numpy's ``sort``, ``argsort`` and ``cumsum`` over the op table's ``sort``,
``argsort`` and ``_np_cumsum`` (Gluon 2.0's ``mx.np`` spellings).

``axis=None`` works on the flattened array, as numpy.  The order is the op's:
stable, NaN last (numpy's too); ``kind`` is accepted and ignored (every sort
is stable), ``order`` (structured arrays) is not supported.  ``argsort``
returns int64 positions, as numpy does.
"""
import numpy as np

from ..errors import AttrError
from ._dispatch import apply, operands


def _axis(axis):
    return "None" if axis is None else int(axis)


def _check_order(order, where):
    if order is not None:
        raise AttrError(f"{where}: order={order!r} (structured arrays) is not supported")


def sort(a, axis=-1, kind=None, order=None, descending=False):
    """The sorted values of ``a`` along ``axis`` (None: flattened).

    Parameters
    ----------
    a : ndarray
        The array.
    axis : int or None
        Axis to sort along.
    kind : str, optional
        Ignored: the sort is always stable.
    order : None
        Not supported.
    descending : bool
        Largest first (Gluon 2.0's keyword).
    """
    _check_order(order, "sort")
    (x,), s = operands([a], "sort")
    return apply("sort", [x], {"axis": _axis(axis), "is_ascend": not descending}, on_symbols=s)


def argsort(a, axis=-1, kind=None, order=None, descending=False):
    """The int64 positions that sort ``a`` along ``axis`` (None: flattened).

    Parameters
    ----------
    a : ndarray
        The array.
    axis : int or None
        Axis to sort along.
    kind : str, optional
        Ignored: the sort is always stable.
    order : None
        Not supported.
    descending : bool
        Largest first (Gluon 2.0's keyword).
    """
    _check_order(order, "argsort")
    (x,), s = operands([a], "argsort")
    return apply("argsort", [x], {"axis": _axis(axis), "is_ascend": not descending,
                                  "dtype": "int64"}, on_symbols=s)


def cumsum(a, axis=None, dtype=None, out=None):
    """The running sum of ``a`` along ``axis`` (None: of the flattened array).

    Parameters
    ----------
    a : ndarray
        The array.
    axis : int or None
        Axis to sum along.
    dtype : dtype, optional
        dtype of the result (and of the sum); default ``a``'s.
    out : ndarray, optional
        Not supported (results are new arrays).
    """
    if out is not None:
        raise AttrError("cumsum: out= is not supported")
    (x,), s = operands([a], "cumsum")
    attrs = {"axis": _axis(axis)}
    if dtype is not None:
        attrs["dtype"] = np.dtype(dtype).name
    return apply("_np_cumsum", [x], attrs, on_symbols=s)
