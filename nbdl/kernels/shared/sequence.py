"""The sequence ops' prepare-time views, shared by the CPU and CUDA kernels."""
import math


def sequence_views(axis, shape):
    """``(A, T, B, inner)`` of the data and ``(A, B, inner)`` without time."""
    shape = tuple(int(d) for d in shape)
    inner = math.prod(shape[2:])
    if axis == 0:
        A, T, B = 1, shape[0], shape[1]
    else:
        A, T, B = shape[0], shape[1], 1
    return (A, T, B, inner), (A, B, inner)


def _with_lens(call, views, lens_view_at):
    """Insert the lengths' view (``None``: own shape) when the op has them."""
    if call.attrs["use_sequence_length"]:
        views = list(views)
        views.insert(lens_view_at, None)
    return views


def py_length(lens, use, bi, T):
    """Sequence ``bi``'s length: ``int(lens[bi])`` when ``use``, else T
    (plain Python compiled by both devices' kernels)."""
    if use:
        return int(lens[bi])
    return T


def py_last_step(lens, use, bi, T):
    """SequenceLast's time step of sequence ``bi``: its length - 1, the
    length clipped to [1, T]."""
    L = int(lens[bi]) if use else T
    if L < 1:
        L = 1
    if L > T:
        L = T
    return L - 1
