"""The deterministic _image_* ops against numpy references (and, for resize,
values MXNet 1.9.1 printed, which its OpenCV computed)."""
import math

import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)

nd, sym = nbdl.nd, nbdl.sym
EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]], np.float32)
IMG = (np.arange(4 * 5 * 3).reshape(4, 5, 3) * 37 % 256).astype(np.uint8)


def u8(a):
    return nd.array(a, dtype=np.uint8)


def test_to_tensor_flips_crop(rng):
    x = rng.randint(0, 256, (2, 4, 5, 3)).astype(np.uint8)
    np.testing.assert_array_equal(nd.image.to_tensor(u8(x)).asnumpy(),
                                  x.transpose(0, 3, 1, 2).astype(np.float32) / np.float32(255))
    assert nd.image.to_tensor(u8(x[0])).shape == (3, 4, 5)
    np.testing.assert_array_equal(nd.image.flip_left_right(u8(x[0])).asnumpy(), x[0, :, ::-1])
    np.testing.assert_array_equal(nd.image.flip_top_bottom(u8(x)).asnumpy(), x[:, ::-1])
    np.testing.assert_array_equal(nd.image.crop(u8(x), 1, 2, 3, 2).asnumpy(), x[:, 2:4, 1:4])


def test_normalize_and_gradients(rng):
    t = rng.rand(2, 3, 4, 5).astype(np.float32)
    mean, std = (0.1, 0.2, 0.3), (0.5, 2.0, 4.0)
    want = (t - np.array(mean)[:, None, None]) / np.array(std)[:, None, None]
    y = sym.image.normalize(sym.var("data"), mean=mean, std=std)
    check_symbolic_forward(y, {"data": t}, [want], rtol=1e-6)
    og = rng.rand(*t.shape).astype(np.float32)
    check_symbolic_backward(y, {"data": t}, [og], [og / np.array(std)[:, None, None]])
    check_numeric_gradient(sym.image.normalize(sym.var("data"), mean=(0.5,), std=(3.0,)),
                           {"data": rng.rand(1, 2, 3)})
    check_numeric_gradient(sym.image.crop(sym.var("data"), 1, 0, 2, 2), {"data": rng.rand(3, 4, 3)})
    x = rng.rand(3, 4, 3).astype(np.float32)
    og = rng.rand(3, 4, 3).astype(np.float32)
    check_symbolic_backward(sym.image.flip_left_right(sym.var("data")), {"data": x}, [og], [og])
    with pytest.raises(nbdl.errors.AttrError, match="must hold 1 or 3 values"):
        nd.image.normalize(nd.array(t), mean=(0.1, 0.2), std=(1.0,))


def test_adjust_lighting():
    alpha = (0.05, -0.03, 0.02)
    shift = EIG @ np.array(alpha, np.float32)
    out = nd.image.adjust_lighting(u8(IMG), alpha=alpha).asnumpy()
    np.testing.assert_array_equal(out, np.clip(IMG + shift, 0, 255).astype(np.uint8))
    f = IMG.astype(np.float32)
    np.testing.assert_allclose(nd.image.adjust_lighting(nd.array(f), alpha=alpha).asnumpy(),
                               f + shift, rtol=1e-6)


def _weights(n_in, n_out, mode, horizontal):
    """(indices, weights) per output coordinate: OpenCV's rules, in float64."""
    scale = n_in / n_out
    rows = []
    for d in range(n_out):
        if mode == 0:
            rows.append(([min(int(d * scale), n_in - 1)], [1.0]))
            continue
        if mode == 3 and scale >= 1:
            lo, hi = d * scale, (d + 1) * scale
            idx = list(range(int(lo), min(math.ceil(hi), n_in)))
            wts = [min(hi, i + 1) - max(lo, i) for i in idx]
            rows.append((idx, [w / sum(wts) for w in wts]))
            continue
        c = (d + 0.5) * scale - 0.5
        s = math.floor(c)
        f = c - s
        if mode == 3:       # area, enlarging: bilinear with the pixel areas' fractions
            s = math.floor(d * scale)
            f = (d + 1) - (s + 1) / scale
            f = 0.0 if f <= 0 else f - math.floor(f)
        if mode in (1, 3):
            if horizontal and s < 0:
                s, f = 0, 0.0
            if horizontal and s >= n_in - 1:
                s, f = n_in - 1, 0.0
            taps, wts = [s, s + 1], [1 - f, f]
        else:   # bicubic, A = -0.75
            a = -0.75
            wts = [((a * (f + 1) - 5 * a) * (f + 1) + 8 * a) * (f + 1) - 4 * a,
                   ((a + 2) * f - (a + 3)) * f * f + 1,
                   ((a + 2) * (1 - f) - (a + 3)) * (1 - f) * (1 - f) + 1]
            wts.append(1 - sum(wts))
            taps = [s - 1, s, s + 1, s + 2]
        rows.append(([min(max(t, 0), n_in - 1) for t in taps], wts))
    return rows


