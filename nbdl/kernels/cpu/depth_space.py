"""CPU kernels for depth_to_space and space_to_depth: one index mapping
between the deep (N, C*b*b, H, W) and the shallow (N, C, H*b, W*b) layout;
deep channel ``(i*b + j)*C + c`` at (h, w) is shallow channel c at
(h*b + i, w*b + j).  Loops run over the deep layout, one (n, channel) plane
per outer iteration (the parallel variant splits those)."""
import math

from numba import prange

from ..shared.jit import njit

from ._parallel import twins as _twins, use_parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch


@njit(cache=True, inline="always")
def _plane(deep, shallow, b, to_shallow, add, r):
    kk = deep.shape[1]
    c_s = shallow.shape[1]
    n = r // kk
    k = r - n * kk
    blk = k // c_s
    c = k - blk * c_s
    i = blk // b
    j = blk - i * b
    for h in range(deep.shape[2]):
        for w in range(deep.shape[3]):
            if to_shallow:
                if add:
                    shallow[n, c, h * b + i, w * b + j] += deep[n, k, h, w]
                else:
                    shallow[n, c, h * b + i, w * b + j] = deep[n, k, h, w]
            else:
                if add:
                    deep[n, k, h, w] += shallow[n, c, h * b + i, w * b + j]
                else:
                    deep[n, k, h, w] = shallow[n, c, h * b + i, w * b + j]


@njit(cache=True)
def depth_to_space_kernel(x, out, b, req):
    if req == REQ_NULL:
        return
    for r in range(x.shape[0] * x.shape[1]):
        _plane(x, out, b, True, req == REQ_ADD, r)


@njit(cache=True, parallel=True)
def depth_to_space_parallel(x, out, b, req):
    if req == REQ_NULL:
        return
    for r in prange(x.shape[0] * x.shape[1]):
        _plane(x, out, b, True, req == REQ_ADD, r)


@njit(cache=True)
def space_to_depth_kernel(x, out, b, req):
    if req == REQ_NULL:
        return
    for r in range(out.shape[0] * out.shape[1]):
        _plane(out, x, b, False, req == REQ_ADD, r)


@njit(cache=True, parallel=True)
def space_to_depth_parallel(x, out, b, req):
    if req == REQ_NULL:
        return
    for r in prange(out.shape[0] * out.shape[1]):
        _plane(out, x, b, False, req == REQ_ADD, r)


def _parallel(shape):
    return use_parallel(math.prod(shape))


def prepare_depth_to_space(call):
    fn = depth_to_space_parallel if _parallel(call.in_shapes[0]) else depth_to_space_kernel
    return Launch(fn, (int(call.attrs["block_size"]), int(call.req[0])))


def prepare_space_to_depth(call):
    fn = space_to_depth_parallel if _parallel(call.in_shapes[0]) else space_to_depth_kernel
    return Launch(fn, (int(call.attrs["block_size"]), int(call.req[0])))


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((depth_to_space_parallel, depth_to_space_kernel),
       (space_to_depth_parallel, space_to_depth_kernel))
