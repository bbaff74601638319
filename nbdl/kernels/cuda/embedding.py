"""CUDA kernels for Embedding (views as in ``nbdl.kernels.cpu.embedding``):
one thread per output element; the weight gradient is zeroed, then
scatter-added with atomics because ids may repeat."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.embedding import embedding_views, py_row_of
from ._launch import launcher
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)


row_of = cuda.jit(device=True)(py_row_of)


@cuda.jit
def _forward(ids, weight, out, add):
    d = out.shape[1]
    for e in range(cuda.grid(1), out.shape[0] * d, cuda.gridsize(1)):
        t = e // d
        k = e - t * d
        v = weight[row_of(ids[t], weight.shape[0]), k]
        _put(out, (t, k), v, add)


@cuda.jit
def _zero(x):
    for e in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        x[e] = 0


@cuda.jit
def _backward(og, ids, grad):
    d = og.shape[1]
    for e in range(cuda.grid(1), og.shape[0] * d, cuda.gridsize(1)):
        t = e // d
        k = e - t * d
        cuda.atomic.add(grad, (row_of(ids[t], grad.shape[0]), k), og[t, k])


def _noop(*args):
    pass


def prepare_embedding(call):
    ids, w, out = embedding_views(call, call.in_shapes[0])
    views = [ids, w, out]
    n = out[0] * out[1]
    if call.req[0] == REQ_NULL or n == 0:
        return Launch(_noop, (), views=views)
    return Launch(launcher(_forward, n), (call.req[0] == REQ_ADD,), views=views)


def prepare_embedding_backward(call):
    ids, w, out = embedding_views(call, call.in_shapes[1])
    views = [out, ids, w, w]
    if call.req[0] == REQ_NULL or w[0] * w[1] == 0:
        return Launch(_noop, (), views=views)
    zero = launcher(_zero, w[0] * w[1])
    n = out[0] * out[1]
    run = launcher(_backward, max(n, 1))
    add = call.req[0] == REQ_ADD

    def fn(og, ids_, weight, grad):
        if not add:
            zero(grad.reshape(grad.size))
        if n:
            run(og, ids_, grad)
    return Launch(fn, (), views=views)
