"""_contrib_PSROIPooling, _contrib_DeformablePSROIPooling and _contrib_RROIAlign
against numpy references."""
import math

import numpy as np
import pytest

import nbdl
from nbdl.testing import (bind_and_run, check_consistency, check_numeric_gradient,
                          check_symbolic_forward)

sym = nbdl.sym


def c_round(v):
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def np_psroi(x, rois, scale, output_dim, p, g=None):
    g = g or p
    _, _, h, w = x.shape
    out = np.zeros((len(rois), output_dim, p, p))
    for r, roi in enumerate(rois):
        b = int(roi[0])
        sw, sh = c_round(roi[1]) * scale, c_round(roi[2]) * scale
        rw = max((c_round(roi[3]) + 1) * scale - sw, 0.1)
        rh = max((c_round(roi[4]) + 1) * scale - sh, 0.1)
        for i in range(p):
            h0 = min(max(math.floor(i * rh / p + sh), 0), h)
            h1 = min(max(math.ceil((i + 1) * rh / p + sh), 0), h)
            gh = min(max(math.floor(i * g / p), 0), g - 1)
            for j in range(p):
                w0 = min(max(math.floor(j * rw / p + sw), 0), w)
                w1 = min(max(math.ceil((j + 1) * rw / p + sw), 0), w)
                gw = min(max(math.floor(j * g / p), 0), g - 1)
                if h1 <= h0 or w1 <= w0:
                    continue
                for k in range(output_dim):
                    out[r, k, i, j] = x[b, (k * g + gh) * g + gw, h0:h1, w0:w1].mean()
    return out


