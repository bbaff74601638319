"""_slice_assign / _slice_assign_scalar (and their _crop_assign aliases)."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)

sym = nbdl.sym

WINDOWS = [((0, 1, None), (None, None, None), (1, 1, 2)),
           ((1,), (2,), ()),
           ((None, -1), (None, 0), (None, -2)),
           ((0, 0, 0), (2, 3, 4), ())]


def window(begin, end, step):
    step = step or (None,) * len(begin)
    return tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))


@pytest.mark.parametrize("begin,end,step", WINDOWS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_slice_assign_forward(begin, end, step, dtype, rng):
    x = rng.uniform(-5, 5, (2, 3, 4)).astype(dtype)
    win = window(begin, end, step)
    r = rng.uniform(-5, 5, x[win].shape).astype(dtype)
    want = x.copy()
    want[win] = r
    y = sym._slice_assign(sym.var("lhs"), sym.var("rhs"), begin=begin, end=end, step=step)
    check_symbolic_forward(y, {"lhs": x, "rhs": r}, [want])
    want_s = x.copy()
    want_s[win] = dtype(2.5)           # the scalar cast to the array's dtype
    ys = sym._slice_assign_scalar(sym.var("data"), scalar=2.5, begin=begin, end=end, step=step)
    check_symbolic_forward(ys, {"data": x}, [want_s])


def test_gradients(rng):
    begin, end, step = WINDOWS[0]
    win = window(begin, end, step)
    x = rng.normal(size=(2, 3, 4))
    r = rng.normal(size=x[win].shape)
    g = rng.normal(size=x.shape)
    y = sym._crop_assign(sym.var("lhs"), sym.var("rhs"), begin=begin, end=end, step=step)
    cleared = g.copy()
    cleared[win] = 0
    check_symbolic_backward(y, {"lhs": x, "rhs": r}, [g], {"lhs": cleared, "rhs": g[win]})
    check_numeric_gradient(y, {"lhs": x, "rhs": r})
    ys = sym._crop_assign_scalar(sym.var("data"), scalar=1.0, begin=begin, end=end, step=step)
    check_symbolic_backward(ys, {"data": x}, [g], {"data": cleared})


def test_eager_in_place_and_float16():
    x = nbdl.nd.array(np.zeros((3, 4), np.float32))
    out = nbdl.nd._slice_assign(x, nbdl.nd.ones((1, 4)), begin=(1,), end=(2,), out=x)
    assert out is x and x.asnumpy()[1].tolist() == [1.0] * 4 and x.asnumpy().sum() == 4
    h = nbdl.nd.array(np.arange(6).reshape(2, 3), dtype=np.float16)
    out = nbdl.nd._slice_assign_scalar(h, scalar=0.1, begin=(None, 1), end=(None, None))
    assert out.dtype == np.float16
    want = np.arange(6).reshape(2, 3).astype(np.float16)
    want[:, 1:] = np.float16(0.1)
    np.testing.assert_array_equal(out.asnumpy(), want)


@pytest.mark.cuda
def test_cuda_matches_cpu(rng):
    begin, end, step = WINDOWS[0]
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    r = rng.normal(size=x[window(begin, end, step)].shape).astype(np.float32)
    y = sym._slice_assign(sym.var("lhs"), sym.var("rhs"), begin=begin, end=end, step=step)
    check_consistency(y, {"lhs": x, "rhs": r})
    ys = sym._slice_assign_scalar(sym.var("data"), scalar=-3.0, begin=begin, end=end, step=step)
    check_consistency(ys, {"data": x})


def test_rhs_shape_error():
    y = sym._slice_assign(sym.var("lhs"), sym.var("rhs"), begin=(1,), end=(3,))
    with pytest.raises(nbdl.ShapeError, match=r"_slice_assign: rhs has shape \(1, 4\).*\(2, 4\)"):
        y.infer_shape(lhs=(3, 4), rhs=(1, 4))
