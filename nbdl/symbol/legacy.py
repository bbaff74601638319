"""MXNet 1.x's Symbol functions that are Python, not operators: ``split_v2``."""
from ..errors import ArgumentError
from .construct import create


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
    if isinstance(indices_or_sections, bool) or not isinstance(indices_or_sections, (int, tuple)):
        raise ArgumentError("split_v2: indices_or_sections must either int or tuple of ints")
    if isinstance(indices_or_sections, int):
        attrs = {"indices": (), "sections": indices_or_sections}
    else:
        attrs = {"indices": (0,) + tuple(indices_or_sections), "sections": 0}
    return create("_split_v2", ary, axis=axis, squeeze_axis=squeeze_axis, name=name, **attrs)
