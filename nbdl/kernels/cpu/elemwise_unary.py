"""CPU kernels for unary elementwise ops."""
import numpy as np
from numba import njit

from ...ops.registry import REQ_ADD, Launch


@njit(cache=True)
def copy_kernel(x, out, req):
    if req == 3:
        for i in range(x.size):
            out[i] += x[i]
    else:
        for i in range(x.size):
            out[i] = x[i]


def prepare_copy(call):
    n = int(np.prod(call.out_shapes[0]))
    return Launch(copy_kernel, (call.req[0],), views=[(n,), (n,)])
