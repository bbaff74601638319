"""CUDA kernels for one_hot, pick and take (layouts as in
``nbdl.kernels.cpu.indexing``).  Gradient scatters: pick's writes each
gradient element once (no atomics); take's accumulates with atomics because
indices may repeat."""
import numpy as np
from numba import cuda

from ...ops.indexing import IndexOutOfRange
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.indexing import MODE_CODES, MODE_RAISE, MODE_WRAP, pick_views, take_views
from ._launch import launcher
from ..shared.elemwise_plan import size_of as _size


@cuda.jit(device=True)
def fix_index(j, n, mode):
    if mode == MODE_WRAP:
        j = j % n
        if j < 0:
            j += n
        return j
    if mode == MODE_RAISE:
        if j < 0:
            return j + n
        return j
    if j < 0:
        return 0
    if j >= n:
        return n - 1
    return j


def _noop(*args):
    pass


# -- one_hot -----------------------------------------------------------------------

@cuda.jit
def _one_hot(idx, out, on, off):
    depth = out.shape[1]
    for e in range(cuda.grid(1), out.shape[0] * depth, cuda.gridsize(1)):
        i = e // depth
        j = e - i * depth
        if int(idx[i]) == j:
            out[i, j] = on
        else:
            out[i, j] = off


def prepare_one_hot(call):
    out_shape = call.out_shapes[0]
    n, depth = _size(out_shape[:-1]), out_shape[-1]
    dt = np.dtype(call.out_dtypes[0]).type
    views = [(n,), (n, depth)]
    if call.req[0] == REQ_NULL or n * depth == 0:
        return Launch(_noop, (), views=views)
    return Launch(launcher(_one_hot, n * depth),
                  (dt(call.attrs["on_value"]), dt(call.attrs["off_value"])), views=views)


# -- pick --------------------------------------------------------------------------

@cuda.jit
def _pick_forward(data, index, out, mode):
    n = data.shape[1]
    inner = data.shape[2]
    for e in range(cuda.grid(1), data.shape[0] * inner, cuda.gridsize(1)):
        o = e // inner
        i = e - o * inner
        out[o, i] = data[o, fix_index(int(index[o, i]), n, mode), i]


@cuda.jit
def _pick_backward(og, index, grad, mode, add):
    n = grad.shape[1]
    inner = grad.shape[2]
    for e in range(cuda.grid(1), grad.shape[0] * n * inner, cuda.gridsize(1)):
        o = e // (n * inner)
        rest = e - o * n * inner
        j = rest // inner
        i = rest - j * inner
        hit = fix_index(int(index[o, i]), n, mode) == j
        if add:
            if hit:
                grad[o, j, i] += og[o, i]
        elif hit:
            grad[o, j, i] = og[o, i]
        else:
            grad[o, j, i] = 0


def prepare_pick(call):
    dview, iview = pick_views(call)
    views = [dview, iview, iview]
    if call.req[0] == REQ_NULL or _size(iview) == 0:
        return Launch(_noop, (), views=views)
    return Launch(launcher(_pick_forward, _size(iview)), (MODE_CODES[call.attrs["mode"]],),
                  views=views)


def prepare_pick_backward(call):
    dview, iview = pick_views(call)
    views = [iview, iview, dview, dview]
    if call.req[0] == REQ_NULL or _size(dview) == 0:
        return Launch(_noop, (), views=views)
    run = launcher(_pick_backward, _size(dview))
    mode, add = MODE_CODES[call.attrs["mode"]], call.req[0] == REQ_ADD

    def fn(og, index, data, grad):
        run(og, index, grad, mode, add)
    return Launch(fn, (), views=views)


# -- take --------------------------------------------------------------------------

@cuda.jit
def _take_forward(a, idx, out, mode):
    n = a.shape[1]
    m = idx.shape[0]
    inner = a.shape[2]
    for e in range(cuda.grid(1), out.shape[0] * m * inner, cuda.gridsize(1)):
        o = e // (m * inner)
        rest = e - o * m * inner
        t = rest // inner
        i = rest - t * inner
        out[o, t, i] = a[o, fix_index(int(idx[t]), n, mode), i]


@cuda.jit
def _zero(x):
    for e in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        x[e] = 0


@cuda.jit
def _take_backward(og, idx, grad, mode):
    n = grad.shape[1]
    m = idx.shape[0]
    inner = grad.shape[2]
    for e in range(cuda.grid(1), og.shape[0] * m * inner, cuda.gridsize(1)):
        o = e // (m * inner)
        rest = e - o * m * inner
        t = rest // inner
        i = rest - t * inner
        cuda.atomic.add(grad, (o, fix_index(int(idx[t]), n, mode), i), og[o, t, i])


def _check_raise(idx, n):
    # raise mode needs a host-side check: kernels cannot raise
    host = idx.copy_to_host() if hasattr(idx, "copy_to_host") else np.asarray(idx)
    j = np.trunc(host.astype(np.float64)) if host.dtype.kind == "f" else host
    if host.size and (j.min() < -n or j.max() >= n):
        raise IndexOutOfRange("take: an index is out of range (mode='raise')")


def prepare_take(call):
    aview, iview, oview = take_views(call, call.in_shapes[0])
    views = [aview, iview, oview]
    if call.req[0] == REQ_NULL or _size(oview) == 0:
        return Launch(_noop, (), views=views)
    run = launcher(_take_forward, _size(oview))
    mode = MODE_CODES[call.attrs["mode"]]

    def fn(a, idx, out):
        if mode == MODE_RAISE:
            _check_raise(idx, aview[1])
        run(a, idx, out, mode)
    return Launch(fn, (), views=views)


def prepare_take_backward(call):
    aview, iview, oview = take_views(call, call.in_shapes[2])
    views = [oview, iview, aview, aview]
    if call.req[0] == REQ_NULL or _size(aview) == 0:
        return Launch(_noop, (), views=views)
    zero = launcher(_zero, _size(aview))
    run = launcher(_take_backward, max(_size(oview), 1))
    mode, add = MODE_CODES[call.attrs["mode"]], call.req[0] == REQ_ADD

    def fn(og, idx, a, grad):
        if mode == MODE_RAISE:
            _check_raise(idx, aview[1])
        if not add:
            zero(grad.reshape(grad.size))
        if _size(oview):
            run(og, idx, grad, mode)
    return Launch(fn, (), views=views)
