"""CUDA kernels of gather_nd, scatter_nd and the adding scatter (layouts in
``nbdl.kernels.shared.gather_nd``), one thread per element of the sliced
``(Y, inner)`` array; the adding scatter uses atomics (indices may repeat).
Kernels cannot raise, so the indices are checked on the host first."""
import numpy as np
from numba import cuda

from ...ops.gather_nd import IndexOutOfRange
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ...ops.shape import size_of
from ..shared.gather_nd import gather_views, scatter_views
from ._launch import grid1d
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)


@cuda.jit(device=True)
def pick8(k, a0, a1, a2, a3, a4, a5, a6, a7):
    """The k-th of eight scalars (no runtime indexing of a tuple in device code)."""
    if k == 0:
        return a0
    if k == 1:
        return a1
    if k == 2:
        return a2
    if k == 3:
        return a3
    if k == 4:
        return a4
    if k == 5:
        return a5
    if k == 6:
        return a6
    return a7


@cuda.jit(device=True)
def _row(idx, y, d0, d1, d2, d3, d4, d5, d6, d7):
    r = 0
    for k in range(idx.shape[0]):
        n = pick8(k, d0, d1, d2, d3, d4, d5, d6, d7)
        j = int(idx[k, y])
        if j < 0:
            j += n
        r = r * n + j
    return r


@cuda.jit
def _gather(data, idx, out, d0, d1, d2, d3, d4, d5, d6, d7, add):
    inner = out.shape[1]
    for e in range(cuda.grid(1), out.shape[0] * inner, cuda.gridsize(1)):
        y = e // inner
        i = e - y * inner
        r = _row(idx, y, d0, d1, d2, d3, d4, d5, d6, d7)
        _put(out, (y, i), data[r, i], add)


@cuda.jit
def _scatter(data, idx, out, d0, d1, d2, d3, d4, d5, d6, d7, add):
    inner = out.shape[1]
    for e in range(cuda.grid(1), data.shape[0] * inner, cuda.gridsize(1)):
        y = e // inner
        i = e - y * inner
        r = _row(idx, y, d0, d1, d2, d3, d4, d5, d6, d7)
        if add:
            cuda.atomic.add(out, (r, i), data[y, i])
        else:
            out[r, i] = data[y, i]


@cuda.jit
def _zero(x):
    for e in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        x[e] = 0


def _run(kernel, n, *args):
    blocks, threads = grid1d(n)
    kernel[blocks, threads](*args)


def check_indices(idx, dims):
    """Every index column must lie in [-X, X) on its axis (host-side)."""
    host = idx.copy_to_host() if hasattr(idx, "copy_to_host") else np.asarray(idx)
    if host.size == 0:
        return
    j = np.trunc(host.astype(np.float64))
    n = np.asarray(dims[:host.shape[0]], dtype=np.float64)[:, None]
    if (j < -n).any() or (j >= n).any():
        raise IndexOutOfRange("gather_nd/scatter_nd: an index is out of range")


def prepare_gather_nd(call):
    full, iview, sliced, dims = gather_views(call)
    req = call.req[0]
    n = size_of(sliced)

    def fn(data, idx, out):
        if req == REQ_NULL or n == 0:
            return
        check_indices(idx, dims)
        _run(_gather, n, data, idx, out, *dims, req == REQ_ADD)
    return Launch(fn, (), views=[full, iview, sliced])


def _scatter_launch(call, add, views):
    full, iview, sliced, dims = scatter_views(call)
    req = call.req[0]
    n = size_of(sliced)

    def run(data, idx, out):
        if req == REQ_NULL:
            return
        check_indices(idx, dims)
        if req != REQ_ADD:
            _run(_zero, size_of(full), out.reshape(out.size))
        if n:
            _run(_scatter, n, data, idx, out, *dims, add or req == REQ_ADD)
    return run, [sliced, iview] + views + [full]


def prepare_scatter_nd(call):
    run, views = _scatter_launch(call, False, [])
    return Launch(run, (), views=views)


def prepare_add_nd(call):
    if len(call.in_shapes) == 3:    # _gather_nd_backward(out_grad, indices, data)
        run, views = _scatter_launch(call, True, [(size_of(call.in_shapes[2]),)])

        def fn(og, idx, like, out):
            run(og, idx, out)
        return Launch(fn, (), views=views)
    run, views = _scatter_launch(call, True, [])
    return Launch(run, (), views=views)
