"""Binding a Module: gradient requirements, input gradients, contexts, state
inputs, monitors, and the errors for calls out of order or bad shapes."""
import numpy as np
import pytest

import nbdl
from nbdl.io import DataBatch

from conftest import as_nd, init_params, mlp, np_forward

BS = 4


def _batch(x, y=None):
    return DataBatch([nbdl.nd.array(x)], None if y is None else [nbdl.nd.array(y)])


def _module(inputs_need_grad=False, grad_req="write", for_training=True, **kw):
    mod = nbdl.mod.Module(mlp(), **kw)
    mod.bind(data_shapes=[("data", (BS, 4))], label_shapes=[("softmax_label", (BS,))],
             for_training=for_training, inputs_need_grad=inputs_need_grad, grad_req=grad_req)
    mod.init_params(arg_params=as_nd(init_params()))
    return mod


def _analytic_data_grad(p, x, y):
    h_pre = x @ p["fc1_weight"].T + p["fc1_bias"]
    dz = np_forward(p, x)
    dz[np.arange(len(y)), y.astype(int)] -= 1               # SoftmaxOutput: p - onehot
    dh = (dz @ p["fc2_weight"]) * (h_pre > 0)
    return dh @ p["fc1_weight"], dz


def test_inputs_need_grad_matches_the_analytic_gradient(data):
    x, y = data
    x, y = x[:BS], y[:BS]
    p = init_params()
    mod = _module(inputs_need_grad=True)
    mod.forward_backward(_batch(x, y))
    (g,) = mod.get_input_grads()
    want, dz = _analytic_data_grad(p, x, y)
    np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-4, atol=1e-6)
    assert mod.get_input_grads(merge_multi_context=False)[0][0] is g
    grads = mod._exec_group.executor.grad_dict
    np.testing.assert_allclose(grads["fc2_bias"].asnumpy(), dz.sum(0), rtol=1e-5, atol=1e-6)
    plain = _module()
    with pytest.raises(nbdl.mod.ModuleError, match="inputs_need_grad"):
        plain.get_input_grads()
    assert "data" not in plain._exec_group.executor.grad_dict


def test_inputs_need_grad_with_null_req_gives_none(data):
    # MXNet's executor group keeps an entry per data input: None when its
    # grad_req is 'null' (its RNN consistency checks read get_input_grads()[0])
    x, y = data
    mod = _module(inputs_need_grad=True, grad_req={"data": "null", "fc1_weight": "write",
                                                   "fc1_bias": "write", "fc2_weight": "write",
                                                   "fc2_bias": "write", "softmax_label": "null"})
    mod.forward_backward(_batch(x[:BS], y[:BS]))
    assert mod.get_input_grads() == [None]
    assert mod.get_input_grads(merge_multi_context=False) == [[None]]


def test_grad_req_add_accumulates_and_null_skips(data):
    x, y = data
    b = _batch(x[:BS], y[:BS])
    once = _module()
    once.forward_backward(b)
    twice = _module(grad_req="add")
    twice.forward_backward(b)
    twice.forward_backward(b)
    g1, g2 = once._exec_group.executor.grad_dict, twice._exec_group.executor.grad_dict
    for k in ("fc1_weight", "fc2_bias"):
        np.testing.assert_allclose(g2[k].asnumpy(), 2 * g1[k].asnumpy(), rtol=1e-5, atol=1e-6)
    some = _module(grad_req={"fc1_weight": "null"})
    assert sorted(some._exec_group.executor.grad_dict) == ["fc1_bias", "fc2_bias", "fc2_weight"]
    with pytest.raises(nbdl.ArgumentError, match="grad_req"):
        _module(grad_req="sometimes")
    with pytest.raises(nbdl.ArgumentError, match="grad_req"):
        _module(grad_req={"fc1_weight": "sometimes"})
    # names that are not arguments are ignored, as MXNet's
    other = _module(grad_req={"nope": "write"})
    assert sorted(other._exec_group.executor.grad_dict) == sorted(once._exec_group.executor.grad_dict)


def test_for_training_false_binds_without_gradients(data):
    x, _ = data
    mod = _module(for_training=False)
    assert mod._exec_group.executor.grad_dict == {} and not mod.for_training
    mod.forward(_batch(x[:BS]))
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(),
                               np_forward(init_params(), x[:BS]), rtol=1e-5, atol=1e-6)
    with pytest.raises(nbdl.mod.ModuleError, match="for_training"):
        mod.backward()
    with pytest.raises(nbdl.ArgumentError, match="inputs_need_grad"):
        nbdl.mod.Module(mlp()).bind([("data", (BS, 4))], for_training=False,
                                    inputs_need_grad=True)


def test_calls_out_of_order_raise_module_errors(data):
    x, y = data
    mod = nbdl.mod.Module(mlp())
    for call in (lambda: mod.forward(_batch(x[:BS])), lambda: mod.data_shapes,
                 lambda: mod.init_params(), lambda: mod.get_outputs()):
        with pytest.raises(nbdl.mod.ModuleError, match="bind"):
            call()
    with pytest.raises(nbdl.mod.ModuleError, match="not initialized"):
        mod.get_params()
    mod.bind(data_shapes=[("data", (BS, 4))], label_shapes=[("softmax_label", (BS,))])
    with pytest.raises(nbdl.mod.ModuleError, match="init_params"):
        mod.init_optimizer()
    with pytest.raises(nbdl.mod.ModuleError, match="init_params"):
        mod.forward(_batch(x[:BS]))
    mod.init_params()
    mod.forward_backward(_batch(x[:BS], y[:BS]))
    with pytest.raises(nbdl.mod.ModuleError, match="init_optimizer"):
        mod.update()


