import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)

DTYPES = ["float32", "float64", "uint8", "int8", "int32", "int64", "bool"]


@pytest.mark.parametrize("src", ["float32", "float64", "int32"])
@pytest.mark.parametrize("dst", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3), (1,), (0, 4)])
def test_cast_matches_numpy_astype(src, dst, shape):
    x = (np.random.RandomState(0).uniform(-3, 3, shape) * 10).astype(src)
    if dst in ("uint8",):
        x = np.abs(x)
    y = nbdl.sym.Cast(nbdl.sym.var("x"), dtype=dst)
    out = check_symbolic_forward(y, {"x": x}, [x.astype(dst)], rtol=0, atol=0)
    assert out[0].dtype == np.dtype(dst)


def test_cast_infers_dtype():
    y = nbdl.sym.Cast(nbdl.sym.var("x"), dtype="float64")
    _, out_t, _ = y.infer_type(x=np.float32)
    assert out_t == [np.float64]


def test_cast_gradient_comes_back_in_input_dtype():
    x = np.random.RandomState(1).rand(3, 2).astype(np.float32)
    y = nbdl.sym.Cast(nbdl.sym.var("x"), dtype="float64")
    g = np.random.RandomState(2).rand(3, 2)
    grads = check_symbolic_backward(y, {"x": x}, [g], {"x": g.astype(np.float32)}, rtol=1e-6)
    assert grads["x"].dtype == np.float32
    check_numeric_gradient(nbdl.sym.Cast(nbdl.sym.var("x"), dtype="float64"), {"x": x})


def test_cast_unknown_dtype_is_an_attr_error():
    with pytest.raises(nbdl.AttrError, match="Cast"):
        nbdl.sym.Cast(nbdl.sym.var("x"), dtype="complex64")


def test_cast_cuda_matches_cpu():
    y = nbdl.sym.Cast(nbdl.sym.var("x"), dtype="float64")
    check_consistency(y, {"x": np.random.rand(2, 3).astype(np.float32)})


def test_cast_to_float16_is_a_clear_dtype_error():
    y = nbdl.sym.Cast(nbdl.sym.var("x"), dtype="float16")
    with pytest.raises(nbdl.DTypeError, match="Cast.*float16"):
        check_symbolic_forward(y, {"x": np.ones(2, np.float32)}, [np.ones(2, np.float16)])
