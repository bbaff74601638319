"""Image transforms (Gluon's ``gluon.data.vision.transforms``).

Each transform is a ``Block`` that runs vectorised numpy on the host, so it
is cheap to call in DataLoader workers.  It takes an HWC image (or, where
Gluon does, an NHWC batch) as an NDArray or a numpy array and returns the
same kind; ``ToTensor`` gives CHW (NCHW) float32 and ``Normalize`` works on
that layout.  Colour and geometry transforms keep the input dtype (integer
results are rounded and saturated, as MXNet's ``saturate_cast``).

They are plain Blocks, not HybridBlocks: they cannot be placed inside a
``HybridSequential`` or hybridized into a graph (``hybridize()`` on a
``Compose`` is a no-op).

Random draws come from nbdl's generator (``nbdl.random.generator()``), so
``nbdl.random.seed(n)`` reproduces them.  A batch gets independent draws per
image.  In a forked DataLoader worker process each process derives its own
stream from the inherited generator and its pid (otherwise every worker
would repeat the same "random" augmentations), so augmentations made in
worker processes are random but not reproducible by the seed alone
(``thread_pool=True`` workers share the main generator).
"""
import numbers
import os

import numpy as np

from ....ndarray import random as _random
from ...block import Block
from ..dataset import DataError
from .image import (LUMA, _cast_like, center_crop_host, fixed_crop_host, from_host,
                    interp_name, resize_host, to_host)

_inherited = None    # nbdl's generator as it was when this process was forked
_derived = None      # this process's own stream derived from it


def _after_fork_in_child():
    global _inherited, _derived
    _inherited, _derived = _random.generator(), None


os.register_at_fork(after_in_child=_after_fork_in_child)


def _rng():
    """nbdl's generator; in a forked child still holding the generator it
    inherited, a per-process stream derived from it and the pid (reseeding
    with ``nbdl.random.seed`` in the child makes draws plain again)."""
    global _derived
    gen = _random.generator()
    if _inherited is None or gen is not _inherited:
        return gen
    if _derived is None:
        _derived = np.random.default_rng([int(gen.integers(1 << 62)), os.getpid()])
    return _derived


def _image(x, where, batch=True):
    """(host array, was_ndarray, is_batch) for an HWC image or NHWC batch."""
    arr, as_nd = to_host(x, where)
    if arr.ndim == 3 or (batch and arr.ndim == 4):
        return arr, as_nd, arr.ndim == 4
    want = "an HWC image or NHWC batch" if batch else "an HWC image"
    raise DataError(f"{where}: expected {want}, got an array of shape {arr.shape}")


def _size_pair(size, where):
    """(w, h) from an int or a (w, h) pair."""
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        size = (int(size), int(size))
    try:
        w, h = (int(s) for s in size)
    except (TypeError, ValueError):
        raise DataError(f"{where}: size must be an int or a (width, height) pair, "
                        f"got {size!r}") from None
    if w <= 0 or h <= 0:
        raise DataError(f"{where}: size must be positive, got {size!r}")
    return w, h


def _nonneg(value, name, where):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or value < 0:
        raise DataError(f"{where}: {name} must be a non-negative number, got {value!r}")
    return float(value)


