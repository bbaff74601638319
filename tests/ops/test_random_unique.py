"""_sample_unique_zipfian and nd/sym.contrib.rand_zipfian."""
import math

import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu


def log_uniform(range_max):
    c = np.arange(range_max)
    return np.log((c + 2.0) / (c + 1.0)) / math.log(range_max + 1)


@pytest.mark.parametrize("device", [cpu(), pytest.param(gpu(), marks=pytest.mark.cuda)])
def test_unique_zipfian_rows_are_distinct_classes(device):
    nbdl.random.seed(3)
    samples, tries = nbdl.nd._sample_unique_zipfian(range_max=20, shape=(3, 6), ctx=device)
    s, t = samples.asnumpy(), tries.asnumpy()
    assert samples.dtype == np.int64 and tries.dtype == np.int64
    assert s.shape == (3, 6) and t.shape == (3,)
    for row, n in zip(s, t):
        assert len(set(row.tolist())) == 6 and row.min() >= 0 and row.max() < 20
        assert n >= 6
    full, _ = nbdl.nd._sample_unique_zipfian(range_max=5, shape=(2, 5), ctx=device)
    assert sorted(full.asnumpy()[0].tolist()) == [0, 1, 2, 3, 4]


def test_unique_zipfian_is_seeded_and_favours_small_classes():
    nbdl.random.seed(7)
    a = nbdl.nd._sample_unique_zipfian(range_max=1000, shape=(4, 50))[0].asnumpy()
    nbdl.random.seed(7)
    b = nbdl.nd._sample_unique_zipfian(range_max=1000, shape=(4, 50))[0].asnumpy()
    np.testing.assert_array_equal(a, b)
    # class 0 has probability log(2)/log(1001) ~ 0.1 per draw: every row finds it
    assert all(0 in row for row in a)
    sym = nbdl.sym._sample_unique_zipfian(range_max=10, shape=(2, 3))
    assert sym.infer_shape()[1] == [(2, 3), (2,)]
    with pytest.raises(nbdl.AttrError, match="cannot draw 11 distinct classes"):
        nbdl.nd._sample_unique_zipfian(range_max=10, shape=(2, 11))


def test_rand_zipfian_distribution_and_expected_counts():
    nbdl.random.seed(11)
    n, k = 20000, 8
    samples, exp_true, exp_sampled = nbdl.nd.contrib.rand_zipfian(nbdl.nd.array([3, 0]), n, k)
    s = samples.asnumpy()
    assert samples.dtype == np.int64 and s.min() >= 0 and s.max() < k
    freq = np.bincount(s, minlength=k) / n
    np.testing.assert_allclose(freq, log_uniform(k), atol=0.015)
    np.testing.assert_allclose(exp_true.asnumpy(), log_uniform(k)[[3, 0]] * n, rtol=1e-12)
    np.testing.assert_allclose(exp_sampled.asnumpy(), log_uniform(k)[s] * n, rtol=1e-12)
    a, b, c = nbdl.sym.contrib.rand_zipfian(nbdl.sym.var("t"), 4, 5)
    _, outs, _ = nbdl.sym.Group([a, b, c]).infer_shape(t=(2,))
    assert outs == [(4,), (2,), (4,)]
