"""MXNet 1.x's symbol functions that are Python, not operators: ``histogram``."""
import numbers

from ..errors import ArgumentError
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
