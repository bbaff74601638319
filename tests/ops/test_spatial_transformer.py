"""GridGenerator, BilinearSampler and SpatialTransformer against numpy references."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import (bind_and_run, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward)

sym = nbdl.sym


def np_dst(h, w):
    ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    return -1 + xs.ravel() * 2.0 / (w - 1), -1 + ys.ravel() * 2.0 / (h - 1)


def np_affine_grid(theta, h, w):
    x, y = np_dst(h, w)
    dst = np.stack([x, y, np.ones_like(x)])              # (3, h*w)
    return (theta.reshape(-1, 2, 3) @ dst).reshape(-1, 2, h, w)


def np_warp_grid(flow):
    _, _, h, w = flow.shape
    ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    return np.stack([(flow[:, 0] + xs) / ((w - 1) / 2) - 1,
                     (flow[:, 1] + ys) / ((h - 1) / 2) - 1], axis=1)


def np_sampler(data, grid):
    n, c, h, w = data.shape
    x = (grid[:, 0] + 1) * (w - 1) / 2
    y = (grid[:, 1] + 1) * (h - 1) / 2
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    out = np.zeros((n, c) + grid.shape[2:])
    for dy in (0, 1):
        for dx in (0, 1):
            xi, yi = x0 + dx, y0 + dy
            wgt = (1 - np.abs(x - xi)) * (1 - np.abs(y - yi))
            ok = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            for b in range(n):
                v = data[b][:, np.clip(yi[b], 0, h - 1), np.clip(xi[b], 0, w - 1)]
                out[b] += v * (wgt[b] * ok[b])
    return out


def test_grid_generator_affine_and_warp(rng):
    theta = rng.normal(size=(2, 6)).astype(np.float32)
    y = sym.GridGenerator(sym.var("data"), transform_type="affine", target_shape=(3, 5))
    check_symbolic_forward(y, {"data": theta}, [np_affine_grid(theta, 3, 5)], atol=1e-5)
    og = rng.normal(size=(2, 2, 3, 5)).astype(np.float32)
    x, yy = np_dst(3, 5)
    want = np.einsum("nrk,dk->nrd", og.reshape(2, 2, 15), np.stack([x, yy, np.ones(15)]))
    check_symbolic_backward(y, {"data": theta}, [og], [want.reshape(2, 6)], atol=1e-5)
    flow = rng.normal(size=(2, 2, 4, 3)).astype(np.float32)
    y = sym.GridGenerator(sym.var("data"), transform_type="warp")
    check_symbolic_forward(y, {"data": flow}, [np_warp_grid(flow)], atol=1e-5)
    og = rng.normal(size=flow.shape).astype(np.float32)
    check_symbolic_backward(y, {"data": flow}, [og],
                            [og / np.array([1.0, 1.5]).reshape(1, 2, 1, 1)], atol=1e-5)


@pytest.mark.parametrize("shape,out_hw", [((2, 3, 5, 6), (4, 7)), ((1, 1, 4, 4), (3, 3))])
def test_bilinear_sampler(shape, out_hw, rng):
    data = rng.normal(size=shape).astype(np.float32)
    grid = rng.uniform(-1.3, 1.3, (shape[0], 2) + out_hw).astype(np.float32)
    y = sym.BilinearSampler(sym.var("data"), sym.var("grid"))
    check_symbolic_forward(y, {"data": data, "grid": grid}, [np_sampler(data, grid)], atol=1e-5)


def test_bilinear_sampler_gradient_and_add(rng):
    data = rng.normal(size=(1, 2, 4, 5))
    grid = rng.uniform(-1.2, 1.2, (1, 2, 3, 3))
    y = sym.BilinearSampler(sym.var("data"), sym.var("grid"))
    check_numeric_gradient(y, {"data": data, "grid": grid})
    # grad_req='add' accumulates into both gradients
    d32, g32 = data.astype(np.float32), grid.astype(np.float32)
    _, _, once, _ = bind_and_run(y, {"data": d32, "grid": g32}, grad_names=["data", "grid"],
                                 backward=True)
    init = {"data": np.ones_like(d32), "grid": np.ones_like(g32)}
    _, _, added, _ = bind_and_run(y, {"data": d32, "grid": g32}, grad_names=["data", "grid"],
                                  grad_req="add", grad_init=init, backward=True)
    for k in once:
        np.testing.assert_allclose(added[k], once[k] + 1, rtol=1e-5, atol=1e-6)


def test_spatial_transformer_is_generator_then_sampler(rng):
    data = rng.normal(size=(2, 3, 6, 5)).astype(np.float32)
    loc = (np.array([0.8, 0.1, 0.05, -0.1, 0.9, 0.1]) + rng.normal(scale=0.1, size=(2, 6)))
    loc = loc.astype(np.float32)
    y = sym.SpatialTransformer(sym.var("data"), sym.var("loc"), target_shape=(4, 3),
                               transform_type="affine", sampler_type="bilinear")
    want = np_sampler(data, np_affine_grid(loc, 4, 3))
    check_symbolic_forward(y, {"data": data, "loc": loc}, [want], atol=1e-5)
    assert y.list_outputs() == [f"{y.name}_output"]
    check_numeric_gradient(y, {"data": data[:1, :2], "loc": loc[:1]})


def test_float16(rng):
    data = rng.normal(size=(1, 2, 4, 5)).astype(np.float16)
    grid = rng.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float16)
    out = nbdl.nd.BilinearSampler(nbdl.nd.array(data, dtype=np.float16),
                                  nbdl.nd.array(grid, dtype=np.float16))
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.asnumpy(), np_sampler(data.astype(np.float64),
                                                         grid.astype(np.float64)),
                               rtol=2e-2, atol=2e-2)
    loc = nbdl.nd.array([[1, 0, 0, 0, 1, 0]], dtype=np.float16)
    st = nbdl.nd.SpatialTransformer(nbdl.nd.array(data, dtype=np.float16), loc,
                                    target_shape=(4, 5), transform_type="affine",
                                    sampler_type="bilinear")
    np.testing.assert_allclose(st.asnumpy(), data, atol=2e-3)


@pytest.mark.cuda
def test_cpu_vs_cuda(rng):
    data = rng.normal(size=(1, 2, 3, 4)).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, (1, 2, 2, 3)).astype(np.float32)
    check_consistency(sym.BilinearSampler(sym.var("data"), sym.var("grid")),
                      {"data": data, "grid": grid}, atol=1e-5)
    loc = np.array([[0.9, 0.1, 0.0, -0.2, 1.1, 0.1]], np.float32)
    check_consistency(sym.SpatialTransformer(sym.var("data"), sym.var("loc"),
                                             target_shape=(2, 3), transform_type="affine",
                                             sampler_type="bilinear"),
                      {"data": data, "loc": loc}, atol=1e-5)
    check_consistency(sym.GridGenerator(sym.var("data"), transform_type="warp"),
                      {"data": grid}, atol=1e-6)


def test_errors():
    y = sym.BilinearSampler(sym.var("data"), sym.var("grid"))
    with pytest.raises(nbdl.ShapeError, match="BilinearSampler.*grid must be"):
        y.infer_shape(data=(2, 3, 4, 4), grid=(2, 3, 4, 4))
    y = sym.GridGenerator(sym.var("data"), transform_type="affine", target_shape=(3, 3))
    with pytest.raises(nbdl.ShapeError, match="GridGenerator.*affine data"):
        y.infer_shape(data=(2, 4))
    with pytest.raises(nbdl.errors.AttrError, match="target_shape"):
        sym.GridGenerator(sym.var("data"), transform_type="affine")
    y = sym.SpatialTransformer(sym.var("data"), sym.var("loc"), target_shape=(2, 2),
                               transform_type="affine", sampler_type="bilinear")
    with pytest.raises(nbdl.ShapeError, match="SpatialTransformer.*loc must be"):
        y.infer_shape(data=(2, 1, 4, 4), loc=(2, 5))
