"""Modules with nbdl.callback's callbacks, inference-only binding and
shared_module."""
import logging
import os

import numpy as np

import nbdl
from nbdl.io import NDArrayIter

from conftest import as_nd, as_np, init_params, mlp, np_forward

BS = 16


def test_fit_with_speedometer_and_checkpoint_callbacks(data, tmp_path, caplog):
    x, y = data
    mod = nbdl.mod.Module(mlp())
    prefix = str(tmp_path / "cb")
    with caplog.at_level(logging.INFO):
        mod.fit(NDArrayIter(x, y, batch_size=BS), num_epoch=2, arg_params=as_nd(init_params()),
                batch_end_callback=nbdl.callback.Speedometer(BS, 3),
                epoch_end_callback=[nbdl.callback.do_checkpoint(prefix),
                                    nbdl.callback.module_checkpoint(mod, prefix + "-m",
                                                                    save_optimizer_states=True)])
    assert "samples/sec" in caplog.text
    assert os.path.exists(prefix + "-0002.params") and os.path.exists(prefix + "-m-0002.states")
    _, arg, _ = nbdl.model.load_checkpoint(prefix, 2)
    for k, v in as_np(mod.get_params()[0]).items():
        np.testing.assert_array_equal(arg[k].asnumpy(), v)


def test_inference_binding_without_label_shapes(data):
    x, y = data
    params = init_params()
    mod = nbdl.mod.Module(mlp())
    mod.bind(data_shapes=[("data", (BS, 4))], for_training=False)
    assert mod.label_shapes is None
    mod.set_params(as_nd(params), {})
    out = mod.predict(NDArrayIter(x, y, batch_size=BS))      # the labels are not bound
    np.testing.assert_allclose(out.asnumpy(), np_forward(params, x), rtol=1e-5, atol=1e-6)
    acc = dict(mod.score(NDArrayIter(x[:96], y[:96], batch_size=BS), "acc"))["accuracy"]
    assert acc == np.mean(np_forward(params, x[:96]).argmax(1) == y[:96])
    two = nbdl.mod.Module(mlp(), context=[nbdl.cpu(0), nbdl.cpu(1)])
    two.bind(data_shapes=[("data", (BS, 4))], for_training=False)
    two.set_params(as_nd(params), {})
    assert dict(two.score(NDArrayIter(x[:96], y[:96], batch_size=BS), "acc"))["accuracy"] == acc


def test_shared_module_uses_the_same_arrays_and_optimizer(data):
    x, y = data
    a = nbdl.mod.Module(mlp())
    a.bind(data_shapes=[("data", (BS, 4))], label_shapes=[("softmax_label", (BS,))])
    a.init_params(arg_params=as_nd(init_params()))
    a.init_optimizer(optimizer_params={"learning_rate": 0.1})
    b = nbdl.mod.Module(mlp())
    b.bind(data_shapes=[("data", (4, 4))], label_shapes=[("softmax_label", (4,))],
           shared_module=a)
    assert b.params_initialized and b.optimizer_initialized and b._updater is a._updater
    ea, eb = a._exec_group.executor, b._exec_group.executor
    assert ea.arg_dict["fc1_weight"] is eb.arg_dict["fc1_weight"]
    before = ea.arg_dict["fc2_bias"].asnumpy().copy()
    b.forward_backward(nbdl.io.DataBatch([nbdl.nd.array(x[:4])], [nbdl.nd.array(y[:4])]))
    b.update()
    assert np.abs(ea.arg_dict["fc2_bias"].asnumpy() - before).max() > 0
