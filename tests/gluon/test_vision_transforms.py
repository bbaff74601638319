"""Vision transforms against numpy references written here (direct loops
on tiny images).  The op-backed random ones draw from the kernel
generators: they are checked through nbdl.random.seed's reproducibility and
by recovering each image's factor from a float image (the ops' own numbers
are checked in tests/ops/test_image*.py)."""
import numpy as np
import pytest

import nbdl
from nbdl import NbdlError
from nbdl.gluon import Block
from nbdl.gluon.data.vision import transforms as T

LUMA = np.array([0.299, 0.587, 0.114], np.float32)


def _img(h=5, w=7, c=3, seed=0, dtype=np.uint8):
    return np.random.default_rng(seed).integers(0, 256, (h, w, c)).astype(dtype)


def _saturate(x):
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


def _bilinear_ref(img, out_h, out_w):
    in_h, in_w, c = img.shape
    out = np.zeros((out_h, out_w, c), np.float64)
    for y in range(out_h):
        sy = min(max((y + 0.5) * in_h / out_h - 0.5, 0.0), in_h - 1)
        y0 = int(np.floor(sy))
        y1 = min(y0 + 1, in_h - 1)
        fy = sy - y0
        for x in range(out_w):
            sx = min(max((x + 0.5) * in_w / out_w - 0.5, 0.0), in_w - 1)
            x0 = int(np.floor(sx))
            x1 = min(x0 + 1, in_w - 1)
            fx = sx - x0
            for ch in range(c):
                top = img[y0, x0, ch] * (1 - fx) + img[y0, x1, ch] * fx
                bot = img[y1, x0, ch] * (1 - fx) + img[y1, x1, ch] * fx
                out[y, x, ch] = top * (1 - fy) + bot * fy
    return out


def _nearest_ref(img, out_h, out_w):
    in_h, in_w, c = img.shape
    out = np.zeros((out_h, out_w, c), img.dtype)
    for y in range(out_h):
        for x in range(out_w):
            out[y, x] = img[min(int(y * in_h / out_h), in_h - 1), min(int(x * in_w / out_w),
                                                                        in_w - 1)]
    return out


def test_to_tensor_and_ndarray_in_out():
    img = _img()
    out = T.ToTensor()(nbdl.nd.array(img, dtype=np.uint8))
    assert isinstance(out, nbdl.nd.NDArray) and out.dtype == np.float32
    ref = np.zeros((3, 5, 7), np.float32)
    for c in range(3):
        ref[c] = img[:, :, c] / np.float32(255)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-6)
    batch = T.ToTensor()(np.stack([img, img]))
    assert isinstance(batch, np.ndarray) and batch.shape == (2, 3, 5, 7)
    with pytest.raises(NbdlError, match="HWC"):
        T.ToTensor()(np.zeros((4, 4)))


def test_normalize():
    x = np.random.default_rng(1).random((3, 4, 5)).astype(np.float32)
    mean, std = (0.1, 0.2, 0.3), (0.5, 0.25, 2.0)
    out = T.Normalize(mean, std)(x)
    for c in range(3):
        np.testing.assert_allclose(out[c], (x[c] - mean[c]) / std[c], rtol=1e-6)
    out = T.Normalize(0.5, 2.0)(nbdl.nd.array(np.stack([x, x])))
    np.testing.assert_allclose(out.asnumpy()[1], (x - 0.5) / 2.0, rtol=1e-6)
    with pytest.raises(NbdlError, match="must hold 1 or 3 values"):
        T.Normalize((0.1, 0.2))(x)
    with pytest.raises(NbdlError, match="zeros"):
        T.Normalize(0, (1, 0, 1))


def test_cast_and_compose():
    img = _img()
    out = T.Compose([T.Cast("float16"), lambda x: x * 2])(img)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, img.astype(np.float16) * 2)
    pipe = T.Compose([T.ToTensor(), T.Normalize(0.5, 0.5)])
    assert isinstance(pipe, Block) and len(pipe._children) == 2
    np.testing.assert_allclose(pipe(img), (np.moveaxis(img, -1, 0) / 255 - 0.5) / 0.5,
                               rtol=1e-5, atol=1e-6)
    pipe.hybridize()   # plain Blocks: accepted, still eager
    with pytest.raises(NbdlError, match="not callable"):
        T.Compose([T.ToTensor(), 3])


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
@pytest.mark.parametrize("out_hw", [(9, 4), (3, 11), (5, 7), (1, 1)])
def test_resize_bilinear_vs_loop(dtype, out_hw):
    img = _img(5, 7, 3, seed=2, dtype=dtype)
    out = T.Resize((out_hw[1], out_hw[0]))(img)
    ref = _bilinear_ref(img.astype(np.float64), *out_hw)
    assert out.dtype == dtype and out.shape == out_hw + (3,)
    if dtype == np.uint8:
        assert np.abs(out.astype(int) - _saturate(ref).astype(int)).max() <= 1
    else:
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-3)


