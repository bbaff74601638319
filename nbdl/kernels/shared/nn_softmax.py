"""SoftmaxActivation's views and softmax_cross_entropy's per-row math (plain
Python: compiled by ``njit`` in ``kernels.cpu.nn_softmax``, by
``cuda.jit(device=True)`` in ``kernels.cuda.nn_softmax``)."""
import dataclasses
import math

import numpy as np
from numba.extending import register_jitable


def softmax_activation_call(call, shape):
    """``call`` as a softmax (axis 1, no temperature) of data ``shape``:
    flattened to (N, rest) for ``mode='instance'``, as is for ``'channel'``."""
    shape = tuple(int(d) for d in shape)
    if call.attrs["mode"] == "instance":
        n = shape[0]
        rest = int(np.prod(shape[1:], dtype=np.int64))
        shape = (n, rest)
    k = len(call.in_shapes)
    return dataclasses.replace(call, attrs={"axis": 1, "temperature": None},
                               in_shapes=[shape] * k, out_shapes=[shape])


@register_jitable
def row_max_sumexp(x, r):
    """Row ``r``'s maximum ``m`` and the sum of ``exp(x[r] - m)``."""
    m = x[r, 0]
    for j in range(1, x.shape[1]):
        if x[r, j] > m:
            m = x[r, j]
    s = m - m
    for j in range(x.shape[1]):
        s += math.exp(x[r, j] - m)
    return m, s


def py_xent_row(x, label, r, tiny):
    """``-log(max(softmax(x[r])[label[r]], tiny))`` (``tiny`` = 1e-8 in the data's
    dtype; 0 for a label out of range)."""
    k = x.shape[1]
    m, s = row_max_sumexp(x, r)
    c = int(label[r])
    if c < 0 or c >= k:
        return m - m
    p = math.exp(x[r, c] - m) / s
    if p < tiny:
        p = tiny
    return -math.log(p)


def py_xent_grad_row(og, x, label, dx, r, add):
    """``dx[r] (+)= (softmax(x[r]) - one_hot(label[r])) * og[0]``."""
    k = x.shape[1]
    m, s = row_max_sumexp(x, r)
    c = int(label[r])
    g = og[0]
    for j in range(k):
        v = math.exp(x[r, j] - m) / s
        if j == c:
            v -= 1
        v = v * g
        if add:
            dx[r, j] += v
        else:
            dx[r, j] = v
