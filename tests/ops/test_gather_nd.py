"""gather_nd, scatter_nd and _backward_gather_nd against numpy references:
negative indices, float/int32/int64 indices, repeated indices (placed by
scatter_nd, accumulated by _backward_gather_nd and by gather_nd's gradient),
integer data, CPU vs the CUDA simulator and the errors."""
import numpy as np
import pytest

import nbdl
from nbdl.errors import ShapeError
from nbdl.ops.gather_nd import IndexOutOfRange
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)

sym, nd = nbdl.sym, nbdl.nd


def data(shape, dtype=np.float64, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(dtype)


def ref_gather(x, idx):
    """numpy: index tuples are the columns of idx; negatives count from the end."""
    return x[tuple(np.trunc(idx).astype(np.int64))]


def ref_add(d, idx, shape):
    out = np.zeros(shape, d.dtype)
    np.add.at(out, tuple(np.trunc(idx).astype(np.int64)), d)
    return out


IDX = np.array([[1, 0, 1, -1], [2, 0, -1, 2]])


@pytest.mark.parametrize("itype", [np.float32, np.int32, np.int64])
def test_gather_nd_forward(itype):
    x = data((2, 3, 4))
    s = sym.gather_nd(sym.var("x"), sym.var("i"))
    check_symbolic_forward(s, {"x": x, "i": IDX.astype(itype)}, [ref_gather(x, IDX)])


def test_gather_nd_full_index_and_2d_columns():
    x = data((2, 3))
    idx = np.array([[[0, 1], [1, 1]], [[2, 0], [-3, 1]]])       # (M=2, 2, 2)
    out = nd.gather_nd(nd.array(x), nd.array(idx, dtype=np.int32))
    np.testing.assert_allclose(out.asnumpy(), ref_gather(x, idx))
    assert out.shape == (2, 2)


def test_gather_nd_int_data():
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    out = nd.gather_nd(nd.array(a, dtype=np.int32), nd.array(IDX, dtype=np.int64))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), ref_gather(a, IDX))


def test_gather_nd_gradient_accumulates_repeats():
    x = data((2, 3, 4))
    s = sym.gather_nd(sym.var("x"), sym.var("i"))
    g = data((4, 4), seed=3)
    check_symbolic_backward(s, {"x": x, "i": IDX.astype(np.float64)}, [g],
                            {"x": ref_add(g, IDX, x.shape)})
    check_numeric_gradient(s, {"x": x, "i": IDX.astype(np.int32)}, grad_nodes=["x"])


def test_scatter_nd_and_backward_gather_nd():
    d = np.array([2.0, 3.0, 5.0])
    idx = np.array([[1, 1, 0], [0, 0, 1]])
    out = nd.scatter_nd(nd.array(d), nd.array(idx), shape=(2, 2)).asnumpy()
    assert out[0, 1] == 5 and out[1, 0] in (2, 3) and out[0, 0] == 0 and out[1, 1] == 0
    added = nd._internal._backward_gather_nd(nd.array(d), nd.array(idx), shape=(2, 2))
    np.testing.assert_allclose(added.asnumpy(), ref_add(d, idx, (2, 2)))
    rows = data((2, 3))
    idx = np.array([[2, 0]])
    s = sym.scatter_nd(sym.var("d"), sym.var("i"), shape=(4, 3))
    want = np.zeros((4, 3))
    want[[2, 0]] = rows
    check_symbolic_forward(s, {"d": rows, "i": idx.astype(np.int32)}, [want])
    check_numeric_gradient(s, {"d": rows, "i": idx.astype(np.int32)}, grad_nodes=["d"])
    s = sym._backward_gather_nd(sym.var("d"), sym.var("i"), shape=(4, 3))
    check_numeric_gradient(s, {"d": rows, "i": idx.astype(np.int32)}, grad_nodes=["d"])


def test_scatter_nd_int():
    d = np.array([7, 9], np.int64)
    out = nd.scatter_nd(nd.array(d, dtype=np.int64), nd.array([[0, 2]], dtype=np.int32), shape=(3,))
    np.testing.assert_array_equal(out.asnumpy(), [7, 0, 9])


def test_errors():
    x = nd.zeros((2, 3))
    with pytest.raises(IndexOutOfRange, match="out of range"):
        nd.gather_nd(x, nd.array([[2], [0]]))
    with pytest.raises(IndexOutOfRange):
        nd.scatter_nd(nd.array([1.0]), nd.array([[-3]]), shape=(2,))
    with pytest.raises(ShapeError, match=r"gather_nd: indices.shape\[0\]=3 must be between 1 and "
                                         r"the array's 2 dims"):
        nd.gather_nd(x, nd.zeros((3, 1)))
    with pytest.raises(ShapeError, match=r"scatter_nd: data has shape \(3,\), but indices \(1, 2\) "
                                         r"and shape=\(4,\) need \(2,\)"):
        nd.scatter_nd(nd.zeros((3,)), nd.zeros((1, 2)), shape=(4,))


@pytest.mark.cuda
@pytest.mark.parametrize("make,xshape", [
    (lambda: sym.gather_nd(sym.var("x"), sym.var("i")), (2, 3, 2)),
    (lambda: sym._backward_gather_nd(sym.var("x"), sym.var("i"), shape=(3, 4)), (3,)),
    (lambda: sym.scatter_nd(sym.var("x"), sym.var("i"), shape=(3, 4)), (2,)),
])
def test_cpu_vs_cuda(make, xshape):
    idx = np.array([[1, 0, 1], [2, -1, 2]], np.int32) if xshape != (2,) else \
        np.array([[1, 0], [2, -1]], np.int32)
    check_consistency(make(), {"x": data(xshape, np.float32), "i": idx})


def test_npx_gather_nd():
    x = data((2, 3))
    out = nbdl.npx.gather_nd(nbdl.np.array(x), np.array([[1, 0], [2, 2]]))
    np.testing.assert_allclose(out.asnumpy(), x[[1, 0], [2, 2]])


def test_symbol_json_round_trip():
    """MXNet -symbol.json nodes of these ops (attributes as strings) load and run."""
    s = sym.gather_nd(sym.var("x"), sym.var("i"), name="g")
    s = sym.stack(s, s, axis=1, name="st")
    s = sym.diag(s, k=0, axis1=0, axis2=1, name="dg")
    loaded = sym.load_json(s.tojson())
    x = data((2, 3, 4))
    idx = IDX.astype(np.float32)
    g = ref_gather(x, idx)
    want = np.diagonal(np.stack([g, g], axis=1), 0, 0, 1)
    check_symbolic_forward(loaded, {"x": x, "i": idx}, [want])


def test_contrib_namespaces():
    assert "index_copy" in dir(nd.contrib) and "boolean_mask" in dir(sym.contrib)
    with pytest.raises(AttributeError, match="nbdl.nd.contrib has no attribute or operator 'nope'"):
        nd.contrib.nope
    with pytest.raises(AttributeError, match="nbdl.sym.contrib has no attribute or operator"):
        sym.contrib.nope
