"""The converting copy the float16 mirrors of ``kernels.shared.half_mirror``
(and of ``OpDef.half_mirrors`` ops) use on a GPU."""
from numba import cuda

from ._launch import launcher


@cuda.jit
def _convert(dst, src):
    for i in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
        dst[i] = src[i]


def device_copy(dst, src):
    """float16 <-> float32 copy of two same-size device arrays."""
    launcher(_convert, dst.size)(dst.reshape(dst.size), src.reshape(src.size))
