"""Samplers and seeding: same seed, same numbers (samplers and Dropout
masks); different seed, different numbers."""
import numpy as np
import pytest

import nbdl
import nbdl.ndarray as nd
import nbdl.random


def test_uniform_shape_dtype_range():
    x = nd.random.uniform(-2, 3, shape=(50, 40))
    assert x.shape == (50, 40) and x.dtype is np.float32 and x.context == nbdl.cpu()
    a = x.asnumpy()
    assert a.min() >= -2 and a.max() < 3
    assert abs(a.mean() - 0.5) < 0.2
    assert nd.random.uniform().shape == (1,)              # MXNet 1.x: one value
    assert nd.random.uniform(shape=5, dtype=np.float64).dtype is np.float64


def test_normal_moments():
    a = nd.random.normal(1.0, 2.0, shape=(200, 50)).asnumpy()
    assert abs(a.mean() - 1.0) < 0.1 and abs(a.std() - 2.0) < 0.1


def test_randint():
    x = nd.random.randint(3, 7, shape=(1000,))
    assert x.dtype is np.int32                              # MXNet's default
    a = x.asnumpy()
    assert set(np.unique(a)) == {3, 4, 5, 6}
    assert nd.random.randint(5, shape=(3,), dtype=np.int64).dtype is np.int64


def test_other_samplers():
    assert nd.random.randn(2, 3).shape == (2, 3)
    assert (nd.random.exponential(2.0, shape=(10,)).asnumpy() >= 0).all()
    assert (nd.random.gamma(2.0, 1.0, shape=(10,)).asnumpy() > 0).all()
    p = nd.random.poisson(3.0, shape=(10,))
    assert p.dtype is np.float32 and (p.asnumpy() == np.round(p.asnumpy())).all()


def test_ndarray_parameters_sample_per_element():
    loc = nd.array([0.0, 100.0])
    x = nd.random.normal(loc, 0.01, shape=(3,))
    assert x.shape == (2, 3)
    a = x.asnumpy()
    assert np.allclose(a[0], 0, atol=0.1) and np.allclose(a[1], 100, atol=0.1)
    u = nd.random.uniform(nd.array([0, 10]), nd.array([1, 11]))
    assert u.shape == (2,)
    assert 10 <= u.asnumpy()[1] < 11


@pytest.mark.cuda
def test_out_and_device():
    out = nd.zeros((4,), dtype=np.float64)
    assert nd.random.uniform(shape=(4,), out=out) is out
    assert (out.asnumpy() != 0).all()
    g = nd.random.normal(shape=(2, 2), ctx=nbdl.gpu(0))
    assert g.context == nbdl.gpu(0) and g.shape == (2, 2)


def test_seed_reproduces_samples():
    def draw():
        return [nd.random.uniform(shape=(5,)).asnumpy(), nd.random.normal(shape=(3,)).asnumpy(),
                nd.random.randint(0, 100, shape=(4,)).asnumpy(), nbdl.random.uniform(shape=(2,)).asnumpy()]
    nbdl.random.seed(42)
    first = draw()
    nbdl.random.seed(42)
    second = draw()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    nbdl.random.seed(43)
    third = draw()
    assert not np.array_equal(first[0], third[0])
    assert not np.array_equal(first[1], third[1])


def test_seed_argument_checks():
    with pytest.raises(TypeError):
        nbdl.random.seed(1.5)
    nbdl.random.seed(np.int64(7))
    nbdl.random.seed(-3)                 # any integer is accepted
    nbdl.random.seed(2 ** 70)


def test_seed_reproduces_dropout_masks():
    x = nd.ones((64, 32))

    def mask():
        return nd.Dropout(x, p=0.5, mode="always").asnumpy()
    nbdl.random.seed(7)
    m1 = mask()
    m2 = mask()
    nbdl.random.seed(7)
    m3 = mask()
    nbdl.random.seed(8)
    m4 = mask()
    assert set(np.unique(m1)) == {0.0, 2.0}
    np.testing.assert_array_equal(m1, m3)
    assert not np.array_equal(m1, m2)     # consecutive calls draw new masks
    assert not np.array_equal(m1, m4)


@pytest.mark.cuda
def test_seed_reproduces_dropout_masks_on_gpu():
    x = nd.ones((4, 8), ctx=nbdl.gpu(0))

    def mask():
        return nd.Dropout(x, p=0.5, mode="always").asnumpy()
    nbdl.random.seed(11)
    m1 = mask()
    m2 = mask()
    nbdl.random.seed(11)
    m3 = mask()
    assert set(np.unique(m1)) <= {0.0, 2.0}
    np.testing.assert_array_equal(m1, m3)
    assert not np.array_equal(m1, m2)


def test_shuffle():
    nbdl.random.seed(0)
    x = nd.array(np.arange(20).reshape(10, 2))
    y = nd.random.shuffle(x)
    a = y.asnumpy()
    assert a.shape == (10, 2) and not np.array_equal(a, x.asnumpy())
    np.testing.assert_array_equal(np.sort(a[:, 0]), np.arange(0, 20, 2))
    np.testing.assert_array_equal(a[:, 1] - a[:, 0], np.ones(10))


def test_legacy_aliases():
    assert nd.random_uniform is nd.random.uniform
    assert nbdl.random.normal is nd.random.normal
