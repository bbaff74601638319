"""Correlation (FlowNet) against a numpy reference."""
import math

import numpy as np
import pytest

import nbdl
from nbdl.testing import (bind_and_run, check_consistency, check_numeric_gradient,
                          check_symbolic_forward)

sym = nbdl.sym


def np_correlation(a, b, kernel_size=1, max_displacement=1, stride1=1, stride2=1, pad_size=0,
                   is_multiply=True):
    n, c, h, w = a.shape
    p = pad_size
    pa = np.pad(a.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    pb = np.pad(b.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    border = max_displacement + (kernel_size - 1) // 2
    th = math.ceil((h + 2 * p - 2 * border) / stride1)
    tw = math.ceil((w + 2 * p - 2 * border) / stride1)
    r = max_displacement // stride2
    disp = [(dy * stride2, dx * stride2) for dy in range(-r, r + 1) for dx in range(-r, r + 1)]
    out = np.zeros((n, len(disp), th, tw))
    k = kernel_size
    for i in range(th):
        for j in range(tw):
            y1, x1 = i * stride1 + max_displacement, j * stride1 + max_displacement
            p1 = pa[:, :, y1:y1 + k, x1:x1 + k]
            for q, (dy, dx) in enumerate(disp):
                p2 = pb[:, :, y1 + dy:y1 + dy + k, x1 + dx:x1 + dx + k]
                v = p1 * p2 if is_multiply else np.abs(p1 - p2)
                out[:, q, i, j] = v.sum(axis=(1, 2, 3)) / (k * k * c)
    return out


CASES = [
    dict(kernel_size=1, max_displacement=2, pad_size=2, is_multiply=False),
    dict(kernel_size=3, max_displacement=1, stride1=2, pad_size=2, is_multiply=True),
    dict(kernel_size=1, max_displacement=2, stride2=2, pad_size=1, is_multiply=True),
]


@pytest.mark.parametrize("kw", CASES)
def test_correlation_forward(kw, rng):
    a = rng.random_sample((2, 3, 6, 7)).astype(np.float32)
    b = rng.random_sample((2, 3, 6, 7)).astype(np.float32)
    y = sym.Correlation(sym.var("data1"), sym.var("data2"), **kw)
    check_symbolic_forward(y, {"data1": a, "data2": b}, [np_correlation(a, b, **kw)],
                           rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", CASES[:2])
def test_correlation_gradient(kw, rng):
    a = rng.random_sample((1, 2, 4, 5))
    b = rng.random_sample((1, 2, 4, 5))
    y = sym.Correlation(sym.var("data1"), sym.var("data2"), **kw)
    check_numeric_gradient(y, {"data1": a, "data2": b})


def test_abs_difference_sign_at_ties_and_add(rng):
    # equal values: MXNet's backward sends +1 to data1 and -1 to data2
    a = np.ones((1, 1, 3, 3), np.float32)
    y = sym.Correlation(sym.var("data1"), sym.var("data2"), kernel_size=1, max_displacement=0,
                        is_multiply=False)
    _, _, g, _ = bind_and_run(y, {"data1": a, "data2": a}, grad_names=["data1", "data2"],
                              backward=True)
    np.testing.assert_array_equal(g["data1"], np.ones_like(a))
    np.testing.assert_array_equal(g["data2"], -np.ones_like(a))
    _, _, g2, _ = bind_and_run(y, {"data1": a, "data2": a}, grad_names=["data1", "data2"],
                               grad_req="add", grad_init={"data1": a, "data2": a}, backward=True)
    np.testing.assert_array_equal(g2["data1"], 2 * a)
    np.testing.assert_array_equal(g2["data2"], 0 * a)


def test_float16_and_type_inference(rng):
    a = rng.random_sample((1, 2, 5, 5)).astype(np.float16)
    b = rng.random_sample((1, 2, 5, 5)).astype(np.float16)
    out = nbdl.nd.Correlation(nbdl.nd.array(a, dtype=np.float16), nbdl.nd.array(b, dtype=np.float16),
                              kernel_size=3, max_displacement=1, pad_size=1)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.asnumpy(), np_correlation(a, b, 3, 1, pad_size=1), rtol=1e-2,
                               atol=1e-3)
    y = sym.Correlation(sym.var("a"), sym.var("b"))
    args, outs, _ = y.infer_type(b=np.float16)
    assert args == [np.float16, np.float16] and outs == [np.float16]


@pytest.mark.cuda
def test_cpu_vs_cuda(rng):
    a = rng.random_sample((1, 2, 4, 4)).astype(np.float32)
    b = rng.random_sample((1, 2, 4, 4)).astype(np.float32)
    for mult in (True, False):
        y = sym.Correlation(sym.var("data1"), sym.var("data2"), kernel_size=1, max_displacement=1,
                            pad_size=1, is_multiply=mult)
        check_consistency(y, {"data1": a, "data2": b}, atol=1e-6)


def test_errors():
    y = sym.Correlation(sym.var("data1"), sym.var("data2"), max_displacement=4)
    with pytest.raises(nbdl.ShapeError, match="Correlation.*do not fit"):
        y.infer_shape(data1=(1, 1, 5, 5), data2=(1, 1, 5, 5))
    y = sym.Correlation(sym.var("data1"), sym.var("data2"))
    with pytest.raises(nbdl.ShapeError, match="Correlation.*one shape"):
        y.infer_shape(data1=(1, 1, 5, 5), data2=(1, 2, 5, 5))
    with pytest.raises(nbdl.errors.AttrError, match="kernel_size"):
        sym.Correlation(sym.var("data1"), sym.var("data2"), kernel_size=2)
