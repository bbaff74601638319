"""autograd.get_symbol: a recorded history as a Symbol, and the MXNet 1.x
autograd details around it (``_fresh_grad``, ``grad``'s list, create_graph)."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.testing import assert_almost_equal

nd = nbdl.nd


def test_get_symbol_arguments_names_and_values():
    x = nd.array([1.0, -2.0, 3.0])
    x.attach_grad()
    c = nd.array([0.5, 0.5, 0.5])          # a constant: not a variable
    with autograd.record():
        y = nd.relu(x * x + 2 * x - 1) + c
    s = autograd.get_symbol(y)
    assert s.list_arguments() == ["var0", "null1"]
    assert s.list_outputs() == ["node_5_output"]
    xv = np.array([0.5, 2.0, -4.0], np.float32)
    out = s.eval(var0=nd.array(xv), null1=c)[0].asnumpy()
    assert_almost_equal(out, np.maximum(xv * xv + 2 * xv - 1, 0) + 0.5)


def test_get_symbol_counts_variables_once():
    x = nd.ones((2,))
    z = nd.ones((2,))
    x.attach_grad()
    z.attach_grad()
    with autograd.record():
        y1 = x * x + 2 * x - 1
        y2 = x * x + 2 * z - 1
    assert len(autograd.get_symbol(y1).list_arguments()) == 1
    assert autograd.get_symbol(y2).list_arguments() == ["var0", "var1"]


def test_get_symbol_of_one_output_of_several():
    x = nd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    x.attach_grad()
    with autograd.record():
        parts = nd.split(x * 3, num_outputs=3, axis=1)
    s = autograd.get_symbol(parts[2])
    assert s.list_outputs() == ["node_1_output2"]
    out = s.eval(var0=x)[0].asnumpy()
    assert_almost_equal(out, x.asnumpy()[:, 2:3] * 3)


def test_get_symbol_of_a_variable_and_errors():
    x = nd.ones((2,))
    x.attach_grad()
    assert autograd.get_symbol(x).list_outputs() == ["var0"]
    with pytest.raises(nbdl.NbdlError, match="not part of a recorded graph"):
        autograd.get_symbol(nd.ones((2,)))
    with autograd.record():
        y = x * 2
    y.backward()                            # frees the tape
    with pytest.raises(nbdl.NbdlError, match="freed"):
        autograd.get_symbol(y)

    class Twice(autograd.Function):
        def forward(self, a):
            return a * 2

        def backward(self, dy):
            return dy * 2
    with autograd.record():
        y = Twice()(x) + 1
    with pytest.raises(nbdl.NbdlError, match="Python backward"):
        autograd.get_symbol(y)


def test_fresh_grad_is_the_variables_gradient_flag():
    x = nd.ones((2, 2))
    dx = nd.zeros_like(x)
    y = nd.ones_like(x)
    dy = nd.zeros_like(x)
    autograd.mark_variables([x, y], [dx, dy])
    assert x._fresh_grad is False and y._fresh_grad is False
    with autograd.record():
        out = (x + 2) + y
    out.backward()
    assert x._fresh_grad and dx._fresh_grad and y._fresh_grad
    x._fresh_grad = False
    y._fresh_grad = False
    assert not dx._fresh_grad
    with autograd.record():
        out = (x + 2).detach() + y
    out.backward()
    assert y._fresh_grad and not x._fresh_grad
    np.testing.assert_array_equal(dx.asnumpy(), np.ones((2, 2)))   # not written again


def test_grad_returns_a_list_for_one_variable():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x * x
    g = autograd.grad(y, x)
    assert isinstance(g, list) and len(g) == 1
    np.testing.assert_array_equal(g[0].asnumpy(), [2.0, 4.0])


def test_create_graph_differentiates_through_recorded_outputs():
    # d/dx (exp(x) + x) = exp(x) + 1, computed from exp's recorded output;
    # its own gradient is exp(x).
    xv = np.array([0.5, 2.0], np.float32)
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        z = nd.elemwise_add(nd.exp(x), x)
    dx, = autograd.grad(z, [x], create_graph=True)
    assert_almost_equal(dx.asnumpy(), np.exp(xv) + 1, rtol=1e-6)
    dx.backward()
    assert_almost_equal(x.grad.asnumpy(), np.exp(xv), rtol=1e-6)


def test_create_graph_through_a_gradient_op_without_a_rule_raises():
    x = nd.array([0.5, 2.0])
    x.attach_grad()
    with autograd.record():
        dx, = autograd.grad(nd.gammaln(x), [x], create_graph=True)
        w = nd.sum(dx * dx)
    with pytest.raises(nbdl.NbdlError, match="_backward_gammaln"):
        w.backward()


def test_nd_uniform_and_normal_are_the_samplers():
    nbdl.random.seed(3)
    u = nd.uniform(low=2, high=3, shape=(200,))
    assert u.shape == (200,) and u.dtype == np.float32
    assert 2 <= u.asnumpy().min() and u.asnumpy().max() < 3
    n = nd.normal(loc=5, scale=0.1, shape=(2, 300))
    assert n.shape == (2, 300)
    assert abs(float(n.asnumpy().mean()) - 5) < 0.05


def test_get_symbol_through_reshape_and_refused_through_indexing():
    x = nd.ones((2, 3))
    x.attach_grad()
    with autograd.record():
        y = x.reshape((3, 2)) * 2
        z = x[1] * 2
    out = autograd.get_symbol(y).eval(var0=nd.array(np.arange(6).reshape(2, 3)))[0]
    assert_almost_equal(out.asnumpy(), np.arange(6).reshape(3, 2) * 2)
    with pytest.raises(nbdl.NbdlError, match="'_index'"):
        autograd.get_symbol(z)
