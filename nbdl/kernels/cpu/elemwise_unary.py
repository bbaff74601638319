"""CPU kernels for unary elementwise ops, Activation, clip, their backward
ops, ElementWiseSum and where.

Most loops are generated from one expression each (``_elemwise_gen``); the
ones here are the few with their own shape: a plain copy, ``where`` with a
per-row condition, and where's two-output backward.  Computed indices are
cast to ``np.uintp`` so Numba does not check each one for wrap-around."""
import numpy as np
from numba import prange

from ..shared.jit import njit

from ...ops.elemwise_unary import ADD_N_FUSED_MAX
from ...ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, Launch
from ..shared.elemwise_exprs import UNARY, add_n
from ._elemwise_gen import map_kernel, prepare_map  # noqa: F401  (prepare_map: op table)
from ._half import is_half
from ._parallel import serial_and_parallel, twins as _twins, use_parallel
from ..shared.elemwise_plan import grouped_sum, size_of, where_rows
from ..shared.store import py_copy

_copy = njit(cache=True, inline="always")(py_copy)


@njit(cache=True)
def copy_kernel(x, out, req):
    _copy(x, out, req)


def prepare_copy(call):
    if is_half(call.out_dtypes[0]):       # the generated loop over float16 bits
        return prepare_map(call)
    n = size_of(call.out_shapes[0])
    return Launch(copy_kernel, (int(call.req[0]),), views=[(n,), (n,)])


def prepare_add_n(call):
    """ElementWiseSum: one generated loop per number of inputs up to
    ``ADD_N_FUSED_MAX``; more inputs are summed in passes (``grouped_sum``)."""
    k = len(call.in_shapes)
    n = size_of(call.out_shapes[0])
    req = int(call.req[0])
    par = use_parallel(n)
    half = is_half(call.out_dtypes[0])
    if k <= ADD_N_FUSED_MAX:
        fn = map_kernel(f"add_n_{k}", add_n(k), par, half=half)
        return Launch(fn, (req,), views=[(n,)] * (k + 1))
    copy = map_kernel("_copy", UNARY["_copy"], half=True) if half else copy_kernel
    run = grouped_sum(k, ADD_N_FUSED_MAX,
                      lambda m: map_kernel(f"add_n_{m}", add_n(m), par, half=half),
                      copy, REQ_WRITE, REQ_ADD)
    return Launch(run, (req,), views=[(n,)] * (k + 1 + (req == REQ_ADD)))


# -- where with a condition per row (condition of shape (x.shape[0],)) --------------

@njit(cache=True)
def where_rows_kernel(c, a, b, out, inner, req):
    if req == REQ_NULL:
        return
    for r in range(c.size):
        o = r * inner
        if c[r] != 0:
            if req == REQ_ADD:
                for j in range(inner):
                    out[np.uintp(o + j)] += a[np.uintp(o + j)]
            else:
                for j in range(inner):
                    out[np.uintp(o + j)] = a[np.uintp(o + j)]
        else:
            if req == REQ_ADD:
                for j in range(inner):
                    out[np.uintp(o + j)] += b[np.uintp(o + j)]
            else:
                for j in range(inner):
                    out[np.uintp(o + j)] = b[np.uintp(o + j)]


@njit(cache=True, parallel=True)
def where_rows_kernel_par(c, a, b, out, inner, req):
    if req == REQ_NULL:
        return
    for r in prange(c.size):
        o = r * inner
        src = a if c[r] != 0 else b
        if req == REQ_ADD:
            for j in range(inner):
                out[np.uintp(o + j)] += src[np.uintp(o + j)]
        else:
            for j in range(inner):
                out[np.uintp(o + j)] = src[np.uintp(o + j)]


def prepare_where(call):
    if tuple(call.in_shapes[0]) == tuple(call.in_shapes[1]):
        return prepare_map(call)
    rows, inner, n = where_rows(call.in_shapes[0], call.in_shapes[1])
    fn = where_rows_kernel_par if use_parallel(n) else where_rows_kernel
    return Launch(fn, (int(inner), int(call.req[0])), views=[(rows,), (n,), (n,), (n,)])


# -- _backward_where: (head gradient, condition) -> (grad x, grad y) --------------

@njit(cache=True)
def _store(out, i, v, req):
    if req == REQ_ADD:
        out[i] += v
    elif req != REQ_NULL:
        out[i] = v


def where_backward_kernel(g, c, gx, gy, inner, req_x, req_y):
    zero = g.dtype.type(0)
    for r in prange(c.size):
        keep = c[r] != 0
        for j in range(inner):
            i = np.uintp(r * inner + j)
            v = g[i]
            _store(gx, i, v if keep else zero, req_x)
            _store(gy, i, zero if keep else v, req_y)


where_backward_kernel, where_backward_kernel_par = serial_and_parallel(where_backward_kernel, suffix="_par")


def prepare_backward_where(call):
    rows, inner, n = where_rows(call.in_shapes[1], call.in_shapes[0])
    fn = where_backward_kernel_par if use_parallel(n) else where_backward_kernel
    return Launch(fn, (int(inner), int(call.req[0]), int(call.req[1])),
                  views=[(n,), (rows,), (n,), (n,)])


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((where_rows_kernel_par, where_rows_kernel))


__all__ = ["prepare_copy", "prepare_map", "prepare_add_n", "prepare_where",
           "prepare_backward_where", "copy_kernel"]
