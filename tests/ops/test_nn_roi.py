"""ROIPooling and _contrib_ROIAlign against numpy references."""
import math

import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)


def c_round(v):
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))


def np_roi_pool(x, rois, pooled, scale):
    n, c, h, w = x.shape
    ph_n, pw_n = pooled
    out = np.zeros((len(rois), c, ph_n, pw_n))
    arg = -np.ones(out.shape, np.int64)
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        b = int(b)
        x1, y1, x2, y2 = (c_round(v * scale) for v in (x1, y1, x2, y2))
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for i in range(ph_n):
            h0 = min(max(math.floor(i * rh / ph_n) + y1, 0), h)
            h1 = min(max(math.ceil((i + 1) * rh / ph_n) + y1, 0), h)
            for j in range(pw_n):
                w0 = min(max(math.floor(j * rw / pw_n) + x1, 0), w)
                w1 = min(max(math.ceil((j + 1) * rw / pw_n) + x1, 0), w)
                if not 0 <= b < n or h1 <= h0 or w1 <= w0:
                    continue
                win = x[b, :, h0:h1, w0:w1].reshape(c, -1)
                out[r, :, i, j] = win.max(axis=1)
                k = win.argmax(axis=1)
                hh, ww = h0 + k // (w1 - w0), w0 + k % (w1 - w0)
                arg[r, :, i, j] = ((b * c + np.arange(c)) * h + hh) * w + ww
    return out, arg


def bilinear(img, y, x):
    h, w = img.shape[-2:]
    if y < -1 or y > h or x < -1 or x > w:
        return None
    y, x = max(y, 0.0), max(x, 0.0)
    yl, xl = int(y), int(x)
    if yl >= h - 1:
        yl = yh = h - 1
        y = float(yl)
    else:
        yh = yl + 1
    if xl >= w - 1:
        xl = xh = w - 1
        x = float(xl)
    else:
        xh = xl + 1
    ly, lx = y - yl, x - xl
    return [(yl, xl, (1 - ly) * (1 - lx)), (yl, xh, (1 - ly) * lx),
            (yh, xl, ly * (1 - lx)), (yh, xh, ly * lx)]


def np_roi_align(x, rois, pooled, scale, ratio=-1, sensitive=False, aligned=False):
    n, c, h, w = x.shape
    ph_n, pw_n = pooled
    co = c // (ph_n * pw_n) if sensitive else c
    out = np.zeros((len(rois), co, ph_n, pw_n))
    off = 0.5 if aligned else 0.0
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        b = int(b)
        if b < 0:
            continue
        sw, sh, ew, eh = x1 * scale - off, y1 * scale - off, x2 * scale - off, y2 * scale - off
        rw, rh = ew - sw, eh - sh
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph_n, rw / pw_n
        gh = ratio if ratio > 0 else math.ceil(rh / ph_n)
        gw = ratio if ratio > 0 else math.ceil(rw / pw_n)
        for i in range(ph_n):
            for j in range(pw_n):
                for cc in range(co):
                    ch = (cc * ph_n + i) * pw_n + j if sensitive else cc
                    acc = 0.0
                    for iy in range(gh):
                        y = sh + i * bh + (iy + 0.5) * bh / gh
                        for ix in range(gw):
                            xx = sw + j * bw + (ix + 0.5) * bw / gw
                            taps = bilinear(x[b, ch], y, xx)
                            if taps:
                                acc += sum(wt * x[b, ch, yy, xq] for yy, xq, wt in taps)
                    out[r, cc, i, j] = acc / (gh * gw)
    return out


ROIS = np.array([[0, 0, 0, 7, 7], [1, 2, 1, 5, 6], [0, 3.3, 2.5, 6.2, 4.9],
                 [3, 0, 0, 4, 4], [1, 6, 6, 2, 2]], np.float32)


@pytest.mark.cuda
@pytest.mark.parametrize("pooled,scale", [((2, 2), 1.0), ((3, 2), 0.5)])
def test_roi_pooling(pooled, scale, rng):
    x = rng.permutation(2 * 3 * 8 * 8).reshape(2, 3, 8, 8).astype(np.float32) / 10
    y = nbdl.sym.ROIPooling(nbdl.sym.var("data"), nbdl.sym.var("rois"), pooled_size=pooled,
                            spatial_scale=scale)
    want, arg = np_roi_pool(x, ROIS, pooled, scale)
    loc = {"data": x, "rois": ROIS}
    check_symbolic_forward(y, loc, [want])
    og = rng.normal(size=want.shape).astype(np.float32)
    dx = np.zeros(x.size)
    np.add.at(dx, arg[arg >= 0], og[arg >= 0])
    check_symbolic_backward(y, loc, [og], {"data": dx.reshape(x.shape),
                                           "rois": np.zeros_like(ROIS)}, rtol=1e-5, atol=1e-6)
    check_consistency(y, loc)


