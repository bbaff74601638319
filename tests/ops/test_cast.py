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


@pytest.mark.cuda
def test_cast_cuda_matches_cpu():
    y = nbdl.sym.Cast(nbdl.sym.var("x"), dtype="float64")
    check_consistency(y, {"x": np.random.rand(2, 3).astype(np.float32)})


# -- float16 -------------------------------------------------------------------------

def _half_values():
    # normal, subnormal, overflowing, ties and NaN/inf values of float16
    return np.array([0.0, -0.0, 1.0, -2.5, 3.14159, 65504.0, 65520.0, 1e5, -1e5, 6e-5,
                     3e-7, 1e-9, 1.0009765625 + 2 ** -12, np.inf, -np.inf, np.nan],
                    np.float32)


@pytest.mark.parametrize("src", ["float32", "float64", "int32", "uint8", "bool"])
def test_cast_to_float16_matches_numpy(src):
    v = _half_values()
    x = (v if src.startswith("float") else np.nan_to_num(np.abs(v), posinf=7, neginf=3)
         .clip(0, 255)).astype(src)
    with np.errstate(over="ignore", invalid="ignore"):
        # MXNet's half_t rounds a float64 to float32 first, then to float16
        want = x.astype(np.float32).astype(np.float16) if src == "float64" else x.astype("float16")
    out = nbdl.nd.Cast(nbdl.nd.array(x, dtype=src), dtype="float16").asnumpy()
    assert out.dtype == np.float16
    assert np.isnan(out).sum() == np.isnan(want).sum()
    np.testing.assert_array_equal(out.view(np.uint16)[~np.isnan(want)],
                                  want.view(np.uint16)[~np.isnan(want)])


@pytest.mark.parametrize("dst", ["float32", "float64", "int32", "int8", "bool"])
def test_cast_from_float16_matches_numpy(dst):
    bits = np.arange(0, 1 << 16, 97, dtype=np.uint16)
    x = bits.view(np.float16)
    if not dst.startswith("float"):
        x = x[np.isfinite(x) & (np.abs(x) < 100)]
    want = x.astype(dst)
    out = nbdl.nd.array(x, dtype="float16").astype(dst).asnumpy()
    assert out.dtype == np.dtype(dst)
    np.testing.assert_array_equal(out, want)     # NaN where numpy has NaN


def test_cast_float16_to_float16_is_a_copy():
    x = np.array([1.5, np.nan, -np.inf, 6e-8], np.float16)
    y = nbdl.nd.Cast(nbdl.nd.array(x, dtype="float16"), dtype="float16")
    np.testing.assert_array_equal(y.asnumpy().view(np.uint16), x.view(np.uint16))


def test_astype_float16_round_trip_and_gradient():
    x = nbdl.nd.array(np.array([[0.1, 2.0], [-3.3, 1000.7]], np.float32))
    x.attach_grad()
    with nbdl.autograd.record():
        h = x.astype("float16")
        y = (h * h).astype("float32")
    y.backward()
    assert h.dtype == np.float16
    np.testing.assert_array_equal(h.asnumpy(), x.asnumpy().astype(np.float16))
    hv = x.asnumpy().astype(np.float16).astype(np.float32)
    want = (2 * hv).astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(x.grad.asnumpy(), want)


def test_cast_float16_gradient_accumulates():
    # grad_req='add' on a float16 input: _cast_like adds into float16 bits
    x = nbdl.sym.var("x")
    y = nbdl.sym.Cast(x, dtype="float32") * 2
    exe = y.simple_bind(nbdl.cpu(), grad_req="add", x=(3,), type_dict={"x": np.float16})
    exe.arg_dict["x"][:] = nbdl.nd.array([1, 2, 3], dtype="float16")
    for _ in range(3):
        exe.forward(is_train=True)
        exe.backward([nbdl.nd.array([0.5, 1.0, 1.5])])
    g = exe.grad_dict["x"].asnumpy()
    assert g.dtype == np.float16
    np.testing.assert_array_equal(g, np.array([3.0, 6.0, 9.0], np.float16))


@pytest.mark.cuda
def test_cast_float16_cuda_matches_cpu():
    check_consistency(nbdl.sym.Cast(nbdl.sym.var("x"), dtype="float16"),
                      {"x": np.random.RandomState(3).uniform(-9, 9, (2, 5)).astype(np.float32)},
                      rtol=1e-3, atol=1e-3)
    check_consistency(nbdl.sym.Cast(nbdl.sym.var("x"), dtype="int32"),
                      {"x": (np.arange(10) * 2.7 - 9).astype(np.float16)}, grad=False)


# -- amp_cast / amp_multicast ---------------------------------------------------------

def test_amp_cast_casts_floats_and_passes_integers():
    x = nbdl.nd.array([1.25, -3.0])
    h = nbdl.nd.amp_cast(x, dtype="float16")
    assert h.dtype == np.float16
    np.testing.assert_array_equal(h.asnumpy(), np.array([1.25, -3.0], np.float16))
    i = nbdl.nd.amp_cast(nbdl.nd.array([1, 2], dtype="int32"), dtype="float16")
    assert i.dtype == np.int32
    _, out_t, _ = nbdl.sym.amp_cast(nbdl.sym.var("x"), dtype="float16").infer_type(x=np.int64)
    assert out_t == [np.int64]


def test_amp_cast_gradient_in_input_dtype():
    x = np.array([0.5, -1.5, 2.0], np.float32)
    y = nbdl.sym.amp_cast(nbdl.sym.var("x"), dtype="float16")
    g = np.array([1.0, 2.0, -4.0], np.float16)
    grads = check_symbolic_backward(y, {"x": x}, [g], {"x": g.astype(np.float32)}, rtol=0,
                                    atol=0)
    assert grads["x"].dtype == np.float32


@pytest.mark.parametrize("narrow, want", [(False, np.float32), (True, np.float16)])
def test_amp_multicast_widest_or_narrowest(narrow, want):
    a = nbdl.nd.array([1.5, 2.5], dtype="float16")
    b = nbdl.nd.array([0.1, 7.0])
    c = nbdl.nd.array([3, 4], dtype="int32")
    outs = nbdl.nd.amp_multicast(a, b, c, num_outputs=3, cast_narrow=narrow)
    assert [o.dtype for o in outs] == [want, want, np.int32]
    np.testing.assert_array_equal(outs[0].asnumpy(), np.array([1.5, 2.5], want))
    np.testing.assert_array_equal(outs[1].asnumpy(), np.array([0.1, 7.0], np.float32).astype(want))
    np.testing.assert_array_equal(outs[2].asnumpy(), [3, 4])
    s = nbdl.sym.amp_multicast(nbdl.sym.var("a"), nbdl.sym.var("b"), num_outputs=2,
                               cast_narrow=narrow)
    assert s.list_arguments() == ["a", "b"]
    _, out_t, _ = s.infer_type(a=np.float16, b=np.float32)
    assert out_t == [want, want]


@pytest.mark.cuda
def test_amp_multicast_gradient_and_cuda():
    s = nbdl.sym.amp_multicast(nbdl.sym.var("a"), nbdl.sym.var("b"), num_outputs=2)
    loc = {"a": np.array([1.0, 2.0], np.float16), "b": np.array([3.0, 4.0], np.float32)}
    og = [np.array([1.0, -1.0], np.float32), np.array([0.5, 2.0], np.float32)]
    grads = check_symbolic_backward(s, loc, og, {"a": og[0].astype(np.float16), "b": og[1]},
                                    rtol=0, atol=0)
    assert grads["a"].dtype == np.float16
    check_consistency(s, loc)
