"""Array-scalar ops (_plus_scalar ... _lesser_equal_scalar)."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)

sym = nbdl.sym


def _cmp(f):
    return lambda x, s: f(x, s).astype(x.dtype)


# op -> (numpy reference of (x, scalar), scalar, input range)
CASES = {
    "_plus_scalar": (lambda x, s: x + s, 1.5, (-2, 2)),
    "_minus_scalar": (lambda x, s: x - s, 1.5, (-2, 2)),
    "_rminus_scalar": (lambda x, s: s - x, 1.5, (-2, 2)),
    "_mul_scalar": (lambda x, s: x * s, -2.5, (-2, 2)),
    "_div_scalar": (lambda x, s: x / s, 3.0, (-2, 2)),
    "_rdiv_scalar": (lambda x, s: s / x, 2.0, (0.5, 2)),
    "_power_scalar": (lambda x, s: x ** s, 1.5, (0.5, 2)),
    "_rpower_scalar": (lambda x, s: s ** x, 1.7, (-2, 2)),
    "_maximum_scalar": (np.maximum, 0.3, (-2, 2)),
    "_minimum_scalar": (np.minimum, 0.3, (-2, 2)),
    "_equal_scalar": (_cmp(np.equal), 0.5, (-2, 2)),
    "_not_equal_scalar": (_cmp(np.not_equal), 0.5, (-2, 2)),
    "_greater_scalar": (_cmp(np.greater), 0.5, (-2, 2)),
    "_greater_equal_scalar": (_cmp(np.greater_equal), 0.5, (-2, 2)),
    "_lesser_scalar": (_cmp(np.less), 0.5, (-2, 2)),
    "_lesser_equal_scalar": (_cmp(np.less_equal), 0.5, (-2, 2)),
}
COMPARISONS = [k for k in CASES if k.endswith(("equal_scalar", "greater_scalar", "lesser_scalar"))]


def sample(rng, name, shape, dtype=np.float64):
    _, s, (lo, hi) = CASES[name]
    x = rng.uniform(lo, hi, shape)
    if name in COMPARISONS:
        x = np.round(x * 2) / 2          # hit the scalar exactly sometimes
    elif "imum" in name:
        x = np.where(np.abs(x - s) < 0.05, x + 0.1, x)   # away from the kink
    return x.astype(dtype)


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 4), (1,), (0, 3), (2, 1, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(CASES))
def test_forward_grid(name, dtype, shape, rng):
    ref, s, _ = CASES[name]
    x = sample(rng, name, shape, dtype)
    y = getattr(sym, name)(sym.var("x"), scalar=s)
    expect = ref(x.astype(np.float64), s)
    (out,) = check_symbolic_forward(y, {"x": x}, [expect], **tol(dtype))
    assert out.dtype == dtype


@pytest.mark.parametrize("name", [k for k in CASES if k not in COMPARISONS])
def test_numeric_gradient(name, rng):
    y = getattr(sym, name)(sym.var("x"), scalar=CASES[name][1])
    check_numeric_gradient(y, {"x": sample(rng, name, (2, 3))})


@pytest.mark.parametrize("name", COMPARISONS)
def test_comparison_has_zero_gradient(name, rng):
    y = getattr(sym, name)(sym.var("x"), scalar=0.5)
    check_symbolic_backward(y, {"x": sample(rng, name, (2, 3))}, [np.ones((2, 3))],
                            {"x": np.zeros((2, 3))})


@pytest.mark.cuda
@pytest.mark.parametrize("name", list(CASES))
def test_cuda_matches_cpu(name, rng):
    y = getattr(sym, name)(sym.var("x"), scalar=CASES[name][1])
    check_consistency(y, {"x": sample(rng, name, (2, 3), np.float32)})


def test_symbol_operators(rng):
    a = rng.uniform(0.5, 2, (2, 3))
    x = sym.var("x")
    cases = [(x + 1, a + 1), (1 + x, 1 + a), (x - 2, a - 2), (2 - x, 2 - a), (x * 3, a * 3),
             (x / 4, a / 4), (4 / x, 4 / a), (x ** 2, a ** 2), (2 ** x, 2 ** a),
             (x > 1, (a > 1) * 1.0), (x <= 1, (a <= 1) * 1.0), (1 < x, (1 < a) * 1.0)]
    for s, expect in cases:
        check_symbolic_forward(s, {"x": a}, [expect])


def test_scalar_attribute_keeps_user_spelling():
    x = sym.var("x")
    assert (x + 1).attr("scalar") == "1"
    assert (x * 0.5).attr("scalar") == "0.5"
    assert sym._plus_scalar(x, scalar="2").attr("scalar") == "2"
    assert sym._PlusScalar(x, scalar=3).attr("scalar") == "3"


def test_scalar_is_cast_to_the_array_dtype():
    # 0.1 is not a float32: comparisons must use float32(0.1), as the array does
    x = np.array([0.1, 0.2], np.float32)
    check_symbolic_forward(sym._equal_scalar(sym.var("x"), scalar=0.1), {"x": x},
                           [np.array([1.0, 0.0], np.float32)])


def test_errors():
    with pytest.raises(nbdl.AttrError, match="scalar"):
        sym._plus_scalar(sym.var("x"))
    with pytest.raises(nbdl.DTypeError, match="bool"):
        check_symbolic_forward(sym._mul_scalar(sym.var("x"), scalar=2),
                               {"x": np.ones(3, np.bool_)}, [None])


@pytest.mark.cuda
@pytest.mark.parametrize("sigma", [1.0, 2.0, 0.5])
def test_smooth_l1(sigma, rng):
    x = np.concatenate([rng.uniform(-5, 5, 20), [0.0, 1 / sigma ** 2, -1 / sigma ** 2]])
    s2 = sigma * sigma
    want = np.where(np.abs(x) > 1 / s2, np.abs(x) - 0.5 / s2, 0.5 * x * x * s2)
    y = sym.smooth_l1(sym.var("x"), scalar=sigma)
    check_symbolic_forward(y, {"x": x}, [want])
    og = rng.normal(size=x.shape)
    check_symbolic_backward(y, {"x": x}, [og],
                            {"x": og * np.where(np.abs(x) > 1 / s2, np.sign(x), s2 * x)})
    away = x[np.abs(np.abs(x) - 1 / s2) > 1e-3][:6]        # not on a kink
    check_numeric_gradient(y, {"x": away})
    check_consistency(y, {"x": x.astype(np.float32)})
    half = nbdl.nd.smooth_l1(nbdl.nd.array(x, dtype=np.float16), scalar=sigma)
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.asnumpy(), want, rtol=2e-3, atol=2e-3)
    assert nbdl.nd.smooth_l1(nbdl.nd.array([1.0, 2, 3, 4])).asnumpy().tolist() == [0.5, 1.5, 2.5,
                                                                                   3.5]