class _Callable(Block):
    """A plain callable as a Block (so ``Compose`` can hold it)."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def forward(self, *args):
        return self._fn(*args)

    def __repr__(self):
        return f"{type(self).__name__}({self._fn!r})"


class Compose(Block):
    """Applies ``transforms`` (Blocks or callables) one after another."""

    def __init__(self, transforms):
        super().__init__()
        for i, t in enumerate(transforms):
            if not callable(t):
                raise DataError(f"Compose: transform {i} ({type(t).__name__}) is not callable")
            self.register_child(t if isinstance(t, Block) else _Callable(t), str(i))

    def forward(self, x, *args):
        for child in self._children.values():
            x = child(x, *args) if args else child(x)
        return x


class Cast(Block):
    """Casts the input to ``dtype``."""

    def __init__(self, dtype="float32"):
        super().__init__()
        try:
            self._dtype = np.dtype(dtype)
        except TypeError:
            raise DataError(f"Cast: unknown dtype {dtype!r}") from None

    def forward(self, x):
        arr, as_nd = to_host(x, "Cast")
        return from_host(arr.astype(self._dtype), as_nd)


class ToTensor(Block):
    """HWC (NHWC) [0, 255] to CHW (NCHW) float32 [0, 1]."""

    def forward(self, x):
        arr, as_nd, batch = _image(x, "ToTensor")
        out = arr.astype(np.float32) / np.float32(255)
        return from_host(np.moveaxis(out, -1, -3), as_nd)


class Normalize(Block):
    """``(x - mean) / std`` per channel of a CHW (NCHW) tensor; ``mean``
    and ``std`` are numbers or one value per channel."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        try:
            self._mean = np.atleast_1d(np.asarray(mean, dtype=np.float32)).ravel()
            self._std = np.atleast_1d(np.asarray(std, dtype=np.float32)).ravel()
        except (TypeError, ValueError):
            raise DataError(f"Normalize: mean and std must be numbers or sequences of numbers, "
                            f"got {mean!r} and {std!r}") from None
        if np.any(self._std == 0):
            raise DataError(f"Normalize: std must not contain zeros, got {std!r}")

    def forward(self, x):
        arr, as_nd = to_host(x, "Normalize")
        if arr.ndim not in (3, 4):
            raise DataError(f"Normalize: expected a CHW tensor or NCHW batch, got shape "
                            f"{arr.shape}")
        c = arr.shape[-3]
        for name, v in (("mean", self._mean), ("std", self._std)):
            if v.size not in (1, c):
                raise DataError(f"Normalize: {name} has {v.size} values but the input has {c} "
                                f"channels (shape {arr.shape})")
        dtype = arr.dtype if np.issubdtype(arr.dtype, np.floating) else np.float32
        out = (arr.astype(np.float32) - self._mean[:, None, None]) / self._std[:, None, None]
        return from_host(out.astype(dtype, copy=False), as_nd)


class Resize(Block):
    """Resizes to ``size``: ``(width, height)``, or an int for a square,
    or, with ``keep_ratio``, the length of the short edge (the long edge
    scaled to keep the aspect ratio).  ``interpolation``: 0 / 'nearest' or
    1 / 'bilinear'."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._keep = bool(keep_ratio) and isinstance(size, numbers.Integral)
        self._size = _size_pair(size, "Resize")
        self._interp = interp_name(interpolation, "Resize")

    def forward(self, x):
        arr, as_nd, _ = _image(x, "Resize")
        h, w = arr.shape[-3], arr.shape[-2]
        new_w, new_h = self._size
        if self._keep:
            if h > w:
                new_w, new_h = self._size[0], h * self._size[0] // w
            else:
                new_w, new_h = w * self._size[0] // h, self._size[0]
        return from_host(resize_host(arr, new_w, new_h, self._interp), as_nd)


class CenterCrop(Block):
    """The centred ``size`` crop (int or (w, h)); smaller images are
    cropped to the size's aspect ratio and resized up."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._size = _size_pair(size, "CenterCrop")
        self._interp = interp_name(interpolation, "CenterCrop")

    def forward(self, x):
        arr, as_nd, _ = _image(x, "CenterCrop")
        return from_host(center_crop_host(arr, self._size, self._interp), as_nd)


