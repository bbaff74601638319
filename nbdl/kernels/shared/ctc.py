"""CTC's input checks (host code, compiled with ``njit``, run before either
device's kernels), its kernel scalars, and the per-sample forward-backward
recursion both devices run (plain Python: ``build(jit)`` compiles it with
the decorator a device module gives).

For sample ``n`` with ``Tn`` time steps and label ``l`` of length ``Ln``
the extended label is ``l'`` = blank, l1, blank, l2, ..., blank
(``S = 2 Ln + 1`` states).  Everything is in log space:

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
import math

from .jit import njit

from ...ops.ctc import (BAD_DATA_LENGTH, BAD_LABEL, BAD_LABEL_LENGTH, CTCInputError,
                        blank_and_padding)
from ...ops.registry import REQ_ADD, REQ_NULL


def py_label_length(label, llen, n, use_ll, padding):
    """Sample ``n``'s label length: its length input, or the label up to the
    first ``padding``."""
    if use_ll:
        return int(llen[n])
    L = label.shape[1]
    for j in range(L):
        if int(label[n, j]) == padding:
            return j
    return L


def py_logaddexp(a, b):
    """log(exp(a) + exp(b)), -inf aware."""
    if a < b:
        a, b = b, a
    if b == -math.inf:
        return a
    return a + math.log1p(math.exp(b - a))


def py_ext(label, n, s, blank):
    """The class of state ``s`` of sample ``n``'s extended label."""
    if s % 2 == 0:
        return blank
    return int(label[n, (s - 1) // 2])


_label_length = njit(cache=True, inline="always")(py_label_length)


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


def build(jit):  # noqa: C901  (one recursion, written out)
    """The per-sample recursion ``sample(n, data, label, dlen, llen, use_dl,
    use_ll, loss, grad, lse, alpha, beta, blank, padding, req_loss,
    req_grad)``, its helpers compiled with ``jit`` (the CPU's inlined
    ``njit``, CUDA's ``cuda.jit(device=True, inline=True)``).  The caller
    compiles the returned plain function itself (a CPU ``njit`` called from
    the serial and parallel drivers, a CUDA device function called once per
    thread).

    Parameters
    ----------
    jit : callable
        The decorator applied to the helpers.

    Returns
    -------
    function
        ``sample``: loss ``n`` (honouring ``req_loss``) and, unless
        ``req_grad`` is null, the softmax-minus-posterior gradient of sample
        ``n`` written into ``grad[:, n, :]`` (zero past its length).
    """
    logaddexp = jit(py_logaddexp)
    ext = jit(py_ext)
    label_length = jit(py_label_length)

    def sample(n, data, label, dlen, llen, use_dl, use_ll, loss, grad, lse, alpha, beta,
               blank, padding, req_loss, req_grad):
        T = data.shape[0]
        C = data.shape[2]
        ninf = lse.dtype.type(-math.inf)
        zero = lse.dtype.type(0)
        tn = int(dlen[n]) if use_dl else T
        ln = label_length(label, llen, n, use_ll, padding)
        S = 2 * ln + 1
        # log-softmax normalisers
        for t in range(tn):
            m = data[t, n, 0]
            for c in range(1, C):
                if data[t, n, c] > m:
                    m = data[t, n, c]
            acc = zero
            for c in range(C):
                acc += math.exp(data[t, n, c] - m)
            lse[n, t] = m + math.log(acc)
        # alpha
        if tn == 0:
            loglik = zero if ln == 0 else ninf
        else:
            for s in range(S):
                alpha[n, 0, s] = ninf
            alpha[n, 0, 0] = data[0, n, blank] - lse[n, 0]
            if S > 1:
                alpha[n, 0, 1] = data[0, n, ext(label, n, 1, blank)] - lse[n, 0]
            for t in range(1, tn):
                for s in range(S):
                    k = ext(label, n, s, blank)
                    a = alpha[n, t - 1, s]
                    if s >= 1:
                        a = logaddexp(a, alpha[n, t - 1, s - 1])
                    if s >= 2 and k != blank and k != ext(label, n, s - 2, blank):
                        a = logaddexp(a, alpha[n, t - 1, s - 2])
                    alpha[n, t, s] = a + (data[t, n, k] - lse[n, t]) if a != ninf else ninf
            loglik = alpha[n, tn - 1, S - 1]
            if S > 1:
                loglik = logaddexp(loglik, alpha[n, tn - 1, S - 2])
        if req_loss == REQ_ADD:
            loss[n] += -loglik
        elif req_loss != REQ_NULL:
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
                k = ext(label, n, s, blank)
                grad[t, n, k] = logaddexp(grad[t, n, k], alpha[n, t, s] + beta[n, cur, s])
            for c in range(C):
                grad[t, n, c] = (math.exp(data[t, n, c] - lse[n, t])
                                 - math.exp(grad[t, n, c] - loglik))
            if t > 0:
                prev = 1 - cur
                for s in range(S):
                    k = ext(label, n, s, blank)
                    b = beta[n, cur, s] + (data[t, n, k] - lse[n, t])
                    if s + 1 < S:
                        k1 = ext(label, n, s + 1, blank)
                        b = logaddexp(b, beta[n, cur, s + 1] + (data[t, n, k1] - lse[n, t]))
                    if s + 2 < S:
                        k2 = ext(label, n, s + 2, blank)
                        if k2 != blank and k2 != k:
                            b = logaddexp(b, beta[n, cur, s + 2] + (data[t, n, k2] - lse[n, t]))
                    beta[n, prev, s] = b
    return sample
