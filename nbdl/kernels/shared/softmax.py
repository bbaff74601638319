"""Softmax's prepare-time views and scalars and its per-row math, shared by
the CPU and CUDA kernels: the ``py_*`` functions are plain Python, compiled
by ``njit`` in ``kernels.cpu.softmax`` and by ``cuda.jit(device=True)`` in
``kernels.cuda.softmax``.  Arrays are ``(outer, n, inner)`` views; a row is
one ``(o, i)`` pair, read whole before it is written (so the output may be
the input buffer)."""
import math

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


def py_forward_row(x, out, o, i, inv_t, log, n, zero):
    """Row (o, i) of softmax(x * inv_t) (``log``: log_softmax) over its first
    ``n`` entries; the others get 0 (a masked row)."""
    for k in range(n, x.shape[1]):
        out[o, k, i] = zero
    if n == 0:
        return
    # max of x / T (not of x) so that a negative temperature stays stable too
    m = x[o, 0, i] * inv_t
    for k in range(1, n):
        v = x[o, k, i] * inv_t
        if v > m:
            m = v
    s = zero
    if log:
        for k in range(n):
            s += math.exp(x[o, k, i] * inv_t - m)
        shift = m + math.log(s)
        for k in range(n):
            out[o, k, i] = x[o, k, i] * inv_t - shift
    else:
        for k in range(n):
            e = math.exp(x[o, k, i] * inv_t - m)
            out[o, k, i] = e
            s += e
        for k in range(n):
            out[o, k, i] = out[o, k, i] / s


def py_backward_row(og, out, grad, o, i, inv_t, log, add, n, zero):
    """The input gradient of row (o, i) from the head gradient and the
    output, over the first ``n`` entries (the others' gradient is 0):
    softmax ``y * (g - sum(g * y)) / T``, log_softmax ``(g - exp(y) * sum(g)) / T``."""
    if not add:
        for k in range(n, og.shape[1]):
            grad[o, k, i] = zero
    s = zero
    if log:
        for k in range(n):
            s += og[o, k, i]
    else:
        for k in range(n):
            s += og[o, k, i] * out[o, k, i]
    for k in range(n):
        if log:
            v = (og[o, k, i] - math.exp(out[o, k, i]) * s) * inv_t
        else:
            v = out[o, k, i] * (og[o, k, i] - s) * inv_t
        if add:
            grad[o, k, i] += v
        else:
            grad[o, k, i] = v


def py_row_length(length, o, i, n):
    """A masked row's length, clipped to [0, n]."""
    k = int(length[o, i])
    return 0 if k < 0 else (n if k > n else k)
