"""CUDA kernels of _contrib_arange_like, _contrib_index_array and
_contrib_index_copy (layouts as in ``nbdl.kernels.cpu.index_contrib``);
index_copy's indices are checked on the host (kernels cannot raise)."""
import numpy as np
from numba import cuda

from ...ops.indexing import IndexOutOfRange
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ...ops.shape import size_of
from ..shared.index_contrib import (arange_scalars, index_array_scalars, index_array_views,
                                    index_copy_backward_views, index_copy_views, py_old_grad)
from ._launch import grid1d
from .gather_nd import pick8
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

_old_grad_at = cuda.jit(device=True)(py_old_grad)


def _run(kernel, n, *args):
    blocks, threads = grid1d(n)
    kernel[blocks, threads](*args)


@cuda.jit
def _arange(out, start, step, repeat):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = start + step * (i // repeat)


@cuda.jit
def _index_array(out, s0, s1, s2, s3, s4, s5, s6, s7, n0, n1, n2, n3, n4, n5, n6, n7):
    k = out.shape[1]
    for e in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        p = e // k
        j = e - p * k
        out[p, j] = ((p // pick8(j, s0, s1, s2, s3, s4, s5, s6, s7))
                     % pick8(j, n0, n1, n2, n3, n4, n5, n6, n7))


@cuda.jit
def _copy_rows(old, out):
    m = old.shape[1]
    for e in range(cuda.grid(1), old.size, cuda.gridsize(1)):
        r = e // m
        out[r, e - r * m] = old[r, e - r * m]


@cuda.jit
def _put_rows(idx, new, out):
    m = new.shape[1]
    for e in range(cuda.grid(1), new.size, cuda.gridsize(1)):
        i = e // m
        out[int(idx[i]), e - i * m] = new[i, e - i * m]


@cuda.jit
def _mark_rows(idx, copied):
    for i in range(cuda.grid(1), idx.size, cuda.gridsize(1)):
        copied[int(idx[i])] = 1


@cuda.jit
def _old_grad(g, copied, dold, req):
    m = g.shape[1]
    for e in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        r = e // m
        _old_grad_at(g, copied, dold, r, e - r * m, req)


@cuda.jit
def _new_grad(g, idx, dnew, req):
    m = dnew.shape[1]
    for e in range(cuda.grid(1), dnew.size, cuda.gridsize(1)):
        i = e // m
        c = e - i * m
        _put(dnew, (i, c), g[int(idx[i]), c], req == REQ_ADD)


@cuda.jit
def _fill_zero(x):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        x[i] = 0


def _check_rows(idx, rows):
    host = idx.copy_to_host() if hasattr(idx, "copy_to_host") else np.asarray(idx)
    j = np.trunc(host.astype(np.float64))
    if j.size and (j.min() < 0 or j.max() >= rows):
        raise IndexOutOfRange("_contrib_index_copy: an index is out of range")


def prepare_index_copy_backward(call):
    views = index_copy_backward_views(call)
    req_old, req_idx, req_new = call.req
    rows = views[0][0]

    def fn(g, old, idx, new, dold, didx, dnew, copied):
        _check_rows(idx, rows)
        if req_old != REQ_NULL and g.size:
            _run(_fill_zero, rows, copied)
            if idx.size:
                _run(_mark_rows, idx.size, idx, copied)
            _run(_old_grad, g.size, g, copied, dold, req_old)
        if req_idx not in (REQ_NULL, REQ_ADD) and didx.size:
            _run(_fill_zero, didx.size, didx)
        if req_new != REQ_NULL and dnew.size:
            _run(_new_grad, dnew.size, g, idx, dnew, req_new)
    return Launch(fn, (), views=views)


def prepare_arange_like(call):
    scalars = arange_scalars(call)
    n, req = size_of(call.out_shapes[0]), call.req[0]

    def fn(like, out):
        if req != REQ_NULL and n:
            _run(_arange, n, out, *scalars)
    return Launch(fn, (), views=[(size_of(call.in_shapes[0]),), (n,)])


def prepare_index_array(call):
    scalars = index_array_scalars(call)
    views = index_array_views(call)
    n, req = size_of(views[1]), call.req[0]

    def fn(like, out):
        if req != REQ_NULL and n:
            _run(_index_array, n, out, *scalars)
    return Launch(fn, (), views=views)


def prepare_index_copy(call):
    views = index_copy_views(call)
    req, rows = call.req[0], views[0][0]

    def fn(old, idx, new, out):
        if req == REQ_NULL:
            return
        _check_rows(idx, rows)
        if old.size:
            _run(_copy_rows, old.size, old, out)
        if new.size:
            _run(_put_rows, new.size, idx, new, out)
    return Launch(fn, (), views=views)
