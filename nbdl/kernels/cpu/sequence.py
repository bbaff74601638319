"""CPU kernels for SequenceMask, SequenceLast and SequenceReverse.

The data is viewed as ``(A, T, B, inner)``: for ``axis=0`` (``(T, N, ...)``)
``A = 1, B = N``; for ``axis=1`` (``(N, T, ...)``) ``A = N, B = 1``; so the
batch element of ``(a, b)`` is ``a * B + b`` in both.  SequenceLast's output
(and its head gradient) is ``(A, B, inner)``.  Lengths are truncated toward
zero (``int(...)``).  Without ``use_sequence_length`` the kernels are called
with an empty stand-in for the lengths (``Launch.args``), which they never read."""

import numpy as np
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.sequence import _with_lens, py_last_step, py_length, sequence_views
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)


_length = njit(cache=True, inline="always")(py_length)
_last_step = njit(cache=True, inline="always")(py_last_step)


# -- SequenceMask ---------------------------------------------------------------------

@njit(cache=True)
def sequence_mask(x, lens, out, use, value, req):
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
                    _put(out, (a, t, b, i), v, add)


# -- SequenceLast ---------------------------------------------------------------------

@njit(cache=True)
def sequence_last(x, lens, out, use, req):
    if req == REQ_NULL:
        return
    A, T, B, inner = x.shape
    add = req == REQ_ADD
    for a in range(A):
        for b in range(B):
            t = _last_step(lens, use, a * B + b, T)
            for i in range(inner):
                _put(out, (a, b, i), x[a, t, b, i], add)


@njit(cache=True)
def sequence_last_backward(og, lens, grad, use, req):
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


# -- SequenceReverse ------------------------------------------------------------------

@njit(cache=True)
def sequence_reverse(x, lens, out, use, req):
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
                    _put(out, (a, s, b, i), x[a, t, b, i], add)


# -- prepare ----------------------------------------------------------------------------


def _lens_args(call, picks):
    """Launch.args: the call's arrays in the kernel's order, with an empty
    array of the data's dtype for the lengths when the op has none (one
    compiled kernel serves both; ``use`` says whether to read them)."""
    if call.attrs["use_sequence_length"]:
        return None
    return tuple((0, (0,)) if p == "lens" else p for p in picks)


def prepare_sequence_mask(call):
    data, _ = sequence_views(call.attrs["axis"], call.in_shapes[0])
    use = int(call.attrs["use_sequence_length"])
    value = np.dtype(call.out_dtypes[0]).type(call.attrs["value"])
    return Launch(sequence_mask, (use, value, call.req[0]),
                  views=_with_lens(call, [data, data], 1), args=_lens_args(call, (0, "lens", 1)))


def prepare_sequence_last(call):
    data, last = sequence_views(call.attrs["axis"], call.in_shapes[0])
    use = int(call.attrs["use_sequence_length"])
    return Launch(sequence_last, (use, call.req[0]), views=_with_lens(call, [data, last], 1),
                  args=_lens_args(call, (0, "lens", 1)))


def prepare_sequence_last_backward(call):
    data, last = sequence_views(call.attrs["axis"], call.in_shapes[-1])
    use = int(call.attrs["use_sequence_length"])
    # arrays: og, [lens], data (shape only), grad; the kernel takes og, lens, grad
    pick = (0, 1, 3) if use else (0, (0, (0,)), 2)
    return Launch(sequence_last_backward, (use, call.req[0]),
                  views=_with_lens(call, [last, data, data], 1), args=pick)


def prepare_sequence_reverse(call):
    data, _ = sequence_views(call.attrs["axis"], call.in_shapes[0])
    use = int(call.attrs["use_sequence_length"])
    return Launch(sequence_reverse, (use, call.req[0]), views=_with_lens(call, [data, data], 1),
                  args=_lens_args(call, (0, "lens", 1)))
