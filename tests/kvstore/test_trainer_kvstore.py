"""gluon.Trainer with a KVStore instance: updates in the store (MXNet 1.x's
update_on_kvstore) and gradient sums through the store, against the
trainer's own path and a numpy reference."""
import numpy as np
import pytest

import nbdl
from nbdl.gluon.parameter import Parameter
from nbdl.gluon.trainer import Trainer, TrainerError

DEVICES = [nbdl.cpu(0), nbdl.cpu(1)]


def _param(name, value, devices=DEVICES):
    value = np.asarray(value, dtype=np.float32)
    p = Parameter(name, shape=value.shape)
    p.initialize(init=nbdl.initializer.Constant(value), device=devices)
    return p


def _set_grads(p, values):
    for g, v in zip(p.list_grad(), values):
        g[...] = np.asarray(v, dtype=np.float32)
        g._fresh_grad = True


GRADS = [([[1.0, -2.0], [0.5, 0.0]], [[3.0, 1.0], [-1.0, 2.0]]),
         ([[0.2, 0.4], [0.6, 0.8]], [[-0.2, 0.1], [0.0, 1.0]])]


def _train(trainer, p, batch_size=4):
    for per_device in GRADS:
        _set_grads(p, per_device)
        trainer.step(batch_size)
    return [d.asnumpy() for d in p.list_data()]


def _reference(w0, lr=0.1, momentum=0.9, batch_size=4):
    w, mom = np.array(w0, np.float64), np.zeros((2, 2))
    for per_device in GRADS:
        g = (np.array(per_device[0]) + np.array(per_device[1])) / batch_size
        mom = momentum * mom - lr * g
        w = w + mom
    return w


W0 = [[1.0, 2.0], [3.0, 4.0]]
SGD = {"learning_rate": 0.1, "momentum": 0.9}


def test_update_on_kvstore_matches_the_summed_gradient_reference():
    p = _param("w", W0)
    kv = nbdl.kv.create("device")
    kv._set_updater(lambda key, recv, stored: None)       # replaced by the trainer's optimizer
    t = Trainer({"w": p}, "sgd", SGD, kvstore=kv)
    data = _train(t, p)
    for d in data:
        np.testing.assert_allclose(d, _reference(W0), rtol=1e-6)
    assert kv._updater is not None and kv._updater.optimizer is t.optimizer
    assert 0 in kv._updater.states and not t._states      # the states live in the store
    out = nbdl.nd.zeros((2, 2))
    kv.pull(0, out=out)
    np.testing.assert_allclose(out.asnumpy(), data[0])
    with pytest.raises(TrainerError, match="allreduce_grads: the parameters are updated in the "
                                           "kvstore"):
        t.allreduce_grads()
    with pytest.raises(TrainerError, match="update_on_kvstore=False"):
        t.update(4)