def np_deformable(x, rois, trans, scale, output_dim, g, p, part=None, spp=1, trans_std=0.0):
    part = part or p
    _, _, h, w = x.shape
    classes = 1 if trans is None else trans.shape[1] // 2
    out = np.zeros((len(rois), output_dim, p, p))
    for r, roi in enumerate(rois):
        b = int(roi[0])
        sw, sh = c_round(roi[1]) * scale - 0.5, c_round(roi[2]) * scale - 0.5
        rw = max((c_round(roi[3]) + 1) * scale - 0.5 - sw, 0.1)
        rh = max((c_round(roi[4]) + 1) * scale - 0.5 - sh, 0.1)
        for k in range(output_dim):
            cls = k // (output_dim // classes)
            for i in range(p):
                for j in range(p):
                    tx = ty = 0.0
                    if trans is not None:
                        ph_, pw_ = math.floor(i / p * part), math.floor(j / p * part)
                        tx = trans[r, 2 * cls, ph_, pw_] * trans_std
                        ty = trans[r, 2 * cls + 1, ph_, pw_] * trans_std
                    x0, y0 = j * rw / p + sw + tx * rw, i * rh / p + sh + ty * rh
                    gh, gw = min(i * g // p, g - 1), min(j * g // p, g - 1)
                    img = x[b, (k * g + gh) * g + gw]
                    vals = []
                    for a in range(spp):
                        for c in range(spp):
                            xx, yy = x0 + c * rw / p / spp, y0 + a * rh / p / spp
                            if xx < -0.5 or xx > w - 0.5 or yy < -0.5 or yy > h - 0.5:
                                continue
                            xx, yy = min(max(xx, 0), w - 1), min(max(yy, 0), h - 1)
                            xa, ya = math.floor(xx), math.floor(yy)
                            xb, yb = math.ceil(xx), math.ceil(yy)
                            dx, dy = xx - xa, yy - ya
                            vals.append((1 - dx) * (1 - dy) * img[ya, xa] + (1 - dx) * dy * img[yb, xa]
                                        + dx * (1 - dy) * img[ya, xb] + dx * dy * img[yb, xb])
                    out[r, k, i, j] = np.mean(vals) if vals else 0.0
    return out


def np_rroi(x, rois, pooled, scale, ratio=-1):
    _, c, h, w = x.shape
    ph_n, pw_n = pooled
    out = np.zeros((len(rois), c, ph_n, pw_n))
    for r, (b, cx, cy, rw, rh, deg) in enumerate(rois):
        cx, cy = cx * scale, cy * scale
        rw, rh = max(rw * scale, 1.0), max(rh * scale, 1.0)
        th = deg * math.pi / 180
        gh = ratio if ratio > 0 else math.ceil(rh / ph_n)
        gw = ratio if ratio > 0 else math.ceil(rw / pw_n)
        for i in range(ph_n):
            for j in range(pw_n):
                acc = np.zeros(c)
                for iy in range(gh):
                    yy = -rh / 2 + i * rh / ph_n + (iy + 0.5) * rh / ph_n / gh
                    for ix in range(gw):
                        xx = -rw / 2 + j * rw / pw_n + (ix + 0.5) * rw / pw_n / gw
                        xs = xx * math.cos(th) + yy * math.sin(th) + cx
                        ys = yy * math.cos(th) - xx * math.sin(th) + cy
                        if ys < -1 or ys > h or xs < -1 or xs > w:
                            continue
                        ys, xs = max(ys, 0.0), max(xs, 0.0)
                        y0, x0 = min(int(ys), h - 1), min(int(xs), w - 1)
                        y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
                        ly = ys - y0 if y0 < h - 1 else 0.0
                        lx = xs - x0 if x0 < w - 1 else 0.0
                        img = x[int(b)]
                        acc += ((1 - ly) * (1 - lx) * img[:, y0, x0] + (1 - ly) * lx * img[:, y0, x1]
                                + ly * (1 - lx) * img[:, y1, x0] + ly * lx * img[:, y1, x1])
                out[r, :, i, j] = acc / (gh * gw)
    return out


ROIS = np.array([[0, 10, 22, 150, 140], [1, 20.5, 15, 154, 160], [0, 60, 60, 70, 64]])


@pytest.mark.parametrize("output_dim,p,g", [(2, 3, 3), (4, 3, 2)])
def test_psroi_pooling(output_dim, p, g, rng):
    x = rng.rand(2, output_dim * g * g, 10, 12).astype(np.float32)
    y = sym.contrib.PSROIPooling(sym.var("data"), sym.var("rois"), spatial_scale=0.0625,
                                 output_dim=output_dim, pooled_size=p, group_size=g)
    loc = {"data": x, "rois": ROIS.astype(np.float32)}
    check_symbolic_forward(y, loc, [np_psroi(x, ROIS, 0.0625, output_dim, p, g)], atol=1e-5)


@pytest.mark.cuda
def test_psroi_pooling_gradient_and_cuda(rng):
    x = rng.rand(1, 8, 4, 5)
    rois = np.array([[0, 3, 5, 60, 50], [0, 20, 10, 40, 30]], np.float64)
    y = sym.contrib.PSROIPooling(sym.var("data"), sym.var("rois"), spatial_scale=0.0625,
                                 output_dim=2, pooled_size=2)
    check_numeric_gradient(y, {"data": x, "rois": rois}, grad_nodes=["data"])
    check_consistency(y, {"data": x.astype(np.float32), "rois": rois.astype(np.float32)})


@pytest.mark.parametrize("kw", [
    dict(sample_per_part=2, trans_std=0.1),
    dict(sample_per_part=2, trans_std=0.2, part_size=2),
    dict(sample_per_part=3, no_trans=True),
])
def test_deformable_psroi_pooling(kw, rng):
    x = rng.rand(2, 18, 10, 12).astype(np.float32)
    part = kw.get("part_size", 3)
    trans = None if kw.get("no_trans") else (rng.rand(3, 4, part, part) - 0.5).astype(np.float32)
    names = ["data", "rois"] + ([] if trans is None else ["trans"])
    y = sym.contrib.DeformablePSROIPooling(*[sym.var(n) for n in names], spatial_scale=0.0625,
                                           output_dim=2, group_size=3, pooled_size=3, **kw)
    loc = {"data": x, "rois": ROIS.astype(np.float32)}
    if trans is not None:
        loc["trans"] = trans
    want = np_deformable(x, ROIS, trans, 0.0625, 2, 3, 3, kw.get("part_size"),
                         kw["sample_per_part"], kw.get("trans_std", 0.0))
    check_symbolic_forward(y, loc, [want], atol=1e-5)


@pytest.mark.cuda
def test_deformable_psroi_pooling_gradient_and_cuda(rng):
    x = rng.rand(1, 4, 5, 5)
    rois = np.array([[0, 17, 20, 62, 60]], np.float64)
    trans = np.array([[[[0.13, -0.21], [0.05, 0.27]], [[0.07, 0.31], [-0.11, 0.02]]]])
    y = sym.contrib.DeformablePSROIPooling(sym.var("data"), sym.var("rois"), sym.var("trans"),
                                           spatial_scale=0.0625, output_dim=1, group_size=2,
                                           pooled_size=2, sample_per_part=2, trans_std=0.1)
    loc = {"data": x, "rois": rois, "trans": trans}
    check_numeric_gradient(y, loc, grad_nodes=["data", "trans"], numeric_eps=1e-6)
    check_consistency(y, {k: v.astype(np.float32) for k, v in loc.items()}, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.parametrize("pooled,scale,ratio", [((2, 3), 1.0, -1), ((3, 3), 0.5, 2)])
def test_rroi_align(pooled, scale, ratio, rng):
    x = rng.rand(2, 3, 8, 10).astype(np.float32)
    rois = np.array([[0, 5, 4, 6, 3, 30], [1, 3.3, 5.1, 2, 7, -80], [0, 1, 1, 0.5, 0.5, 0],
                     [1, 7, 5, 12, 9, 145]]) * [1, 1 / scale, 1 / scale, 1 / scale, 1 / scale, 1]
    y = sym.contrib.RROIAlign(sym.var("data"), sym.var("rois"), pooled_size=pooled,
                              spatial_scale=scale, sampling_ratio=ratio)
    loc = {"data": x, "rois": rois.astype(np.float32)}
    check_symbolic_forward(y, loc, [np_rroi(x, rois, pooled, scale, ratio)], atol=1e-5)
    check_consistency(y, loc, grad=False, atol=1e-5)
    with pytest.raises(nbdl.errors.GraphError, match="RROIAlign.*no gradient"):
        y.simple_bind(nbdl.cpu(), data=x.shape, rois=rois.shape)


def test_float16(rng):
    x = rng.rand(2, 18, 10, 12).astype(np.float16)
    out = nbdl.nd.contrib.PSROIPooling(nbdl.nd.array(x, dtype=np.float16),
                                       nbdl.nd.array(ROIS, dtype=np.float16),
                                       spatial_scale=0.0625, output_dim=2, pooled_size=3)
    assert out.dtype == np.float16
    want = np_psroi(x.astype(np.float64), ROIS.astype(np.float16).astype(np.float64), 0.0625, 2, 3)
    np.testing.assert_allclose(out.asnumpy(), want, rtol=2e-3, atol=2e-3)
    # the gradient reads data for its shape only: a float16 mirror with nothing copied
    y = sym.contrib.PSROIPooling(sym.var("data"), sym.var("rois"), spatial_scale=0.0625,
                                 output_dim=2, pooled_size=3)
    _, _, g16, _ = bind_and_run(y, {"data": x, "rois": ROIS.astype(np.float16)},
                                grad_names=["data"], backward=True)
    _, _, g32, _ = bind_and_run(y, {"data": x.astype(np.float32), "rois": ROIS.astype(np.float32)},
                                grad_names=["data"], backward=True)
    assert g16["data"].dtype == np.float16
    np.testing.assert_allclose(g16["data"], g32["data"], rtol=1e-3, atol=1e-3)


def test_errors():
    y = sym.contrib.PSROIPooling(sym.var("data"), sym.var("rois"), spatial_scale=0.0625,
                                 output_dim=2, pooled_size=3)
    with pytest.raises(nbdl.ShapeError, match="PSROIPooling.*channels"):
        y.infer_shape(data=(1, 10, 8, 8), rois=(2, 5))
    with pytest.raises(nbdl.ShapeError, match="PSROIPooling.*rois must be"):
        y.infer_shape(data=(1, 18, 8, 8), rois=(2, 4))
    y = sym.contrib.DeformablePSROIPooling(sym.var("data"), sym.var("rois"), sym.var("trans"),
                                           spatial_scale=0.0625, output_dim=2, group_size=3,
                                           pooled_size=3)
    with pytest.raises(nbdl.ShapeError, match="trans must be"):
        y.infer_shape(data=(1, 18, 8, 8), rois=(2, 5), trans=(2, 4, 2, 2))
    with pytest.raises(nbdl.errors.AttrError, match="pooled_size"):
        sym.contrib.RROIAlign(sym.var("data"), sym.var("rois"), pooled_size=(2,),
                              spatial_scale=1.0)
