"""CUDA kernels for CTCLoss and its gradient: one thread per sample, each
running the log-space forward-backward recursion of
``nbdl.kernels.shared.ctc`` (see there for the lattice layout), with the planner's temps for the normalisers, the
alpha lattice and the two beta rows.

Labels and lengths are checked on the host before the launch (a device
kernel cannot raise a readable error); MXNet's GPU CTC also copies the
labels to the host.
"""

import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.ctc import build, check_inputs, ctc_scalars
from ._launch import launcher
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)


_sample = cuda.jit(device=True)(build(cuda.jit(device=True, inline=True)))


@cuda.jit
def _ctc_kernel(data, label, dlen, llen, use_dl, use_ll, loss, grad, lse, alpha, beta, blank,
                padding, req_loss, req_grad):
    for n in range(cuda.grid(1), data.shape[1], cuda.gridsize(1)):
        _sample(n, data, label, dlen, llen, use_dl, use_ll, loss, grad, lse, alpha, beta,
                blank, padding, req_loss, req_grad)


def _host(a):
    return a.copy_to_host() if hasattr(a, "copy_to_host") else np.asarray(a)


def prepare_ctc(call):
    use_dl = bool(call.attrs["use_data_lengths"])
    use_ll = bool(call.attrs["use_label_lengths"])
    T, N, C = call.in_shapes[0]
    blank, padding, req_loss, req_grad = ctc_scalars(call)
    n_in = 2 + use_dl + use_ll

    def fn(*arrays):
        data, label = arrays[0], arrays[1]
        dlen = arrays[2] if use_dl else arrays[n_in]        # stand-in: the loss output
        llen = arrays[n_in - 1] if use_ll else arrays[n_in]
        loss, grad, lse, alpha, beta = arrays[n_in:n_in + 5]
        if N == 0 or (req_loss == REQ_NULL and req_grad == REQ_NULL):
            return
        # the same checks as the CPU kernel, on host copies of the small inputs
        h_label = _host(label)
        h_dlen = _host(dlen) if use_dl else np.zeros(N, np.float32)
        h_llen = _host(llen) if use_ll else np.zeros(N, np.float32)
        check_inputs(T, C, h_label, h_dlen, h_llen, use_dl, use_ll, blank, padding)
        launcher(_ctc_kernel, N)(data, label, dlen, llen, use_dl, use_ll, loss, grad, lse,
                                 alpha, beta, blank, padding, req_loss, req_grad)
    return Launch(fn, ())


@cuda.jit
def _ctc_backward_kernel(og, grad, out, add):
    N = grad.shape[1]
    C = grad.shape[2]
    for e in range(cuda.grid(1), grad.size, cuda.gridsize(1)):
        c = e % C
        r = e // C
        n = r % N
        t = r // N
        v = og[n] * grad[t, n, c]
        _put(out, (t, n, c), v, add)


def prepare_ctc_backward(call):
    size = int(np.prod(call.in_shapes[1], dtype=np.int64))
    if call.req[0] == REQ_NULL or size == 0:
        return Launch(lambda *arrays: None, ())
    run = launcher(_ctc_backward_kernel, size)
    add = call.req[0] == REQ_ADD

    def fn(og, grad, out):
        run(og, grad, out, add)
    return Launch(fn, ())
