"""MXNet 1.x's symbol functions that are Python, not operators: ``histogram``
and ``split_v2``."""
import numbers

from ..errors import ArgumentError
from ..ops.concat_slice import split_v2_attrs
from .construct import create
from .symbol import Symbol


def histogram(a, bins=10, range=None, **kwargs):  # noqa: A002  (MXNet's argument name)
    """A ``_histogram`` node (MXNet 1.x's ``sym.histogram``): ``bins`` equal
    bins over ``range`` (required here), or the edges as a Symbol.

    Parameters
    ----------
    a : Symbol
        The values.
    bins : int or Symbol
        The number of equal bins, or the bin edges.
    range : (float, float)
        (min, max) of the equal bins.
    **kwargs
        ``name`` and ``attr``.
    """
    if isinstance(bins, Symbol):
        return create("_histogram", a, bins, **kwargs)
    if isinstance(bins, numbers.Integral) and not isinstance(bins, bool):
        if range is None:
            raise ArgumentError("histogram: a symbol needs range= with an integer bins "
                                "(MXNet's rule: no data-dependent range in a graph)")
        return create("_histogram", a, bin_cnt=int(bins), range=tuple(range), **kwargs)
    raise ArgumentError(f"histogram: bins must be an int or a Symbol, got {type(bins).__name__}")


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False, name=None):
    """Split ``ary`` along ``axis`` (MXNet 1.x's ``sym.split_v2``: a ``_split_v2`` node).

    Parameters
    ----------
    ary : Symbol
        The input.
    indices_or_sections : int or tuple of int
        An int: that many near-equal pieces (``sections``); a tuple: the
        positions along ``axis`` where a new piece starts.
    axis : int
        The axis to split.
    squeeze_axis : bool
        Drop ``axis`` from the pieces (each must then have size 1 there).
    name : str, optional
        The node's name.

    Returns
    -------
    Symbol
        One output per piece.
    """
    attrs = split_v2_attrs(indices_or_sections, axis, squeeze_axis)
    return create("_split_v2", ary, name=name, **attrs)