class CropResize(Block):
    """The ``width`` x ``height`` region at (``x``, ``y``), resized to
    ``size`` when given."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        try:
            self._box = tuple(int(v) for v in (x, y, width, height))
        except (TypeError, ValueError):
            raise DataError(f"CropResize: x, y, width, height must be integers, got "
                            f"{(x, y, width, height)!r}") from None
        self._size = None if size is None else _size_pair(size, "CropResize")
        self._interp = interp_name(1 if interpolation is None else interpolation, "CropResize")

    def forward(self, x):
        arr, as_nd, _ = _image(x, "CropResize")
        x0, y0, w, h = self._box
        return from_host(fixed_crop_host(arr, x0, y0, w, h, self._size, self._interp), as_nd)


class RandomResizedCrop(Block):
    """A crop of random area (``scale`` of the image's) and aspect ratio
    (``ratio``, drawn log-uniformly), resized to ``size``; after 10 draws
    that do not fit, a centre crop."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        self._size = _size_pair(size, "RandomResizedCrop")
        for name, pair in (("scale", scale), ("ratio", ratio)):
            try:
                ok = len(pair) == 2 and 0 < float(pair[0]) <= float(pair[1])
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise DataError(f"RandomResizedCrop: {name} must be (low, high) with "
                                f"0 < low <= high, got {pair!r}")
        self._scale = tuple(float(s) for s in scale)
        self._ratio = tuple(float(r) for r in ratio)
        self._interp = interp_name(interpolation, "RandomResizedCrop")

    def _one(self, img, rng):
        h, w = img.shape[0], img.shape[1]
        area = h * w
        log_ratio = (np.log(self._ratio[0]), np.log(self._ratio[1]))
        for _ in range(10):
            target = rng.uniform(*self._scale) * area
            aspect = np.exp(rng.uniform(*log_ratio))
            new_w = int(round(np.sqrt(target * aspect)))
            new_h = int(round(np.sqrt(target / aspect)))
            if 0 < new_w <= w and 0 < new_h <= h:
                x0 = int(rng.integers(0, w - new_w + 1))
                y0 = int(rng.integers(0, h - new_h + 1))
                return fixed_crop_host(img, x0, y0, new_w, new_h, self._size, self._interp)
        return center_crop_host(img, self._size, self._interp)

    def forward(self, x):
        arr, as_nd, batch = _image(x, "RandomResizedCrop")
        rng = _rng()
        if batch:
            out = np.stack([self._one(img, rng) for img in arr]) if len(arr) else \
                np.empty((0, self._size[1], self._size[0], arr.shape[3]), arr.dtype)
        else:
            out = self._one(arr, rng)
        return from_host(out, as_nd)


class RandomCrop(Block):
    """A random ``size`` crop (after padding every side by ``pad`` pixels of
    ``pad_value``, when given); images smaller than ``size`` are resized up
    first."""

    def __init__(self, size, pad=None, pad_value=0, interpolation=1):
        super().__init__()
        self._size = _size_pair(size, "RandomCrop")
        self._pad = pad
        if pad is not None:
            pads = (pad, pad) if isinstance(pad, numbers.Integral) else tuple(pad)
            if len(pads) not in (2, 4) or any(int(p) < 0 for p in pads):
                raise DataError(f"RandomCrop: pad must be an int, (x, y) or (left, top, right, "
                                f"bottom) of non-negative ints, got {pad!r}")
            self._pad = tuple(int(p) for p in (pads * 2 if len(pads) == 2 else pads))
        self._pad_value = pad_value
        self._interp = interp_name(interpolation, "RandomCrop")

    def forward(self, x):
        arr, as_nd, batch = _image(x, "RandomCrop", batch=False)
        if self._pad is not None:
            left, top, right, bottom = self._pad
            arr = np.pad(arr, ((top, bottom), (left, right), (0, 0)),
                         constant_values=self._pad_value)
        w, h = self._size
        in_h, in_w = arr.shape[0], arr.shape[1]
        if in_w < w or in_h < h:
            scale = max(w / in_w, h / in_h)
            in_w, in_h = max(w, int(np.ceil(in_w * scale))), max(h, int(np.ceil(in_h * scale)))
            arr = resize_host(arr, in_w, in_h, self._interp)
        rng = _rng()
        x0 = int(rng.integers(0, in_w - w + 1))
        y0 = int(rng.integers(0, in_h - h + 1))
        return from_host(fixed_crop_host(arr, x0, y0, w, h), as_nd)


class _RandomFlip(Block):
    _axis = None

    def __init__(self, p=0.5):
        super().__init__()
        if not isinstance(p, numbers.Real) or not 0 <= p <= 1:
            raise DataError(f"{type(self).__name__}: p must be in [0, 1], got {p!r}")
        self._p = float(p)

    def forward(self, x):
        arr, as_nd, batch = _image(x, type(self).__name__)
        rng = _rng()
        if not batch:
            out = np.flip(arr, self._axis) if rng.random() < self._p else arr.copy()
            return from_host(out, as_nd)
        flip = rng.random(len(arr)) < self._p
        out = arr.copy()
        out[flip] = np.flip(arr[flip], self._axis + 1)
        return from_host(out, as_nd)


class RandomFlipLeftRight(_RandomFlip):
    """Flips the image horizontally with probability ``p``."""
    _axis = 1


class RandomFlipTopBottom(_RandomFlip):
    """Flips the image vertically with probability ``p``."""
    _axis = 0


# -- colour -------------------------------------------------------------
_TYIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
_ITYIQ = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])
_EIGVAL = np.array([55.46, 4.794, 1.148])
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                    [-0.5836, -0.6948, 0.4203]])


def _rgb(arr, where):
    if arr.shape[-1] != 3:
        raise DataError(f"{where}: expected RGB images (3 channels last), got shape {arr.shape}")


def adjust_brightness(img, alpha):
    """float32 ``img * alpha`` (``alpha`` broadcast per image)."""
    return img * alpha


