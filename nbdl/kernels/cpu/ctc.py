"""CPU kernels for CTCLoss and its gradient (rules in nbdl.ops.ctc): one
sample per (p)range iteration, each running the log-space forward-backward
recursion of ``nbdl.kernels.shared.ctc`` (see there for the lattice
layout), compiled here."""
import numpy as np
from numba import prange

from ..shared.jit import njit

from ._parallel import serial_and_parallel, use_parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.ctc import build, check_inputs, ctc_scalars

_sample = njit(cache=True)(build(njit(cache=True, inline="always")))


# One entry point, serial and parallel, for every input combination: the
# lengths are optional inputs, and a missing one is stood in for by the loss
# output (1-D like a length vector; never read then: use_dl / use_ll = 0),
# picked by Launch.args.

def ctc(data, label, dlen, llen, loss, grad, lse, alpha, beta, use_dl, use_ll, blank,
        padding, req_loss, req_grad):
    check_inputs(data.shape[0], data.shape[2], label, dlen, llen, use_dl, use_ll, blank, padding)
    for n in prange(data.shape[1]):
        _sample(np.int64(n), data, label, dlen, llen, use_dl, use_ll, loss, grad, lse, alpha,
                beta, blank, padding, req_loss, req_grad)


ctc, ctc_parallel = serial_and_parallel(ctc)


def prepare_ctc(call):
    use_dl = bool(call.attrs["use_data_lengths"])
    use_ll = bool(call.attrs["use_label_lengths"])
    T, N, C = call.in_shapes[0]
    work = T * N * (C + 2 * call.in_shapes[1][1] + 1)
    fn = ctc_parallel if N > 1 and use_parallel(work) else ctc
    # arrays: data, label, [data lengths], [label lengths], loss, grad, lse, alpha, beta
    n_in = 2 + use_dl + use_ll
    loss = n_in
    dl = 2 if use_dl else loss
    ll = (2 + use_dl) if use_ll else loss
    pick = (0, 1, dl, ll) + tuple(range(n_in, n_in + 5))
    return Launch(fn, (int(use_dl), int(use_ll)) + ctc_scalars(call), args=pick)


# -- backward: data_grad = out_grad[n] * grad ----------------------------------------

@njit(cache=True)
def ctc_backward(og, grad, out, req):
    if req == REQ_NULL:
        return
    T, N, C = grad.shape
    add = req == REQ_ADD
    for t in range(T):
        for n in range(N):
            g = og[n]
            if add:
                for c in range(C):
                    out[t, n, c] += g * grad[t, n, c]
            else:
                for c in range(C):
                    out[t, n, c] = g * grad[t, n, c]


def prepare_ctc_backward(call):
    return Launch(ctc_backward, (int(call.req[0]),))
