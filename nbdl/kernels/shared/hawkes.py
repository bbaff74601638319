"""``_contrib_hawkesll``'s per-sample recursions (``nbdl.ops.hawkes``),
written once: plain Python compiled with ``njit`` by the CPU kernels and with
``cuda.jit(device=True)`` by the CUDA ones (one thread per sample).  The
arithmetic is MXNet's ``hawkes_ll-inl.h`` line for line; ``one``/``zero``
come in typed so float32 stays float32, and ``work`` is the planner's
scratch, ``(2 or 6, N, K)``."""
import math


def py_hawkes_forward(i, mu, alpha, beta, state, lags, marks, valid, max_time, work, one):
    """Sample ``i``: the log likelihood; ``work[1, i]`` ends as the memory at
    ``max_time`` (``work[0, i]`` holds each mark's last time)."""
    zero = one - one
    n_k = mu.shape[1]
    for k in range(n_k):
        work[0, i, k] = zero
        work[1, i, k] = state[i, k]
    t = zero
    ll = zero
    j = 0
    while j < valid[i] and j < lags.shape[1]:
        c = marks[i, j]
        t += lags[i, j]
        d = t - work[0, i, c]
        ed = math.exp(-beta[c] * d)
        s = work[1, i, c]
        lda = mu[i, c] + alpha[c] * beta[c] * s * ed
        comp = mu[i, c] * d + alpha[c] * s * (one - ed)
        ll += math.log(lda) - comp
        work[1, i, c] = one + s * ed
        work[0, i, c] = t
        j += 1
    rem = zero
    for k in range(n_k):
        d = max_time[i] - work[0, i, k]
        ed = math.exp(-beta[k] * d)
        rem += mu[i, k] * d + alpha[k] * work[1, i, k] * (one - ed)
        work[1, i, k] = ed * work[1, i, k]
    return ll - rem


def py_hawkes_backward(i, og, mu, alpha, beta, state, lags, marks, valid, max_time, work, one):
    """Sample ``i``'s gradients, scaled by ``og[i]``, into ``work[5, i]`` (lda),
    ``work[3, i]`` (alpha) and ``work[4, i]`` (beta); ``work[0..2, i]`` are
    the last times, the memory and its derivative in beta."""
    zero = one - one
    n_k = mu.shape[1]
    for k in range(n_k):
        work[0, i, k] = zero
        work[1, i, k] = state[i, k]
        work[2, i, k] = zero
        work[3, i, k] = zero
        work[4, i, k] = zero
        work[5, i, k] = zero
    t = zero
    j = 0
    while j < valid[i] and j < lags.shape[1]:
        c = marks[i, j]
        t += lags[i, j]
        d = t - work[0, i, c]
        ed = math.exp(-beta[c] * d)
        phi = work[1, i, c]
        phig = work[2, i, c]
        lda = mu[i, c] + alpha[c] * beta[c] * phi * ed
        work[5, i, c] = work[5, i, c] + one / lda - d
        work[3, i, c] = work[3, i, c] + (beta[c] * phi * ed) / lda - phi * (one - ed)
        work[4, i, c] = (work[4, i, c] + alpha[c] * ed * (phi * (one - beta[c] * d)
                                                          + beta[c] * phig) / lda
                         - alpha[c] * (phig * (one - ed) + phi * d * ed))
        work[2, i, c] = ed * (-d * phi + phig)
        work[1, i, c] = one + phi * ed
        work[0, i, c] = t
        j += 1
    for k in range(n_k):
        d = max_time[i] - work[0, i, k]
        ed = math.exp(-beta[k] * d)
        phi = work[1, i, k]
        work[5, i, k] = og[i] * (work[5, i, k] - d)
        work[3, i, k] = og[i] * (work[3, i, k] - phi * (one - ed))
        work[4, i, k] = og[i] * (work[4, i, k] - alpha[k] * (work[2, i, k] * (one - ed)
                                                             + phi * d * ed))


def marks_in_range(marks, valid, n_k):
    """Host check: every mark a sample uses lies in ``[0, n_k)``."""
    for i in range(marks.shape[0]):
        used = marks[i, :max(0, min(int(valid[i]), marks.shape[1]))]
        if used.size and (used.min() < 0 or used.max() >= n_k):
            return False
    return True
