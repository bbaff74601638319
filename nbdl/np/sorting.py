"""numpy's ``sort``, ``argsort`` and ``cumsum`` over the op table's ``sort``,
``argsort`` and ``_np_cumsum`` (Gluon 2.0's ``mx.np`` spellings).

``axis=None`` works on the flattened array, as numpy.  The order is the op's:
stable, NaN last (numpy's too); ``kind`` is accepted and ignored (every sort
is stable), ``order`` (structured arrays) is not supported.  ``argsort``
returns int64 positions, as numpy does.
"""
import numpy as np

from .._docs import shared_doc
from ..errors import AttrError
from ._dispatch import apply, operands


def _axis(axis):
    return "None" if axis is None else int(axis)


def _sort(op, a, axis, order, descending, **attrs):
    if order is not None:
        raise AttrError(f"{op}: order={order!r} (structured arrays) is not supported")
    (x,), s = operands([a], op)
    return apply(op, [x], {"axis": _axis(axis), "is_ascend": not descending, **attrs},
                 on_symbols=s)


_SORT_ARGS = """
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


@shared_doc(sort_args=_SORT_ARGS)
def sort(a, axis=-1, kind=None, order=None, descending=False):
    """The sorted values of ``a`` along ``axis`` (None: flattened).

    Parameters
    ----------
    {sort_args}
    """
    return _sort("sort", a, axis, order, descending)


@shared_doc(sort_args=_SORT_ARGS)
def argsort(a, axis=-1, kind=None, order=None, descending=False):
    """The int64 positions that sort ``a`` along ``axis`` (None: flattened).

    Parameters
    ----------
    {sort_args}
    """
    return _sort("argsort", a, axis, order, descending, dtype="int64")


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
