"""CUDA kernels for unary elementwise ops."""
from numba import cuda

from ...ops.registry import Launch
from ._launch import launcher


@cuda.jit
def copy_kernel(x, out, req):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.size, stride):
        if req == 3:
            out[i] += x[i]
        else:
            out[i] = x[i]


def prepare_copy(call):
    n = 1
    for d in call.out_shapes[0]:
        n *= d
    return Launch(launcher(copy_kernel, n), (call.req[0],), views=[(n,), (n,)])
