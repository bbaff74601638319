"""NDArray operators against numpy: NDArray-NDArray (same shape and
broadcast), scalars on either side, comparisons, unary ops and the in-place
forms, which must write into the array's own storage."""
import operator

import numpy as np
import pytest

import nbdl
import nbdl.ndarray as nd

RNG = np.random.RandomState(0)
A = RNG.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
B = RNG.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
ROW = RNG.uniform(0.5, 2.0, (4,)).astype(np.float32)
COL = RNG.uniform(0.5, 2.0, (3, 1)).astype(np.float32)

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow]


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("rhs", [B, ROW, COL], ids=["same", "row", "col"])
def test_binary_ndarray(op, rhs):
    got = op(nd.array(A), nd.array(rhs))
    assert got.shape == np.broadcast_shapes(A.shape, rhs.shape)
    assert got.dtype is np.float32
    np.testing.assert_allclose(got.asnumpy(), op(A, rhs), rtol=1e-5)


def test_broadcast_both_sides():
    got = nd.array(COL) + nd.array(ROW)
    np.testing.assert_allclose(got.asnumpy(), COL + ROW, rtol=1e-6)


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("scalar", [2, 0.5, np.float32(1.5), np.float64(3.0), True])
def test_binary_scalar_both_sides(op, scalar):
    x = nd.array(A)
    np.testing.assert_allclose(op(x, scalar).asnumpy(), op(A, np.float32(scalar)), rtol=1e-5)
    np.testing.assert_allclose(op(scalar, x).asnumpy(), op(np.float32(scalar), A), rtol=1e-5)
    assert op(scalar, x).dtype is np.float32


def test_float64_arithmetic():
    a = A.astype(np.float64)
    x = nd.array(a, dtype=np.float64)
    y = x * 3 + x / 7
    assert y.dtype is np.float64
    np.testing.assert_allclose(y.asnumpy(), a * 3 + a / 7, rtol=1e-12)


CMP = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


@pytest.mark.parametrize("op", CMP, ids=lambda f: f.__name__)
def test_comparisons(op):
    a = np.array([[1, 2, 3], [3, 2, 1]], dtype=np.float32)
    b = np.array([[3, 2, 1], [1, 2, 3]], dtype=np.float32)
    x, y = nd.array(a), nd.array(b)
    for got, want in [(op(x, y), op(a, b)), (op(x, 2), op(a, 2)), (op(2, x), op(2, a)),
                      (op(x, nd.array([2, 2, 2])), op(a, np.array([2, 2, 2])))]:
        assert got.dtype is np.float32                 # 0/1 values in the input dtype
        np.testing.assert_array_equal(got.asnumpy(), want.astype(np.float32))


def test_unary():
    a = np.array([[-1.5, 0, 2]], dtype=np.float32)
    x = nd.array(a)
    np.testing.assert_array_equal((-x).asnumpy(), -a)
    np.testing.assert_array_equal(abs(x).asnumpy(), np.abs(a))


def test_unsupported_operand_types():
    x = nd.array([1, 2])
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        x + np.array([1.0, 2.0])      # numpy arrays must be wrapped with nd.array, as in MXNet
    with pytest.raises(TypeError):
        np.array([1.0, 2.0]) * x
    with pytest.raises(TypeError):
        x * (1 + 2j)


def test_broadcast_shape_error():
    with pytest.raises(nbdl.ShapeError):
        nd.array(np.ones((2, 3))) + nd.array(np.ones((4,)))


@pytest.mark.parametrize("iop, op", [
    (operator.iadd, operator.add), (operator.isub, operator.sub),
    (operator.imul, operator.mul), (operator.itruediv, operator.truediv),
])
@pytest.mark.parametrize("rhs", ["same", "row", "scalar", "self"])
def test_inplace_keeps_identity_and_storage(iop, op, rhs):
    x = nd.array(A)
    other = {"same": nd.array(B), "row": nd.array(ROW), "scalar": 1.5, "self": x}[rhs]
    want = op(A, {"same": B, "row": ROW, "scalar": np.float32(1.5), "self": A}[rhs])
    storage = x._data
    y = iop(x, other)
    assert y is x
    assert x._data is storage
    np.testing.assert_allclose(x.asnumpy(), want, rtol=1e-6)


def test_inplace_writes_through_a_view():
    parent = nd.array(np.zeros((4, 3), np.float32))
    rows = parent[1:3]
    rows += 1
    np.testing.assert_array_equal(parent.asnumpy()[1:3], np.ones((2, 3)))
    np.testing.assert_array_equal(parent.asnumpy()[[0, 3]], np.zeros((2, 3)))


def test_inplace_shape_error():
    x = nd.array(ROW)
    with pytest.raises(nbdl.ShapeError, match="out="):
        x += nd.array(A)                   # result (3, 4) does not fit x (4,)
    np.testing.assert_array_equal(x.asnumpy(), ROW)


def test_chained_expression():
    x, y = nd.array(A), nd.array(B)
    got = (x * 2 - y) / (1 + x) + 3 ** (y / 4)
    np.testing.assert_allclose(got.asnumpy(), (A * 2 - B) / (1 + A) + 3 ** (B / 4), rtol=1e-5)


# -- the same on the CUDA simulator (tiny shapes) ------------------------------

@pytest.mark.cuda
def test_arithmetic_gpu():
    g = nbdl.gpu(0)
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    r = np.array([1, 0, 2], dtype=np.float32)
    x, y = nd.array(a, ctx=g), nd.array(r, ctx=g)
    res = x * y + 1 - x / 2
    assert res.context == g
    np.testing.assert_allclose(res.asnumpy(), a * r + 1 - a / 2, rtol=1e-6)
    np.testing.assert_array_equal((x > 2).asnumpy(), (a > 2).astype(np.float32))
    storage = x._data
    x += y
    assert x._data is storage
    np.testing.assert_allclose(x.asnumpy(), a + r)
