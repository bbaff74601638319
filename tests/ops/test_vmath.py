"""nbdl.kernels.cpu._vmath: float32 exp, sigmoid and tanh that vectorise,
against float64 results rounded to float32 over the whole float32 range."""
import numpy as np
import pytest

from nbdl.kernels.cpu._vmath import apply

F32 = np.finfo(np.float32)
# the most ulps each may be off on normal results (docstring of _vmath)
ULPS = {0: 2, 1: 3, 2: 3}


def _inputs():
    rng = np.random.RandomState(0)
    bits = rng.randint(0, 2 ** 32, 1_000_000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)                     # every exponent, both signs
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, F32.tiny, -F32.tiny, 1e-45, -1e-45,
               88.72283, 88.72284, 89.0, 89.5, -87.33654, -87.34, -103.97, -104.0, -104.5,
               0.625, -0.625, np.nextafter(np.float32(0.625), np.float32(0)), 44.5, -44.5]
    return np.concatenate([x, np.float32(special), np.linspace(-30, 30, 200_001,
                                                                dtype=np.float32)])


def _ulps(a, b):
    ia, ib = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7fffffff), ia)
    ib = np.where(ib < 0, -(ib & 0x7fffffff), ib)
    return np.abs(ia - ib)


@pytest.mark.parametrize("fn", [0, 1, 2], ids=["exp", "sigmoid", "tanh"])
def test_whole_range(fn):
    x = _inputs()
    got = np.empty_like(x)
    apply(fn, x, got)
    with np.errstate(all="ignore"):           # signalling NaN payloads among the inputs
        x64 = x.astype(np.float64)
        want = [np.exp(x64), 1 / (1 + np.exp(-x64)), np.tanh(x64)][fn].astype(np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    fin = np.isfinite(want)
    assert np.array_equal(np.signbit(got[fin]), np.signbit(want[fin]))   # -0.0 included
    normal = fin & (np.abs(want) >= F32.tiny)
    assert _ulps(got[normal], want[normal]).max() <= ULPS[fn]
    tiny = fin & ~normal                          # results below the normal range
    assert np.all(np.abs(got[tiny].astype(np.float64) - want[tiny]) <= F32.tiny)


def test_float64_is_libms():
    """float64 arguments take np.exp / np.tanh (the C library's)."""
    x = np.linspace(-50, 50, 1001)
    got = np.empty_like(x)
    for fn, ref in ((0, np.exp(x)), (1, 1 / (1 + np.exp(-x))), (2, np.tanh(x))):
        apply(fn, x, got)
        np.testing.assert_allclose(got, ref, rtol=4e-16, atol=0)


def test_special_values_exact():
    """NaN in gives NaN out; the limits at +-inf and the saturated ranges are
    exact (exp(+inf) = inf, exp(-inf) = 0, tanh(+-inf) = +-1,
    sigmoid(-inf) = 0, sigmoid(+inf) = 1), signed zeros kept."""
    x = np.float32([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 200.0, -200.0, 1e30, -1e30])
    want = {0: [np.nan, np.nan, np.inf, 0.0, 1.0, 1.0, np.inf, 0.0, np.inf, 0.0],
            1: [np.nan, np.nan, 1.0, 0.0, 0.5, 0.5, 1.0, 0.0, 1.0, 0.0],
            2: [np.nan, np.nan, 1.0, -1.0, 0.0, -0.0, 1.0, -1.0, 1.0, -1.0]}
    for fn, w in want.items():
        got = np.empty_like(x)
        apply(fn, x, got)
        w = np.float32(w)
        np.testing.assert_array_equal(got, w, err_msg=str(fn))
        assert np.array_equal(np.signbit(got[~np.isnan(w)]), np.signbit(w[~np.isnan(w)])), fn
