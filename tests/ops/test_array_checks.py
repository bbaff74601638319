"""shape_array, size_array, all_finite, multi_all_finite, _contrib_allclose."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import check_consistency, check_symbolic_forward

sym, nd = nbdl.sym, nbdl.nd


def test_shape_and_size_array():
    x = np.zeros((2, 3, 4), np.float32)
    check_symbolic_forward(sym.shape_array(sym.var("x")), {"x": x}, [np.array([2, 3, 4])])
    check_symbolic_forward(sym.size_array(sym.var("x")), {"x": x}, [np.array([24])])
    a = nd.array(np.ones((5, 1)), dtype=np.int32)
    s = nd.shape_array(a)
    assert s.dtype == np.int64 and s.asnumpy().tolist() == [5, 1]
    z = nd.size_array(a)
    assert z.dtype == np.int64 and z.shape == (1,) and z.asnumpy().tolist() == [5]
    assert nbdl.npx.shape_array(nbdl.np.zeros((0, 3))).asnumpy().tolist() == [0, 3]
    assert nd._npx_shape_array(a).asnumpy().tolist() == [5, 1]
    assert a.shape_array().asnumpy().tolist() == [5, 1] and a.size_array().asnumpy()[0] == 5
    # no gradient: the head gradient is never read, so its shape is not checked (MXNet)
    ex = sym.shape_array(sym.var("x")).bind(nbdl.cpu(), {"x": nd.ones((2, 3))},
                                            args_grad={"x": nd.ones((2, 3))})
    ex.forward(is_train=True)
    ex.backward([nd.ones((2, 3))])
    assert ex.grad_dict["x"].asnumpy().tolist() == [[0, 0, 0], [0, 0, 0]]


def test_all_finite():
    good = np.array([[1.0, -2.0], [3.0, 0.0]], np.float32)
    for bad_value in (np.nan, np.inf, -np.inf):
        bad = good.copy()
        bad[1, 0] = bad_value
        assert nd.all_finite(nd.array(bad)).asnumpy().tolist() == [0.0]
        assert nd.multi_all_finite(nd.array(good), nd.array(bad),
                                   num_arrays=2).asnumpy().tolist() == [0.0]
    r = nd.all_finite(nd.array(good))
    assert r.dtype == np.float32 and r.asnumpy().tolist() == [1.0]
    assert nd.multi_all_finite(nd.array(good), nd.array(good),
                               num_arrays=2).asnumpy().tolist() == [1.0]
    # as MXNet, the check is on the value cast to float32
    assert nd.all_finite(nd.array(np.array([1e300]), dtype=np.float64)).asnumpy()[0] == 0
    # init_output=False keeps the output unless a value is not finite
    out = nd.zeros((1,))
    nd.all_finite(nd.array(good), init_output=False, out=out)
    assert out.asnumpy()[0] == 0
    out = nd.ones((1,))
    nd.all_finite(nd.array(good), init_output=False, out=out)
    assert out.asnumpy()[0] == 1
    s = sym.multi_all_finite(sym.var("a"), sym.var("b"), num_arrays=2)
    assert s.list_arguments() == ["a", "b"]
    check_symbolic_forward(s, {"a": good, "b": np.full_like(good, np.inf)}, [np.array([0.0])])
    with pytest.raises(nbdl.errors.DTypeError, match="all_finite"):
        nd.all_finite(nd.array(np.ones(2), dtype=np.int32))


def test_allclose():
    a = np.array([1.0, 2.0, np.nan, np.inf], np.float64)
    A = nd.array(a, dtype=np.float64)
    r = nd.contrib.allclose(A, A)
    assert r.dtype == np.uint8 and r.shape == () and int(r.asnumpy()) == 1
    assert int(nd.contrib.allclose(A, A, equal_nan=False).asnumpy()) == 0
    b = a + np.array([1e-6, 0, 0, 0])
    assert int(nd.contrib.allclose(A, nd.array(b, dtype=np.float64)).asnumpy()) == 1
    assert int(nd.contrib.allclose(A, nd.array(b, dtype=np.float64), rtol=0,
                                   atol=1e-9).asnumpy()) == 0
    c = a.copy()
    c[3] = -np.inf   # MXNet 1.9.1: |inf - -inf| <= atol + rtol * inf holds (numpy says False)
    assert int(nd._contrib_allclose(A, nd.array(c, dtype=np.float64)).asnumpy()) == 1
    c[3] = 5.0
    assert int(nd._contrib_allclose(A, nd.array(c, dtype=np.float64)).asnumpy()) == 0
    ai = nd.array(np.array([1, 2]), dtype=np.int32)
    assert int(nd.contrib.allclose(ai, ai).asnumpy()) == 1
    s = sym.contrib.allclose(sym.var("a"), sym.var("b"))
    assert s.infer_shape(a=(2, 3), b=(2, 3))[1] == [()]
    with pytest.raises(nbdl.ShapeError, match="allclose"):
        s.infer_shape(a=(2, 3), b=(3, 2))


@pytest.mark.cuda
def test_cpu_vs_cuda():
    x = np.array([[1.0, 2.0, 3.0], [4.0, np.inf, 6.0]], np.float32)
    v = sym.var("x")
    for s in (sym.shape_array(v), sym.size_array(v), sym.all_finite(v),
              sym.multi_all_finite(v, v, num_arrays=2), sym.contrib.allclose(v, v)):
        check_consistency(s, {"x": x}, grad=False)
