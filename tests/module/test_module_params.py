"""Parameters, checkpoints and optimizer states of a Module."""
import numpy as np
import pytest

import nbdl
from nbdl.io import NDArrayIter

from conftest import as_nd, as_np, init_params, mlp, np_forward

BS = 16


def _bound(**kw):
    mod = nbdl.mod.Module(mlp(), **kw)
    mod.bind(data_shapes=[("data", (BS, 4))], label_shapes=[("softmax_label", (BS,))])
    return mod


def test_get_set_params_round_trip(data):
    x, _ = data
    params = init_params()
    mod = _bound()
    mod.init_params()                                    # Uniform(0.01)
    first = as_np(mod.get_params()[0])
    assert set(first) == set(params) and all(np.abs(v).max() <= 0.01 for v in first.values())
    mod.set_params(as_nd(params), {})
    got_arg, got_aux = mod.get_params()
    assert got_aux == {}
    for k, v in params.items():
        np.testing.assert_array_equal(got_arg[k].asnumpy(), v)
    mod.forward(nbdl.io.DataBatch([nbdl.nd.array(x[:BS])]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), np_forward(params, x[:BS]),
                               rtol=1e-5, atol=1e-6)
    other = _bound()
    other.set_params(*mod.get_params())
    for k, v in params.items():
        np.testing.assert_array_equal(other.get_params()[0][k].asnumpy(), v)


def test_set_params_missing_and_extra():
    params = init_params()
    mod = _bound()
    partial = as_nd({k: v for k, v in params.items() if k != "fc2_bias"})
    with pytest.raises(RuntimeError, match="fc2_bias"):      # MXNet's exception class
        mod.set_params(partial, {})
    mod.init_params(arg_params=partial, allow_missing=True)    # the initializer fills it
    np.testing.assert_array_equal(mod.get_params()[0]["fc2_bias"].asnumpy(), np.zeros(2))
    extra = dict(as_nd(params), unknown=nbdl.nd.zeros((3,)))
    with pytest.raises(nbdl.BindError, match="unknown"):
        mod.set_params(extra, {}, allow_missing=True)
    mod.set_params(extra, {}, allow_missing=True, allow_extra=True)
    bad = dict(as_nd(params), fc1_weight=nbdl.nd.zeros((2, 2)))
    with pytest.raises(nbdl.ShapeError, match="fc1_weight"):
        mod.set_params(bad, {})
    with pytest.warns(UserWarning, match="already initialized"):
        mod.init_params()


def test_save_and_load_params(tmp_path):
    params = init_params()
    mod = _bound()
    mod.init_params(arg_params=as_nd(params))
    fname = str(tmp_path / "m.params")
    mod.save_params(fname)
    loaded = nbdl.nd.load(fname)
    assert sorted(loaded) == sorted(f"arg:{k}" for k in params)
    other = _bound()
    other.load_params(fname)
    for k, v in params.items():
        np.testing.assert_array_equal(other.get_params()[0][k].asnumpy(), v)
    nbdl.nd.save(fname, {"weird:fc1_weight": nbdl.nd.zeros((8, 4))})
    with pytest.raises(nbdl.ArgumentError, match="weird:fc1_weight"):
        other.load_params(fname)


def _fit(mod, x, y, epochs, begin=0, **kw):
    mod.fit(NDArrayIter(x, y, batch_size=BS), num_epoch=epochs, begin_epoch=begin,
            optimizer="sgd", optimizer_params={"learning_rate": 0.2, "momentum": 0.9}, **kw)


@pytest.mark.filterwarnings("ignore:Parameters already initialized")
def test_checkpoint_resume_equals_uninterrupted_training(data, tmp_path):
    x, y = data
    params = init_params()
    whole = nbdl.mod.Module(mlp())
    _fit(whole, x, y, 4, arg_params=as_nd(params))
    prefix = str(tmp_path / "ck")
    first = nbdl.mod.Module(mlp())
    _fit(first, x, y, 2, arg_params=as_nd(params))
    first.save_checkpoint(prefix, 2, save_optimizer_states=True)
    sym, arg, aux = nbdl.model.load_checkpoint(prefix, 2)       # MXNet's file pair
    assert sym.list_arguments() == mlp().list_arguments() and aux == {}
    resumed = nbdl.mod.Module.load(prefix, 2, load_optimizer_states=True)
    _fit(resumed, x, y, 4, begin=2)
    no_states = nbdl.mod.Module.load(prefix, 2)
    _fit(no_states, x, y, 4, begin=2)
    want = as_np(whole.get_params()[0])
    got = as_np(resumed.get_params()[0])
    lost = as_np(no_states.get_params()[0])
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert max(np.abs(lost[k] - want[k]).max() for k in want) > 1e-3   # momentum matters


