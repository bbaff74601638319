"""_contrib_quadratic, _contrib_gradientmultiplier, _contrib_div_sqrt_dim."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward)


def data():
    return nbdl.sym.var("data")


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quadratic(dtype, rng):
    x = rng.uniform(-2, 2, (3, 4)).astype(dtype)
    y = nbdl.sym.contrib.quadratic(data(), a=0.5, b=-1.5, c=2.0)
    check_symbolic_forward(y, {"data": x}, [0.5 * x * x - 1.5 * x + 2.0], rtol=1e-5)
    og = rng.normal(size=x.shape).astype(dtype)
    check_symbolic_backward(y, {"data": x}, [og], {"data": og * (x - 1.5)}, rtol=1e-5)
    check_numeric_gradient(y, {"data": x})
    check_consistency(y, {"data": x})


def test_quadratic_defaults_and_nd():
    x = nbdl.nd.array(np.array([1.0, -2.0], np.float32))
    assert np.all(nbdl.nd.contrib.quadratic(x).asnumpy() == 0)
    assert np.allclose(nbdl.nd._contrib_quadratic(x, a=1, c=1).asnumpy(), [2.0, 5.0])


def test_quadratic_float16(rng):
    x = rng.uniform(-2, 2, (5,)).astype(np.float16)
    out = nbdl.nd.contrib.quadratic(nbdl.nd.array(x, dtype=np.float16), a=1.0, b=2.0, c=0.5)
    assert out.dtype == np.float16
    xf = x.astype(np.float32)
    want = (np.float32(1.0) * xf * xf + np.float32(2.0) * xf + np.float32(0.5)).astype(np.float16)
    assert_almost_equal(out.asnumpy(), want, rtol=1e-3, atol=1e-3)


@pytest.mark.cuda
@pytest.mark.parametrize("scalar", [-1.0, 0.25])
def test_gradientmultiplier(scalar, rng):
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    y = nbdl.sym.contrib.gradientmultiplier(data(), scalar=scalar)
    og = rng.normal(size=x.shape).astype(np.float32)
    check_symbolic_forward(y, {"data": x}, [x])
    check_symbolic_backward(y, {"data": x}, [og], {"data": og * scalar}, rtol=1e-6)
    check_consistency(y, {"data": x})


def test_gradientmultiplier_autograd_float16():
    x = nbdl.nd.array(np.array([1.0, 2.0], np.float16), dtype=np.float16)
    x.attach_grad()
    with autograd.record():
        y = nbdl.nd.contrib.gradientmultiplier(x, scalar=-0.5)
    y.backward()
    assert y.dtype == np.float16
    assert np.all(y.asnumpy() == [1.0, 2.0])
    assert np.all(x.grad.asnumpy() == [-0.5, -0.5])


@pytest.mark.cuda
@pytest.mark.parametrize("shape", [(2, 3, 4), (5,)])
def test_div_sqrt_dim(shape, rng):
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    y = nbdl.sym.contrib.div_sqrt_dim(data())
    check_symbolic_forward(y, {"data": x}, [x / np.sqrt(shape[-1])], rtol=1e-6)
    og = rng.normal(size=shape).astype(np.float32)
    check_symbolic_backward(y, {"data": x}, [og], {"data": og / np.sqrt(shape[-1])}, rtol=1e-6)
    check_numeric_gradient(y, {"data": x})
    check_consistency(y, {"data": x})


def test_div_sqrt_dim_float16():
    x = np.array([[1.0, 2.0, 3.0, 4.0]], np.float16)
    out = nbdl.nd.contrib.div_sqrt_dim(nbdl.nd.array(x, dtype=np.float16))
    assert out.dtype == np.float16
    assert_almost_equal(out.asnumpy(), (x.astype(np.float32) / 2).astype(np.float16))


def test_dtype_error():
    with pytest.raises(nbdl.errors.DTypeError, match="_contrib_quadratic"):
        nbdl.nd.contrib.quadratic(nbdl.nd.array(np.array([1, 2], np.int32), dtype=np.int32), a=1)


@pytest.mark.cuda
@pytest.mark.parametrize("name,ref", [
    ("_contrib_round_ste", lambda x: np.where(np.abs(x - np.trunc(x)) >= 0.5,
                                              np.trunc(x) + np.sign(x), np.trunc(x))),
    ("_contrib_sign_ste", np.sign)])
def test_straight_through_estimators(name, ref, rng):
    op = name[len("_contrib_"):]
    x = np.array([-2.5, -1.9, -1.5, -0.4, 0.0, 0.5, 1.5, 2.7], np.float32)
    y = getattr(nbdl.sym.contrib, op)(data())
    og = rng.normal(size=x.shape).astype(np.float32)
    check_symbolic_forward(y, {"data": x}, [ref(x)])
    check_symbolic_backward(y, {"data": x}, [og], {"data": og})   # gradient 1 everywhere
    check_consistency(y, {"data": x})
    xi = nbdl.nd.array(np.array([-3, 0, 4], np.int32), dtype=np.int32)
    assert getattr(nbdl.nd.contrib, op)(xi).asnumpy().tolist() == ref(np.array([-3, 0, 4])).tolist()
    xh = nbdl.nd.array(x, dtype=np.float16)
    assert_almost_equal(getattr(nbdl.nd.contrib, op)(xh).asnumpy(), ref(x).astype(np.float16))


def test_contrib_backward_names_of_mxnet():
    g = nbdl.nd.array(np.array([1.0, 2.0], np.float32))
    x = nbdl.nd.array(np.array([3.0, -1.0], np.float32))
    out = nbdl.nd._contrib_backward_quadratic(g, x, a=1.0, b=2.0)
    assert out.asnumpy().tolist() == [8.0, 0.0]           # g * (2 a x + b)
    out = nbdl.nd._contrib_backward_gradientmultiplier(g, scalar=-2.0)
    assert out.asnumpy().tolist() == [-2.0, -4.0]
