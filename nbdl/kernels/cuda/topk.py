"""CUDA kernels for topk (views as in ``nbdl.kernels.cpu.topk``).

No sort and no scratch: one thread per element counts how many elements of
its row come before it (the same order as the CPU's stable sort: larger
first, ties by position, NaN above numbers), which is its rank; elements
ranked below k write themselves to that slot.  O(n) work per element."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ...ops.topk import topk_temp
from ..shared.topk import as_topk_call, build_first, topk_views
from ._launch import launcher
from ..shared.elemwise_plan import size_of as _size


_first = cuda.jit(device=True)(build_first(cuda.jit(device=True)))


@cuda.jit(device=True)
def _rank(x, o, j, i, asc):
    r = 0
    for q in range(x.shape[1]):
        if q != j and _first(x, o, i, q, j, asc):
            r += 1
    return r


@cuda.jit
def _topk(x, val, ind, k, asc, mode, req_val, req_ind):
    """mode 0: positions into ``ind``; 1: mask into ``val``; 2: values into
    ``val`` and positions into ``ind``."""
    n = x.shape[1]
    inner = x.shape[2]
    for e in range(cuda.grid(1), x.shape[0] * n * inner, cuda.gridsize(1)):
        o = e // (n * inner)
        rest = e - o * n * inner
        j = rest // inner
        i = rest - j * inner
        r = _rank(x, o, j, i, asc)
        if mode == 1:
            if r < k:
                val[o, j, i] = 1
            else:
                val[o, j, i] = 0
        elif r < k:
            if mode == 2 and req_val != REQ_NULL:
                val[o, r, i] = x[o, j, i]
            if req_ind != REQ_NULL:
                ind[o, r, i] = j


@cuda.jit
def _zero(x):
    for e in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        x[e] = 0


@cuda.jit
def _backward(og, ind, grad):
    # positions within a row are distinct: no two threads hit one element
    k = og.shape[1]
    inner = og.shape[2]
    n = grad.shape[1]
    for e in range(cuda.grid(1), og.shape[0] * k * inner, cuda.gridsize(1)):
        o = e // (k * inner)
        rest = e - o * k * inner
        t = rest // inner
        i = rest - t * inner
        p = int(ind[o, t, i])
        if p < 0:
            p = 0
        if p >= n:
            p = n - 1
        grad[o, p, i] += og[o, t, i]


def _noop(*args):
    pass


def prepare_topk(call):
    dview, kview, k = topk_views(call, call.in_shapes[0])
    ret, asc = call.attrs["ret_typ"], bool(call.attrs["is_ascend"])
    n = _size(dview)
    empty = (0,)
    if ret in ("value", "both"):
        views = [dview, kview, kview, empty, empty]
        if n == 0 or all(r == REQ_NULL for r in call.req):
            return Launch(_noop, (), views=views)
        run = launcher(_topk, n)
        req_val, req_ind = call.req[0], call.req[1]

        def fn(x, val, ind, perm, buf):
            run(x, val, ind, k, asc, 2, req_val, req_ind)
        return Launch(fn, (), views=views)
    mask = ret == "mask"
    views = [dview, dview if mask else kview, empty, empty]
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    run = launcher(_topk, n)

    def fn1(x, out, perm, buf):
        if mask:
            run(x, out, out, k, asc, 1, REQ_NULL, REQ_NULL)
        else:
            run(x, out, out, k, asc, 0, REQ_NULL, call.req[0])
    return Launch(fn1, (), views=views)


def prepare_topk_backward(call):
    dview, kview, _ = topk_views(call, call.in_shapes[2])
    views = [kview, kview, dview, dview]
    if call.req[0] == REQ_NULL or _size(dview) == 0:
        return Launch(_noop, (), views=views)
    zero = launcher(_zero, _size(dview))
    m = _size(kview)
    run = launcher(_backward, max(m, 1))
    add = call.req[0] == REQ_ADD

    def fn(og, ind, data, grad):
        if not add:
            zero(grad.reshape(grad.size))
        if m:
            run(og, ind, grad)
    return Launch(fn, (), views=views)


def temp_topk(call):
    return topk_temp(call, scratch=False)     # ranks elements without scratch


# -- sort / argsort: topk with k=0 ---------------------------------------------

def prepare_sort(call):
    """sort (values, hidden int64 positions) and argsort (positions): topk's kernels."""
    return prepare_topk(as_topk_call(call))


def temp_sort(call):
    return topk_temp(as_topk_call(call), scratch=False)