def np_resize(img, w, h, mode):
    x = img.astype(np.float64)
    rows, cols = _weights(x.shape[0], h, mode, False), _weights(x.shape[1], w, mode, True)
    out = np.zeros((h, w, x.shape[2]))
    for d, (ys, wy) in enumerate(rows):
        for e, (xs, wx) in enumerate(cols):
            out[d, e] = sum(a * b * x[yi, xj] for yi, a in zip(ys, wy) for xj, b in zip(xs, wx))
    return out


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
@pytest.mark.parametrize("size", [(3, 2), (7, 9)])
def test_resize_float(mode, size, rng):
    img = rng.uniform(0, 255, (5, 6, 3)).astype(np.float32)
    out = nd.image.resize(nd.array(img), size=size, interp=mode).asnumpy()
    np.testing.assert_allclose(out, np_resize(img, size[0], size[1], mode), rtol=1e-5, atol=2e-3)


def test_resize_uint8_matches_mxnet():
    # MXNet 1.9.1 (its OpenCV 3.4, 8-bit fixed point) on IMG, channel 0
    cases = [((3, 2), 1, [[59, 116, 172], [145, 74, 88]]),
             ((7, 6), 1, [[0, 63, 143, 222, 118, 124, 188], [22, 85, 128, 116, 103, 146, 210],
                          [50, 113, 120, 16, 95, 156, 195], [79, 142, 148, 45, 124, 112, 53],
                          [108, 171, 177, 74, 153, 122, 40], [129, 192, 199, 95, 174, 144, 61]]),
             ((2, 2), 3, [[85, 146], [145, 104]]),
             ((6, 3), 2, [[0, 83, 180, 146, 97, 204], [59, 168, 69, 45, 152, 124],
                          [118, 225, 145, 131, 178, 43]])]
    for size, interp, want in cases:
        out = nd.image.resize(u8(IMG), size=size, interp=interp).asnumpy()
        np.testing.assert_array_equal(out[:, :, 0], np.array(want, np.uint8))


def test_resize_shapes_lanczos_and_errors():
    img = u8(np.zeros((2, 8, 4, 3), np.uint8) + 9)
    assert nd.image.resize(img, size=6, keep_ratio=True).shape == (2, 12, 6, 3)
    assert nd.image.resize(img[0], size=(5, 3)).shape == (3, 5, 3)
    np.testing.assert_array_equal(nd.image.resize(img, size=(5, 7), interp=4).asnumpy(), 9)
    with pytest.raises(nbdl.errors.AttrError, match="interp"):
        nd.image.resize(img, size=3, interp=6)
    with pytest.raises(nbdl.ShapeError, match="_image_crop.*does not fit"):
        nd.image.crop(img, 2, 0, 3, 3)
    with pytest.raises(nbdl.ShapeError, match="_image_flip_left_right.*channels"):
        nd.image.flip_left_right(nd.zeros((3, 3, 2)))


@pytest.mark.cuda
def test_float16_and_cpu_vs_cuda(rng):
    h = rng.rand(3, 4, 3).astype(np.float16)
    out = nd.image.normalize(nd.image.to_tensor(nd.array(h, dtype=np.float16)), mean=(0.5,),
                             std=(0.25,))
    np.testing.assert_allclose(out.asnumpy(),
                               (h.astype(np.float64).transpose(2, 0, 1) / 255 - 0.5) / 0.25,
                               rtol=1e-5)
    lit = nd.image.adjust_lighting(nd.array(h, dtype=np.float16), alpha=(0.01, 0.0, 0.0))
    assert lit.dtype == np.float16
    x = rng.rand(4, 5, 3).astype(np.float32) * 255
    for y in (sym.image.resize(sym.var("data"), size=(3, 6), interp=2),
              sym.image.crop(sym.var("data"), 1, 1, 3, 2),
              sym.image.flip_top_bottom(sym.var("data")),
              sym.image.adjust_lighting(sym.var("data"), alpha=(0.1, 0.2, 0.3))):
        check_consistency(y, {"data": x}, grad=False, rtol=1e-5, atol=1e-3)
    check_consistency(sym.image.normalize(sym.image.to_tensor(sym.var("data")), mean=(0.1,),
                                          std=(0.3,)), {"data": x})


IMAGE_OPS = ["_image_to_tensor", "_image_normalize", "_image_crop", "_image_flip_left_right",
             "_image_flip_top_bottom", "_image_adjust_lighting", "_image_resize",
             "_image_random_flip_left_right", "_image_random_flip_top_bottom",
             "_image_random_brightness", "_image_random_contrast", "_image_random_saturation",
             "_image_random_hue", "_image_random_color_jitter", "_image_random_lighting"]


@pytest.mark.parametrize("op", IMAGE_OPS)
def test_spellings_reach_the_op(op):
    from nbdl.ops.registry import get_op
    short = op[len("_image_"):]
    assert get_op(f"_npx__image_{short}") is get_op(op)
    assert getattr(nd.image, short) is nd.namespace.function_for(op)
    attrs = {"resize": {"size": 2}, "crop": {"x": 0, "y": 0, "width": 1, "height": 1},
             "adjust_lighting": {"alpha": (0.1, 0.1, 0.1)},
             "random_color_jitter": {k: 0.1 for k in ("brightness", "contrast", "saturation",
                                                      "hue")}}.get(short, {})
    if short in ("random_brightness", "random_contrast", "random_saturation", "random_hue"):
        attrs = {"min_factor": 0.5, "max_factor": 1.5}
    node = getattr(sym.image, short)(sym.var("data"), **attrs)
    assert __import__("json").loads(node.tojson())["nodes"][-1]["op"] == op
    assert callable(getattr(nbdl.npx.image, short))
