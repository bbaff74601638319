"""Index-based operators of ``nbdl.npx``: one_hot, pick, topk, and MXNet's
coded ``reshape``."""
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


def reshape(a, newshape, reverse=False):
    """MXNet's ``Reshape`` with its codes: 0 copies an input axis, -1 infers
    one, -2 copies the rest, -3 merges two, -4 splits one into the two that
    follow; ``reverse`` applies them right to left.  These are MXNet 1.x's
    codes (the ``Reshape`` op's), not MXNet 2's ``npx.reshape`` codes."""
    (x,), s = operands([a], "reshape")
    shape = (int(newshape),) if isinstance(newshape, (int, np.integer)) else \
        tuple(int(d) for d in newshape)
    return apply("Reshape", [x], {"shape": shape, "reverse": bool(reverse)}, on_symbols=s)

