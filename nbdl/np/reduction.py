"""Reductions with numpy's ``axis`` / ``keepdims`` semantics: ``sum``,
``mean``, ``prod``, ``max``/``amax``, ``min``/``amin``, ``argmax``,
``argmin``.

``axis=None`` reduces every axis; ``axis=()`` reduces none (numpy; MXNet's
ops read ``()`` as "all", so that case is a copy here).  numpy returns a
0-d array when every axis goes (``sum(x)``, ``sum(v, axis=0)`` of a vector);
nbdl's ops return shape ``(1,)`` there, as MXNet 1.x does.  On NDArrays
the result is reshaped to ``()`` (differentiably); **on Symbols it stays
``(1,)``**, because a graph node cannot produce a 0-d array (``Reshape``
has no code for it) — the numbers are the same, and ``(1,)`` broadcasts
wherever ``()`` does.

``argmax`` / ``argmin`` return int64 indices as numpy (and MXNet's ``np``)
do, through a ``Cast`` of the ops' float result.
"""
import numpy as np

from ..dtype import as_dtype
from ..errors import ShapeError
from ._dispatch import apply, is_scalar, norm_axis, operands, reshape_nd


def _axes(axis, ndim, where):
    """numpy's axis argument as a sorted tuple of non-negative axes (None: all)."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = [norm_axis(a, ndim, where) for a in axis]
    else:
        axes = [norm_axis(axis, ndim, where)]
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{where}: duplicate value in axis {axis!r}")
    return tuple(sorted(axes))


def _numpy_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _input(a, dtype, where):
    if is_scalar(a):
        from .creation import array
        a = array(a)
    (x,), on_symbols = operands([a], where)
    if dtype is not None:
        dt = as_dtype(dtype)
        if on_symbols or np.dtype(x.dtype) != dt:
            x = apply("Cast", [x], {"dtype": dt.name}, on_symbols)
    return x, on_symbols


def _reduce(op, a, axis, dtype, keepdims, where):
    x, on_symbols = _input(a, dtype, where)
    if isinstance(axis, (list, tuple)) and len(axis) == 0:
        return apply("_copy", [x], on_symbols=on_symbols)
    if on_symbols:
        attrs = {"keepdims": bool(keepdims)}
        if axis is not None:
            attrs["axis"] = tuple(axis) if isinstance(axis, (list, tuple)) else (int(axis),)
        return apply(op, [x], attrs, on_symbols=True)
    axes = _axes(axis, x.ndim, where)
    want = _numpy_shape(x.shape, axes, keepdims)
    if x.ndim == 0:
        out = apply(op, [reshape_nd(x, (1,))], {}, on_symbols=False)
    else:
        out = apply(op, [x], {"axis": axes, "keepdims": bool(keepdims)}, on_symbols=False)
    return reshape_nd(out, want)


def _make_reduction(fname, op):
    def fn(a, axis=None, dtype=None, keepdims=False):
        return _reduce(op, a, axis, dtype, keepdims, fname)
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = (f"numpy's ``{fname}`` over ``axis`` (an int, a tuple, or None for all) "
                  f"(op ``{op}``); ``dtype`` casts the input first.  A full reduction is "
                  f"0-d on NDArrays and (1,) on Symbols.")
    return fn


sum = _make_reduction("sum", "sum")  # noqa: A001  (numpy's names)
mean = _make_reduction("mean", "mean")
prod = _make_reduction("prod", "prod")


def _make_extremum(fname, op):
    def fn(a, axis=None, keepdims=False):
        return _reduce(op, a, axis, None, keepdims, fname)
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"numpy's ``{fname}`` over ``axis`` (op ``{op}``; NaN propagates)."
    return fn


max = _make_extremum("max", "max")  # noqa: A001
min = _make_extremum("min", "min")  # noqa: A001
amax = max
amin = min


def _arg(op, a, axis, keepdims, where):
    x, on_symbols = _input(a, None, where)
    if axis is not None and isinstance(axis, (list, tuple)):
        raise ShapeError(f"{where}: axis must be an int or None, got {axis!r}")
    attrs = {"keepdims": bool(keepdims)}
    if on_symbols:
        if axis is not None:
            attrs["axis"] = int(axis)
        idx = apply(op, [x], attrs, on_symbols=True)
        return apply("Cast", [idx], {"dtype": "int64"}, on_symbols=True)
    if x.size == 0:
        raise ShapeError(f"{where}: attempt to get {where} of an empty sequence "
                         f"(shape {x.shape})")
    if axis is None:
        want = (1,) * x.ndim if keepdims else ()
    else:
        a_ = norm_axis(axis, x.ndim, where)
        attrs["axis"] = a_
        want = _numpy_shape(x.shape, (a_,), keepdims)
    src = reshape_nd(x, (1,)) if x.ndim == 0 else x
    idx = apply(op, [src], attrs, on_symbols=False)
    return reshape_nd(apply("Cast", [idx], {"dtype": "int64"}, on_symbols=False), want)


def argmax(a, axis=None, keepdims=False):
    """Index of the largest element (of the flattened array when ``axis`` is
    None), int64; ties give the first."""
    return _arg("argmax", a, axis, keepdims, "argmax")


def argmin(a, axis=None, keepdims=False):
    """Index of the smallest element, int64; ties give the first."""
    return _arg("argmin", a, axis, keepdims, "argmin")