def test_optimizer_state_file_errors(tmp_path):
    mod = _bound()
    mod.init_params(arg_params=as_nd(init_params()))
    with pytest.raises(nbdl.mod.ModuleError, match="init_optimizer"):
        mod.save_optimizer_states(str(tmp_path / "s"))
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1, "momentum": 0.5})
    bad = tmp_path / "bad.states"
    bad.write_bytes(b"not an archive")
    with pytest.raises(nbdl.NbdlError, match="bad.states"):
        mod.load_optimizer_states(str(bad))


def test_fixed_params_are_not_updated(data):
    x, y = data
    params = init_params()
    mod = nbdl.mod.Module(mlp(), fixed_param_names=["fc1_weight"])
    mod.fit(NDArrayIter(x, y, batch_size=BS), num_epoch=2, arg_params=as_nd(params),
            optimizer_params={"learning_rate": 0.5})
    got = as_np(mod.get_params()[0])
    np.testing.assert_array_equal(got["fc1_weight"], params["fc1_weight"])
    assert np.abs(got["fc2_weight"] - params["fc2_weight"]).max() > 1e-3
    assert np.abs(got["fc1_bias"] - params["fc1_bias"]).max() > 1e-4
    assert "fc1_weight" not in mod._exec_group.executor.grad_dict
    with pytest.raises(nbdl.ArgumentError, match="fixed_param_names"):
        nbdl.mod.Module(mlp(), fixed_param_names=["nope"])


def test_init_optimizer_rescale_grad_and_instances():
    mod = _bound()
    mod.init_params(arg_params=as_nd(init_params()))
    mod.init_optimizer(optimizer="sgd", optimizer_params=(("learning_rate", 0.1),))
    assert mod._optimizer.rescale_grad == pytest.approx(1 / BS)
    assert mod._optimizer.idx2name == dict(enumerate(mod._param_names))
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1, "rescale_grad": 0.5},
                       force_init=True)
    assert mod._optimizer.rescale_grad == 0.5
    with pytest.warns(UserWarning, match="rescale_grad"):
        mod.init_optimizer(optimizer=nbdl.optimizer.SGD(learning_rate=0.1), force_init=True)
    with pytest.raises(nbdl.ArgumentError, match="unknown kvstore 'byteps'.*dist_sync"):
        mod.init_optimizer(kvstore="byteps", force_init=True)     # dist_sync: tests/distributed
    with pytest.raises(nbdl.ArgumentError, match="optimizer must be"):
        mod.init_optimizer(optimizer=3, force_init=True)


def test_kvstore_object_trains_like_no_store(data):
    x, y = data
    params = init_params()
    results = []
    for kv in (None, nbdl.kv.create("local")):
        mod = nbdl.mod.Module(mlp())
        mod.fit(NDArrayIter(x, y, batch_size=BS), num_epoch=2, arg_params=as_nd(params),
                kvstore=kv, optimizer_params={"learning_rate": 0.2, "momentum": 0.9})
        results.append(as_np(mod.get_params()[0]))
    assert mod._update_on_kvstore
    for k in params:
        np.testing.assert_allclose(results[1][k], results[0][k], rtol=1e-5, atol=1e-6)


def test_force_rebind_keeps_trained_params(data):
    x, y = data
    mod = nbdl.mod.Module(mlp())
    mod.fit(NDArrayIter(x, y, batch_size=BS), num_epoch=1, arg_params=as_nd(init_params()),
            optimizer_params={"learning_rate": 0.5})
    batch = nbdl.io.DataBatch([nbdl.nd.array(x[:BS])], [nbdl.nd.array(y[:BS])])
    mod.forward_backward(batch)
    mod.update()                                  # the host copies are stale now
    trained = {k: v.asnumpy() for k, v in mod._exec_group.executor.arg_dict.items()
               if k in mod._param_names}
    mod.bind([("data", (4, 4))], [("softmax_label", (4,))], force_rebind=True)
    for k, v in as_np(mod.get_params()[0]).items():
        np.testing.assert_array_equal(v, trained[k])
    np.testing.assert_array_equal(mod._exec_group.executor.arg_dict["fc1_weight"].asnumpy(),
                                  trained["fc1_weight"])
