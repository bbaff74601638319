"""CUDA kernels for cumsum (views as in ``nbdl.kernels.cpu.cumsum``): one
thread per (outer, inner) lane runs its lane's sum, forward or from the end,
in the output's dtype (no scratch)."""
from numba import cuda

from ...ops.cumsum import cumsum_geometry
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ._launch import launcher
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)


@cuda.jit
def _cumsum(x, out):
    n_outer, n, n_inner = x.shape
    for e in range(cuda.grid(1), n_outer * n_inner, cuda.gridsize(1)):
        o = e // n_inner
        i = e - o * n_inner
        s = out.dtype.type(0)     # never read the output: it may hold NaN bits
        for j in range(n):
            s += x[o, j, i]
            out[o, j, i] = s


@cuda.jit
def _cumsum_backward(g, dx, add):
    n_outer, n, n_inner = g.shape
    for e in range(cuda.grid(1), n_outer * n_inner, cuda.gridsize(1)):
        o = e // n_inner
        i = e - o * n_inner
        s = dx.dtype.type(0)
        for j in range(n - 1, -1, -1):
            s += g[o, j, i]
            _put(dx, (o, j, i), s, add)


def _noop(*args):
    pass


def prepare_cumsum(call):
    view = cumsum_geometry(call.attrs, call.in_shapes[0], call.where())
    lanes = view[0] * view[2]
    if call.req[0] == REQ_NULL or lanes == 0 or view[1] == 0:
        return Launch(_noop, (), views=[view, view])
    run = launcher(_cumsum, lanes)

    def fn(x, out):
        run(x, out)
    return Launch(fn, (), views=[view, view])


def prepare_cumsum_backward(call):
    view = cumsum_geometry(call.attrs, call.in_shapes[1], call.where())
    views = [view, view, view, (0,)]
    lanes = view[0] * view[2]
    if call.req[0] == REQ_NULL or lanes == 0 or view[1] == 0:
        return Launch(_noop, (), views=views)
    run = launcher(_cumsum_backward, lanes)
    add = call.req[0] == REQ_ADD

    def fn(g, data, dx, acc):
        run(g, dx, add)
    return Launch(fn, (), views=views)


def temp_cumsum_backward(call):
    return [((0,), call.out_dtypes[0])]   # sums in registers
