"""Executor.reshape shares memory as MXNet's does; backward without gradient
arrays is a no-op."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import assert_almost_equal


def _fc(**shapes):
    x = nbdl.sym.var("x")
    y = nbdl.sym.FullyConnected(x, num_hidden=4, name="fc")
    return y.simple_bind(nbdl.cpu(), grad_req="null", **shapes)


def test_smaller_shape_is_a_view_of_the_old_arrays():
    ex = _fc(x=(5, 4))
    ex.arg_dict["x"][:] = np.arange(20, dtype=np.float32).reshape(5, 4)
    ex.arg_dict["fc_weight"][:] = 1
    ex.arg_dict["fc_bias"][:] = 0
    small = ex.reshape(x=(3, 4))
    assert small.arg_dict["fc_weight"] is ex.arg_dict["fc_weight"]
    assert_almost_equal(small.arg_dict["x"].asnumpy(), np.arange(12).reshape(3, 4))
    out = small.forward()[0].asnumpy()
    assert_almost_equal(out, np.arange(12).reshape(3, 4).sum(1, keepdims=True) * np.ones(4))
    # the two executors run in one arena: the new output is the old's first rows
    assert_almost_equal(ex.outputs[0].asnumpy()[:3], out)
    small.arg_dict["x"][:] = 0
    assert (ex.arg_dict["x"].asnumpy()[:3] == 0).all()
    assert (ex.arg_dict["x"].asnumpy()[3:] != 0).all()


def test_growing_needs_allow_up_sizing_and_gets_new_arrays():
    ex = _fc(x=(2, 4))
    ex.arg_dict["x"][:] = 1
    ex.arg_dict["fc_weight"][:] = 1
    with pytest.raises(nbdl.BindError, match=r"'x' is larger .*allow_up_sizing"):
        ex.reshape(x=(6, 4))
    big = ex.reshape(allow_up_sizing=True, x=(6, 4))
    big.arg_dict["x"][:] = 0
    assert (ex.arg_dict["x"].asnumpy() == 1).all()
    assert big.arg_dict["fc_weight"] is ex.arg_dict["fc_weight"]
    assert big.forward()[0].shape == (6, 4)


def test_shape_change_of_an_unnamed_argument_needs_partial_shaping():
    ex = _fc(x=(2, 4))
    with pytest.raises(nbdl.BindError, match=r"'fc_weight', which was not given.*partial_shaping"):
        ex.reshape(allow_up_sizing=True, x=(2, 6))
    new = ex.reshape(partial_shaping=True, allow_up_sizing=True, x=(2, 6))
    assert new.arg_dict["fc_weight"].shape == (4, 6)
    with pytest.raises(nbdl.BindError, match="tuple of ints"):
        ex.reshape(x="big")


def test_gradients_follow_the_arguments():
    x = nbdl.sym.var("x")
    y = nbdl.sym.FullyConnected(x, num_hidden=2, name="fc")
    ex = y.simple_bind(nbdl.cpu(), x=(4, 3))
    small = ex.reshape(x=(2, 3))
    assert small.grad_dict["fc_weight"] is ex.grad_dict["fc_weight"]
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    small.forward(is_train=True, x=xv)
    small.backward(nbdl.nd.ones((2, 2)))
    assert_almost_equal(small.grad_dict["fc_weight"].asnumpy(), np.ones((2, 2)).T @ xv)
    assert_almost_equal(ex.grad_dict["x"].asnumpy()[:2], small.grad_dict["x"].asnumpy())


def test_backward_without_gradient_arrays_does_nothing():
    x = nbdl.sym.var("x")
    y = x * 2
    ex = y.bind(nbdl.cpu(), {"x": nbdl.nd.ones((3,))})
    assert ex.forward()[0].asnumpy().tolist() == [2, 2, 2]
    assert ex.backward(nbdl.nd.ones((3,))) is None
    assert ex.grad_arrays == [None]