def test_kvstore_sums_gradients_when_the_trainer_updates():
    p_kv, p_plain = _param("w", W0), _param("w", W0)
    kv = nbdl.kv.create("local")
    t_kv = Trainer({"w": p_kv}, "sgd", SGD, kvstore=kv, update_on_kvstore=False)
    t_plain = Trainer({"w": p_plain}, "sgd", SGD, kvstore="device")
    for a, b in zip(_train(t_kv, p_kv), _train(t_plain, p_plain)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
        np.testing.assert_allclose(a, _reference(W0), rtol=1e-6)
    assert kv._updater is None and 0 in t_kv._states
    # allreduce_grads + update, as a user would call them
    _set_grads(p_kv, GRADS[0])
    t_kv.allreduce_grads()
    total = np.array(GRADS[0][0]) + np.array(GRADS[0][1])
    for g in p_kv.list_grad():
        np.testing.assert_allclose(g.asnumpy(), total, rtol=1e-6)
    t_kv.update(4)


def test_save_and_load_states_go_through_the_kvstore(tmp_path):
    p = _param("w", W0)
    t = Trainer({"w": p}, "adam", {"learning_rate": 0.05}, kvstore=nbdl.kv.create("device"))
    _train(t, p)
    fname = str(tmp_path / "t.states")
    t.save_states(fname)
    p2 = _param("w", p.data().asnumpy())
    t2 = Trainer({"w": p2}, "sgd", kvstore=nbdl.kv.create("device"))
    t2.load_states(fname)
    assert type(t2.optimizer).__name__ == "Adam" and t2.optimizer.num_update == 2
    assert t2.optimizer.param_dict[0] is p2
    for tr, q in ((t, p), (t2, p2)):
        _set_grads(q, GRADS[1])
        tr.step(4)
    for a, b in zip(p.list_data(), p2.list_data()):
        np.testing.assert_allclose(b.asnumpy(), a.asnumpy(), rtol=1e-6)


def test_compression_params_go_to_the_kvstore_and_bad_kvstores_are_refused():
    p = _param("w", W0, devices=[nbdl.cpu(0)])
    kv = nbdl.kv.create("device")
    Trainer({"w": p}, "sgd", kvstore=kv, compression_params={"type": "2bit", "threshold": 1})
    assert kv._compression.threshold == 1.0
    with pytest.raises(nbdl.NbdlError, match="not supported for kvstore type 'local'"):
        Trainer({"w": p}, "sgd", kvstore=nbdl.kv.create("local"),
                compression_params={"type": "2bit"})
    with pytest.raises(TrainerError, match="kvstore='byteps' is not supported.*KVStore from "
                                           "nbdl.kv.create"):
        Trainer({"w": p}, "sgd", kvstore="byteps")


# -- MXNet 1.x's trainer internals and the registered 'teststore' -----------------
def test_teststore_sums_and_cannot_update():
    kv = nbdl.kv.create("TestStore")
    assert isinstance(kv, nbdl.kv.TestStore) and kv.type == "teststore"
    assert kv.is_capable("optimizer") is False and kv.rank == 0 and kv.num_workers == 1
    with pytest.raises(nbdl.kv.KVStoreError, match="unknown capability 'sparse'"):
        kv.is_capable("sparse")
    a, b = nbdl.nd.array([1.0, 2.0]), nbdl.nd.array([3.0, 5.0], device=nbdl.cpu(1))
    kv.pushpull(0, [a, b])
    for x in (a, b):
        np.testing.assert_array_equal(x.asnumpy(), [4.0, 7.0])
    out = nbdl.nd.zeros((2,))
    kv.broadcast(0, nbdl.nd.array([9.0, 8.0]), out=out)
    np.testing.assert_array_equal(out.asnumpy(), [9.0, 8.0])
    with pytest.raises(nbdl.kv.KVStoreError, match=r"shape \(2,\) but an output has shape \(3,\)"):
        kv.pushpull(0, [a], out=nbdl.nd.zeros((3,)))


def test_trainer_with_a_store_that_cannot_update():
    p = _param("w", W0)
    kv = nbdl.kv.create("teststore")
    t = Trainer([p], "sgd", SGD, kvstore=kv)
    assert t._kvstore is None and t._update_on_kvstore is None
    data = _train(t, p)
    assert t._kvstore is kv and t._update_on_kvstore is False
    for d in data:
        np.testing.assert_allclose(d, _reference(W0), rtol=1e-6)
    bad = Trainer([p], "sgd", kvstore=kv, update_on_kvstore=True)
    with pytest.raises(ValueError, match="cannot run an optimizer; set update_on_kvstore=False"):
        bad._init_kvstore()


def test_loading_values_resets_an_updating_kvstore():
    p = _param("w", W0)
    t = Trainer({"w": p}, "sgd", {"learning_rate": 0.1}, kvstore="local")
    assert p._trainer is t and t._params_to_init == [p]
    _set_grads(p, GRADS[0])
    t.step(1)
    first = t._kvstore
    assert first.type == "local" and t._update_on_kvstore and t._params_to_init == []
    p.set_data(nbdl.nd.zeros((2, 2)))
    assert t._kvstore is None and t._kv_initialized is False and t._params_to_init == [p]
    _set_grads(p, GRADS[0])
    t.step(1)
    assert t._kvstore is not first             # a new store, initialized from the loaded zeros
    expected = -0.1 * (np.array(GRADS[0][0]) + np.array(GRADS[0][1]))
    for d in p.list_data():
        np.testing.assert_allclose(d.asnumpy(), expected, rtol=1e-6)
    p._set_trainer(None)
    assert p._trainer is None


def test_trainer_save_load_states_with_several_devices_fills_every_updater(tmp_path):
    p = _param("w", W0)
    t = Trainer([p], "sgd", SGD, update_on_kvstore=False)
    _train(t, p)
    fname = str(tmp_path / "s.states")
    t.save_states(fname)
    p2 = _param("w", p.data().asnumpy())
    t2 = Trainer([p2], "sgd", update_on_kvstore=False)
    t2.load_states(fname)
    assert len(t2._updaters) == 2
    for k, upd in enumerate(t2._updaters):
        assert upd.optimizer is t2.optimizer
        assert upd.states[0].device == p2.list_data()[k].device
        np.testing.assert_array_equal(upd.states[0].asnumpy(), t._updaters[k].states[0].asnumpy())
    assert t2._updaters[0].states[0] is not t2._updaters[1].states[0]
