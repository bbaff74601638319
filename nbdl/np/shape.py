"""Shape manipulation with numpy's semantics: ``reshape``, ``ravel``,
``transpose``, ``swapaxes``, ``expand_dims``, ``squeeze``, ``concatenate``,
``stack``, ``split``, ``diag`` and ``diagonal``.

``reshape`` takes numpy's shapes: one ``-1`` may be inferred, and ``0`` is a
zero-length axis (MXNet's ``Reshape`` reads 0 as "copy this axis"; use
``nbdl.npx.reshape`` for MXNet 2's codes, ``nbdl.nd.reshape`` for 1.x's).
On NDArrays every result shape is available, including 0-d ones
(``squeeze`` of a single element is ``()``); on Symbols a result that would
be 0-d is ``(1,)``, as for reductions.
"""
from ..errors import AttrError, ShapeError
from ._dispatch import apply, is_scalar, norm_axis, operands, reshape_nd, static_shape


def _numpy_target(shape, newshape, where):
    """numpy's reshape target for an input of ``shape``: -1 inferred."""
    size = 1
    for d in shape:
        size *= d
    unknown = [i for i, d in enumerate(newshape) if d == -1]
    if len(unknown) > 1:
        raise ShapeError(f"{where}: can only specify one unknown dimension (-1), got {newshape}")
    if any(d < -1 for d in newshape):
        raise ShapeError(f"{where}: invalid dimension in {newshape}; numpy shapes use only "
                         f"sizes >= 0 and one -1")
    known = 1
    for d in newshape:
        if d != -1:
            known *= d
    out = list(newshape)
    if unknown:
        if known == 0 or size % known:
            raise ShapeError(f"{where}: cannot reshape array of shape {tuple(shape)} into "
                             f"shape {tuple(newshape)}")
        out[unknown[0]] = size // known
    if known * (out[unknown[0]] if unknown else 1) != size:
        raise ShapeError(f"{where}: cannot reshape array of size {size} (shape {tuple(shape)}) "
                         f"into shape {tuple(newshape)}")
    return tuple(out)


def _as_shape(newshape, where):
    if isinstance(newshape, int):
        return (newshape,)
    try:
        return tuple(int(d) for d in newshape)
    except (TypeError, ValueError):
        raise ShapeError(f"{where}: newshape must be an int or a tuple of ints, got "
                         f"{newshape!r}") from None


def reshape(a, newshape, order="C"):
    """numpy's reshape (``-1`` inferred, ``0`` a zero-length axis)."""
    if order != "C":
        raise AttrError(f"reshape: order={order!r} is not supported (only 'C')")
    newshape = _as_shape(newshape, "reshape")
    (x,), on_symbols = operands([a], "reshape")
    if not on_symbols:
        return reshape_nd(x, _numpy_target(x.shape, newshape, "reshape"))
    known = static_shape(x)
    if known is not None:
        _numpy_target(known, newshape, "reshape")   # an early error; the graph keeps the -1
    if newshape == ():
        newshape = (1,)   # graph nodes have at least one axis: () is (1,) on Symbols
    if 0 in newshape:
        raise ShapeError(f"reshape: the zero-length axis in {newshape} cannot be expressed for "
                         f"a Symbol (Reshape reads 0 as 'copy this axis')")
    if any(d < -1 for d in newshape) or newshape.count(-1) > 1:
        raise ShapeError(f"reshape: invalid shape {newshape}; numpy shapes use only sizes >= 0 "
                         f"and one -1")
    return apply("Reshape", [x], {"shape": newshape}, on_symbols=True)


def ravel(a, order="C"):
    """The flattened array (numpy's ``ravel``; a copy)."""
    return reshape(a, (-1,), order)


def transpose(a, axes=None):
    """Permute the axes (reverse them when ``axes`` is None)."""
    (x,), on_symbols = operands([a], "transpose")
    attrs = {} if axes is None else {"axes": tuple(int(v) for v in axes)}
    if not on_symbols and x.ndim < 2 and axes is None:
        return apply("_copy", [x], on_symbols=False) if x.ndim else x
    return apply("transpose", [x], attrs, on_symbols=on_symbols)


def swapaxes(a, axis1, axis2):
    """Exchange two axes (op ``SwapAxis``: no rank needed on Symbols)."""
    (x,), on_symbols = operands([a], "swapaxes")
    if not on_symbols:
        norm_axis(axis1, x.ndim, "swapaxes", "axis1")
        norm_axis(axis2, x.ndim, "swapaxes", "axis2")
    return apply("SwapAxis", [x], {"dim1": int(axis1), "dim2": int(axis2)}, on_symbols)


def expand_dims(a, axis):
    """Insert size-1 axes at ``axis`` (an int or a tuple, positions in the result)."""
    (x,), on_symbols = operands([a], "expand_dims")
    if isinstance(axis, (list, tuple)):
        axes = [int(v) for v in axis]
        known = static_shape(x)
        if known is not None:
            axes = [norm_axis(v, len(known) + len(axes), "expand_dims") for v in axes]
        if len(set(axes)) != len(axes):
            raise ShapeError(f"expand_dims: repeated axis in {tuple(axis)}")
        # Positions counted from the front are inserted first, in ascending
        # order; those counted from the end (rank unknown) last, nearest the
        # end first: each insertion then lands at its final position.
        order = sorted(v for v in axes if v >= 0) + sorted((v for v in axes if v < 0),
                                                           reverse=True)
        for v in order:
            x = apply("expand_dims", [x], {"axis": v}, on_symbols)
        return x
    return apply("expand_dims", [x], {"axis": int(axis)}, on_symbols)


