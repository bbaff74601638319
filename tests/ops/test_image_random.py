"""The random _image_* ops: their pixel math with fixed factors (min_factor ==
max_factor) against numpy / colorsys references, and their draws through
nbdl.random.seed (per device)."""
import colorsys

import numpy as np
import pytest

import nbdl
from nbdl.testing import check_consistency, check_symbolic_backward

nd, sym = nbdl.nd, nbdl.sym
# the CUDA simulator runs the generator's wrapping uint64 arithmetic on numpy scalars
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in scalar:RuntimeWarning")
LUMA = np.array([0.299, 0.587, 0.114], np.float32)


def ref_color(x, op, a):
    """MXNet's float32 formulas (image_random-inl.h) with factor ``a``."""
    f = x.astype(np.float32)
    a = np.float32(a)
    if op == "brightness":
        return f * a
    if op == "contrast":
        mean = np.float32((f.reshape(-1, 3) * LUMA).sum() / np.float32(f.shape[0] * f.shape[1]))
        return f * a + (np.float32(1) - a) * mean
    if op == "saturation":          # MXNet's gray level keeps only 0.114 * blue
        return f[..., 2:3] * np.float32(0.114) * (np.float32(1) - a) + f * a
    out = np.empty(f.shape, np.float64)      # hue: rotate by ``a`` turns in HLS
    for i in np.ndindex(f.shape[:2]):
        h, lum, s = colorsys.rgb_to_hls(*(f[i] / 255))
        out[i] = np.array(colorsys.hls_to_rgb((h + a) % 1.0, lum, s)) * 255
    return out


def saturate_u8(v):
    return np.clip(v, 0, 255).astype(np.uint8)        # clamp, then truncate (saturate_cast)


@pytest.mark.parametrize("op", ["brightness", "contrast", "saturation", "hue"])
@pytest.mark.parametrize("a", [0.35, 1.6])
def test_fixed_factor(op, a, rng):
    img = rng.randint(0, 256, (5, 6, 3)).astype(np.uint8)
    fn = getattr(nd.image, f"random_{op}")
    out = fn(nd.array(img.astype(np.float32)), min_factor=a, max_factor=a).asnumpy()
    np.testing.assert_allclose(out, ref_color(img, op, a), rtol=1e-5, atol=2e-3)
    out8 = fn(nd.array(img, dtype=np.uint8), min_factor=a, max_factor=a).asnumpy()
    want = saturate_u8(ref_color(img, op, a))
    assert out8.dtype == np.uint8
    assert np.abs(out8.astype(int) - want.astype(int)).max() <= (1 if op == "hue" else 0)


def test_one_channel_images_and_identities(rng):
    gray = rng.randint(0, 256, (4, 5, 1)).astype(np.uint8)
    g = nd.array(gray, dtype=np.uint8)
    for op in ("saturation", "hue"):
        out = getattr(nd.image, f"random_{op}")(g, min_factor=0.3, max_factor=0.3)
        np.testing.assert_array_equal(out.asnumpy(), gray)
    np.testing.assert_array_equal(nd.image.random_lighting(g).asnumpy(), gray)
    np.testing.assert_array_equal(
        nd.image.random_contrast(g, min_factor=0.5, max_factor=0.5).asnumpy(),
        saturate_u8(gray * np.float32(0.5) + np.float32(0.5) * np.float32(gray.mean())))
    img = rng.rand(3, 4, 3).astype(np.float32)
    np.testing.assert_array_equal(nd.image.random_lighting(nd.array(img), alpha_std=0).asnumpy(),
                                  img)
    np.testing.assert_array_equal(
        nd.image.random_color_jitter(nd.array(img), 0, 0, 0, 0).asnumpy(), img)
    np.testing.assert_array_equal(
        nd.image.random_flip_top_bottom(nd.array(img), p=1.0).asnumpy(), img[::-1])


def _factors(out, img):
    """Each image's brightness factor (float images)."""
    return out.reshape(len(out), -1).max(1) / img.reshape(len(img), -1).max(1)