def test_roi_pooling_maxidx_output_and_nd(rng):
    x = rng.uniform(size=(1, 2, 4, 4)).astype(np.float32)
    rois = np.array([[0, 0, 0, 3, 3]], np.float32)
    out = nbdl.nd.ROIPooling(nbdl.nd.array(x), nbdl.nd.array(rois), pooled_size=(1, 1),
                             spatial_scale=1.0)
    assert out.shape == (1, 2, 1, 1)
    assert np.allclose(out.asnumpy().ravel(), x.reshape(2, -1).max(axis=1))


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_roi_pooling_nan_as_mxnet(dtype, device):
    """MXNet 1.9.1's outputs and gradients for bins with NaN (checked on it,
    both dtypes): the maximum starts at -FLT_MAX, NaN never wins, a bin of
    NaN gives -FLT_MAX and passes no gradient."""
    x = np.arange(16, dtype=dtype).reshape(1, 1, 4, 4)
    x[0, 0, 0, :] = np.nan
    x[0, 0, 1, :2] = np.nan
    x[0, 0, 2, 2] = np.nan
    sym = nbdl.sym.ROIPooling(nbdl.sym.var("data"), nbdl.sym.var("rois"), pooled_size=(2, 2),
                              spatial_scale=1.0)
    rois = np.array([[0, 0, 0, 3, 3]], dtype)
    low = -3.4028234663852886e+38
    dev = nbdl.cpu() if device == "cpu" else nbdl.gpu()
    check_symbolic_forward(sym, {"data": x, "rois": rois},
                           [np.array([low, 7, 13, 15], dtype).reshape(1, 1, 2, 2)], device=dev)
    want = np.zeros(16, dtype)
    want[[7, 13, 15]] = 1
    check_symbolic_backward(sym, {"data": x, "rois": rois}, [np.ones((1, 1, 2, 2), dtype)],
                            {"data": want.reshape(x.shape), "rois": np.zeros_like(rois)},
                            device=dev)


@pytest.mark.cuda
@pytest.mark.parametrize("kw", [
    dict(pooled_size=(2, 2), spatial_scale=1.0),
    dict(pooled_size=(2, 3), spatial_scale=0.5, sample_ratio=2),
    dict(pooled_size=(2, 2), spatial_scale=1.0, aligned=True),
    dict(pooled_size=(1, 2), spatial_scale=1.0, sample_ratio=1, position_sensitive=True),
])
def test_roi_align(kw, rng):
    x = rng.uniform(-1, 1, (2, 4, 8, 8)).astype(np.float32)
    rois = np.array([[0, 0.5, 0.5, 6.5, 5.0], [1, 2, 1, 5.5, 6], [-1, 0, 0, 3, 3],
                     [0, 6.0, 1.0, 7.9, 7.5]], np.float32)
    y = nbdl.sym.contrib.ROIAlign(nbdl.sym.var("data"), nbdl.sym.var("rois"), **kw)
    want = np_roi_align(x, rois, kw["pooled_size"], kw["spatial_scale"],
                        kw.get("sample_ratio", -1), kw.get("position_sensitive", False),
                        kw.get("aligned", False))
    loc = {"data": x, "rois": rois}
    check_symbolic_forward(y, loc, [want], rtol=1e-5, atol=1e-6)
    check_consistency(y, loc, rtol=1e-5, atol=1e-5)


def test_roi_align_gradient(rng):
    x = rng.uniform(-1, 1, (1, 2, 5, 5))
    rois = np.array([[0, 0.3, 0.6, 3.7, 4.1], [0, 1.2, 0.1, 2.9, 2.2]])
    y = nbdl.sym.contrib.ROIAlign(nbdl.sym.var("data"), nbdl.sym.var("rois"), pooled_size=(2, 2),
                                  spatial_scale=1.0, sample_ratio=2)
    check_numeric_gradient(y, {"data": x, "rois": rois}, grad_nodes=["data"])


def test_roi_errors():
    y = nbdl.sym.ROIPooling(nbdl.sym.var("data"), nbdl.sym.var("rois"), pooled_size=(2, 2),
                            spatial_scale=1.0)
    with pytest.raises(nbdl.ShapeError, match="ROIPooling.*rois must be"):
        y.infer_shape(data=(1, 2, 4, 4), rois=(3, 4))
    with pytest.raises(nbdl.errors.AttrError, match="pooled_size"):
        nbdl.sym.ROIPooling(nbdl.sym.var("data"), nbdl.sym.var("rois"), pooled_size=(2,),
                            spatial_scale=1.0)
    y = nbdl.sym.contrib.ROIAlign(nbdl.sym.var("data"), nbdl.sym.var("rois"), pooled_size=(2, 2),
                                  spatial_scale=1.0, position_sensitive=True)
    with pytest.raises(nbdl.ShapeError, match="position_sensitive"):
        y.infer_shape(data=(1, 6, 4, 4), rois=(3, 5))