def test_wrong_data_shapes_name_the_input_and_shapes(data):
    x, y = data
    mod = _module()
    with pytest.raises(nbdl.ShapeError) as e:
        mod.forward(_batch(np.zeros((BS, 5), np.float32), y[:BS]))
    msg = str(e.value)
    assert "(4, 4)" in msg and "(4, 5)" in msg and "'data'" in msg and "fc1_weight" in msg
    # the module still works with its own shapes afterwards
    mod.forward(_batch(x[:BS], y[:BS]))
    with pytest.raises(nbdl.ArgumentError, match="data_names"):
        nbdl.mod.Module(mlp()).bind(data_shapes=[("x", (BS, 4))])
    with pytest.raises(nbdl.ArgumentError, match="2 data arrays"):
        mod.forward(DataBatch([nbdl.nd.array(x[:BS])] * 2))
    with pytest.raises(nbdl.ArgumentError, match="shape"):
        nbdl.mod.Module(mlp()).bind(data_shapes=[("data", "big")])
    with pytest.raises(nbdl.ShapeError, match="'data'"):
        nbdl.mod.Module(mlp()).bind(data_shapes=[("data", (BS, 4, 3, 2, 1, 9))],
                                    label_shapes=[("softmax_label", (7, 7))])
    with pytest.raises(nbdl.ArgumentError, match="data_names"):
        nbdl.mod.Module(mlp(), data_names=["image"])


def test_context_arguments():
    nbdl.mod.Module(mlp(), context=[nbdl.cpu()])
    with pytest.raises(nbdl.ArgumentError, match="more than once"):
        nbdl.mod.Module(mlp(), context=[nbdl.cpu(0), nbdl.cpu(0)])
    with pytest.raises(nbdl.ArgumentError, match="work_load_list"):
        nbdl.mod.Module(mlp(), work_load_list=[1, 1])
    with pytest.raises(nbdl.ArgumentError, match="work_load_list"):
        nbdl.mod.Module(mlp(), context=[nbdl.cpu(0), nbdl.cpu(1)], work_load_list=[1, 0])
    with pytest.raises(nbdl.ArgumentError, match="context"):
        nbdl.mod.Module(mlp(), context=[])
    with pytest.raises(nbdl.ArgumentError, match="group2ctxs"):
        nbdl.mod.Module(mlp(), group2ctxs={"dev1": nbdl.cpu(3)})


def test_state_names(data):
    x, _ = data
    d, h = nbdl.sym.Variable("data"), nbdl.sym.Variable("h")
    out = nbdl.sym.FullyConnected(d, num_hidden=3, name="fc") + h
    mod = nbdl.mod.Module(out, label_names=None, state_names=["h"])
    mod.bind(data_shapes=[("data", (BS, 4))], for_training=False)
    w = np.random.RandomState(0).randn(3, 4).astype(np.float32)
    mod.init_params(arg_params={"fc_weight": nbdl.nd.array(w), "fc_bias": nbdl.nd.zeros((3,))})
    assert mod._param_names == ["fc_weight", "fc_bias"]
    mod.set_states(value=2.0)
    mod.forward(_batch(x[:BS]))
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), x[:BS] @ w.T + 2, rtol=1e-5)
    mod.set_states(states=[[nbdl.nd.ones((BS, 3)) * 5]])
    np.testing.assert_array_equal(mod.get_states()[0].asnumpy(), np.full((BS, 3), 5.0))
    with pytest.raises(nbdl.ArgumentError, match="exactly one"):
        mod.set_states()


def test_install_monitor_sees_every_op(data):
    x, y = data
    seen = []

    class Monitor:
        def install(self, exe):
            exe.set_monitor_callback(lambda name, arr: seen.append(name))
    mod = _module()
    mod.install_monitor(Monitor())
    mod.forward(_batch(x[:BS], y[:BS]))
    assert "fc1_output" in seen and "softmax_output" in seen
    seen.clear()
    mod.forward(_batch(x[:2], y[:2]))            # a reshape keeps the monitor
    assert "fc2_output" in seen


def test_base_module_fit_drives_any_subclass_methods():
    calls = []
    mod = nbdl.mod.BaseModule()
    for name in ("bind", "init_params", "init_optimizer", "forward", "backward", "update",
                 "update_metric"):
        setattr(mod, name, lambda *a, _n=name, **k: calls.append(_n))
    mod.get_params = lambda: ({}, {})

    class Data:
        provide_data = provide_label = None

        def reset(self):
            calls.append("reset")

        def __iter__(self):
            return iter([DataBatch([nbdl.nd.zeros((1,))])] * 2)
    mod.fit(Data(), num_epoch=1)
    assert calls == ["bind", "init_params", "init_optimizer", "forward", "backward", "update",
                     "update_metric", "forward", "backward", "update", "update_metric",
                     "init_params", "reset"]
    with pytest.raises(nbdl.mod.ModuleError, match="does not define get_outputs"):
        nbdl.mod.BaseModule().get_outputs()


def test_a_module_without_parameters_updates_nothing():
    data = nbdl.sym.Variable("data")
    mod = nbdl.mod.Module(nbdl.sym.Dropout(data, p=0.5), label_names=None)
    mod.bind(data_shapes=[("data", (3, 5))])
    mod.init_params()
    mod.init_optimizer()
    mod.forward_backward(DataBatch([nbdl.nd.ones((3, 5))]))
    mod.update()
    assert mod.get_outputs()[0].shape == (3, 5)
