"""CUDA kernels of batch_take, fill_element_0index, argmax_channel,
ravel_multi_index and unravel_index (layouts as in
``nbdl.kernels.cpu.index_legacy``)."""
from numba import cuda

from ...ops.index_legacy import argmax_channel_axis, ravel_scalars
from ...ops.registry import REQ_NULL, Launch
from ...ops.shape import size_of
from ..shared.indexing import MODE_CLIP
from ._launch import grid1d, launcher
from .gather_nd import pick8
from .indexing import _pick_forward
from .reduce import prepare_arg


def _noop(*args):
    pass


def _run(kernel, n, *args):
    blocks, threads = grid1d(n)
    kernel[blocks, threads](*args)


def prepare_batch_take(call):
    rows, n = size_of(call.in_shapes[1]), call.in_shapes[0][-1]
    views = [(rows, n, 1), (rows, 1), (rows, 1)]
    if call.req[0] == REQ_NULL or rows == 0:
        return Launch(_noop, (), views=views)
    return Launch(launcher(_pick_forward, rows), (MODE_CLIP,), views=views)


@cuda.jit
def _copy2d(x, out):
    m = x.shape[1]
    for e in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        i = e // m
        out[i, e - i * m] = x[i, e - i * m]


@cuda.jit
def _fill_rows(mhs, rhs, out):
    m = out.shape[1]
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        j = int(rhs[i])
        if 0 <= j < m:
            out[i, j] = mhs[i]


def prepare_fill_element(call):
    lhs = call.in_shapes[0]
    req = call.req[0]

    def fn(x, mhs, rhs, out):
        if req == REQ_NULL or size_of(lhs) == 0:
            return
        _run(_copy2d, size_of(lhs), x, out)
        _run(_fill_rows, lhs[0], mhs, rhs, out)
    return Launch(fn, (), views=[None, None, None, None])


def prepare_argmax_channel(call):
    return prepare_arg(argmax_channel_axis(call))


@cuda.jit
def _ravel(data, out, d0, d1, d2, d3, d4, d5, d6, d7):
    for b in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        flat = 0
        for k in range(data.shape[0]):
            flat = flat * pick8(k, d0, d1, d2, d3, d4, d5, d6, d7) + int(data[k, b])
        out[b] = flat


@cuda.jit
def _unravel(data, out, d0, d1, d2, d3, d4, d5, d6, d7):
    n = out.shape[0]
    for b in range(cuda.grid(1), data.shape[0], cuda.gridsize(1)):
        j = int(data[b])
        for k in range(n - 1, 0, -1):
            d = pick8(k, d0, d1, d2, d3, d4, d5, d6, d7)
            out[k, b] = j % d
            j //= d
        out[0, b] = j


def _ravel_launch(call, kernel, views, n):
    scalars = ravel_scalars(call)
    if call.req[0] == REQ_NULL or n == 0:
        return Launch(_noop, (), views=views)
    run = launcher(kernel, n)

    def fn(x, out):
        run(x, out, *scalars)
    return Launch(fn, (), views=views)


def prepare_ravel_multi_index(call):
    d = call.in_shapes[0]
    b = size_of(d[1:])
    return _ravel_launch(call, _ravel, [(d[0], b), (b,)], b)


def prepare_unravel_index(call):
    b = size_of(call.in_shapes[0])
    return _ravel_launch(call, _unravel, [(b,), (len(call.attrs["shape"]), b)], b)