def test_resize_nearest_batch_and_keep_ratio():
    img = _img(5, 7, 2, seed=3)
    out = T.Resize((4, 9), interpolation="nearest")(np.stack([img, img[::-1]]))
    np.testing.assert_array_equal(out[0], _nearest_ref(img, 9, 4))
    np.testing.assert_array_equal(out[1], _nearest_ref(img[::-1], 9, 4))
    assert T.Resize(10, keep_ratio=True)(img).shape == (10, 14, 2)       # short side 5 -> 10
    assert T.Resize(10, keep_ratio=True)(_img(8, 4)).shape == (20, 10, 3)
    assert T.Resize(3)(img).shape == (3, 3, 2)
    with pytest.raises(NbdlError, match="interpolation"):
        T.Resize(3, interpolation=7)
    with pytest.raises(NbdlError, match="size"):
        T.Resize((0, 3))


def test_center_crop():
    img = _img(6, 8, 3, seed=4)
    np.testing.assert_array_equal(T.CenterCrop(4)(img), img[1:5, 2:6])
    np.testing.assert_array_equal(T.CenterCrop((3, 2))(img), img[2:4, 2:5])
    # a crop larger than the image: the largest same-ratio crop, resized up
    big = T.CenterCrop((10, 10))(img)
    ref = _bilinear_ref(img[:, 1:7].astype(np.float64), 10, 10)
    assert np.abs(big.astype(int) - _saturate(ref).astype(int)).max() <= 1
    out = T.CropResize(1, 2, 3, 4)(nbdl.nd.array(img, dtype=np.uint8))
    np.testing.assert_array_equal(out.asnumpy(), img[2:6, 1:4])
    with pytest.raises(NbdlError, match="does not fit"):
        T.CropResize(6, 0, 3, 3)(img)


def test_random_resized_crop():
    img = _img(6, 8, 3, seed=5)
    nbdl.random.seed(7)
    a = T.RandomResizedCrop(4)(img)
    nbdl.random.seed(7)
    b = T.RandomResizedCrop(4)(img)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (4, 4, 3)
    # scale 1 and the image's own ratio: the whole image, resized
    whole = T.RandomResizedCrop((5, 3), scale=(1, 1), ratio=(8 / 6, 8 / 6))(img)
    ref = _bilinear_ref(img.astype(np.float64), 3, 5)
    assert np.abs(whole.astype(int) - _saturate(ref).astype(int)).max() <= 1
    # impossible ratio: falls back to the centre crop
    np.testing.assert_array_equal(
        T.RandomResizedCrop(4, scale=(1, 1), ratio=(20, 20))(img), T.CenterCrop(4)(img))
    batch = T.RandomResizedCrop((3, 2))(np.stack([img] * 3))
    assert batch.shape == (3, 2, 3, 3)
    with pytest.raises(NbdlError, match="scale"):
        T.RandomResizedCrop(4, scale=(0.5, 0.1))


def test_random_crop():
    img = _img(6, 8, 3, seed=6)
    nbdl.random.seed(3)
    out = T.RandomCrop(4)(img)
    rng = np.random.default_rng(3)
    x0, y0 = int(rng.integers(0, 5)), int(rng.integers(0, 3))
    np.testing.assert_array_equal(out, img[y0:y0 + 4, x0:x0 + 4])
    padded = T.RandomCrop((12, 10), pad=2)(img)
    assert padded.shape == (10, 12, 3)
    np.testing.assert_array_equal(padded[0], 0)


def test_flips():
    img = _img(4, 5, 3, seed=7)
    np.testing.assert_array_equal(T.RandomFlipLeftRight(p=1)(img), img[:, ::-1])
    np.testing.assert_array_equal(T.RandomFlipTopBottom(p=1)(img), img[::-1])
    np.testing.assert_array_equal(T.RandomFlipLeftRight(p=0)(img), img)
    batch = np.stack([img, img + 1])
    out = T.RandomFlipTopBottom(p=1)(nbdl.nd.array(batch, dtype=np.uint8)).asnumpy()
    np.testing.assert_array_equal(out, batch[:, ::-1])
    nbdl.random.seed(11)
    out = T.RandomFlipLeftRight()(np.stack([img] * 40))
    flipped = np.array([np.array_equal(o, img[:, ::-1]) for o in out])
    assert all(f or np.array_equal(o, img) for f, o in zip(flipped, out))
    assert 8 <= flipped.sum() <= 32                      # one fair coin per image
    nbdl.random.seed(11)
    again = T.RandomFlipLeftRight()(np.stack([img] * 40))
    np.testing.assert_array_equal(again, out)


