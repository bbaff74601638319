"""MXNet 1.x's Symbol functions that are Python, not operators: ``split_v2``."""
from ..ops.concat_slice import split_v2_attrs
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
    attrs = split_v2_attrs(indices_or_sections, axis, squeeze_axis)
    return create("_split_v2", ary, name=name, **attrs)