def adjust_contrast(img, alpha):
    """Blend with the image's mean gray level."""
    gray = (img @ LUMA).mean(axis=(-2, -1), keepdims=True)[..., None]
    return img * alpha + gray * (1 - alpha)


def adjust_saturation(img, alpha):
    """Blend with the per-pixel gray level."""
    gray = (img @ LUMA)[..., None]
    return img * alpha + gray * (1 - alpha)


def adjust_hue(img, alpha):
    """Rotate hue by ``alpha`` half-turns in YIQ space (one alpha per image:
    a scalar, or an array of shape (N, 1, 1, 1))."""
    alpha = np.asarray(alpha, dtype=np.float64).reshape(-1)
    u, w = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
    bt = np.zeros((len(alpha), 3, 3))
    bt[:, 0, 0] = 1
    bt[:, 1, 1], bt[:, 1, 2], bt[:, 2, 1], bt[:, 2, 2] = u, -w, w, u
    t = np.transpose(_ITYIQ @ bt @ _TYIQ, (0, 2, 1)).astype(np.float32)
    if img.ndim == 3:
        return img @ t[0]
    return np.einsum("nhwc,ncd->nhwd", img, t)


class _RandomColor(Block):
    """Draws one factor per image and applies ``_apply`` in float32."""

    def __init__(self, amount, name):
        super().__init__()
        self._amount = _nonneg(amount, name, type(self).__name__)

    def _draw(self, rng, n):
        return 1 + rng.uniform(-self._amount, self._amount, n)

    def forward(self, x):
        arr, as_nd, batch = _image(x, type(self).__name__)
        _rgb(arr, type(self).__name__)
        alpha = self._draw(_rng(), len(arr) if batch else 1).astype(np.float32)
        alpha = alpha.reshape(-1, 1, 1, 1) if batch else alpha.reshape(1, 1, 1)
        out = self._apply(arr.astype(np.float32), alpha)
        return from_host(_cast_like(out, arr.dtype), as_nd)


class RandomBrightness(_RandomColor):
    """Scales pixel values by a factor drawn from [1 - brightness, 1 + brightness]."""

    def __init__(self, brightness):
        super().__init__(brightness, "brightness")

    _apply = staticmethod(adjust_brightness)


class RandomContrast(_RandomColor):
    """Blends with the mean gray level by a factor from [1 - contrast, 1 + contrast]."""

    def __init__(self, contrast):
        super().__init__(contrast, "contrast")

    _apply = staticmethod(adjust_contrast)


class RandomSaturation(_RandomColor):
    """Blends with the per-pixel gray level by a factor from
    [1 - saturation, 1 + saturation]."""

    def __init__(self, saturation):
        super().__init__(saturation, "saturation")

    _apply = staticmethod(adjust_saturation)


class RandomHue(_RandomColor):
    """Rotates the hue by a factor from [-hue, hue] half-turns (YIQ space)."""

    def __init__(self, hue):
        super().__init__(hue, "hue")

    def _draw(self, rng, n):
        return rng.uniform(-self._amount, self._amount, n)

    _apply = staticmethod(adjust_hue)


class RandomColorJitter(Block):
    """Random brightness, contrast, saturation and hue changes (those with
    a non-zero amount), applied in a random order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._steps = []
        for cls, amount in ((RandomBrightness, brightness), (RandomContrast, contrast),
                            (RandomSaturation, saturation), (RandomHue, hue)):
            _nonneg(amount, cls.__name__[6:].lower(), "RandomColorJitter")
            if amount > 0:
                self._steps.append(cls(amount))

    def forward(self, x):
        order = _rng().permutation(len(self._steps))
        for i in order:
            x = self._steps[i](x)
        return x


class RandomLighting(Block):
    """AlexNet-style PCA lighting noise: adds ``eigvec @ (a * eigval)`` to
    every pixel, ``a`` drawn from N(0, alpha) per image."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = _nonneg(alpha, "alpha", "RandomLighting")

    def forward(self, x):
        arr, as_nd, batch = _image(x, "RandomLighting")
        _rgb(arr, "RandomLighting")
        n = len(arr) if batch else 1
        a = _rng().normal(0, self._alpha, (n, 3))
        rgb = ((a * _EIGVAL) @ _EIGVEC.T).astype(np.float32)
        rgb = rgb.reshape(n, 1, 1, 3) if batch else rgb.reshape(1, 1, 3)
        out = arr.astype(np.float32) + rgb
        return from_host(_cast_like(out, arr.dtype), as_nd)
