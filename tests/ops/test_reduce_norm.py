"""norm and moments: numpy references, gradients, req handling, CPU vs CUDA."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward, run_symbol)

sym = nbdl.sym


def _axes(axis, ndim):
    if axis is None or axis == ():
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in ((axis,) if isinstance(axis, int) else axis)))


def _mx_shape(out):
    return out.reshape(1) if out.ndim == 0 else out


def norm_ref(x, ord=2, axis=None, keepdims=False):
    axes = _axes(axis, x.ndim)
    v = x.astype(np.float64)
    r = np.abs(v).sum(axis=axes, keepdims=keepdims) if ord == 1 else \
        np.sqrt((v * v).sum(axis=axes, keepdims=keepdims))
    return _mx_shape(np.asarray(r))


def moments_ref(x, axes=None, keepdims=False):
    ax = _axes(axes, x.ndim)
    v = x.astype(np.float64)
    return [_mx_shape(np.asarray(v.mean(axis=ax, keepdims=keepdims))).astype(x.dtype),
            _mx_shape(np.asarray(v.var(axis=ax, keepdims=keepdims))).astype(x.dtype)]


AXES = [None, 0, -1, (0, 2), (1,), (0, 1, 2)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_norm_forward(dtype, rng):
    x = rng.uniform(-2, 2, (2, 3, 4)).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-6)
    for ord_ in (1, 2):
        for axis in AXES:
            for keepdims in (False, True):
                s = sym.norm(sym.var("x"), ord=ord_, axis=axis, keepdims=keepdims)
                want = norm_ref(x, ord_, axis, keepdims).astype(dtype)
                assert s.infer_shape(x=x.shape)[1] == [want.shape]
                check_symbolic_forward(s, {"x": x}, [want], **tol)


def test_norm_mxnet_example_and_out_dtype():
    # MXNet's documented example
    x = np.array([[[1, 2], [3, 4]], [[2, 2], [5, 6]]], dtype=np.float32)
    out = nbdl.nd.norm(nbdl.nd.array(x), ord=2, axis=1).asnumpy()
    np.testing.assert_allclose(out, [[3.1622777, 4.472136], [5.3851647, 6.3245554]], rtol=1e-6)
    out = nbdl.nd.norm(nbdl.nd.array(x), ord=1, axis=1)
    np.testing.assert_array_equal(out.asnumpy(), [[4, 6], [7, 8]])
    full = nbdl.nd.norm(nbdl.nd.array(x), out_dtype="float64")
    assert full.dtype == np.float64 and full.shape == (1,)
    np.testing.assert_allclose(full.asnumpy(), [np.sqrt((x.astype(np.float64) ** 2).sum())])
    # fluent method, an integer input (accumulated in float64, truncated once)
    xi = nbdl.nd.array(x.astype(np.int32), dtype=np.int32)
    r = xi.norm()
    assert r.dtype == np.int32 and int(r.asnumpy()[0]) == int(np.sqrt((x ** 2).sum()))


def test_norm_gradient_and_edges(rng):
    x = rng.uniform(0.5, 1.5, (2, 3, 2)) * np.where(rng.uniform(size=(2, 3, 2)) > 0.5, 1, -1)
    for ord_ in (1, 2):
        for axis in (None, (0, 2), 1):
            s = sym.norm(sym.var("x"), ord=ord_, axis=axis, keepdims=axis == 1)
            check_numeric_gradient(s, {"x": x})
    # MXNet: ord=1's gradient is 0 at 0 (sign), ord=2's is NaN where the norm is 0
    z = np.array([[0.0, 3.0, -4.0], [0.0, 0.0, 0.0]])
    s1 = sym.norm(sym.var("x"), ord=1, axis=1)
    check_symbolic_backward(s1, {"x": z}, [np.ones(2)], {"x": np.sign(z)})
    s2 = sym.norm(sym.var("x"), ord=2, axis=1)
    _, grads, _ = run_symbol(s2, {"x": z}, out_grads=[np.ones(2)])
    np.testing.assert_allclose(grads["x"][0], [0, 0.6, -0.8])
    assert np.isnan(grads["x"][1]).all()
    # NaN propagates
    out = nbdl.nd.norm(nbdl.nd.array([1.0, np.nan])).asnumpy()
    assert np.isnan(out).all()


def test_norm_grad_req_add(rng):
    x = rng.uniform(-1, 1, (3, 4))
    s = sym.norm(sym.var("x"), axis=1)
    g0 = rng.uniform(size=(3, 4))
    ex = s.bind(nbdl.cpu(), {"x": nbdl.nd.array(x, dtype=np.float64)},
                args_grad={"x": nbdl.nd.array(g0, dtype=np.float64)}, grad_req="add")
    ex.forward(is_train=True)
    ex.backward([nbdl.nd.ones((3,), dtype=np.float64)])
    want = g0 + x / np.sqrt((x * x).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), want, rtol=1e-12)


def test_norm_errors():
    with pytest.raises(nbdl.errors.DTypeError, match="ord=3"):
        nbdl.nd.norm(nbdl.nd.ones((2,)), ord=3)
    with pytest.raises(nbdl.ShapeError, match="norm"):
        sym.norm(sym.var("x"), axis=2).infer_shape(x=(2, 3))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_moments_forward(dtype, rng):
    x = rng.uniform(-2, 2, (2, 3, 4)).astype(dtype)
    for axes in AXES:
        for keepdims in (False, True):
            s = sym.moments(sym.var("x"), axes=axes, keepdims=keepdims)
            want = moments_ref(x, axes, keepdims)
            outs = s.list_outputs()
            assert len(outs) == 2 and outs[0].endswith("_mean") and outs[1].endswith("_var")
            check_symbolic_forward(s, {"x": x}, want, rtol=1e-5, atol=1e-6)
    m, v = nbdl.nd.moments(nbdl.nd.array(x, dtype=dtype), axes=(0, 2))
    np.testing.assert_allclose(v.asnumpy(), x.astype(np.float64).var(axis=(0, 2)), rtol=1e-5)


def test_moments_gradient(rng):
    x = rng.uniform(-1, 1, (2, 3, 2))
    for axes in ((0, 2), (1,), None):
        check_numeric_gradient(sym.moments(sym.var("x"), axes=axes), {"x": x})


@pytest.mark.cuda
def test_norm_moments_cpu_vs_cuda(rng):
    x = rng.uniform(-1, 1, (2, 3, 2))
    for s in (sym.norm(sym.var("x"), axis=(0, 2)), sym.norm(sym.var("x"), ord=1, axis=1),
              sym.moments(sym.var("x"), axes=(1,), keepdims=True)):
        check_consistency(s, {"x": x}, rtol=1e-10, atol=1e-12)
