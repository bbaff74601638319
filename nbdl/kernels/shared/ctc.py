"""CTC's input checks (host code, compiled with ``njit``, run before either
device's kernels) and its kernel scalars."""
from .jit import njit

from ...ops.ctc import (BAD_DATA_LENGTH, BAD_LABEL, BAD_LABEL_LENGTH, CTCInputError,
                        blank_and_padding)


@njit(cache=True, inline="always")
def _label_length(label, llen, n, use_ll, padding):
    if use_ll:
        return int(llen[n])
    L = label.shape[1]
    for j in range(L):
        if int(label[n, j]) == padding:
            return j
    return L


@njit(cache=True)
def check_inputs(T, C, label, dlen, llen, use_dl, use_ll, blank, padding):
    """Every length in range and every used label a class of ``C`` (the
    blank class too: as in MXNet, a label equal to the blank is aligned as a
    blank, with no skip into it); raises ``CTCInputError`` naming the first
    bad value."""
    N, L = label.shape
    for n in range(N):
        if use_dl:
            tn = int(dlen[n])
            if tn < 0 or tn > T or dlen[n] != tn:
                raise CTCInputError(BAD_DATA_LENGTH, n, 0, float(dlen[n]), T, blank)
        if use_ll:
            ln = int(llen[n])
            if ln < 0 or ln > L or llen[n] != ln:
                raise CTCInputError(BAD_LABEL_LENGTH, n, 0, float(llen[n]), L, blank)
        ln = _label_length(label, llen, n, use_ll, padding)
        for j in range(ln):
            v = label[n, j]
            k = int(v)
            if k < 0 or k >= C or v != k:
                raise CTCInputError(BAD_LABEL, n, j, float(v), C, blank)


def ctc_scalars(call):
    blank, padding = blank_and_padding(call.attrs, int(call.in_shapes[0][2]))
    return (int(blank), int(padding), int(call.req[0]), int(call.req[1]))
