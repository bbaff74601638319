"""take / pick: mode codes and prepare-time views, shared by the CPU and CUDA kernels."""
import numpy as np


MODE_CLIP, MODE_WRAP, MODE_RAISE = 0, 1, 2
MODE_CODES = {"clip": MODE_CLIP, "wrap": MODE_WRAP, "raise": MODE_RAISE}


def pick_views(call):
    """(outer, n, inner) of data and (outer, inner) of index/output."""
    shape = call.in_shapes[0] if call.op.name == "pick" else call.in_shapes[2]
    axis = call.attrs["axis"]
    axis = axis + len(shape) if axis < 0 else axis
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    return (outer, int(shape[axis]), inner), (outer, inner)


def take_views(call, a_shape):
    axis = call.attrs["axis"]
    axis = axis + len(a_shape) if axis < 0 else axis
    outer = int(np.prod(a_shape[:axis], dtype=np.int64))
    inner = int(np.prod(a_shape[axis + 1:], dtype=np.int64))
    m = int(np.prod(call.in_shapes[1], dtype=np.int64))
    return (outer, int(a_shape[axis]), inner), (m,), (outer, m, inner)
