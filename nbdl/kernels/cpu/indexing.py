"""CPU kernels for one_hot, pick and take and the scatter kernels of their
gradients.

Indices may be float or integer arrays; a float index is truncated toward
zero (C's cast, as MXNet).  ``pick`` sees data as ``(outer, n, inner)`` with
``n`` the picked axis; ``take`` sees ``a`` the same way around its axis and
the indices flattened, so its output is ``(outer, m, inner)``.
"""
import math

import numpy as np
from numba import prange

from ..shared.jit import njit

from ...ops.indexing import IndexOutOfRange
from ._parallel import serial_and_parallel, use_parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.indexing import MODE_CODES, MODE_RAISE, MODE_WRAP, pick_views, take_views


@njit(cache=True, inline="always")
def fix_index(j, n, mode):
    """An index in [0, n): clipped, wrapped, or (raise mode, already checked)
    negative indices counted from the end."""
    if mode == MODE_WRAP:
        return j % n
    if mode == MODE_RAISE:
        return j + n if j < 0 else j
    if j < 0:
        return 0
    if j >= n:
        return n - 1
    return j


# -- one_hot -----------------------------------------------------------------------

@njit(cache=True)
def one_hot_kernel(idx, out, on, off, req):
    if req == REQ_NULL:
        return
    depth = out.shape[1]
    for i in range(out.shape[0]):
        for j in range(depth):
            out[i, j] = off
        k = int(idx[i])
        if 0 <= k < depth:
            out[i, k] = on


def prepare_one_hot(call):
    out_shape = call.out_shapes[0]
    depth = out_shape[-1]
    n = int(np.prod(out_shape[:-1], dtype=np.int64))
    dt = np.dtype(call.out_dtypes[0]).type
    return Launch(one_hot_kernel, (dt(call.attrs["on_value"]), dt(call.attrs["off_value"]),
                                   call.req[0]), views=[(n,), (n, depth)])


# -- pick --------------------------------------------------------------------------

@njit(cache=True)
def pick_forward(data, index, out, mode, req):
    if req == REQ_NULL:
        return
    n = data.shape[1]
    for o in range(data.shape[0]):
        for i in range(data.shape[2]):
            out[o, i] = data[o, fix_index(int(index[o, i]), n, mode), i]


@njit(cache=True)
def pick_backward(og, index, data, grad, mode, req):
    """Scatter the head gradient back to the picked positions (``data`` is
    an input only for its shape)."""
    if req == REQ_NULL:
        return
    n = grad.shape[1]
    if req != REQ_ADD:
        grad[...] = 0
    for o in range(grad.shape[0]):
        for i in range(grad.shape[2]):
            grad[o, fix_index(int(index[o, i]), n, mode), i] += og[o, i]


def prepare_pick(call):
    dview, iview = pick_views(call)
    return Launch(pick_forward, (MODE_CODES[call.attrs["mode"]], call.req[0]),
                  views=[dview, iview, iview])


def prepare_pick_backward(call):
    dview, iview = pick_views(call)
    return Launch(pick_backward, (MODE_CODES[call.attrs["mode"]], call.req[0]),
                  views=[iview, iview, dview, dview])


# -- take --------------------------------------------------------------------------

@njit(cache=True)
def check_indices(idx, n):
    """Raise mode: every index must lie in [-n, n)."""
    for t in range(idx.shape[0]):
        j = int(idx[t])
        if j < -n or j >= n:
            raise IndexOutOfRange("take: an index is out of range (mode='raise')")


@njit(cache=True, inline="always")
def _take_row(a, idx, out, t, mode):
    j = fix_index(int(idx[t]), a.shape[1], mode)
    for o in range(a.shape[0]):
        for i in range(a.shape[2]):
            out[o, t, i] = a[o, j, i]


def take_forward(a, idx, out, mode, req):
    if req == REQ_NULL:
        return
    if mode == MODE_RAISE:
        check_indices(idx, a.shape[1])
    for t in prange(idx.shape[0]):
        _take_row(a, idx, out, t, mode)


take_forward, take_forward_parallel = serial_and_parallel(take_forward)


@njit(cache=True)
def take_backward(og, idx, a, grad, mode, req):
    """Scatter-add the head gradient into ``a``'s gradient; repeated indices
    accumulate (``a`` is an input only for its shape)."""
    if req == REQ_NULL:
        return
    n = grad.shape[1]
    if mode == MODE_RAISE:
        check_indices(idx, n)
    if req != REQ_ADD:
        grad[...] = 0
    for o in range(grad.shape[0]):
        for t in range(idx.shape[0]):
            j = fix_index(int(idx[t]), n, mode)
            for i in range(grad.shape[2]):
                grad[o, j, i] += og[o, t, i]


def prepare_take(call):
    aview, iview, oview = take_views(call, call.in_shapes[0])
    big = use_parallel(math.prod(oview)) and iview[0] > 1
    return Launch(take_forward_parallel if big else take_forward,
                  (MODE_CODES[call.attrs["mode"]], call.req[0]), views=[aview, iview, oview])


def prepare_take_backward(call):
    aview, iview, oview = take_views(call, call.in_shapes[2])
    return Launch(take_backward, (MODE_CODES[call.attrs["mode"]], call.req[0]),
                  views=[oview, iview, aview, aview])
