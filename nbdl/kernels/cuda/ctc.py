"""CUDA kernels for CTCLoss and its gradient: one thread per sample, the same
log-space forward-backward recursion as ``nbdl.kernels.cpu.ctc`` (see there
for the lattice layout), with the planner's temps for the normalisers, the
alpha lattice and the two beta rows.

Labels and lengths are checked on the host before the launch (a device
kernel cannot raise a readable error); MXNet's GPU CTC also copies the
labels to the host.
"""
import math

import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.ctc import check_inputs, ctc_scalars
from ._launch import launcher


@cuda.jit(device=True, inline=True)
def _logaddexp(a, b):
    if a < b:
        a, b = b, a
    if b == -math.inf:
        return a
    return a + math.log1p(math.exp(b - a))


@cuda.jit(device=True, inline=True)
def _ext(label, n, s, blank):
    if s % 2 == 0:
        return blank
    return int(label[n, (s - 1) // 2])


@cuda.jit
def _ctc_kernel(data, label, dlen, llen, use_dl, use_ll, loss, grad, lse, alpha, beta, blank,
                padding, req_loss, req_grad, ninf, zero):
    T = data.shape[0]
    N = data.shape[1]
    C = data.shape[2]
    for n in range(cuda.grid(1), N, cuda.gridsize(1)):
        tn = int(dlen[n]) if use_dl else T
        if use_ll:
            ln = int(llen[n])
        else:
            ln = label.shape[1]
            for j in range(label.shape[1]):
                if int(label[n, j]) == padding:
                    ln = j
                    break
        S = 2 * ln + 1
        for t in range(tn):
            m = data[t, n, 0]
            for c in range(1, C):
                if data[t, n, c] > m:
                    m = data[t, n, c]
            acc = zero
            for c in range(C):
                acc += math.exp(data[t, n, c] - m)
            lse[n, t] = m + math.log(acc)
        if tn == 0:
            loglik = zero if ln == 0 else ninf
        else:
            for s in range(S):
                alpha[n, 0, s] = ninf
            alpha[n, 0, 0] = data[0, n, blank] - lse[n, 0]
            if S > 1:
                alpha[n, 0, 1] = data[0, n, _ext(label, n, 1, blank)] - lse[n, 0]
            for t in range(1, tn):
                for s in range(S):
                    k = _ext(label, n, s, blank)
                    a = alpha[n, t - 1, s]
                    if s >= 1:
                        a = _logaddexp(a, alpha[n, t - 1, s - 1])
                    if s >= 2 and k != blank and k != _ext(label, n, s - 2, blank):
                        a = _logaddexp(a, alpha[n, t - 1, s - 2])
                    if a != ninf:
                        alpha[n, t, s] = a + (data[t, n, k] - lse[n, t])
                    else:
                        alpha[n, t, s] = ninf
            loglik = alpha[n, tn - 1, S - 1]
            if S > 1:
                loglik = _logaddexp(loglik, alpha[n, tn - 1, S - 2])
        if req_loss == REQ_ADD:
            loss[n] += -loglik
        elif req_loss != REQ_NULL:
            loss[n] = -loglik
        if req_grad == REQ_NULL:
            continue
        for t in range(tn, T):
            for c in range(C):
                grad[t, n, c] = zero
        if loglik == ninf:
            for t in range(tn):
                for c in range(C):
                    grad[t, n, c] = zero
            continue
        cur = (tn - 1) % 2
        for s in range(S):
            beta[n, cur, s] = ninf
        beta[n, cur, S - 1] = zero
        if S > 1:
            beta[n, cur, S - 2] = zero
        for t in range(tn - 1, -1, -1):
            cur = t % 2
            for c in range(C):
                grad[t, n, c] = ninf
            for s in range(S):
                k = _ext(label, n, s, blank)
                grad[t, n, k] = _logaddexp(grad[t, n, k], alpha[n, t, s] + beta[n, cur, s])
            for c in range(C):
                grad[t, n, c] = (math.exp(data[t, n, c] - lse[n, t])
                                 - math.exp(grad[t, n, c] - loglik))
            if t > 0:
                prev = 1 - cur
                for s in range(S):
                    k = _ext(label, n, s, blank)
                    b = beta[n, cur, s] + (data[t, n, k] - lse[n, t])
                    if s + 1 < S:
                        k1 = _ext(label, n, s + 1, blank)
                        b = _logaddexp(b, beta[n, cur, s + 1] + (data[t, n, k1] - lse[n, t]))
                    if s + 2 < S:
                        k2 = _ext(label, n, s + 2, blank)
                        if k2 != blank and k2 != k:
                            b = _logaddexp(b, beta[n, cur, s + 2] + (data[t, n, k2] - lse[n, t]))
                    beta[n, prev, s] = b


def _host(a):
    return a.copy_to_host() if hasattr(a, "copy_to_host") else np.asarray(a)


def prepare_ctc(call):
    use_dl = bool(call.attrs["use_data_lengths"])
    use_ll = bool(call.attrs["use_label_lengths"])
    T, N, C = call.in_shapes[0]
    blank, padding, req_loss, req_grad = ctc_scalars(call)
    dt = np.dtype(call.in_dtypes[0]).type
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
                                 alpha, beta, blank, padding, req_loss, req_grad,
                                 dt(-np.inf), dt(0))
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
        if add:
            out[t, n, c] += v
        else:
            out[t, n, c] = v


def prepare_ctc_backward(call):
    size = int(np.prod(call.in_shapes[1], dtype=np.int64))
    if call.req[0] == REQ_NULL or size == 0:
        return Launch(lambda *arrays: None, ())
    run = launcher(_ctc_backward_kernel, size)
    add = call.req[0] == REQ_ADD

    def fn(og, grad, out):
        run(og, grad, out, add)
    return Launch(fn, ())
