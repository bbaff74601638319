"""Index-based operators of ``nbdl.npx``: one_hot, pick, topk, gather_nd,
MXNet 2's coded ``reshape`` and ``shape_array``."""
import numpy as np

from ..errors import AttrError
from ..ndarray.ndarray import NDArray
from ..np._dispatch import apply, operands


def index_operand(index, like):
    """Ids given as a numpy array keep their dtype (an int64 id stays exact);
    they go to ``like``'s device.  NDArrays and Symbols pass through."""
    if isinstance(index, np.ndarray) and isinstance(like, NDArray):
        from ..np.creation import array
        return array(index, device=like.device)
    return index


def one_hot(data, depth, on_value=1.0, off_value=0.0, dtype="float32"):
    """``one_hot``: ``data.shape + (depth,)`` with ``on_value`` at each id."""
    (x,), s = operands([data], "one_hot")
    return apply("one_hot", [x], {"depth": int(depth), "on_value": float(on_value),
                                  "off_value": float(off_value),
                                  "dtype": np.dtype(dtype).name}, on_symbols=s)


def pick(data, index, axis=-1, mode="clip", keepdims=False):
    """``pick``: ``data[..., index, ...]`` along ``axis`` (one element per row)."""
    if axis is None:
        raise AttrError("pick: axis=None (picking from the flattened array) is not supported; "
                        "give an axis")
    (x, idx), s = operands([data, index_operand(index, data)], "pick")
    return apply("pick", [x, idx], {"axis": int(axis), "mode": mode,
                                    "keepdims": bool(keepdims)}, on_symbols=s)


def topk(data, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype="float32"):
    """``topk``: the k largest (``is_ascend``: smallest) along ``axis`` (None:
    flattened); ``ret_typ`` 'indices' (in ``dtype``), 'value', 'both'
    (``[values, indices]``) or 'mask'."""
    (x,), s = operands([data], "topk")
    attrs = {"axis": "None" if axis is None else int(axis), "k": int(k), "ret_typ": ret_typ,
             "is_ascend": bool(is_ascend), "dtype": np.dtype(dtype).name}
    return apply("topk", [x], attrs, on_symbols=s)


def reshape(a, newshape, reverse=False, order="C"):
    """MXNet 2's ``npx.reshape`` (op ``_npx_reshape``).  ``newshape`` is an
    int or a tuple of sizes (``0`` is a zero-length axis) and codes: -1
    infers one axis, -2 copies one input axis, -3 drops an input axis of size
    1, -4 copies all remaining input axes, -5 merges two input axes, -6 splits
    one input axis into the two values that follow it (one may be -1); a size
    and -1 also step over one input axis.  ``reverse=True`` applies the codes
    right to left.  Only ``order='C'``.  MXNet 1.x's codes (0 copy, -2 rest,
    -3 merge, -4 split) stay with ``nbdl.nd.reshape`` and ``NDArray.reshape``."""
    if order != "C":
        raise AttrError(f"reshape: order={order!r} is not supported (only 'C')")
    if isinstance(newshape, (int, np.integer)) and not isinstance(newshape, bool):
        shape = (int(newshape),)
    else:
        try:
            shape = tuple(int(d) for d in newshape)
        except (TypeError, ValueError):
            raise AttrError(f"reshape: newshape must be an int or a tuple of ints, got "
                            f"{newshape!r}") from None
    (x,), s = operands([a], "reshape")
    return apply("_npx_reshape", [x], {"newshape": shape, "reverse": bool(reverse),
                                       "order": "C"}, on_symbols=s)


def gather_nd(data, indices):
    """``gather_nd``: ``out[y, ...] = data[indices[0, y], .., indices[M-1, y], ...]``
    (``indices`` of shape ``(M, ...)``; negative entries count from the end)."""
    (x, idx), s = operands([data, index_operand(indices, data)], "gather_nd")
    return apply("gather_nd", [x, idx], {}, on_symbols=s)


def shape_array(data):
    """``shape_array``: the shape of ``data`` as a 1-d int64 array.

    Parameters
    ----------
    data : ndarray
        Any array (its values are not read).
    """
    (x,), s = operands([data], "shape_array")
    return apply("shape_array", [x], {}, on_symbols=s)