def _factor(out, img):
    """The one factor ``a`` with out == img * a (float images)."""
    a = out.ravel()[np.argmax(img)] / img.max()
    np.testing.assert_allclose(out, img * a, rtol=1e-5, atol=1e-3)
    return a


@pytest.mark.parametrize("name", ["brightness", "contrast", "saturation"])
def test_random_brightness_contrast_saturation(name):
    img = _img(4, 5, 3, seed=8).astype(np.float32)
    cls = getattr(T, f"Random{name.capitalize()}")
    nbdl.random.seed(21)
    out = cls(0.4)(img).astype(np.float64)
    x = img.astype(np.float64)
    if name == "brightness":
        ref = lambda a: x * a                                         # noqa: E731
    elif name == "contrast":
        mean = np.mean(x @ LUMA.astype(np.float64))
        ref = lambda a: x * a + (1 - a) * mean                        # noqa: E731
    else:   # MXNet's gray level: 0.114 * blue
        ref = lambda a: x * a + (1 - a) * 0.114 * x[..., 2:3]         # noqa: E731
    # out is affine in a: recover it from two values
    a = (out.ravel()[0] - ref(0).ravel()[0]) / (ref(1).ravel()[0] - ref(0).ravel()[0])
    assert 0.6 <= a <= 1.4
    np.testing.assert_allclose(out, ref(a), rtol=1e-4, atol=1e-3)
    nbdl.random.seed(21)           # the same draw for a uint8 image: saturated, truncated
    out8 = cls(0.4)(img.astype(np.uint8))
    assert out8.dtype == np.uint8
    assert np.abs(out8.astype(int) - np.clip(ref(a), 0, 255).astype(int)).max() <= 1
    nbdl.random.seed(21)
    np.testing.assert_array_equal(cls(0.4)(img), out.astype(np.float32))


def test_random_hue():
    img = _img(3, 4, 3, seed=9).astype(np.float32)
    # factors in [1 - hue, 1 + hue] turns, as MXNet's transform: hue 0 turns once around
    np.testing.assert_allclose(T.RandomHue(0)(img), img, atol=2e-3)
    nbdl.random.seed(5)
    out = T.RandomHue(0.3)(img)
    nbdl.random.seed(5)
    np.testing.assert_array_equal(T.RandomHue(0.3)(img), out)
    assert not np.allclose(out, img, atol=1)
    # the hue turns, lightness and saturation stay (HLS)
    np.testing.assert_allclose(out.max(-1) + out.min(-1), img.max(-1) + img.min(-1), atol=1e-2)
    batch = T.RandomHue(0.3)(np.stack([img, img]))
    assert not np.allclose(batch[0], batch[1])        # one draw per image
    gray = np.full((2, 2, 1), 7, np.float32)
    np.testing.assert_array_equal(T.RandomHue(0.1)(gray), gray)   # one channel: unchanged


def test_color_jitter_and_lighting():
    img = _img(4, 4, 3, seed=10).astype(np.float32)
    nbdl.random.seed(9)
    a = _factor(T.RandomColorJitter(brightness=0.5)(img), img)
    assert 0.5 <= a <= 1.5
    jitter = T.RandomColorJitter(0.2, 0.2, 0.2, 0.1)
    nbdl.random.seed(1)
    a = jitter(nbdl.nd.array(img))
    nbdl.random.seed(1)
    b = jitter(nbdl.nd.array(img))
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    np.testing.assert_array_equal(T.RandomColorJitter()(img), img)
    nbdl.random.seed(4)
    lit = T.RandomLighting(0.1)(img)
    shift = (lit - img).reshape(-1, 3)
    np.testing.assert_allclose(shift, np.broadcast_to(shift[0], shift.shape), atol=1e-4)
    assert np.abs(shift[0]).max() > 0
    np.testing.assert_array_equal(T.RandomLighting(0)(img), img)
    with pytest.raises(NbdlError, match="non-negative"):
        T.RandomLighting(-1)
    with pytest.raises(NbdlError, match="non-negative"):
        T.RandomColorJitter(contrast=-0.1)


def test_op_backed_transforms_hybridize_and_are_mxnet_ops():
    img = nbdl.nd.array(_img(6, 5, 3, seed=12), dtype=np.uint8)
    pipe = nbdl.gluon.nn.HybridSequential()
    pipe.add(T.CropResize(1, 1, 3, 4, size=(2, 2)), T.ToTensor(), T.Normalize(0.5, 0.25))
    eager = pipe(img).asnumpy()
    pipe.hybridize()
    np.testing.assert_allclose(pipe(img).asnumpy(), eager, rtol=1e-6)
    graph = pipe(nbdl.sym.var("data"))
    ops = [n["op"] for n in __import__("json").loads(graph.tojson())["nodes"]]
    assert ops == ["null", "_image_crop", "_image_resize", "_image_to_tensor", "_image_normalize"]


