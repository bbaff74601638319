"""CUDA kernels for depth_to_space and space_to_depth (layouts as in
``nbdl.kernels.cpu.depth_space``): one thread per element of the deep layout."""
import math

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.store import py_put, py_unravel4
from ._launch import launcher

_put = cuda.jit(device=True)(py_put)

_unravel4 = cuda.jit(device=True)(py_unravel4)


@cuda.jit
def _shuffle(deep, shallow, b, to_shallow, req):
    kk = deep.shape[1]
    hh = deep.shape[2]
    ww = deep.shape[3]
    c_s = shallow.shape[1]
    total = deep.shape[0] * kk * hh * ww
    for r in range(cuda.grid(1), total, cuda.gridsize(1)):
        n, k, h, w = _unravel4(r, kk, hh, ww)
        blk = k // c_s
        c = k - blk * c_s
        i = blk // b
        j = blk - i * b
        if to_shallow:
            _put(shallow, (n, c, h * b + i, w * b + j), deep[n, k, h, w], req == REQ_ADD)
        else:
            _put(deep, (n, k, h, w), shallow[n, c, h * b + i, w * b + j], req == REQ_ADD)


def _noop(*args):
    pass


def _prepare(call, to_shallow):
    n = math.prod(call.in_shapes[0])
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, ())
    run = launcher(_shuffle, n)
    b, req = int(call.attrs["block_size"]), int(call.req[0])
    if to_shallow:
        def fn(x, out):
            run(x, out, b, True, req)
    else:
        def fn(x, out):
            run(out, x, b, False, req)
    return Launch(fn, ())


def prepare_depth_to_space(call):
    return _prepare(call, True)


def prepare_space_to_depth(call):
    return _prepare(call, False)
