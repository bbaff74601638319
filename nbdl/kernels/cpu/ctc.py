"""CPU kernels for CTCLoss and its gradient (rules in nbdl.ops.ctc).

One sample per (p)range iteration.  For sample ``n`` with ``Tn`` time steps
and label ``l`` of length ``Ln`` the extended label is ``l'`` = blank, l1,
blank, l2, ..., blank (``S = 2 Ln + 1`` states).  Everything is in log space:

- ``lse[n, t]``: log-sum-exp of ``data[t, n, :]``, so the log-softmax is
  ``logp(t, c) = data[t, n, c] - lse[n, t]``;
- ``alpha[n, t, s]``: log-probability of the prefixes that end in state
  ``s`` at time ``t`` (emission at ``t`` included);
- beta, two rolling rows: log-probability of completing the label from state
  ``s`` at time ``t`` (emission at ``t`` excluded), so ``alpha + beta`` is the
  log-probability of all alignments through ``(t, s)``.

The loss is ``-log p`` with ``log p = logaddexp(alpha[Tn-1, S-1],
alpha[Tn-1, S-2])``; the gradient with respect to the activations is
``softmax(t, c) - sum_{s: l'(s) = c} exp(alpha + beta - log p)``.  The
posterior sum is accumulated in the gradient buffer itself (in log space)
before being turned into the gradient, so no (T, C) scratch is needed.
"""
import numpy as np
from numba import prange

from ..shared.jit import njit

from ._parallel import twins as _twins, use_parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.ctc import _label_length, check_inputs, ctc_scalars


@njit(cache=True, inline="always")
def _logaddexp(a, b):
    if a < b:
        a, b = b, a
    if b == -np.inf:
        return a
    return a + np.log1p(np.exp(b - a))


@njit(cache=True, inline="always")
def _ext(label, n, s, blank):
    """The class of state ``s`` of sample ``n``'s extended label."""
    if s % 2 == 0:
        return blank
    return int(label[n, (s - 1) // 2])


@njit(cache=True)
def _sample(n, data, label, dlen, llen, use_dl, use_ll, loss, grad, lse, alpha, beta,
            blank, padding, req_loss, req_grad):
    T, N, C = data.shape
    ninf = lse.dtype.type(-np.inf)
    zero = lse.dtype.type(0)
    tn = int(dlen[n]) if use_dl else T
    ln = _label_length(label, llen, n, use_ll, padding)
    S = 2 * ln + 1
    # log-softmax normalisers
    for t in range(tn):
        m = data[t, n, 0]
        for c in range(1, C):
            if data[t, n, c] > m:
                m = data[t, n, c]
        acc = zero
        for c in range(C):
            acc += np.exp(data[t, n, c] - m)
        lse[n, t] = m + np.log(acc)
    # alpha
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
                alpha[n, t, s] = a + (data[t, n, k] - lse[n, t]) if a != ninf else ninf
        loglik = alpha[n, tn - 1, S - 1]
        if S > 1:
            loglik = _logaddexp(loglik, alpha[n, tn - 1, S - 2])
    if req_loss != REQ_NULL:
        if req_loss == REQ_ADD:
            loss[n] += -loglik
        else:
            loss[n] = -loglik
    if req_grad == REQ_NULL:
        return
    for t in range(tn, T):
        for c in range(C):
            grad[t, n, c] = zero
    if loglik == ninf:  # no alignment exists: zero gradient
        for t in range(tn):
            for c in range(C):
                grad[t, n, c] = zero
        return
    # beta, from the last time step down, two rows
    cur = (tn - 1) % 2
    for s in range(S):
        beta[n, cur, s] = ninf
    beta[n, cur, S - 1] = zero
    if S > 1:
        beta[n, cur, S - 2] = zero
    for t in range(tn - 1, -1, -1):
        cur = t % 2
        # posterior of each class at t, accumulated in log space in grad
        for c in range(C):
            grad[t, n, c] = ninf
        for s in range(S):
            k = _ext(label, n, s, blank)
            grad[t, n, k] = _logaddexp(grad[t, n, k], alpha[n, t, s] + beta[n, cur, s])
        for c in range(C):
            grad[t, n, c] = np.exp(data[t, n, c] - lse[n, t]) - np.exp(grad[t, n, c] - loglik)
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


# One entry point, serial and parallel, for every input combination: the
# lengths are optional inputs, and a missing one is stood in for by the loss
# output (1-D like a length vector; never read then: use_dl / use_ll = 0),
# picked by Launch.args.

@njit(cache=True)
def ctc(data, label, dlen, llen, loss, grad, lse, alpha, beta, use_dl, use_ll, blank, padding,
        req_loss, req_grad):
    check_inputs(data.shape[0], data.shape[2], label, dlen, llen, use_dl, use_ll, blank, padding)
    for n in range(data.shape[1]):
        _sample(n, data, label, dlen, llen, use_dl, use_ll, loss, grad, lse, alpha, beta,
                blank, padding, req_loss, req_grad)


@njit(cache=True, parallel=True)
def ctc_parallel(data, label, dlen, llen, loss, grad, lse, alpha, beta, use_dl, use_ll, blank,
                 padding, req_loss, req_grad):
    check_inputs(data.shape[0], data.shape[2], label, dlen, llen, use_dl, use_ll, blank, padding)
    for n in prange(data.shape[1]):
        _sample(np.int64(n), data, label, dlen, llen, use_dl, use_ll, loss, grad, lse, alpha,
                beta, blank, padding, req_loss, req_grad)


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


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((ctc_parallel, ctc))
