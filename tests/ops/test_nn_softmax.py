"""SoftmaxActivation and softmax_cross_entropy against numpy references."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def sa(mode):
    return nbdl.sym.SoftmaxActivation(nbdl.sym.var("data"), mode=mode)


@pytest.mark.cuda
@pytest.mark.parametrize("mode,shape", [("instance", (3, 4)), ("instance", (2, 3, 2)),
                                        ("channel", (2, 3, 2, 2))])
def test_softmax_activation(mode, shape, rng):
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    if mode == "instance":
        want = np_softmax(x.reshape(shape[0], -1).astype(np.float64), 1).reshape(shape)
    else:
        want = np_softmax(x.astype(np.float64), 1)
    y = sa(mode)
    check_symbolic_forward(y, {"data": x}, [want], rtol=1e-5, atol=1e-6)
    check_numeric_gradient(y, {"data": x})
    check_consistency(y, {"data": x})


def test_softmax_activation_errors():
    with pytest.raises(nbdl.ShapeError, match="SoftmaxActivation.*at least 3"):
        sa("channel").infer_shape(data=(2, 3))
    with pytest.raises(nbdl.errors.AttrError):
        sa("spatial")


def np_xent(x, label):
    p = np_softmax(x.astype(np.float64), 1)
    return -np.log(np.maximum(p[np.arange(len(label)), label.astype(int)], 1e-8)).sum()


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_cross_entropy(dtype, rng):
    x = rng.uniform(-2, 2, (4, 3)).astype(dtype)
    label = np.array([0, 2, 1, 2], dtype=dtype)
    y = nbdl.sym.softmax_cross_entropy(nbdl.sym.var("data"), nbdl.sym.var("label"))
    assert y.infer_shape(data=(4, 3))[1] == [(1,)]
    check_symbolic_forward(y, {"data": x, "label": label}, [np.array([np_xent(x, label)])],
                           rtol=1e-5)
    og = np.array([0.7], dtype)
    onehot = np.eye(3)[label.astype(int)]
    want = (np_softmax(x.astype(np.float64), 1) - onehot) * 0.7
    check_symbolic_backward(y, {"data": x, "label": label}, [og], {"data": want}, rtol=1e-5,
                            atol=1e-6)
    check_numeric_gradient(y, {"data": x, "label": label}, grad_nodes=["data"])
    check_consistency(y, {"data": x, "label": label})


def test_softmax_cross_entropy_mxnet_example_int_label():
    x = nbdl.nd.array(np.array([[1, 2, 3], [11, 7, 5]], np.float32))
    lab = nbdl.nd.array(np.array([2, 0], np.int32), dtype=np.int32)
    out = nbdl.nd.softmax_cross_entropy(x, lab)
    assert out.shape == (1,)
    assert abs(float(out.asnumpy()[0]) - 0.4281871) < 1e-5


def test_softmax_cross_entropy_errors():
    y = nbdl.sym.softmax_cross_entropy(nbdl.sym.var("data"), nbdl.sym.var("label"))
    with pytest.raises(nbdl.ShapeError, match="softmax_cross_entropy.*label shape"):
        y.infer_shape(data=(4, 3), label=(3,))
    with pytest.raises(nbdl.ShapeError, match="softmax_cross_entropy.*2-D"):
        y.infer_shape(data=(4, 3, 2))