@pytest.mark.cuda
def test_draws_are_seeded_per_image_and_per_device(rng):
    img = rng.rand(40, 3, 4, 3).astype(np.float32) + 0.5
    x = nd.array(img)
    nbdl.random.seed(7)
    a = nd.image.random_brightness(x, 0.5, 1.5).asnumpy()
    b = nd.image.random_brightness(x, 0.5, 1.5).asnumpy()
    nbdl.random.seed(7)
    np.testing.assert_array_equal(nd.image.random_brightness(x, 0.5, 1.5).asnumpy(), a)
    fa = _factors(a, img)
    assert not np.array_equal(a, b) and 0.5 <= fa.min() and fa.max() <= 1.5
    assert len(np.unique(fa.round(5))) > 30                 # one draw per image
    np.testing.assert_allclose(a, img * fa[:, None, None, None], rtol=1e-5)
    nbdl.random.seed(7)
    flips = nd.image.random_flip_left_right(x).asnumpy()
    flipped = np.array([np.array_equal(f, i[:, ::-1]) for f, i in zip(flips, img)])
    assert all(fl or np.array_equal(f, i) for fl, f, i in zip(flipped, flips, img))
    assert 8 <= flipped.sum() <= 32
    gpu = nbdl.gpu(0)
    xg = nd.array(img, ctx=gpu)
    nbdl.random.seed(3, ctx=gpu)
    g1 = nd.image.random_lighting(xg, alpha_std=0.1).asnumpy()
    nd.image.random_lighting(x, alpha_std=0.1)                  # the CPU's draws do not interfere
    nbdl.random.seed(3, ctx=gpu)
    np.testing.assert_array_equal(nd.image.random_lighting(xg, alpha_std=0.1).asnumpy(), g1)
    shift = (g1 - img).reshape(40, -1, 3)
    np.testing.assert_allclose(shift, np.broadcast_to(shift[:, :1], shift.shape), atol=1e-4)


def test_color_jitter_order_and_gradient(rng):
    img = rng.rand(4, 5, 3).astype(np.float32) * 200
    y = sym.image.random_color_jitter(sym.var("data"), brightness=0.4, contrast=0.4,
                                      saturation=0.0, hue=0.0)
    nbdl.random.seed(2)
    out = nd.image.random_color_jitter(nd.array(img), 0.4, 0.4, 0, 0).asnumpy()
    # brightness then contrast, or contrast then brightness: both are affine in x
    # with one slope shared by every pixel
    slope = np.polyfit(img.ravel(), out.ravel(), 1)[0]
    np.testing.assert_allclose(out.ravel(), np.polyval(np.polyfit(img.ravel(), out.ravel(), 1),
                                                       img.ravel()), rtol=1e-4, atol=1e-2)
    assert 0.35 <= slope <= 1.97 and not np.isclose(slope, 1)
    og = rng.rand(*img.shape).astype(np.float32)
    check_symbolic_backward(y, {"data": img}, [og], [og])   # MXNet's _copy gradient


@pytest.mark.cuda
def test_float16_and_cpu_vs_cuda(rng):
    h = (rng.rand(3, 4, 3) * 100).astype(np.float16)
    out = nd.image.random_brightness(nd.array(h, dtype=np.float16), 0.5, 0.5)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.asnumpy(), h.astype(np.float32) * 0.5, rtol=1e-3)
    x = (rng.rand(2, 3, 4, 3) * 255).astype(np.float32)
    for op, kw in (("random_hue", dict(min_factor=0.2, max_factor=0.2)),
                   ("random_contrast", dict(min_factor=0.7, max_factor=0.7)),
                   ("random_saturation", dict(min_factor=1.3, max_factor=1.3)),
                   ("random_flip_left_right", dict(p=1.0)),
                   ("random_color_jitter", dict(brightness=0, contrast=0, saturation=0, hue=0))):
        y = getattr(sym.image, op)(sym.var("data"), **kw)
        check_consistency(y, {"data": x}, grad=False, rtol=1e-5, atol=1e-3)


def test_errors():
    x = nd.zeros((3, 3, 3))
    with pytest.raises(nbdl.errors.AttrError, match="min_factor"):
        nd.image.random_brightness(x, 1.5, 0.5)
    with pytest.raises(nbdl.errors.AttrError, match="non-negative"):
        nd.image.random_color_jitter(x, -1, 0, 0, 0)
    with pytest.raises(nbdl.ShapeError, match="_image_random_hue.*channels"):
        nd.image.random_hue(nd.zeros((3, 3, 4)), 0.1, 0.2)
