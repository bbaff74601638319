"""CPU kernels for Cast: a converting copy."""
from numba import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch


@njit(cache=True)
def cast_kernel(x, out, req):
    if req == REQ_ADD:
        for i in range(x.size):
            out[i] += x[i]
    elif req != REQ_NULL:
        for i in range(x.size):
            out[i] = x[i]


@njit(cache=True)
def cast_like_kernel(x, like, out, req):
    cast_kernel(x, out, req)


def _n(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def prepare_cast(call):
    n = _n(call.out_shapes[0])
    return Launch(cast_kernel, (int(call.req[0]),), views=[(n,), (n,)])


def prepare_cast_like(call):
    n = _n(call.out_shapes[0])
    return Launch(cast_like_kernel, (int(call.req[0]),), views=[(n,), (n,), (n,)])
