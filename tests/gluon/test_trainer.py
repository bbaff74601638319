"""Trainer: steps on toy parameters with hand-set gradients, stale
gradients, several devices, learning rates, and save/load_states."""
import json
import os

import numpy as np
import pytest

import nbdl
from nbdl import optimizer as opt
from nbdl.gluon.parameter import Parameter
from nbdl.gluon.trainer import Trainer, TrainerError
from nbdl.lr_scheduler import FactorScheduler


def _param(name, value, device=None, **kwargs):
    value = np.asarray(value, dtype=np.float32)
    p = Parameter(name, shape=value.shape, **kwargs)
    p.initialize(init=nbdl.initializer.Constant(value), device=device)
    return p


def _set_grad(p, value):
    for g in p.list_grad():
        g[...] = np.asarray(value, dtype=np.float32)
        g._fresh_grad = True


def test_sgd_momentum_steps_match_reference():
    w = _param("weight", [1.0, -2.0, 3.0])
    t = Trainer({"w": w}, "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01})
    ref, mom = np.array([1.0, -2.0, 3.0]), np.zeros(3)
    for step, g in enumerate(([4.0, 2.0, -6.0], [1.0, 1.0, 1.0], [-2.0, 0.0, 8.0])):
        _set_grad(w, g)
        t.step(batch_size=4)
        mom = 0.9 * mom - 0.1 * 0.01 * ref - 0.1 * np.array(g) / 4
        ref = ref + mom
        np.testing.assert_allclose(w.data().asnumpy(), ref, rtol=1e-6)
    assert t.optimizer.num_update == 3
    assert not w.grad()._fresh_grad


def test_rescale_grad_from_optimizer_params_multiplies_one_over_batch_size():
    w = _param("weight", [0.0])
    t = Trainer([w], "sgd", {"learning_rate": 1.0, "rescale_grad": 2.0})
    _set_grad(w, [1.0])
    t.step(4)
    np.testing.assert_allclose(w.data().asnumpy(), [-0.5])


def test_list_params_shared_params_and_null_grad_req():
    w = _param("weight", [1.0, 1.0])
    frozen = _param("frozen", [5.0], grad_req="null")
    t = Trainer({"a.weight": w, "b.weight": w, "frozen": frozen}, "sgd", {"learning_rate": 1.0})
    assert len(t._params) == 2
    _set_grad(w, [1.0, 2.0])
    t.step(1)                                      # updated once; 'frozen' skipped silently
    np.testing.assert_allclose(w.data().asnumpy(), [0.0, -1.0])
    np.testing.assert_allclose(frozen.data().asnumpy(), [5.0])


def test_stale_gradients_raise_and_change_nothing():
    a, b = _param("a", [1.0]), _param("b", [2.0])
    t = Trainer({"layer.a": a, "layer.b": b}, "sgd", {"learning_rate": 1.0})
    _set_grad(a, [1.0])
    with pytest.raises(TrainerError, match="'layer.b' on \\['cpu\\(0\\)'\\].*ignore_stale_grad"):
        t.step(1)
    np.testing.assert_allclose(a.data().asnumpy(), [1.0])      # no partial update
    assert a.grad()._fresh_grad
    t.step(1, ignore_stale_grad=True)                          # updates a, skips b
    np.testing.assert_allclose(a.data().asnumpy(), [0.0])
    np.testing.assert_allclose(b.data().asnumpy(), [2.0])
    with pytest.raises(TrainerError, match="'layer.a'"):
        t.step(1)                                              # a's gradient is stale now


@pytest.mark.parametrize("update_on_kvstore", [None, False])
def test_several_devices_allreduce_and_identical_copies(update_on_kvstore):
    w = _param("weight", [1.0, 1.0], device=[nbdl.cpu(0), nbdl.cpu(1)])
    t = Trainer({"w": w}, "sgd", {"learning_rate": 0.5, "momentum": 0.5},
                update_on_kvstore=update_on_kvstore)
    assert t._kvstore is None and not t._kv_initialized      # made at the first step
    g0, g1 = w.list_grad()
    for _ in range(2):
        g0[...] = np.array([1.0, 2.0], np.float32)
        g1[...] = np.array([3.0, 4.0], np.float32)
        g0._fresh_grad = g1._fresh_grad = True
        t.step(2)
    assert t._kvstore.type == "device" and t._kv_initialized
    assert t._update_on_kvstore is (update_on_kvstore is None)
    # summed gradient [4, 6] / 2 = [2, 3]; momentum steps -0.5g then -0.75g
    np.testing.assert_allclose(w.list_data()[0].asnumpy(), [1 - 2.5, 1 - 3.75])
    np.testing.assert_array_equal(w.list_data()[1].asnumpy(), w.list_data()[0].asnumpy())
    if update_on_kvstore is None:       # the store updated: gradients untouched, states there
        np.testing.assert_allclose(g1.asnumpy(), [3.0, 4.0])
        assert 0 in t._kvstore._updater.states and not t._updaters[0].states
    else:                               # the store summed the gradients; one Updater per device
        np.testing.assert_allclose(g1.asnumpy(), [4.0, 6.0])
        assert len(t._updaters) == 2
        for k, upd in enumerate(t._updaters):
            mom = upd.states[0]
            assert mom.device == w.list_data()[k].device
            np.testing.assert_allclose(mom.asnumpy(), [-1.5, -2.25], rtol=1e-6)
        assert t.optimizer._index_update_count[0] == 2       # one count per step, not per copy


def test_no_kvstore_updates_each_device_from_its_own_gradient():
    w = _param("weight", [1.0], device=[nbdl.cpu(0), nbdl.cpu(1)])
    t = Trainer([w], "sgd", {"learning_rate": 1.0}, kvstore=None)
    g0, g1 = w.list_grad()
    g0[...], g1[...] = 1.0, 3.0
    g0._fresh_grad = g1._fresh_grad = True
    t.step(1)
    assert t._kvstore is None and t._update_on_kvstore is None
    np.testing.assert_array_equal([d.asnumpy()[0] for d in w.list_data()], [0.0, -2.0])


def test_one_device_makes_no_kvstore():
    w = _param("weight", [1.0])
    t = Trainer([w], "sgd", {"learning_rate": 1.0}, kvstore="local", update_on_kvstore=True)
    _set_grad(w, [2.0])
    t.step(1)
    assert t._kvstore is None and t._update_on_kvstore is None and t._kv_initialized
    np.testing.assert_array_equal(w.data().asnumpy(), [-1.0])


def test_adam_on_two_devices_counts_each_step_once():
    devices = [nbdl.cpu(0), nbdl.cpu(1)]
    w2 = _param("weight", [1.0, 2.0], device=devices)
    w1 = _param("weight", [1.0, 2.0])
    t2 = Trainer([w2], "adam", {"learning_rate": 0.1}, update_on_kvstore=False)
    t1 = Trainer([w1], "adam", {"learning_rate": 0.1})
    for step in range(3):
        g = np.array([0.5, -1.0], np.float32) * (step + 1)
        for gr in w2.list_grad():
            gr[...] = g / 2
            gr._fresh_grad = True
        _set_grad(w1, g)
        t2.step(1)
        t1.step(1)
    for d in w2.list_data():
        np.testing.assert_allclose(d.asnumpy(), w1.data().asnumpy(), rtol=1e-6)


def test_allreduce_then_update_equals_step():
    make = lambda: _param("weight", [1.0], device=[nbdl.cpu(0), nbdl.cpu(1)])  # noqa: E731
    p1, p2 = make(), make()
    t1 = Trainer([p1], "adam")
    t2 = Trainer([p2], "adam", update_on_kvstore=False)
    for p in (p1, p2):
        _set_grad(p, [1.0])
        p.list_grad()[1][...] = 3.0
    t1.step(2)
    t2.allreduce_grads()
    t2.update(2)
    np.testing.assert_array_equal(p1.data().asnumpy(), p2.data().asnumpy())
    assert t1._update_on_kvstore is True
    for method, args in ((t1.allreduce_grads, ()), (t1.update, (2,))):
        with pytest.raises(AssertionError, match="updated in the kvstore"):
            method(*args)


def test_single_device_allreduce_is_a_no_op():
    w = _param("weight", [1.0, 2.0])
    t = Trainer([w], "sgd")
    _set_grad(w, [3.0, 4.0])
    t.allreduce_grads()
    np.testing.assert_array_equal(w.grad().asnumpy(), [3.0, 4.0])
    assert w.grad()._fresh_grad


def test_learning_rate_and_param_lr_mult():
    w = _param("weight", [0.0])
    o = opt.SGD(learning_rate=1.0)
    t = Trainer([w], o)
    assert t.optimizer is o and t.learning_rate == 1.0
    t.set_learning_rate(0.5)
    w.lr_mult = 2.0                       # read at update time, through param_dict
    _set_grad(w, [1.0])
    t.step(1)
    np.testing.assert_allclose(w.data().asnumpy(), [-1.0])
    ts = Trainer([w], "sgd", {"lr_scheduler": FactorScheduler(step=1, factor=0.5, base_lr=1.0)})
    with pytest.raises(opt.OptimizerError, match="lr_scheduler"):
        ts.set_learning_rate(0.1)


@pytest.mark.parametrize("make, words", [
    (lambda w: Trainer([w], "sgd", kvstore="byteps"), "kvstore='byteps' is not supported"),
    (lambda w: Trainer([w], "sgd", bucket_size_mb=0), "bucket_size_mb must be a positive"),
    (lambda w: Trainer([w], "sgd", kvstore=None, compression_params={"type": "2bit"}),
     "compression.*needs a kvstore"),
    (lambda w: Trainer([w], "sgd", kvstore="nosuchstore"), "kvstore='nosuchstore'"),
    (lambda w: Trainer(w, "sgd"), "dict of Parameters"),
    (lambda w: Trainer({"x": nbdl.nd.ones((1,))}, "sgd"), "'x' is a NDArray"),
    (lambda w: Trainer([w], opt.SGD(), {"momentum": 0.9}), "optimizer_params must be empty"),
    (lambda w: Trainer([w], "sgd", update_on_kvstore="yes"), "update_on_kvstore"),
    (lambda w: Trainer([w], "sgd").step(0), "batch_size must be a positive number"),
])
def test_bad_arguments(make, words):
    w = _param("weight", [1.0])
    with pytest.raises(TrainerError, match=words):
        make(w)


def test_uninitialized_parameter_in_step_names_it():
    p = Parameter("weight", shape=(3, 0), allow_deferred_init=True)
    p.initialize()
    t = Trainer({"dense.weight": p}, "sgd")
    with pytest.raises(nbdl.NbdlError, match="'weight'.*deferred"):
        t.step(1)


# -- save_states / load_states ---------------------------------------------------

def _adam_pair(tmp_path, **adam):
    w, b = _param("weight", [[1.0, 2.0], [3.0, 4.0]]), _param("bias", [0.5, -0.5])
    t = Trainer({"fc.weight": w, "fc.bias": b}, "adam", {"learning_rate": 0.1, **adam})
    for g in ([[1.0, -1.0], [2.0, 0.5]], [[0.3, 0.2], [-1.0, 1.0]]):
        _set_grad(w, g)
        _set_grad(b, [1.0, 2.0])
        t.step(2)
    return w, b, t


def _copy_params(w, b):
    w2 = _param("weight", w.data().asnumpy())
    b2 = _param("bias", b.data().asnumpy())
    return w2, b2


def test_save_load_round_trip_continues_identically(tmp_path):
    w, b, t = _adam_pair(tmp_path, lr_scheduler=FactorScheduler(step=1, factor=0.9, base_lr=0.1))
    fname = str(tmp_path / "trainer.states")
    t.save_states(fname)
    assert os.path.exists(fname) and not os.path.exists(fname + ".npz")
    with np.load(fname, allow_pickle=False) as npz:          # readable without pickle
        header = json.loads(npz["__header__"].tobytes())
    assert header["optimizer"]["name"] == "adam" and header["optimizer"]["num_update"] == 2
    w2, b2 = _copy_params(w, b)
    t2 = Trainer({"fc.weight": w2, "fc.bias": b2}, "sgd")
    t2.load_states(fname)
    assert isinstance(t2.optimizer, opt.Adam) and t2.optimizer.num_update == 2
    assert t2.learning_rate == pytest.approx(t.learning_rate)
    assert t2.optimizer.param_dict[0] is w2
    for tr, (pw, pb) in ((t, (w, b)), (t2, (w2, b2))):
        _set_grad(pw, [[0.1, 0.2], [0.3, 0.4]])
        _set_grad(pb, [-1.0, 1.0])
        tr.step(2)
    np.testing.assert_array_equal(w2.data().asnumpy(), w.data().asnumpy())
    np.testing.assert_array_equal(b2.data().asnumpy(), b.data().asnumpy())
    assert t2.optimizer.lr_scheduler.base_lr == pytest.approx(t.optimizer.lr_scheduler.base_lr)


def test_nadam_schedule_and_multi_precision_states_round_trip(tmp_path):
    w = Parameter("weight", shape=(2,), dtype=np.float16)
    w.initialize(init="ones")
    t = Trainer([w], "nadam", {"multi_precision": True, "learning_rate": 0.01})
    w.grad()[...] = np.array([1.0, -1.0], np.float16)
    w.grad()._fresh_grad = True
    t.step(1)
    fname = str(tmp_path / "mp.states")
    t.save_states(fname)
    t2 = Trainer([w], "sgd")
    t2.load_states(fname)
    master, (m, v) = t2._states[0]
    assert master.dtype == np.float32
    np.testing.assert_array_equal(master.asnumpy(), t._states[0][0].asnumpy())
    np.testing.assert_array_equal(v.asnumpy(), t._states[0][1][1].asnumpy())
    assert t2.optimizer.m_schedule == t.optimizer.m_schedule


def _corrupt_variants(good):
    data = open(good, "rb").read()
    flipped = bytearray(data)
    mid = len(data) // 2
    flipped[mid:mid + 16] = bytes(b ^ 0xFF for b in flipped[mid:mid + 16])
    return {"truncated": data[: len(data) * 2 // 3], "flipped": bytes(flipped),
            "text": b"not a state file", "empty": b""}


@pytest.mark.parametrize("variant", ["truncated", "flipped", "text", "empty", "missing"])
def test_corrupted_file_raises_and_leaves_trainer_untouched(tmp_path, variant):
    w, b, t = _adam_pair(tmp_path)
    good = str(tmp_path / "good.states")
    t.save_states(good)
    bad = str(tmp_path / "bad.states")
    if variant != "missing":
        open(bad, "wb").write(_corrupt_variants(good)[variant])
    before_opt, before_states = t.optimizer, dict(t._states)
    before_mean = t._states[0][0].asnumpy()
    with pytest.raises(TrainerError, match="bad.states"):
        t.load_states(bad)
    assert t.optimizer is before_opt and t._states == before_states
    np.testing.assert_array_equal(t._states[0][0].asnumpy(), before_mean)


def _write_states(fname, header, arrays):
    arrays = dict(arrays)
    arrays["__header__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    with open(fname, "wb") as f:
        np.savez(f, **arrays)


@pytest.mark.parametrize("edit, words", [
    (lambda h, a: h.update(format="other"), "not a Trainer state file"),
    (lambda h, a: h["optimizer"].update(name="nosuch"), "unknown optimizer 'nosuch'"),
    (lambda h, a: h["optimizer"]["args"].update(beta1=7), "beta1"),
    (lambda h, a: h["states"][0].update(name="other.weight"), "'other.weight' in the file"),
    (lambda h, a: h["states"][0].update(index=9), "parameter #9"),
    (lambda h, a: a.update(state0_1=np.zeros((3, 3), np.float32)), "float32\\(3, 3\\) in the file"),
    (lambda h, a: a.pop("state0_0"), "'state0_0' is missing"),
    (lambda h, a: h["states"][0].update(structure=["a"]), "layout"),
    (lambda h, a: h.pop("optimizer"), "malformed"),
])
def test_well_formed_file_that_does_not_fit_raises(tmp_path, edit, words):
    w, b, t = _adam_pair(tmp_path)
    good = str(tmp_path / "good.states")
    t.save_states(good)
    with np.load(good, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    header = json.loads(arrays.pop("__header__").tobytes())
    edit(header, arrays)
    bad = str(tmp_path / "edited.states")
    _write_states(bad, header, arrays)
    before_opt = t.optimizer
    with pytest.raises(TrainerError, match=words):
        t.load_states(bad)
    assert t.optimizer is before_opt


def test_load_states_needs_initialized_parameters(tmp_path):
    w, b, t = _adam_pair(tmp_path)
    fname = str(tmp_path / "s.states")
    t.save_states(fname)
    p = Parameter("weight", shape=(2, 0), allow_deferred_init=True)
    p.initialize()
    t2 = Trainer({"fc.weight": p, "fc.bias": _param("bias", [0.0, 0.0])}, "adam")
    with pytest.raises(TrainerError, match="'fc.weight' is not initialized"):
        t2.load_states(fname)


def test_save_states_of_an_unregistered_optimizer_raises(tmp_path):
    class Unregistered(opt.SGD):
        pass
    t = Trainer([_param("weight", [1.0])], Unregistered())
    with pytest.raises(TrainerError, match="Unregistered is not registered"):
        t.save_states(str(tmp_path / "x.states"))
    assert not os.listdir(tmp_path)


@pytest.mark.cuda
def test_step_on_a_gpu_parameter_in_the_simulator():
    w_gpu = _param("weight", [1.0, -1.0, 2.0], device=nbdl.gpu(0))
    w_cpu = _param("weight", [1.0, -1.0, 2.0])
    trainers = [Trainer([p], "rmsprop", {"learning_rate": 0.1, "centered": True})
                for p in (w_gpu, w_cpu)]
    for p, t in zip((w_gpu, w_cpu), trainers):
        _set_grad(p, [0.5, -2.0, 1.0])
        t.step(1)
    assert w_gpu.data().context == nbdl.gpu(0)
    np.testing.assert_allclose(w_gpu.data().asnumpy(), w_cpu.data().asnumpy(), rtol=1e-6)


def test_plain_callable_scheduler_trains_but_cannot_be_saved(tmp_path):
    w = _param("weight", [0.0])
    t = Trainer([w], "sgd", {"lr_scheduler": lambda n: 1.0 / (n + 1)})
    for _ in range(2):
        _set_grad(w, [1.0])
        t.step(1)
    np.testing.assert_allclose(w.data().asnumpy(), [-(1 / 2 + 1 / 3)])
    with pytest.raises(TrainerError, match="not an LRScheduler"):
        t.save_states(str(tmp_path / "s.states"))
