"""CUDA kernels for SequenceMask, SequenceLast and SequenceReverse (views as
in ``nbdl.kernels.cpu.sequence``): one thread per data element for the mask,
the reverse and SequenceLast's gradient (each output element is written by
exactly one thread, so no atomics), one per output element for
SequenceLast.  Without ``use_sequence_length`` the data itself (flattened)
stands in for the lengths and is never read as such."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.sequence import _with_lens, py_last_step, py_length, sequence_views
from ..shared.store import py_put, py_unravel4
from ._launch import launcher
from ..shared.elemwise_plan import size_of as _size

_put = cuda.jit(device=True)(py_put)


_length = cuda.jit(device=True)(py_length)
_last_step = cuda.jit(device=True)(py_last_step)
_unravel4 = cuda.jit(device=True)(py_unravel4)


@cuda.jit
def _mask(x, lens, out, use, value, add):
    A, T, B, inner = x.shape
    for e in range(cuda.grid(1), A * T * B * inner, cuda.gridsize(1)):
        a, t, b, i = _unravel4(e, T, B, inner)
        v = x[a, t, b, i] if t < _length(lens, use, a * B + b, T) else value
        _put(out, (a, t, b, i), v, add)


@cuda.jit
def _last(x, lens, out, use, add):
    A, T, B, inner = x.shape
    for e in range(cuda.grid(1), A * B * inner, cuda.gridsize(1)):
        i = e % inner
        r = e // inner
        b = r % B
        a = r // B
        v = x[a, _last_step(lens, use, a * B + b, T), b, i]
        _put(out, (a, b, i), v, add)


@cuda.jit
def _last_backward(og, lens, grad, use, add):
    A, T, B, inner = grad.shape
    for e in range(cuda.grid(1), A * T * B * inner, cuda.gridsize(1)):
        a, t, b, i = _unravel4(e, T, B, inner)
        hit = t == _last_step(lens, use, a * B + b, T)
        if add:
            if hit:
                grad[a, t, b, i] += og[a, b, i]
        elif hit:
            grad[a, t, b, i] = og[a, b, i]
        else:
            grad[a, t, b, i] = 0


@cuda.jit
def _reverse(x, lens, out, use, add):
    A, T, B, inner = x.shape
    for e in range(cuda.grid(1), A * T * B * inner, cuda.gridsize(1)):
        a, t, b, i = _unravel4(e, T, B, inner)
        L = min(max(_length(lens, use, a * B + b, T), 0), T)
        s = L - 1 - t if t < L else t
        _put(out, (a, s, b, i), x[a, t, b, i], add)


def _noop(*args):
    pass


def _launch(call, kernel, n, views, scalars, data_at):
    """Launch ``kernel(data-ish..., lens, out, use, *scalars)`` over ``n``
    elements; without lengths the flattened input at ``data_at`` stands in."""
    if call.req[0] == REQ_NULL or n == 0:
        return Launch(_noop, (), views=_with_lens(call, views, 1))
    run = launcher(kernel, n)
    add = call.req[0] == REQ_ADD
    if call.attrs["use_sequence_length"]:
        def fn(*arrays):
            run(arrays[0], arrays[1], arrays[-1], True, *scalars, add)
    else:
        def fn(*arrays):
            run(arrays[0], arrays[data_at].ravel(), arrays[-1], False, *scalars, add)
    return Launch(fn, (), views=_with_lens(call, views, 1))


def prepare_sequence_mask(call):
    import numpy as np
    data, _ = sequence_views(call.attrs["axis"], call.in_shapes[0])
    value = np.dtype(call.out_dtypes[0]).type(call.attrs["value"])
    return _launch(call, _mask, _size(data), [data, data], (value,), 0)


def prepare_sequence_last(call):
    data, last = sequence_views(call.attrs["axis"], call.in_shapes[0])
    return _launch(call, _last, _size(last), [data, last], (), 0)


def prepare_sequence_last_backward(call):
    data, last = sequence_views(call.attrs["axis"], call.in_shapes[-1])
    return _launch(call, _last_backward, _size(data), [last, data, data], (), 0)


def prepare_sequence_reverse(call):
    data, _ = sequence_views(call.attrs["axis"], call.in_shapes[0])
    return _launch(call, _reverse, _size(data), [data, data], (), 0)
