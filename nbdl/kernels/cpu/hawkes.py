"""CPU kernels of ``_contrib_hawkesll`` and its gradient: the per-sample
recursions of ``nbdl.kernels.shared.hawkes`` in a loop over the samples."""
import numpy as np

from ...ops.indexing import IndexOutOfRange
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import hawkes as _shared
from ..shared.jit import njit

_forward = njit(cache=True)(_shared.py_hawkes_forward)
_backward = njit(cache=True)(_shared.py_hawkes_backward)
_marks_ok = njit(cache=True)(_shared.marks_in_range)


@njit(cache=True)
def _put(dst, i, v, req):
    if req == REQ_ADD:
        dst[i] += v
    elif req != REQ_NULL:
        dst[i] = v


@njit(cache=True)
def _zero_for(dst, req):
    if req != REQ_NULL and req != REQ_ADD:
        dst[:] = 0


@njit(cache=True)
def hawkesll(mu, alpha, beta, state, lags, marks, valid, max_time, ll, out_state, work, one,
             r_ll, r_state):
    if not _marks_ok(marks, valid, mu.shape[1]):
        raise IndexOutOfRange("_contrib_hawkesll: a mark is outside [0, K)")
    n_k = mu.shape[1]
    for i in range(mu.shape[0]):
        _put(ll, i, _forward(i, mu, alpha, beta, state, lags, marks, valid, max_time, work, one),
             r_ll)
        for k in range(n_k):
            _put(out_state, i * n_k + k, work[1, i, k], r_state)


@njit(cache=True)
def hawkesll_backward(og, og_state, mu, alpha, beta, state, lags, marks, valid, max_time,
                      d_mu, d_alpha, d_beta, d_state, d_lags, d_marks, d_valid, d_max, work, one,
                      r_mu, r_alpha, r_beta, r_state, r_lags, r_marks, r_valid, r_max):
    if not _marks_ok(marks, valid, mu.shape[1]):
        raise IndexOutOfRange("_contrib_hawkesll: a mark is outside [0, K)")
    n, n_k = mu.shape
    for i in range(n):
        _backward(i, og, mu, alpha, beta, state, lags, marks, valid, max_time, work, one)
    for i in range(n):
        for k in range(n_k):
            _put(d_mu, i * n_k + k, work[5, i, k], r_mu)
    for k in range(n_k):
        sa = one - one
        sb = one - one
        for i in range(n):
            sa += work[3, i, k]
            sb += work[4, i, k]
        _put(d_alpha, k, sa, r_alpha)
        _put(d_beta, k, sb, r_beta)
    _zero_for(d_state, r_state)
    _zero_for(d_lags, r_lags)
    _zero_for(d_marks, r_marks)
    _zero_for(d_valid, r_valid)
    _zero_for(d_max, r_max)


def _views(shapes):
    """Everything as its own shape except the flat (N*K,) outputs written by index."""
    return [tuple(s) for s in shapes]


def prepare_hawkesll(call):
    n, k = call.in_shapes[0]
    one = np.dtype(call.out_dtypes[0]).type(1)
    views = _views(call.in_shapes) + [(n,), (n * k,), None]
    return Launch(hawkesll, (one,) + tuple(int(r) for r in call.req), views)


def prepare_hawkesll_backward(call):
    n, k = call.in_shapes[2]
    one = np.dtype(call.out_dtypes[0]).type(1)
    outs = [(n * k,)] + _views(call.out_shapes[1:])
    views = _views(call.in_shapes) + outs + [None]
    return Launch(hawkesll_backward, (one,) + tuple(int(r) for r in call.req), views)
