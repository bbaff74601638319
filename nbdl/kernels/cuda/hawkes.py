"""CUDA kernels of ``_contrib_hawkesll`` and its gradient: one thread per
sample runs ``nbdl.kernels.shared.hawkes``'s recursions, one per mark sums
the alpha/beta gradients over the samples; the marks are range-checked on
the host (a kernel cannot raise)."""
import numpy as np
from numba import cuda

from ...ops.indexing import IndexOutOfRange
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import hawkes as _shared
from ._launch import grid1d

_forward = cuda.jit(device=True)(_shared.py_hawkes_forward)
_backward = cuda.jit(device=True)(_shared.py_hawkes_backward)


def _run(kernel, n, *args):
    if n:
        blocks, threads = grid1d(n)
        kernel[blocks, threads](*args)


@cuda.jit(device=True)
def _put(dst, i, v, req):
    if req == REQ_ADD:
        dst[i] += v
    elif req != REQ_NULL:
        dst[i] = v


@cuda.jit
def _forward_kernel(mu, alpha, beta, state, lags, marks, valid, max_time, ll, out_state, work,
                    one, r_ll, r_state):
    n_k = mu.shape[1]
    for i in range(cuda.grid(1), mu.shape[0], cuda.gridsize(1)):
        _put(ll, i, _forward(i, mu, alpha, beta, state, lags, marks, valid, max_time, work, one),
             r_ll)
        for k in range(n_k):
            _put(out_state, i * n_k + k, work[1, i, k], r_state)


@cuda.jit
def _backward_kernel(og, mu, alpha, beta, state, lags, marks, valid, max_time, work, one):
    for i in range(cuda.grid(1), mu.shape[0], cuda.gridsize(1)):
        _backward(i, og, mu, alpha, beta, state, lags, marks, valid, max_time, work, one)


@cuda.jit
def _gather_grads(work, d_mu, d_alpha, d_beta, one, r_mu, r_alpha, r_beta):
    n, n_k = work.shape[1], work.shape[2]
    for k in range(cuda.grid(1), n_k, cuda.gridsize(1)):
        sa = one - one
        sb = one - one
        for i in range(n):
            sa += work[3, i, k]
            sb += work[4, i, k]
            _put(d_mu, i * n_k + k, work[5, i, k], r_mu)
        _put(d_alpha, k, sa, r_alpha)
        _put(d_beta, k, sb, r_beta)


@cuda.jit
def _zero(x):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        x[i] = 0


def _check(marks, valid, n_k):
    host_m = marks.copy_to_host() if hasattr(marks, "copy_to_host") else np.asarray(marks)
    host_v = valid.copy_to_host() if hasattr(valid, "copy_to_host") else np.asarray(valid)
    if not _shared.marks_in_range(host_m, host_v, n_k):
        raise IndexOutOfRange("_contrib_hawkesll: a mark is outside [0, K)")


def prepare_hawkesll(call):
    n, k = call.in_shapes[0]
    one = np.dtype(call.out_dtypes[0]).type(1)
    r_ll, r_state = (int(r) for r in call.req)

    def fn(mu, alpha, beta, state, lags, marks, valid, max_time, ll, out_state, work):
        _check(marks, valid, k)
        _run(_forward_kernel, n, mu, alpha, beta, state, lags, marks, valid, max_time, ll,
             out_state, work, one, r_ll, r_state)
    views = [tuple(s) for s in call.in_shapes] + [(n,), (n * k,), None]
    return Launch(fn, (), views)


def prepare_hawkesll_backward(call):
    n, k = call.in_shapes[2]
    one = np.dtype(call.out_dtypes[0]).type(1)
    reqs = [int(r) for r in call.req]

    def fn(og, og_state, mu, alpha, beta, state, lags, marks, valid, max_time, *rest):
        outs, work = rest[:8], rest[8]
        _check(marks, valid, k)
        _run(_backward_kernel, n, og, mu, alpha, beta, state, lags, marks, valid, max_time,
             work, one)
        _run(_gather_grads, k, work, outs[0], outs[1], outs[2], one, *reqs[:3])
        for o, r in zip(outs[3:], reqs[3:]):
            if r != REQ_NULL and r != REQ_ADD:
                _run(_zero, o.size, o.reshape(o.size))
    views = ([tuple(s) for s in call.in_shapes] + [(n * k,)]
             + [tuple(s) for s in call.out_shapes[1:]] + [None])
    return Launch(fn, (), views)
