"""CUDA kernels for Cast: a converting copy."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ._launch import launcher


@cuda.jit
def cast_kernel(x, out, req):
    start = cuda.grid(1)
    for i in range(start, x.size, cuda.gridsize(1)):
        if req == REQ_ADD:
            out[i] += x[i]
        elif req != REQ_NULL:
            out[i] = x[i]


@cuda.jit
def cast_like_kernel(x, like, out, req):
    start = cuda.grid(1)
    for i in range(start, x.size, cuda.gridsize(1)):
        if req == REQ_ADD:
            out[i] += x[i]
        elif req != REQ_NULL:
            out[i] = x[i]


def _n(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def prepare_cast(call):
    n = _n(call.out_shapes[0])
    return Launch(launcher(cast_kernel, n), (int(call.req[0]),), views=[(n,), (n,)])


def prepare_cast_like(call):
    n = _n(call.out_shapes[0])
    return Launch(launcher(cast_like_kernel, n), (int(call.req[0]),), views=[(n,), (n,), (n,)])
