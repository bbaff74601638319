"""Gluon normalization layers against numpy references; BatchNorm's running
statistics in training and predict mode, eager and hybridized."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.gluon import nn
from nbdl.testing import assert_almost_equal



def run_both(layer, x, rtol=1e-5, atol=1e-5):
    arr = nbdl.nd.array(x)
    eager = layer(arr).asnumpy()
    layer.hybridize()
    hybrid = layer(arr).asnumpy()
    layer.hybridize(False)
    assert_almost_equal(eager, hybrid, rtol=rtol, atol=atol)
    return eager


def set_params(layer, rng, positive=()):
    for name, p in layer.collect_params().items():
        v = rng.uniform(-1, 1, p.shape)
        if name in positive:
            v = np.abs(v) + 0.5
        p.set_data(v.astype(np.float32))


def bn_ref(x, gamma, beta, mean, var, axis, eps):
    shape = [1] * x.ndim
    shape[axis] = -1
    r = lambda v: v.reshape(shape)  # noqa: E731
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(gamma) + r(beta)


def batch_stats(x, axis):
    axes = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    return x.mean(axis=axes), x.var(axis=axes)


# -- BatchNorm ----------------------------------------------------------------------

def test_batchnorm_deferred_shapes_names_and_repr():
    bn = nn.BatchNorm()
    assert repr(bn) == ("BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, "
                        "use_global_stats=False, in_channels=None)")
    bn.initialize()
    bn(nbdl.nd.ones((2, 3, 4, 4)))
    assert list(bn.collect_params()) == ["gamma", "beta", "running_mean", "running_var"]
    for p in bn.collect_params().values():
        assert p.shape == (3,)
    assert bn.running_mean.grad_req == "null" and bn.running_var.grad_req == "null"
    assert_almost_equal(bn.running_var.data().asnumpy(), np.ones(3))
    assert "in_channels=3" in repr(bn)
    assert nn.BatchNorm(in_channels=5).gamma.shape == (5,)


@pytest.mark.parametrize("axis,shape", [(1, (4, 3, 2, 3)), (-1, (5, 2, 3)), (1, (6, 4))])
def test_batchnorm_inference_uses_running_stats(axis, shape, rng):
    bn = nn.BatchNorm(axis=axis, epsilon=1e-3)
    bn.initialize()
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    bn(nbdl.nd.array(x))
    set_params(bn, rng, positive=("running_var",))
    before = {k: p.data().asnumpy().copy() for k, p in bn.collect_params().items()}
    out = run_both(bn, x)
    ref = bn_ref(x, before["gamma"], before["beta"], before["running_mean"],
                 before["running_var"], axis, 1e-3)
    assert_almost_equal(out, ref, rtol=1e-4, atol=1e-5)
    with autograd.predict_mode():
        bn(nbdl.nd.array(x))
    for k, p in bn.collect_params().items():
        assert_almost_equal(p.data().asnumpy(), before[k])      # nothing updated


@pytest.mark.parametrize("hybrid", [False, True])
def test_batchnorm_training_normalizes_and_updates_running_stats(hybrid, rng):
    momentum = 0.8
    bn = nn.BatchNorm(momentum=momentum)
    bn.initialize()
    x = rng.uniform(-2, 2, (4, 3, 2, 2)).astype(np.float32) + np.array(
        [0.0, 1.0, -3.0], np.float32).reshape(1, 3, 1, 1)
    bn(nbdl.nd.array(x))
    set_params(bn, rng, positive=("running_var", "gamma"))
    p0 = {k: p.data().asnumpy().copy() for k, p in bn.collect_params().items()}
    if hybrid:
        bn.hybridize()
    mean, var = batch_stats(x, 1)
    with autograd.record():
        y = bn(nbdl.nd.array(x))
    assert_almost_equal(y.asnumpy(), bn_ref(x, p0["gamma"], p0["beta"], mean, var, 1, 1e-5),
                        rtol=1e-4, atol=1e-4)
    rm = momentum * p0["running_mean"] + (1 - momentum) * mean
    rv = momentum * p0["running_var"] + (1 - momentum) * var
    assert_almost_equal(bn.running_mean.data().asnumpy(), rm, rtol=1e-4, atol=1e-5)
    assert_almost_equal(bn.running_var.data().asnumpy(), rv, rtol=1e-3, atol=1e-4)
    y.backward()
    # d(sum y)/d gamma = sum of the normalized values = 0; d/d beta = count
    assert_almost_equal(bn.beta.grad().asnumpy(), np.full(3, 16.0), rtol=1e-5)
    assert_almost_equal(bn.gamma.grad().asnumpy(), np.zeros(3), atol=1e-3)
    # a second training step moves them again; predict mode does not
    with autograd.record():
        bn(nbdl.nd.array(x))
    assert_almost_equal(bn.running_mean.data().asnumpy(),
                        momentum * rm + (1 - momentum) * mean, rtol=1e-4, atol=1e-5)
    frozen = bn.running_mean.data().asnumpy().copy()
    with autograd.record(train_mode=False):
        bn(nbdl.nd.array(x))
    bn(nbdl.nd.array(x))
    assert_almost_equal(bn.running_mean.data().asnumpy(), frozen)


def test_batchnorm_scale_center_off_and_global_stats(rng):
    bn = nn.BatchNorm(scale=False, center=False, use_global_stats=True, in_channels=2)
    assert bn.gamma.grad_req == "null" and bn.beta.grad_req == "null"
    bn.initialize()
    bn.gamma.set_data(np.array([5.0, 5.0], np.float32))   # fix_gamma: treated as 1
    bn.running_mean.set_data(np.array([1.0, -1.0], np.float32))
    bn.running_var.set_data(np.array([4.0, 0.25], np.float32))
    x = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
    with autograd.record():
        y = bn(nbdl.nd.array(x))
    ref = bn_ref(x, np.ones(2), np.zeros(2), np.array([1.0, -1.0]), np.array([4.0, 0.25]), 1,
                 1e-5)
    assert_almost_equal(y.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    assert_almost_equal(bn.running_mean.data().asnumpy(), [1.0, -1.0])


def test_sync_batchnorm_equals_batchnorm(rng):
    x = nbdl.nd.array(rng.uniform(-1, 1, (4, 3, 2)).astype(np.float32))
    a, b = nn.BatchNorm(), nn.SyncBatchNorm(num_devices=1)
    a.initialize()
    b.initialize()
    with autograd.record():
        ya, yb = a(x), b(x)
    assert_almost_equal(ya.asnumpy(), yb.asnumpy())
    assert_almost_equal(a.running_var.data().asnumpy(), b.running_var.data().asnumpy())
    assert repr(b).startswith("SyncBatchNorm(axis=1")


# -- InstanceNorm, LayerNorm, GroupNorm ----------------------------------------------

def instance_ref(x, gamma, beta, eps):
    axes = tuple(range(2, x.ndim))
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean) / np.sqrt(var + eps) * gamma.reshape(shape) + beta.reshape(shape)


@pytest.mark.parametrize("axis", [1, 2])
def test_instance_norm(axis, rng):
    layer = nn.InstanceNorm(axis=axis, scale=True)
    layer.initialize()
    x = rng.uniform(-1, 1, (2, 3, 4, 5)).astype(np.float32)
    layer(nbdl.nd.array(x))
    assert layer.gamma.shape == (x.shape[axis],)
    set_params(layer, rng)
    out = run_both(layer, x)
    g, b = layer.gamma.data().asnumpy(), layer.beta.data().asnumpy()
    ref = np.swapaxes(instance_ref(np.swapaxes(x, 1, axis), g, b, 1e-5), 1, axis)
    assert_almost_equal(out, ref, rtol=1e-4, atol=1e-4)


def test_layer_norm(rng):
    layer = nn.LayerNorm()
    assert repr(layer) == "LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=None)"
    layer.initialize()
    x = rng.uniform(-1, 1, (2, 3, 5)).astype(np.float32)
    layer(nbdl.nd.array(x))
    assert layer.gamma.shape == (5,) and layer.beta.shape == (5,)
    set_params(layer, rng)
    out = run_both(layer, x)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    ref = (x - mean) / np.sqrt(var + 1e-5) * layer.gamma.data().asnumpy() + \
        layer.beta.data().asnumpy()
    assert_almost_equal(out, ref, rtol=1e-4, atol=1e-5)
    other = nn.LayerNorm(axis=1, in_channels=3)
    other.initialize()
    assert other(nbdl.nd.array(x)).shape == x.shape


def test_group_norm(rng):
    layer = nn.GroupNorm(num_groups=2)
    layer.initialize()
    x = rng.uniform(-1, 1, (2, 4, 3, 2)).astype(np.float32)
    layer(nbdl.nd.array(x))
    assert layer.gamma.shape == (4,)
    set_params(layer, rng)
    out = run_both(layer, x)
    g = x.reshape(2, 2, -1)
    norm = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5))
    ref = norm.reshape(x.shape) * layer.gamma.data().asnumpy().reshape(1, 4, 1, 1) + \
        layer.beta.data().asnumpy().reshape(1, 4, 1, 1)
    assert_almost_equal(out, ref, rtol=1e-4, atol=1e-4)
    with pytest.raises(nbdl.NbdlError, match="divide"):
        nn.GroupNorm(num_groups=3, in_channels=4)
