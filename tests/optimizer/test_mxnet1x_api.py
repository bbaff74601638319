"""MXNet 1.x's Optimizer API on nbdl's optimizers: single-index ``update`` /
``update_multi_precision`` calls, subclasses that override ``update`` the
1.x way, ``opt_registry``, ``set_learning_rate`` with a scheduler raising a
UserWarning, and the 1.x optimizers SGLD, FTML and AdaDelta (numpy
references written here)."""
import math
import warnings

import numpy as np
import pytest

import nbdl
from nbdl import optimizer as opt
from nbdl.lr_scheduler import FactorScheduler
from nbdl.optimizer import LearningRateConflict, OptimizerError


class RecordingSGD(opt.Optimizer):
    """A user optimizer written as for MXNet 1.x: ``update(index, ...)`` of
    one parameter, in terms of the base's helpers."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.calls = []

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        self.calls.append(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        self._update_count(index)
        weight[:] = (1 - lr * wd) * weight - lr * self.rescale_grad * grad


def test_a_1x_subclass_gets_single_indices():
    o = RecordingSGD(learning_rate=0.5, wd=0.1, rescale_grad=2.0)
    w0 = np.array([1.0, -2.0, 3.0], np.float32)
    g = np.array([0.5, 0.25, -1.0], np.float32)
    w = nbdl.nd.array(w0)
    o.update_multi_precision(3, w, nbdl.nd.array(g), o.create_state_multi_precision(3, w))
    assert o.calls == [3]
    np.testing.assert_allclose(w.asnumpy(), (1 - 0.05) * w0 - 0.5 * 2.0 * g, rtol=1e-6)
    # the list form reaches the subclass one parameter at a time too
    ws = [nbdl.nd.array(w0), nbdl.nd.array(w0)]
    o.update_multi_precision([5, 6], ws, [nbdl.nd.array(g)] * 2, [None, None])
    assert o.calls == [3, 5, 6]
    assert o._index_update_count == {3: 1, 5: 1, 6: 1}


def test_a_1x_subclass_with_float16_goes_through_the_master_copy():
    o = RecordingSGD(learning_rate=0.5, multi_precision=True)
    w = nbdl.nd.array(np.array([1.0, 2.0], np.float16), dtype=np.float16)
    state = o.create_state_multi_precision(0, w)
    master, inner = state
    assert master.dtype == np.float32 and inner is None
    o.update_multi_precision(0, w, nbdl.nd.array(np.array([1.0, -1.0], np.float16),
                                                 dtype=np.float16), state)
    assert o.calls == [0]
    np.testing.assert_allclose(master.asnumpy(), [0.5, 2.5])
    assert w.dtype == np.float16
    np.testing.assert_allclose(w.asnumpy().astype(np.float32), [0.5, 2.5])


@pytest.mark.parametrize("name", ["sgd", "adam", "rmsprop", "ftml", "adadelta"])
def test_builtin_update_takes_a_single_index_as_the_list_form(name, rng):
    w0 = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    grads = [rng.uniform(-1, 1, (4, 3)).astype(np.float32) for _ in range(3)]
    results = []
    for single in (True, False):
        o = opt.create(name, learning_rate=0.1, wd=0.01)
        w = nbdl.nd.array(w0)
        state = o.create_state_multi_precision(0, w)
        for g in grads:
            if single:
                o.update(0, w, nbdl.nd.array(g), state)
            else:
                o.update([0], [w], [nbdl.nd.array(g)], [state])
        results.append(w.asnumpy())
    np.testing.assert_array_equal(results[0], results[1])


def test_set_learning_rate_with_a_scheduler_raises_a_user_warning():
    o = opt.Optimizer(lr_scheduler=FactorScheduler(step=1), learning_rate=0.3)
    with pytest.raises(UserWarning, match="lr_scheduler"):
        o.set_learning_rate(0.5)
    with pytest.raises(LearningRateConflict):
        o.set_learning_rate(0.5)
    assert issubclass(LearningRateConflict, OptimizerError)
    assert o.learning_rate == 0.3
    plain = opt.Optimizer(learning_rate=0.01)
    plain.set_learning_rate(0.2)
    assert plain.learning_rate == 0.2


def test_opt_registry_and_register():
    assert opt.Optimizer.opt_registry["sgd"] is opt.SGD
    assert opt.Optimizer.opt_registry["ftml"] is opt.FTML
    assert opt.Optimizer.opt_registry["sgld"] is opt.SGLD
    assert isinstance(opt.Optimizer.create_optimizer("FTML", beta1=0.5), opt.FTML)

    @opt.Optimizer.register
    class MyOptimizerForRegistry(RecordingSGD):
        pass
    try:
        assert opt.Optimizer.opt_registry["myoptimizerforregistry"] is MyOptimizerForRegistry
        assert type(opt.create("myoptimizerforregistry")) is MyOptimizerForRegistry
        replacement = type("MyOptimizerForRegistry", (RecordingSGD,), {})
        with pytest.warns(UserWarning, match="replaces"):
            opt.register(replacement)
        assert opt.create("MyOptimizerForRegistry").__class__ is replacement
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            opt.register(replacement)     # the same class again: no warning
    finally:
        opt.Optimizer.opt_registry.pop("myoptimizerforregistry")
    with pytest.raises(OptimizerError, match="unknown optimizer 'nosuch'"):
        opt.create("nosuch")


def test_sgld_matches_numpy_with_the_same_noise(rng):
    w0 = rng.uniform(-1, 1, (3, 4))
    g = rng.uniform(-2, 2, (3, 4))
    lr, wd, rescale, clip = 0.04, 0.03, 0.7, 0.5
    for dtype, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        o = opt.SGLD(learning_rate=lr, wd=wd, rescale_grad=rescale, clip_gradient=clip)
        w = nbdl.nd.array(w0, dtype=dtype)
        assert o.create_state_multi_precision(0, w) is None
        nbdl.random.seed(7)
        o.update_multi_precision(0, w, nbdl.nd.array(g, dtype=dtype), None)
        nbdl.random.seed(7)
        noise = nbdl.nd.random.normal(0, math.sqrt(lr), shape=w0.shape, dtype=dtype).asnumpy()
        assert np.abs(noise).max() > 0
        x = np.clip(rescale * g, -clip, clip)
        want = w0 - lr / 2 * (x + wd * w0) + noise
        assert w.dtype == dtype
        np.testing.assert_allclose(w.asnumpy(), want, rtol=tol, atol=tol)


def test_sgld_noise_differs_between_updates(rng):
    o = opt.SGLD(learning_rate=0.1)
    w = nbdl.nd.zeros((50,))
    zero = nbdl.nd.zeros((50,))
    o.update(0, w, zero, None)
    first = w.asnumpy().copy()
    o.update(0, w, zero, None)
    step = w.asnumpy() - first
    assert not np.allclose(step, first)
    # N(0, sqrt(lr)) noise: the standard deviation is about sqrt(0.1)
    assert 0.15 < np.std(np.concatenate([first, step])) < 0.5


def test_ftml_validates_its_arguments():
    with pytest.raises(OptimizerError, match="beta1"):
        opt.FTML(beta1=1.0)
    with pytest.raises(OptimizerError, match="epsilon"):
        opt.FTML(epsilon=-1)
    o = opt.FTML(learning_rate=0.0)
    w = nbdl.nd.ones((2,))
    with pytest.raises(OptimizerError, match="learning rate"):
        o.update(0, w, nbdl.nd.ones((2,)), o.create_state(0, w))


def test_adadelta_ignores_the_learning_rate_as_mxnet_1x():
    w0 = np.array([0.5, -1.0, 2.0], np.float32)
    g = np.array([1.0, 0.5, -0.25], np.float32)
    results = []
    for lr in (0.01, 1.0, None):
        o = opt.AdaDelta(learning_rate=lr, wd=0.1)
        w = nbdl.nd.array(w0)
        o.update(0, w, nbdl.nd.array(g), o.create_state(0, w))
        results.append(w.asnumpy())
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])
    rho, eps = 0.9, 1e-5
    acc_g = (1 - rho) * g.astype(np.float64) ** 2
    d = np.sqrt(eps) / np.sqrt(acc_g + eps) * g
    np.testing.assert_allclose(results[0], w0 - (d + 0.1 * w0), rtol=1e-5)


def test_state_structures_are_mxnet_1x():
    w = nbdl.nd.ones((2, 3))
    n = opt.RMSProp().create_state(0, w)
    assert isinstance(n, tuple) and len(n) == 1 and n[0].shape == (2, 3)
    assert len(opt.RMSProp(centered=True).create_state(0, w)) == 3
    assert opt.NAG(momentum=0.0).create_state(0, w) is None
    assert len(opt.FTML().create_state(0, w)) == 3
    # a bare n (what earlier nbdl versions saved) still updates
    o = opt.RMSProp(learning_rate=0.1)
    w1, w2 = nbdl.nd.ones((3,)), nbdl.nd.ones((3,))
    g = nbdl.nd.array([1.0, -2.0, 0.5])
    o.update(0, w1, g, (nbdl.nd.zeros((3,)),))
    opt.RMSProp(learning_rate=0.1).update(0, w2, g, nbdl.nd.zeros((3,)))
    np.testing.assert_array_equal(w1.asnumpy(), w2.asnumpy())


def test_nag_momentum_is_lr_scaled_and_reads_the_new_weight():
    mu, lr, wd = 0.9, 0.1, 0.1
    w0, g = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.3, -0.8])
    o = opt.NAG(learning_rate=lr, momentum=mu, wd=wd)
    w = nbdl.nd.array(w0, dtype=np.float64)
    mom = o.create_state(0, w)
    ref_w, ref_m = w0.copy(), np.zeros(3)
    for _ in range(3):
        o.update(0, w, nbdl.nd.array(g, dtype=np.float64), mom)
        new = ref_w + mu * mu * ref_m - (1 + mu) * lr * (g + wd * ref_w)
        ref_m = mu * ref_m - lr * (g + wd * new)
        ref_w = new
    np.testing.assert_allclose(w.asnumpy(), ref_w, rtol=1e-12)
    np.testing.assert_allclose(mom.asnumpy(), ref_m, rtol=1e-12)