def squeeze(a, axis=None):
    """Remove size-1 axes (all of them, or those in ``axis``)."""
    (x,), on_symbols = operands([a], "squeeze")
    attrs = {}
    if axis is not None:
        attrs["axis"] = tuple(axis) if isinstance(axis, (list, tuple)) else (int(axis),)
    if on_symbols:
        return apply("squeeze", [x], attrs, on_symbols=True)
    if x.ndim == 0:
        if axis not in (None, (), []):
            raise ShapeError(f"squeeze: axis {axis!r} is out of bounds for a 0-d array")
        return apply("_copy", [x], on_symbols=False)
    axes = tuple(norm_axis(v, x.ndim, "squeeze") for v in attrs.get("axis", ()))
    for v in axes:
        if x.shape[v] != 1:
            raise ShapeError(f"squeeze: cannot select an axis to squeeze out which has size "
                             f"not equal to one (axis {v} of shape {x.shape})")
    drop = axes if axis is not None else tuple(i for i, d in enumerate(x.shape) if d == 1)
    want = tuple(d for i, d in enumerate(x.shape) if i not in drop)
    return reshape_nd(x, want) if want != x.shape else apply("_copy", [x], on_symbols=False)


def _sequence(arrays, where):
    if is_scalar(arrays) or not isinstance(arrays, (list, tuple)):
        raise ShapeError(f"{where}: expects a list or tuple of arrays, got "
                         f"{type(arrays).__name__}")
    if not arrays:
        raise ShapeError(f"{where}: need at least one array")
    return operands(arrays, where)


def concatenate(seq, axis=0):
    """Join arrays along an existing axis (``axis=None``: flattened first)."""
    xs, on_symbols = _sequence(seq, "concatenate")
    if axis is None:
        xs = [reshape(x, (-1,)) for x in xs]
        axis = 0
    if not on_symbols:
        nd = xs[0].ndim
        if nd == 0:
            raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
        for i, x in enumerate(xs):
            if x.ndim != nd:
                raise ShapeError(f"concatenate: all the input arrays must have the same number "
                                 f"of dimensions; array 0 has {nd} and array {i} has {x.ndim} "
                                 f"(shapes {[tuple(v.shape) for v in xs]})")
        axis = norm_axis(axis, nd, "concatenate")
    return apply("Concat", xs, {"dim": int(axis)}, on_symbols)


def stack(arrays, axis=0):
    """Join arrays of one shape along a new axis."""
    xs, on_symbols = _sequence(arrays, "stack")
    if not on_symbols:
        shapes = {tuple(x.shape) for x in xs}
        if len(shapes) > 1:
            raise ShapeError(f"stack: all input arrays must have the same shape, got "
                             f"{[tuple(x.shape) for x in xs]}")
        axis = norm_axis(axis, xs[0].ndim + 1, "stack")
    return apply("stack", xs, {"axis": int(axis), "num_args": len(xs)}, on_symbols)


def diag(v, k=0):
    """numpy's ``diag``: a 1-d ``v`` on the k-th diagonal of a square matrix,
    or the k-th diagonal of a 2-d ``v`` (op ``diag``)."""
    (x,), on_symbols = operands([v], "diag")
    known = static_shape(x) if on_symbols else x.shape
    if known is not None and len(known) not in (1, 2):
        raise ShapeError(f"diag: input must be 1-d or 2-d, got shape {tuple(known)}")
    return apply("diag", [x], {"k": int(k)}, on_symbols)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy's ``diagonal``: the ``offset`` diagonal of axes (axis1, axis2),
    moved to the last axis (op ``diag``)."""
    (x,), on_symbols = operands([a], "diagonal")
    known = static_shape(x) if on_symbols else x.shape
    if known is not None and len(known) < 2:
        raise ShapeError(f"diagonal: input must be at least 2-d, got shape {tuple(known)}")
    return apply("diag", [x], {"k": int(offset), "axis1": int(axis1), "axis2": int(axis2)},
                 on_symbols)


def split(ary, indices_or_sections, axis=0):
    """A list of sub-arrays: ``indices_or_sections`` equal parts (an int), or
    cuts before the given indices (a list), along ``axis``.  On Symbols the
    cuts go to ``slice_axis`` as given (negative ones count from the end),
    so no piece may be empty."""
    (x,), on_symbols = operands([ary], "split")
    length = None
    if not on_symbols:
        axis = norm_axis(axis, x.ndim, "split")
        length = x.shape[axis]
    elif static_shape(x) is not None:     # for early errors only
        known = static_shape(x)
        length = known[norm_axis(axis, len(known), "split")]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n < 1:
            raise ShapeError(f"split: number of sections must be larger than 0, got {n}")
        if length is not None and length % n:
            raise ShapeError(f"split: array split does not result in an equal division "
                             f"({length} along axis {axis} into {n})")
        parts = apply("SliceChannel", [x], {"num_outputs": n, "axis": int(axis)}, on_symbols)
        return parts if isinstance(parts, list) else [parts]
    cuts = [int(c) for c in indices_or_sections]
    if on_symbols:
        bounds = [0] + cuts + [None]
        return [apply("slice_axis", [x], {"axis": int(axis), "begin": b, "end": e}, True)
                for b, e in zip(bounds[:-1], bounds[1:])]
    cuts = [max(0, min(length, c + length if c < 0 else c)) for c in cuts]
    bounds = [0] + cuts + [length]
    out = []
    for begin, end in zip(bounds[:-1], bounds[1:]):
        if end <= begin:
            # an empty piece: nothing to compute and no element to differentiate
            from .creation import zeros
            shape = tuple(0 if i == axis else d for i, d in enumerate(x.shape))
            out.append(zeros(shape, dtype=x.dtype, device=x.device))
        else:
            out.append(apply("slice_axis", [x], {"axis": int(axis), "begin": begin, "end": end},
                             False))
    return out
