"""CUDA kernels of _contrib_count_sketch (one thread per data element,
atomics into the zeroed output, as MXNet's) and its data gradient (one
thread per data element)."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.count_sketch import sketch_views
from ._launch import launcher, noop, zero
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)


@cuda.jit
def _sketch(x, h, s, out):
    d = x.shape[1]
    k = out.shape[1]
    for t in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        n = t // d
        i = t - n * d
        j = int(h[0, i])
        if 0 <= j < k:
            cuda.atomic.add(out, (n, j), s[0, i] * x[n, i])


@cuda.jit
def _sketch_backward(og, h, s, dx, add):
    d = dx.shape[1]
    k = og.shape[1]
    for t in range(cuda.grid(1), dx.size, cuda.gridsize(1)):
        n = t // d
        i = t - n * d
        j = int(h[0, i])
        v = og[n, j] * s[0, i] if 0 <= j < k else og[n, 0] * 0
        _put(dx, (n, i), v, add)


def prepare_count_sketch(call):
    dv, ov = sketch_views(call.in_shapes[0], call.attrs["out_dim"])
    views = [dv, None, None, ov]
    if call.req[0] == REQ_NULL or ov[0] * ov[1] == 0:
        return Launch(noop, (), views=views)
    run = launcher(_sketch, max(dv[0] * dv[1], 1))
    add = call.req[0] == REQ_ADD

    def fn(x, h, s, out):
        if not add:
            zero(out.reshape(out.size))
        if dv[0] * dv[1]:
            run(x, h, s, out)
    return Launch(fn, (), views=views)


def prepare_count_sketch_backward(call):
    dv, ov = sketch_views(call.in_shapes[1], call.attrs["out_dim"])
    views = [ov, dv, None, None, dv]
    if call.req[0] == REQ_NULL or dv[0] * dv[1] == 0:
        return Launch(noop, (), views=views)
    run = launcher(_sketch_backward, dv[0] * dv[1])
    add = call.req[0] == REQ_ADD

    def fn(og, x, h, s, dx):
        run(og, h, s, dx, add)
    return Launch(fn, (), views=views)
