"""CPU kernels of _contrib_arange_like, _contrib_index_array and
_contrib_index_copy (scalars and views in ``nbdl.kernels.shared.index_contrib``)."""
from ..shared.jit import njit

from ...ops.indexing import IndexOutOfRange
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.index_contrib import (arange_scalars, index_array_scalars, index_array_views,
                                    index_copy_backward_views, index_copy_views, py_old_grad)
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)

_old_grad = njit(cache=True, inline="always")(py_old_grad)


@njit(cache=True)
def arange_like_kernel(like, out, start, step, repeat, req):
    """out[i] = start + step * (i // repeat) (``like`` gives the shape only)."""
    if req == REQ_NULL:
        return
    for i in range(out.size):
        out[i] = start + step * (i // repeat)


@njit(cache=True)
def index_array_kernel(like, out, s0, s1, s2, s3, s4, s5, s6, s7,
                       n0, n1, n2, n3, n4, n5, n6, n7, req):
    """out[p, j] = (p // stride_j) % size_j: the index of flat position p along axis j."""
    if req == REQ_NULL:
        return
    st = (s0, s1, s2, s3, s4, s5, s6, s7)
    sz = (n0, n1, n2, n3, n4, n5, n6, n7)
    for p in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[p, j] = (p // st[j]) % sz[j]


@njit(cache=True)
def index_copy_kernel(old, idx, new, out, req):
    """out = old with out[idx[i]] = new[i]; every index is checked before writing."""
    if req == REQ_NULL:
        return
    n = old.shape[0]
    _check_rows(idx, n)
    if old.ctypes.data != out.ctypes.data:
        for r in range(n):
            for c in range(old.shape[1]):
                out[r, c] = old[r, c]
    for i in range(idx.shape[0]):
        j = int(idx[i])
        for c in range(new.shape[1]):
            out[j, c] = new[i, c]


@njit(cache=True)
def _check_rows(idx, n):
    for i in range(idx.shape[0]):
        j = int(idx[i])
        if j < 0 or j >= n:
            raise IndexOutOfRange("_contrib_index_copy: an index is out of range")


@njit(cache=True)
def index_copy_backward_kernel(g, old, idx, new, dold, didx, dnew, copied, req_old, req_idx,
                               req_new):
    """dold = g with the rows idx[i] zeroed, didx = 0, dnew[i] = g[idx[i]]
    (``copied``: a row mask, scratch)."""
    n = g.shape[0]
    _check_rows(idx, n)
    if req_old != REQ_NULL:
        copied[:] = 0
        for i in range(idx.shape[0]):
            copied[int(idx[i])] = 1
        for r in range(n):
            for c in range(g.shape[1]):
                _old_grad(g, copied, dold, r, c, req_old)
    if req_idx != REQ_NULL and req_idx != REQ_ADD:
        didx[:] = 0
    if req_new != REQ_NULL:
        for i in range(idx.shape[0]):
            j = int(idx[i])
            for c in range(g.shape[1]):
                _put(dnew, (i, c), g[j, c], req_new == REQ_ADD)


def prepare_arange_like(call):
    n = 1
    for d in call.out_shapes[0]:
        n *= d
    m = 1
    for d in call.in_shapes[0]:
        m *= d
    return Launch(arange_like_kernel, arange_scalars(call) + (call.req[0],), views=[(m,), (n,)])


def prepare_index_array(call):
    return Launch(index_array_kernel, index_array_scalars(call) + (call.req[0],),
                  views=index_array_views(call))


def prepare_index_copy(call):
    return Launch(index_copy_kernel, (call.req[0],), views=index_copy_views(call))


def prepare_index_copy_backward(call):
    return Launch(index_copy_backward_kernel, tuple(call.req), views=index_copy_backward_views(call))