def test_transform_first_in_dataset_pipeline():
    from nbdl.gluon.data import ArrayDataset, DataLoader
    imgs = np.stack([_img(4, 4, 3, seed=s) for s in range(4)])
    ds = ArrayDataset(imgs, np.arange(4)).transform_first(
        T.Compose([T.Resize(2), T.ToTensor()]))
    (x, y), (x2, _) = list(DataLoader(ds, batch_size=2))
    assert x.shape == (2, 3, 2, 2) and x.dtype == np.float32
    np.testing.assert_allclose(x.asnumpy()[1], T.ToTensor()(T.Resize(2)(imgs[1])))


def test_forked_workers_draw_different_augmentations():
    from nbdl.gluon.data import DataLoader, SimpleDataset
    img = np.full((2, 2, 3), 100, np.uint8)
    ds = SimpleDataset([img] * 4).transform(T.RandomBrightness(0.5))
    nbdl.random.seed(0)
    loader = DataLoader(ds, batch_size=2, num_workers=2)
    try:
        a, b = [x.asnumpy() for x in loader]
    finally:
        loader.close()
    assert not np.array_equal(a, b)


def test_transforms_pickle():
    import pickle
    pipe = T.Compose([T.RandomResizedCrop(3), T.ToTensor(), T.Normalize(0.5, 0.2)])
    again = pickle.loads(pickle.dumps(pipe))
    nbdl.random.seed(2)
    x = pipe(_img())
    nbdl.random.seed(2)
    np.testing.assert_array_equal(again(_img()), x)


def test_bad_arguments_are_nbdl_errors():
    for make in (lambda: T.Normalize("a"), lambda: T.CropResize("x", 0, 1, 1),
                 lambda: T.RandomResizedCrop(3, scale=5), lambda: T.Cast("nonsense"),
                 lambda: T.RandomFlipLeftRight(p=2), lambda: T.Resize("big"),
                 lambda: T.RandomCrop(3, pad=-1)):
        with pytest.raises(NbdlError):
            make()
    with pytest.raises(NbdlError, match="NDArray or numpy"):
        T.ToTensor()([[1, 2]])


def np_rotate(img, deg):
    """Nearest-free reference: rotate a CHW float image about its centre by
    sampling bilinearly at the rotated (normalised) grid, zeros outside."""
    c, h, w = img.shape
    out = np.zeros_like(img, dtype=np.float64)
    t = np.pi * deg / 180
    hs, ws = (h - 1) / 2, (w - 1) / 2
    for y in range(h):
        for x in range(w):
            gx = ((x - ws) * np.cos(t) - (y - hs) * np.sin(t)) / ws
            gy = ((x - ws) * np.sin(t) + (y - hs) * np.cos(t)) / hs
            sx, sy = (gx + 1) * ws, (gy + 1) * hs
            x0, y0 = int(np.floor(sx)), int(np.floor(sy))
            for dy in (0, 1):
                for dx in (0, 1):
                    xi, yi = x0 + dx, y0 + dy
                    if 0 <= xi < w and 0 <= yi < h:
                        out[:, y, x] += (1 - abs(sx - xi)) * (1 - abs(sy - yi)) * img[:, yi, xi]
    return out


def test_rotate_random_rotation_random_apply():
    img = np.random.default_rng(3).random((2, 5, 7)).astype(np.float32)
    out = T.Rotate(30)(nbdl.nd.array(img)).asnumpy()
    np.testing.assert_allclose(out, np_rotate(img, 30), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(T.Rotate(0)(img), img, atol=1e-6)            # numpy in and out
    batch = np.stack([img, img])
    np.testing.assert_allclose(T.Rotate(-45, zoom_in=True)(batch)[1],
                               T.Rotate(-45, zoom_in=True)(img), rtol=1e-6)
    with pytest.raises(TypeError, match="float32"):
        T.Rotate(10)(nbdl.nd.array(img.astype(np.uint8), dtype=np.uint8))
    np.testing.assert_array_equal(T.RandomRotation((-10, 10), rotate_with_proba=0)(img), img)
    nbdl.random.seed(4)
    a = T.RandomRotation((-90, 90))(batch)
    nbdl.random.seed(4)
    np.testing.assert_array_equal(T.RandomRotation((-90, 90))(batch), a)
    assert not np.allclose(a[0], a[1])                  # one angle per image
    with pytest.raises(NbdlError, match="ordered"):
        T.RandomRotation((10, -10))
    assert T.RandomApply(T.Rotate(90), p=0)(img) is img
    np.testing.assert_allclose(T.RandomApply(lambda x: x * 2, p=1)(img), img * 2)
