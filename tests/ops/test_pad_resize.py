import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops import get_op
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)

NP_MODE = {"constant": "constant", "edge": "edge", "reflect": "reflect"}


def np_pad(x, pad_width, mode, value=0.0):
    pairs = [(pad_width[2 * i], pad_width[2 * i + 1]) for i in range(x.ndim)]
    if mode == "constant":
        return np.pad(x, pairs, mode="constant", constant_values=value)
    return np.pad(x, pairs, mode=NP_MODE[mode])


def np_pad_grad(og, x_shape, pad_width, mode):
    """Adjoint of np_pad, by pushing each unit input through np_pad (slow, obviously right)."""
    dx = np.zeros(x_shape)
    for idx in np.ndindex(*x_shape):
        e = np.zeros(x_shape)
        e[idx] = 1.0
        dx[idx] = np.sum(np_pad(e, pad_width, mode) * og)
    return dx


def pad(**kw):
    return nbdl.sym.Pad(nbdl.sym.var("x"), **kw)


GRID = [((1, 2, 3, 4), (0, 0, 0, 0, 1, 2, 2, 1)), ((2, 1, 2, 2), (0, 0, 0, 0, 0, 1, 1, 0)),
        ((1, 1, 2, 3, 3), (0, 0, 0, 0, 1, 1, 0, 1, 2, 0)), ((1, 1, 1, 1), (0,) * 8),
        ((0, 2, 3, 3), (0, 0, 0, 0, 1, 1, 1, 1))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("shape,pw", GRID)
def test_pad_grid(shape, pw, mode, dtype, rng):
    x = rng.normal(size=shape).astype(dtype)
    kw = {"constant_value": 1.5} if mode == "constant" else {}
    y = np_pad(x, pw, mode, 1.5)
    outs = check_symbolic_forward(pad(mode=mode, pad_width=pw, **kw), {"x": x}, [y])
    assert outs[0].dtype == dtype
    og = rng.normal(size=y.shape).astype(dtype)
    check_symbolic_backward(pad(mode=mode, pad_width=pw), {"x": x}, [og],
                            {"x": np_pad_grad(og, shape, pw, mode)}, rtol=1e-5, atol=1e-5)


def test_pad_defaults_and_alias(rng):
    x = rng.normal(size=(1, 1, 2, 2))
    pw = (0, 0, 0, 0, 1, 1, 1, 1)
    check_symbolic_forward(pad(pad_width=pw), {"x": x}, [np_pad(x, pw, "constant")])
    check_symbolic_forward(nbdl.sym.pad(nbdl.sym.var("x"), pad_width=pw), {"x": x},
                           [np_pad(x, pw, "constant")])


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_numeric_gradient(mode, rng):
    check_numeric_gradient(pad(mode=mode, pad_width=(0, 0, 0, 0, 2, 1, 1, 2)),
                           {"x": rng.normal(size=(1, 2, 3, 3))})


def test_pad_inference_both_ways():
    _, outs, _ = pad(pad_width=(0, 0, 0, 0, 1, 2, 3, 4)).infer_shape(x=(2, 3, 4, 5))
    assert outs == [(2, 3, 7, 12)]
    ins, _ = get_op("Pad").infer_shape({"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 2, 3, 4),
                                        "constant_value": 0.0}, [None], [(2, 3, 7, 12)])
    assert ins == [(2, 3, 4, 5)]


@pytest.mark.parametrize("kw,shape,match", [
    ({"pad_width": (0, 0, 1, 1, 1, 1, 1, 1)}, (1, 1, 2, 2), r"Pad.*N or C"),
    ({"pad_width": (0, 0, 0, 0, 1, 1)}, (1, 1, 2, 2), r"Pad.*6 entries.*\(1, 1, 2, 2\)"),
    ({"pad_width": (0, 0, 1, 1)}, (2, 2), r"Pad.*4-D and 5-D.*\(2, 2\)"),
    ({"pad_width": (0, 0, 0, 0, 2, 0, 0, 0), "mode": "reflect"}, (1, 1, 2, 2),
     r"Pad.*reflect.*axis 2.*\(1, 1, 2, 2\)"),
    ({"pad_width": (0, 0, 0, 0, 1, 0, 0, 0), "mode": "edge"}, (1, 1, 0, 2), r"Pad.*edge.*empty"),
])
def test_pad_shape_errors(kw, shape, match):
    with pytest.raises(nbdl.ShapeError, match=match), nbdl.np_shape(True):   # 0 is a size
        pad(**kw).infer_shape(x=shape)


@pytest.mark.parametrize("kw,match", [({"pad_width": (0, 0, 1)}, "pad_width"),
                                      ({"pad_width": (0, 0, -1, 0)}, "pad_width"),
                                      ({}, "pad_width"),
                                      ({"pad_width": (0,) * 8, "mode": "wrap"}, "mode")])
def test_pad_bad_attrs(kw, match):
    with pytest.raises(nbdl.AttrError, match=match):
        pad(**kw)


def test_pad_parallel_variant(monkeypatch, rng):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    x = rng.normal(size=(2, 2, 3, 3))
    pw = (0, 0, 0, 0, 2, 1, 1, 2)
    og = rng.normal(size=(2, 2, 6, 6))
    check_symbolic_forward(pad(mode="reflect", pad_width=pw), {"x": x}, [np_pad(x, pw, "reflect")])
    check_symbolic_backward(pad(mode="reflect", pad_width=pw), {"x": x}, [og],
                            {"x": np_pad_grad(og, x.shape, pw, "reflect")})


@pytest.mark.cuda
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_cuda_matches_cpu(mode, rng):
    check_consistency(pad(mode=mode, pad_width=(0, 0, 0, 0, 1, 2, 2, 1), constant_value=0.5),
                      {"x": rng.normal(size=(1, 1, 3, 3)).astype(np.float32)},
                      devices=[cpu(), gpu()])


@pytest.mark.cuda
def test_pad_cuda_5d(rng):
    check_consistency(pad(mode="edge", pad_width=(0, 0, 0, 0, 1, 0, 0, 1, 1, 0)),
                      {"x": rng.normal(size=(1, 1, 2, 2, 2)).astype(np.float32)},
                      devices=[cpu(), gpu()])


# -- UpSampling (nearest) --------------------------------------------------------------------

def np_nearest(x, oh, ow):
    return x.repeat(oh // x.shape[2], axis=2).repeat(ow // x.shape[3], axis=3)


def np_upsampling(xs, scale, mode="concat"):
    oh, ow = xs[0].shape[2] * scale, xs[0].shape[3] * scale
    ups = [np_nearest(x, oh, ow) for x in xs]
    return np.concatenate(ups, axis=1) if mode == "concat" else sum(ups)


def np_block_sum(g, shape):
    n, c, h, w = shape
    sh, sw = g.shape[2] // h, g.shape[3] // w
    return g.reshape(n, c, h, sh, w, sw).sum(axis=(3, 5))


def upsampling(k, **kw):
    xs = [nbdl.sym.var(f"x{i}") for i in range(k)]
    return nbdl.sym.UpSampling(*xs, sample_type="nearest", num_args=k, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,scale", [((1, 2, 2, 3), 2), ((2, 1, 1, 1), 3), ((1, 1, 2, 2), 1),
                                         ((0, 2, 2, 2), 2)])
def test_upsampling_single(shape, scale, dtype, rng):
    x = rng.normal(size=shape).astype(dtype)
    y = np_upsampling([x], scale)
    outs = check_symbolic_forward(upsampling(1, scale=scale), {"x0": x}, [y])
    assert outs[0].dtype == dtype
    og = rng.normal(size=y.shape).astype(dtype)
    check_symbolic_backward(upsampling(1, scale=scale), {"x0": x}, [og],
                            {"x0": np_block_sum(og, shape)}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["concat", "sum"])
def test_upsampling_multi_input(mode, rng):
    x0 = rng.normal(size=(2, 2, 2, 2))
    x1 = rng.normal(size=(2, 2 if mode == "sum" else 3, 4, 4))
    x2 = rng.normal(size=(2, 2, 1, 2))
    loc = {"x0": x0, "x1": x1, "x2": x2}
    sym = upsampling(3, scale=2, multi_input_mode=mode)
    y = np_upsampling([x0, x1, x2], 2, mode)
    check_symbolic_forward(sym, loc, [y])
    og = rng.normal(size=y.shape)
    if mode == "concat":
        c0, c1 = x0.shape[1], x0.shape[1] + x1.shape[1]
        parts = [og[:, :c0], og[:, c0:c1], og[:, c1:]]
    else:
        parts = [og, og, og]
    want = {k: np_block_sum(p, v.shape) for (k, v), p in zip(loc.items(), parts)}
    check_symbolic_backward(sym, loc, [og], want)
    check_numeric_gradient(sym, {k: v[:1] for k, v in loc.items()})


def test_upsampling_names_and_inference():
    y = nbdl.sym.UpSampling(nbdl.sym.var("a"), nbdl.sym.var("b"), scale=2, sample_type="nearest",
                            num_args=2)
    _, outs, _ = y.infer_shape(a=(1, 2, 3, 3), b=(1, 4, 6, 6))
    assert outs == [(1, 6, 6, 6)]
    assert get_op("UpSampling").list_inputs({"num_args": 2, "sample_type": "nearest",
                                             "scale": 2}) == ["arg0", "arg1"]


@pytest.mark.parametrize("shapes,kw,match", [
    ([(1, 2, 3, 3), (1, 2, 4, 4)], {}, r"UpSampling.*arg1.*\(1, 2, 4, 4\).*\(6, 6\)"),
    ([(1, 2, 3, 3), (2, 2, 3, 3)], {}, r"UpSampling.*arg1.*batch"),
    ([(1, 2, 3, 3), (1, 3, 3, 3)], {"multi_input_mode": "sum"}, r"UpSampling.*sum.*channel"),
    ([(2, 3, 3)], {}, r"UpSampling.*4-D.*\(2, 3, 3\)"),
])
def test_upsampling_shape_errors(shapes, kw, match):
    sym = upsampling(len(shapes), scale=2, **kw)
    with pytest.raises(nbdl.ShapeError, match=match):
        sym.infer_shape(**{f"x{i}": s for i, s in enumerate(shapes)})


@pytest.mark.parametrize("kw,match", [({"sample_type": "nearest", "scale": 0}, "scale"),
                                      ({"sample_type": "cubic", "scale": 2}, "sample_type"),
                                      ({"sample_type": "nearest"}, "scale")])
def test_upsampling_bad_attrs(kw, match):
    with pytest.raises(nbdl.AttrError, match=match):
        nbdl.sym.UpSampling(nbdl.sym.var("x"), **kw)


def np_bilinear_weight(c, scale):
    """MXNet's init.Bilinear filter, one per channel."""
    k = 2 * scale - scale % 2
    f = np.ceil(k / 2.0)
    cc = (2 * f - 1 - f % 2) / (2.0 * f)
    w = np.zeros((c, 1, k, k))
    for i in range(k * k):
        x, y = i % k, (i // k) % k
        w[:, 0, y, x] = (1 - abs(x / f - cc)) * (1 - abs(y / f - cc))
    return w


def np_deconv_depthwise(x, w, s):
    """Depthwise transposed convolution (stride s, pad ceil((s-1)/2)) by scattering."""
    n, c, h, wd = x.shape
    k, p = w.shape[2], int(np.ceil((s - 1) / 2))
    full = np.zeros((n, c, (h - 1) * s + k, (wd - 1) * s + k))
    for iy in range(h):
        for ix in range(wd):
            full[:, :, iy * s:iy * s + k, ix * s:ix * s + k] += \
                x[:, :, iy, ix][:, :, None, None] * w[None, :, 0]
    return full[:, :, p:p + h * s, p:p + wd * s]


def bilinear(scale, c):
    return nbdl.sym.UpSampling(nbdl.sym.var("x"), nbdl.sym.var("w"), sample_type="bilinear",
                               scale=scale, num_filter=c, num_args=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,scale", [((1, 2, 3, 2), 2), ((2, 1, 2, 2), 3), ((1, 1, 1, 1), 4),
                                         ((1, 1, 2, 2), 1), ((0, 2, 2, 2), 2)])
def test_upsampling_bilinear(shape, scale, dtype, rng):
    x = rng.normal(size=shape).astype(dtype)
    w = np_bilinear_weight(shape[1], scale).astype(dtype)
    y = np_deconv_depthwise(x.astype(np.float64), w.astype(np.float64), scale)
    assert y.shape[2:] == (shape[2] * scale, shape[3] * scale)
    outs = check_symbolic_forward(bilinear(scale, shape[1]), {"x": x, "w": w}, [y],
                                  rtol=1e-5, atol=1e-5)
    assert outs[0].dtype == dtype


def test_upsampling_bilinear_interpolates():
    # interior values of a linear ramp stay a linear ramp
    x = np.tile(np.arange(4.0), (1, 1, 4, 1))
    out = check_symbolic_forward(bilinear(2, 1), {"x": x, "w": np_bilinear_weight(1, 2)},
                                 [np_deconv_depthwise(x, np_bilinear_weight(1, 2), 2)])[0]
    assert np.allclose(out[0, 0, 3, 1:7], [0.25, 0.75, 1.25, 1.75, 2.25, 2.75])


@pytest.mark.parametrize("scale", [2, 3])
def test_upsampling_bilinear_gradient(scale, rng):
    loc = {"x": rng.normal(size=(1, 2, 2, 2)), "w": rng.normal(size=np_bilinear_weight(2, scale).shape)}
    check_numeric_gradient(bilinear(scale, 2), loc)


def test_upsampling_bilinear_inference_and_errors():
    args, outs, _ = bilinear(2, 3).infer_shape(x=(2, 3, 4, 5))
    assert args == [(2, 3, 4, 5), (3, 1, 4, 4)] and outs == [(2, 3, 8, 10)]
    with pytest.raises(nbdl.ShapeError, match=r"UpSampling.*weight.*\(3, 1, 3, 3\).*\(3, 1, 4, 4\)"):
        bilinear(2, 3).infer_shape(x=(2, 3, 4, 5), w=(3, 1, 3, 3))
    with pytest.raises(nbdl.ShapeError, match=r"UpSampling.*num_filter=3.*\(2, 2, 4, 5\)"):
        bilinear(2, 3).infer_shape(x=(2, 2, 4, 5))
    with pytest.raises(nbdl.AttrError, match="bilinear.*2 inputs"):
        nbdl.sym.UpSampling(nbdl.sym.var("x"), sample_type="bilinear", scale=2)


@pytest.mark.cuda
def test_upsampling_bilinear_cuda(rng):
    loc = {"x": rng.normal(size=(1, 1, 2, 2)).astype(np.float32),
           "w": np_bilinear_weight(1, 2).astype(np.float32)}
    check_consistency(bilinear(2, 1), loc, devices=[cpu(), gpu()])


@pytest.mark.cuda
@pytest.mark.parametrize("mode", ["concat", "sum"])
def test_upsampling_cuda_matches_cpu(mode, rng):
    loc = {"x0": rng.normal(size=(1, 1, 1, 2)).astype(np.float32),
           "x1": rng.normal(size=(1, 1, 2, 4)).astype(np.float32)}
    check_consistency(upsampling(2, scale=2, multi_input_mode=mode), loc, devices=[cpu(), gpu()])
