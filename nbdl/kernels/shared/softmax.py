"""Softmax's prepare-time views and scalars, shared by the CPU and CUDA kernels."""
import numpy as np


def axis_view(shape, axis):
    """``(outer, n, inner)`` for a softmax along ``axis`` of ``shape``."""
    shape = tuple(shape)
    axis = axis + len(shape) if axis < 0 else axis
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    return (outer, int(shape[axis]), inner)


def length_view(view):
    """``(outer, inner)``: the masked softmax's length per row of ``view``."""
    return (view[0], view[2])


def inv_temperature(attrs, dtype):
    t = attrs.get("temperature")
    return np.dtype(dtype).type(1.0 if t is None else 1.0 / t)


def softmin_attrs(attrs):
    """softmin(x / t) is softmax(x / -t): the attributes that run softmin on
    the softmax kernels (its gradient is softmax's with ``-t`` too)."""
    t = attrs.get("temperature")
    return dict(attrs, temperature=-(1.0 if t is None else t))
