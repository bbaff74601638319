"""CPU kernels for SequenceMask, SequenceLast and SequenceReverse.

The data is viewed as ``(A, T, B, inner)``: for ``axis=0`` (``(T, N, ...)``)
``A = 1, B = N``; for ``axis=1`` (``(N, T, ...)``) ``A = N, B = 1``; so the
batch element of ``(a, b)`` is ``a * B + b`` in both.  SequenceLast's output
(and its head gradient) is ``(A, B, inner)``.  Lengths are truncated toward
zero (``int(...)``).  Without ``use_sequence_length`` the kernels are called
with an empty stand-in for the lengths, which they never read."""

import numpy as np
from numba import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.sequence import _with_lens, sequence_views


@njit(cache=True, inline="always")
def _length(lens, use, bi, T):
    if use:
        return int(lens[bi])
    return T


@njit(cache=True, inline="always")
def _no_lens(x):
    return x.reshape(x.size)[:0]


# -- SequenceMask ---------------------------------------------------------------------

@njit(cache=True, inline="always")
def _mask(x, lens, use, out, value, req):
    if req == REQ_NULL:
        return
    A, T, B, inner = x.shape
    add = req == REQ_ADD
    for a in range(A):
        for t in range(T):
            for b in range(B):
                keep = t < _length(lens, use, a * B + b, T)
                for i in range(inner):
                    v = x[a, t, b, i] if keep else value
                    if add:
                        out[a, t, b, i] += v
                    else:
                        out[a, t, b, i] = v


@njit(cache=True)
def sequence_mask(x, lens, out, value, req):
    _mask(x, lens, True, out, value, req)


@njit(cache=True)
def sequence_mask_all(x, out, value, req):
    _mask(x, _no_lens(x), False, out, value, req)


# -- SequenceLast ---------------------------------------------------------------------

@njit(cache=True, inline="always")
def _last_step(lens, use, bi, T):
    L = _length(lens, use, bi, T)
    if L < 1:
        L = 1
    if L > T:
        L = T
    return L - 1


@njit(cache=True, inline="always")
def _last(x, lens, use, out, req):
    if req == REQ_NULL:
        return
    A, T, B, inner = x.shape
    add = req == REQ_ADD
    for a in range(A):
        for b in range(B):
            t = _last_step(lens, use, a * B + b, T)
            for i in range(inner):
                if add:
                    out[a, b, i] += x[a, t, b, i]
                else:
                    out[a, b, i] = x[a, t, b, i]


@njit(cache=True)
def sequence_last(x, lens, out, req):
    _last(x, lens, True, out, req)


@njit(cache=True)
def sequence_last_all(x, out, req):
    _last(x, _no_lens(x), False, out, req)


@njit(cache=True, inline="always")
def _last_backward(og, lens, use, grad, req):
    if req == REQ_NULL:
        return
    A, T, B, inner = grad.shape
    if req != REQ_ADD:
        grad[...] = 0
    for a in range(A):
        for b in range(B):
            t = _last_step(lens, use, a * B + b, T)
            for i in range(inner):
                grad[a, t, b, i] += og[a, b, i]


@njit(cache=True)
def sequence_last_backward(og, lens, data, grad, req):
    _last_backward(og, lens, True, grad, req)


@njit(cache=True)
def sequence_last_backward_all(og, data, grad, req):
    _last_backward(og, _no_lens(og), False, grad, req)


# -- SequenceReverse ------------------------------------------------------------------

@njit(cache=True, inline="always")
def _reverse(x, lens, use, out, req):
    if req == REQ_NULL:
        return
    A, T, B, inner = x.shape
    add = req == REQ_ADD
    for a in range(A):
        for b in range(B):
            L = _length(lens, use, a * B + b, T)
            L = min(max(L, 0), T)
            for t in range(T):
                s = L - 1 - t if t < L else t
                for i in range(inner):
                    if add:
                        out[a, s, b, i] += x[a, t, b, i]
                    else:
                        out[a, s, b, i] = x[a, t, b, i]


@njit(cache=True)
def sequence_reverse(x, lens, out, req):
    _reverse(x, lens, True, out, req)


@njit(cache=True)
def sequence_reverse_all(x, out, req):
    _reverse(x, _no_lens(x), False, out, req)


# -- prepare ----------------------------------------------------------------------------


def prepare_sequence_mask(call):
    data, _ = sequence_views(call.attrs["axis"], call.in_shapes[0])
    use = call.attrs["use_sequence_length"]
    value = np.dtype(call.out_dtypes[0]).type(call.attrs["value"])
    return Launch(sequence_mask if use else sequence_mask_all, (value, call.req[0]),
                  views=_with_lens(call, [data, data], 1))


def prepare_sequence_last(call):
    data, last = sequence_views(call.attrs["axis"], call.in_shapes[0])
    use = call.attrs["use_sequence_length"]
    return Launch(sequence_last if use else sequence_last_all, (call.req[0],),
                  views=_with_lens(call, [data, last], 1))


def prepare_sequence_last_backward(call):
    data, last = sequence_views(call.attrs["axis"], call.in_shapes[-1])
    use = call.attrs["use_sequence_length"]
    return Launch(sequence_last_backward if use else sequence_last_backward_all,
                  (call.req[0],), views=_with_lens(call, [last, data, data], 1))


def prepare_sequence_reverse(call):
    data, _ = sequence_views(call.attrs["axis"], call.in_shapes[0])
    use = call.attrs["use_sequence_length"]
    return Launch(sequence_reverse if use else sequence_reverse_all, (call.req[0],),
                  views=_with_lens(call, [data, data], 1))
