"""_contrib_hawkesll and its gradient."""
import numpy as np
import pytest

import nbdl
from nbdl.ops.indexing import IndexOutOfRange
from nbdl.testing import check_consistency, check_numeric_gradient, check_symbolic_forward

NAMES = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")


def ref_hawkes(lda, alpha, beta, state, lags, marks, valid, max_time):
    """The univariate Hawkes log likelihood, event by event."""
    n, k = lda.shape
    ll, out_state = np.zeros(n), np.zeros((n, k))
    for i in range(n):
        s, last, t = state[i].astype(np.float64).copy(), np.zeros(k), 0.0
        for j in range(int(np.ceil(valid[i]))):
            c = marks[i, j]
            t += lags[i, j]
            d = t - last[c]
            e = np.exp(-beta[c] * d)
            ll[i] += np.log(lda[i, c] + alpha[c] * beta[c] * s[c] * e)
            ll[i] -= lda[i, c] * d + alpha[c] * s[c] * (1 - e)
            s[c] = 1 + s[c] * e
            last[c] = t
        d = max_time[i] - last
        e = np.exp(-beta * d)
        ll[i] -= np.sum(lda[i] * d + alpha * s * (1 - e))
        out_state[i] = e * s
    return ll, out_state


def inputs(rng, n=3, t=5, k=2, dtype=np.float64):
    vals = [rng.uniform(0.5, 2, (n, k)), rng.uniform(0.1, 0.5, k), rng.uniform(0.5, 2, k),
            rng.uniform(0, 1, (n, k)), rng.uniform(0.1, 1, (n, t)),
            rng.randint(0, k, (n, t)).astype(np.int32),
            np.array([2, t, 0] + [1] * (n - 3), dtype=np.float64)[:n],
            np.full(n, float(t) + 1)]
    return {nm: (v.astype(dtype) if v.dtype != np.int32 else v) for nm, v in zip(NAMES, vals)}


def graph():
    return nbdl.sym.contrib.hawkesll(*[nbdl.sym.var(n) for n in NAMES])


def test_forward_matches_reference(rng):
    loc = inputs(rng)
    ll, st = ref_hawkes(*[loc[n] for n in NAMES])
    check_symbolic_forward(graph(), loc, [ll, st], rtol=1e-10, atol=1e-12)
    loc32 = {k: (v.astype(np.float32) if v.dtype == np.float64 else v) for k, v in loc.items()}
    check_symbolic_forward(graph(), loc32, [ll, st], rtol=1e-5, atol=1e-5)


def test_gradients_of_lda_alpha_beta(rng):
    check_numeric_gradient(graph()[0], inputs(rng), grad_nodes=["lda", "alpha", "beta"])


def test_backward_op_under_mxnet_name(rng):
    """_contrib_backward_hawkesll called directly gives what autograd gives."""
    loc = inputs(rng)
    arrays = [nbdl.nd.array(loc[n], dtype=loc[n].dtype) for n in NAMES]
    for a in arrays[:3]:
        a.attach_grad()
    og = rng.normal(size=(3,))
    with nbdl.autograd.record():
        out, _ = nbdl.nd.contrib.hawkesll(*arrays)
    out.backward(nbdl.nd.array(og, dtype=np.float64))
    grads = nbdl.nd._contrib_backward_hawkesll(nbdl.nd.array(og, dtype=np.float64),
                                               nbdl.nd.zeros((3, 2), dtype=np.float64), *arrays)
    for a, g in zip(arrays[:3], grads[:3]):
        np.testing.assert_allclose(g.asnumpy(), a.grad.asnumpy(), rtol=1e-12)
    assert not grads[3].asnumpy().any()             # no gradient for the state


@pytest.mark.cuda
def test_cuda_matches_cpu(rng):
    loc = inputs(rng, dtype=np.float32)
    check_consistency(graph()[0], loc, grad=True)


def test_bad_mark_and_shapes():
    rng = np.random.RandomState(1)
    loc = inputs(rng)
    loc["marks"][1, 0] = 2
    arrays = [nbdl.nd.array(loc[n], dtype=loc[n].dtype) for n in NAMES]
    with pytest.raises(IndexOutOfRange, match="hawkesll: a mark is outside"):
        nbdl.nd.contrib.hawkesll(*arrays)
    with pytest.raises(nbdl.ShapeError, match=r"hawkesll: input 'alpha' has shape \(3,\)"):
        graph().infer_shape(lda=(3, 2), alpha=(3,), beta=(2,), state=(3, 2), lags=(3, 5),
                            marks=(3, 5), valid_length=(3,), max_time=(3,))
