"""CUDA kernels for unary elementwise ops, Activation, clip, their backward
ops, ElementWiseSum and where (the expression loops come from
``_elemwise_gen``; the copy and where's row-wise forms are written here)."""
import numpy as np
from numba import cuda

from ...ops.elemwise_unary import ADD_N_FUSED_MAX
from ...ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, Launch
from ..shared.elemwise_exprs import add_n
from ..shared.elemwise_plan import grouped_sum, size_of, where_rows
from ._launch import copy_kernel
from ._elemwise_gen import launch, map_kernel, prepare_map  # noqa: F401  (prepare_map: op table)


def prepare_copy(call):
    n = size_of(call.out_shapes[0])
    return Launch(launch(copy_kernel, n), (int(call.req[0]),), views=[(n,), (n,)])


def prepare_add_n(call):
    """As the CPU kernel: one generated kernel up to ``ADD_N_FUSED_MAX``
    inputs, passes of that many (``grouped_sum``) beyond."""
    k = len(call.in_shapes)
    n = size_of(call.out_shapes[0])
    req = int(call.req[0])
    dt = call.out_dtypes[0]
    if k <= ADD_N_FUSED_MAX:
        return Launch(launch(map_kernel(add_n(k), dt), n), (req,), views=[(n,)] * (k + 1))
    run = grouped_sum(k, ADD_N_FUSED_MAX, lambda m: launch(map_kernel(add_n(m), dt), n),
                      launch(copy_kernel, n), REQ_WRITE, REQ_ADD)
    return Launch(run, (req,), views=[(n,)] * (k + 1 + (req == REQ_ADD)))


@cuda.jit
def where_rows_kernel(c, a, b, out, inner, req):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        v = a[i] if c[i // inner] != 0 else b[i]
        if req == REQ_ADD:
            out[i] += v
        elif req != REQ_NULL:
            out[i] = v


def prepare_where(call):
    if tuple(call.in_shapes[0]) == tuple(call.in_shapes[1]):
        return prepare_map(call)
    rows, inner, n = where_rows(call.in_shapes[0], call.in_shapes[1])
    return Launch(launch(where_rows_kernel, n), (int(inner), int(call.req[0])),
                  views=[(rows,), (n,), (n,), (n,)])


@cuda.jit
def where_backward_kernel(g, c, gx, gy, zero, inner, req_x, req_y):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, g.size, stride):
        v = g[i]
        keep = c[i // inner] != 0
        vx = v if keep else zero
        vy = zero if keep else v
        if req_x == REQ_ADD:
            gx[i] += vx
        elif req_x != REQ_NULL:
            gx[i] = vx
        if req_y == REQ_ADD:
            gy[i] += vy
        elif req_y != REQ_NULL:
            gy[i] = vy


def prepare_backward_where(call):
    rows, inner, n = where_rows(call.in_shapes[1], call.in_shapes[0])
    zero = np.dtype(call.out_dtypes[0]).type(0)
    return Launch(launch(where_backward_kernel, n),
                  (zero, int(inner), int(call.req[0]), int(call.req[1])),
                  views=[(n,), (rows,), (n,), (n,)])
