"""CPU kernels for depth_to_space and space_to_depth: one index mapping
between the deep (N, C*b*b, H, W) and the shallow (N, C, H*b, W*b) layout;
deep channel ``(i*b + j)*C + c`` at (h, w) is shallow channel c at
(h*b + i, w*b + j).  Loops run over the deep layout, one (n, channel) plane
per outer iteration (the parallel variant splits those)."""
from functools import partial
import math

from numba import prange

from ..shared.jit import njit

from ._parallel import serial_and_parallel, use_parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)


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
                _put(shallow, (n, c, h * b + i, w * b + j), deep[n, k, h, w], add)
            else:
                _put(deep, (n, k, h, w), shallow[n, c, h * b + i, w * b + j], add)


def shuffle(x, out, b, to_shallow, req):
    """depth_to_space (``to_shallow``: x deep, out shallow) or space_to_depth
    (x shallow, out deep)."""
    if req == REQ_NULL:
        return
    deep = x if to_shallow else out
    shallow = out if to_shallow else x
    for r in prange(deep.shape[0] * deep.shape[1]):
        _plane(deep, shallow, b, to_shallow, req == REQ_ADD, r)


shuffle, shuffle_parallel = serial_and_parallel(shuffle)


def _parallel(shape):
    return use_parallel(math.prod(shape))


def _prepare(call, to_shallow):
    fn = shuffle_parallel if _parallel(call.in_shapes[0]) else shuffle
    return Launch(fn, (int(call.attrs["block_size"]), to_shallow, int(call.req[0])))


prepare_depth_to_space = partial(_prepare, to_shallow=True)
prepare_space_to_depth = partial(_prepare, to_shallow=False)
