"""sort and argsort (topk's kernels with k=0), and cumsum (_np_cumsum)."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)

sym = nbdl.sym


def np_sort_order(x, axis, is_ascend):
    if axis is None:
        x, axis = x.reshape(-1), 0
    return np.argsort(x if is_ascend else -x, axis=axis, kind="stable"), x, axis


def distinct(rng, shape, dtype):
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) - n // 2).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_sort_argsort_forward(dtype, rng):
    x = distinct(rng, (3, 4, 2), dtype)
    for axis in (-1, 0, 1, None):
        for asc in (True, False):
            pos, flat, ax = np_sort_order(x, axis, asc)
            vals = np.take_along_axis(flat, pos, axis=ax)
            check_symbolic_forward(sym.sort(sym.var("x"), axis=axis, is_ascend=asc), {"x": x}, [vals])
            check_symbolic_forward(sym.argsort(sym.var("x"), axis=axis, is_ascend=asc), {"x": x},
                                   [pos.astype(np.float32)])


def test_sort_defaults_nan_ties_and_dtypes():
    x = nbdl.nd.array([3, np.nan, 1, -np.inf, 2, 1])
    np.testing.assert_array_equal(nbdl.nd.sort(x).asnumpy(), [-np.inf, 1, 1, 2, 3, np.nan])
    np.testing.assert_array_equal(nbdl.nd.sort(x, is_ascend=False).asnumpy(),
                                  [np.nan, 3, 2, 1, 1, -np.inf])
    idx = nbdl.nd.argsort(x)
    assert idx.dtype == np.float32          # MXNet's default
    np.testing.assert_array_equal(idx.asnumpy(), [3, 2, 5, 4, 0, 1])   # ties stay in order
    assert nbdl.nd.argsort(x, dtype="int64").dtype == np.int64
    assert x.sort().shape == (6,) and x.argsort().shape == (6,)
    np.testing.assert_array_equal(nbdl.np.argsort(nbdl.np.array([[2.0, 1.0], [0.0, 3.0]]),
                                                  axis=None).asnumpy(), [2, 1, 0, 3])
    np.testing.assert_array_equal(nbdl.np.sort(nbdl.np.array([2.0, 1.0, 3.0]),
                                               descending=True).asnumpy(), [3, 2, 1])
    half = nbdl.nd.argsort(x, dtype="float16")   # float16 positions (CPU: converted from int64)
    assert half.dtype == np.float16
    np.testing.assert_array_equal(half.asnumpy(), [3, 2, 5, 4, 0, 1])
    with pytest.raises(nbdl.ShapeError, match="axis"):
        sym.sort(sym.var("x"), axis=2).infer_shape(x=(2, 3))


def test_sort_gradient(rng):
    x = distinct(rng, (3, 4), np.float64) * 0.25
    for axis, asc in ((-1, True), (0, False), (None, True)):
        check_numeric_gradient(sym.sort(sym.var("x"), axis=axis, is_ascend=asc), {"x": x})
    # argsort passes no gradient (MXNet's is zero)
    v = sym.var("x")
    s = sym.argsort(v, dtype="float64") + v
    check_symbolic_backward(s, {"x": x}, [np.ones((3, 4))], {"x": np.ones((3, 4))})


@pytest.mark.cuda
def test_sort_cpu_vs_cuda(rng):
    x = distinct(rng, (2, 5), np.float64)
    check_consistency(sym.sort(sym.var("x"), axis=1, is_ascend=False), {"x": x})
    check_consistency(sym.argsort(sym.var("x"), axis=0), {"x": x}, grad=False)


# ---------------------------------------------------------------- cumsum

def test_cumsum_forward(rng):
    x = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    for axis in (0, 1, -1, None):
        want = np.cumsum(x.astype(np.float64), axis=axis).astype(np.float32)
        check_symbolic_forward(sym.cumsum(sym.var("x"), axis=axis), {"x": x}, [want],
                               rtol=1e-5, atol=1e-6)
    assert sym._np_cumsum(sym.var("x")).infer_shape(x=(2, 3))[1] == [(6,)]
    out = nbdl.nd.cumsum(nbdl.nd.array(x), axis=1, dtype="float64")
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.asnumpy(), np.cumsum(x.astype(np.float64), axis=1))
    # an integer input stays integer (MXNet), and wraps in a narrow dtype
    xi = nbdl.nd.array(np.array([1, 2, 3]), dtype=np.int32)
    r = nbdl.nd.cumsum(xi)
    assert r.dtype == np.int32 and r.asnumpy().tolist() == [1, 3, 6]
    x8 = nbdl.nd.array(np.array([100, 100, 100]), dtype=np.uint8)
    assert nbdl.nd.cumsum(x8).asnumpy().tolist() == [100, 200, 44]
    np.testing.assert_array_equal(nbdl.np.cumsum(nbdl.np.array([[1.0, 2.0], [3.0, 4.0]])).asnumpy(),
                                  [1, 3, 6, 10])
    with pytest.raises(nbdl.ShapeError, match="axis"):
        sym.cumsum(sym.var("x"), axis=3).infer_shape(x=(2, 3))


@pytest.mark.cuda
def test_cumsum_gradient_and_cuda(rng):
    x = rng.uniform(-1, 1, (2, 3, 2))
    for axis in (1, None):
        check_numeric_gradient(sym.cumsum(sym.var("x"), axis=axis), {"x": x})
        check_consistency(sym.cumsum(sym.var("x"), axis=axis), {"x": x})


@pytest.mark.cuda
def test_cumsum_cuda_ignores_what_the_output_held(rng):
    """The running sum starts from a typed zero, not from ``out[..., 0] * 0``
    (NaN when the written output's memory held NaN bits)."""
    x = rng.normal(size=(2, 4)).astype(np.float32)
    out = nbdl.nd.array(np.full((2, 4), np.nan, np.float32), ctx=nbdl.gpu(0))
    nbdl.nd.cumsum(nbdl.nd.array(x, ctx=nbdl.gpu(0)), axis=1, out=out)
    np.testing.assert_allclose(out.asnumpy(), np.cumsum(x, axis=1), rtol=1e-6)
