"""Eager autograd against numpy references and against the executor."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.testing import assert_almost_equal

nd = nbdl.nd


def test_simple_chain_matches_numpy():
    x_np = np.array([[1.0, -2.0, 3.0]], np.float32)
    x = nd.array(x_np)
    x.attach_grad()
    with autograd.record():
        y = nd.relu(x) * 2 + nd.exp(x)
        z = nd.sum(y)
    z.backward()
    expected = (x_np > 0) * 2 + np.exp(x_np)
    assert_almost_equal(x.grad.asnumpy(), expected, rtol=1e-6)
    assert x.grad._fresh_grad


def test_head_gradient_and_reuse_of_a_variable():
    a_np = np.random.RandomState(0).rand(3, 4).astype(np.float32)
    a = nd.array(a_np)
    a.attach_grad()
    with autograd.record():
        y = a * a + a          # a used three times
    g = np.random.RandomState(1).rand(3, 4).astype(np.float32)
    y.backward(nd.array(g))
    assert_almost_equal(a.grad.asnumpy(), g * (2 * a_np + 1), rtol=1e-6)


def test_grad_req_add_accumulates_and_write_overwrites():
    x = nd.array([1.0, 2.0])
    x.attach_grad(grad_req="add")
    for _ in range(2):
        with autograd.record():
            y = x * 3
        y.backward()
    assert_almost_equal(x.grad.asnumpy(), np.array([6.0, 6.0], np.float32))
    x.attach_grad()
    for _ in range(2):
        with autograd.record():
            y = x * 3
        y.backward()
    assert_almost_equal(x.grad.asnumpy(), np.array([3.0, 3.0], np.float32))


def test_fully_connected_softmax_matches_executor():
    rng = np.random.RandomState(0)
    x_np = rng.rand(4, 5).astype(np.float32)
    w_np = rng.rand(3, 5).astype(np.float32)
    b_np = rng.rand(3).astype(np.float32)
    x, w, b = nd.array(x_np), nd.array(w_np), nd.array(b_np)
    w.attach_grad()
    b.attach_grad()
    with autograd.record():
        out = nd.log_softmax(nd.FullyConnected(x, w, b, num_hidden=3))
        loss = nd.sum(out * nd.one_hot(nd.array([0, 1, 2, 1]), depth=3))
    loss.backward()
    sym = nbdl.sym.sum(nbdl.sym.log_softmax(nbdl.sym.FullyConnected(
        nbdl.sym.var("x"), num_hidden=3, name="fc")) * nbdl.sym.var("oh"))
    ex = sym.simple_bind(nbdl.cpu(), x=(4, 5), oh=(4, 3))
    ex.copy_params_from({"x": x_np, "fc_weight": w_np, "fc_bias": b_np,
                         "oh": np.eye(3, dtype=np.float32)[[0, 1, 2, 1]]})
    ex.forward(is_train=True)
    ex.backward()
    assert_almost_equal(w.grad.asnumpy(), ex.grad_dict["fc_weight"].asnumpy(), rtol=1e-5, atol=1e-6)
    assert_almost_equal(b.grad.asnumpy(), ex.grad_dict["fc_bias"].asnumpy(), rtol=1e-5, atol=1e-6)


def test_pause_and_scopes():
    x = nd.array([1.0])
    x.attach_grad()
    assert not autograd.is_recording()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
            c = x * 5            # not taped
        y = x * 2 + c
        with autograd.predict_mode():
            assert not autograd.is_training()
    y.backward()
    assert_almost_equal(x.grad.asnumpy(), np.array([2.0], np.float32))
    assert autograd.set_training(True) is False
    assert autograd.set_training(False) is True


def test_dropout_follows_record_train_mode():
    nbdl.random.seed(0)
    x = nd.ones((1000,))
    with autograd.record(train_mode=False):
        y = nd.Dropout(x, p=0.5)
    assert_almost_equal(y.asnumpy(), np.ones(1000, np.float32))
    with autograd.record():
        y = nd.Dropout(x, p=0.5)
    kept = (y.asnumpy() != 0).mean()
    assert 0.4 < kept < 0.6


def test_backward_twice_needs_retain_graph():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = nd.sum(x * x)
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(nbdl.NbdlError, match="retain_graph"):
        y.backward()


def test_freed_intermediate_is_a_constant_in_a_new_recording():
    # MXNet 1.x clears the history of the arrays a backward frees: an
    # intermediate used again is a constant of the new graph
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x * 3
        z = nd.sum(y * y)
    z.backward()
    assert x.grad.asnumpy().tolist() == [18.0, 36.0]
    with autograd.record():
        w = nd.sum(y * x)
    w.backward()
    assert x.grad.asnumpy().tolist() == [3.0, 6.0]      # y held fixed
    with pytest.raises(nbdl.NbdlError, match="retain_graph"):
        z.backward()


def test_grad_function_and_second_order():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x * x * x
        dy, = autograd.grad(y, x, create_graph=True)     # 3x^2, recorded (a list, as MXNet)
        z = nd.sum(dy)
    z.backward()
    assert_almost_equal(dy.asnumpy(), 3 * np.array([1, 4, 9], np.float32))
    assert_almost_equal(x.grad.asnumpy(), 6 * np.array([1, 2, 3], np.float32))


def test_custom_function():
    class Sigmoid(autograd.Function):
        def forward(self, x):
            y = 1 / (1 + nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            y, = self.saved_tensors
            return dy * y * (1 - y)

    x_np = np.array([-1.0, 0.0, 2.0], np.float32)
    x = nd.array(x_np)
    x.attach_grad()
    with autograd.record():
        y = Sigmoid()(x)
        z = nd.sum(y * 2)
    z.backward()
    s = 1 / (1 + np.exp(-x_np))
    assert_almost_equal(x.grad.asnumpy(), 2 * s * (1 - s), rtol=1e-5)


def test_errors():
    x = nd.array([1.0])
    with pytest.raises(nbdl.NbdlError, match="nothing to differentiate"):
        (x * 2).backward()
    with pytest.raises(nbdl.NbdlError, match="grad_req"):
        x.attach_grad(grad_req="sometimes")
    x.attach_grad()
    with autograd.record():
        y = x * 2
    with pytest.raises(nbdl.NbdlError, match="head gradient shape"):
        y.backward(nd.ones((2,)))


def test_gradient_buffer_read_by_the_tape_is_not_overwritten_early():
    # backward may compute a gradient straight into its buffer, but not when
    # a recorded op reads that buffer: here x's gradient needs w.grad's old
    # value after w's gradient is known
    x, w = nd.array([1.0, 2.0]), nd.array([3.0, 4.0])
    x.attach_grad()
    w.attach_grad()
    w.grad[:] = nd.array([5.0, 6.0])
    with autograd.record():
        a = x * w.grad
        b = a * w
    b.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), [5.0, 12.0])
    np.testing.assert_allclose(x.grad.asnumpy(), [15.0, 24.0])


def test_backward_skips_unneeded_gradients_and_writes_buffers_in_place(monkeypatch):
    from nbdl.imperative import engine
    calls = []
    run_step = engine.invoke_step

    def spy(op, raw, akey, inputs, is_train, req=None, given=None, cls=None):
        calls.append((op.name, req, given))
        return run_step(op, raw, akey, inputs, is_train, req, given, cls)
    monkeypatch.setattr(engine, "invoke_step", spy)
    rng = np.random.RandomState(0)
    x_np, w_np, b_np = rng.rand(4, 3), rng.rand(2, 3), rng.rand(2)
    g_np = rng.rand(4, 2).astype(np.float32)
    x, w, b = nd.array(x_np), nd.array(w_np), nd.array(b_np)
    w.attach_grad()
    b.attach_grad()
    buf, storage = w.grad, w.grad._data
    for data_grad in (False, False, True):
        if data_grad:
            x.attach_grad()
        calls.clear()
        with autograd.record():
            y = nd.FullyConnected(x, w, b, num_hidden=2)
        y.backward(nd.array(g_np))
        assert w.grad is buf and w.grad._data is storage
        assert_almost_equal(w.grad.asnumpy(), g_np.T @ x.asnumpy(), rtol=1e-5)
        assert_almost_equal(b.grad.asnumpy(), g_np.sum(0), rtol=1e-5)
        (name, req, given), = calls
        assert name == "_backward_FullyConnected"
        assert given[1] is w.grad and given[2] is b.grad
        if data_grad:
            assert req is None and given[0] is x.grad
            assert_almost_equal(x.grad.asnumpy(), g_np @ w.asnumpy(), rtol=1e-5)
        else:
            assert req == (0, 1, 1) and given[0] is None      # no data gradient computed


def test_grad_leaves_gradient_buffers_alone():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    x.grad[:] = 7.0
    with autograd.record():
        y = x * x
    g, = autograd.grad(y, x)
    assert g is not x.grad
    np.testing.assert_array_equal(g.asnumpy(), [2.0, 4.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [7.0, 7.0])


def test_a_dropped_recorded_result_frees_its_tape_without_the_collector():
    import gc
    import weakref
    x = nd.array([1.0, -2.0])
    x.attach_grad()
    gc.disable()
    try:
        with autograd.record():
            y = nd.relu(x) * 2
        node = weakref.ref(y._ag[0])
        first = weakref.ref(y._ag[0].inputs[0]._ag[0])
        del y
        assert node() is None and first() is None
    finally:
        gc.enable()
