"""CUDA kernels for Cast: a converting copy.

A cast from or to float16 goes through float32 (exact from float16; to
float16 a float64 value is rounded to float32 first, as MXNet's ``half_t``
does), so no conversion between float16 and an integer or float64 type is
asked of the device."""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ._launch import copy_kernel as cast_kernel, launcher, launcher_without
from ..shared.elemwise_plan import size_of


@cuda.jit
def cast_from_half_kernel(x, out, req):
    """``x`` float16, ``out`` any other dtype."""
    start = cuda.grid(1)
    for i in range(start, x.size, cuda.gridsize(1)):
        if req == REQ_ADD:
            out[i] += np.float32(x[i])
        elif req != REQ_NULL:
            out[i] = np.float32(x[i])


@cuda.jit
def cast_to_half_kernel(x, out, req):
    """``out`` float16 (``x`` any dtype): the sum of an add in float32."""
    start = cuda.grid(1)
    for i in range(start, x.size, cuda.gridsize(1)):
        if req == REQ_ADD:
            out[i] = np.float32(out[i]) + np.float32(x[i])
        elif req != REQ_NULL:
            out[i] = np.float32(x[i])


_HALF = np.dtype(np.float16)


def _kernel(call):
    if np.dtype(call.out_dtypes[0]) == _HALF:
        return cast_to_half_kernel
    if np.dtype(call.in_dtypes[0]) == _HALF:
        return cast_from_half_kernel
    return cast_kernel


def prepare_cast(call):
    n = size_of(call.out_shapes[0])
    return Launch(launcher(_kernel(call), n), (int(call.req[0]),), views=[(n,), (n,)])


def prepare_cast_like(call):
    """The cast of the first input to the second's dtype (the second is not read)."""
    n = size_of(call.out_shapes[0])
    return Launch(launcher_without(_kernel(call), n), (int(call.req[0]),),
                  views=[(n,), (n,), (n,)])


class _MulticastCall:
    """The one-pair view of an ``amp_multicast`` call that ``_kernel`` reads."""

    def __init__(self, src, dst):
        self.in_dtypes, self.out_dtypes = [src], [dst]


def prepare_multicast(call):
    """``amp_multicast``: one converting copy per input/output pair."""
    k = len(call.in_shapes)
    sizes = [size_of(s) for s in call.out_shapes]
    fns = [launcher(_kernel(_MulticastCall(call.in_dtypes[i], call.out_dtypes[i])),
                    sizes[i]) for i in range(k)]

    def run(*args):
        for i in range(k):
            fns[i](args[i], args[k + i], args[2 * k + i])
    return Launch(run, tuple(int(r) for r in call.req), views=[(n,) for n in sizes * 2])

