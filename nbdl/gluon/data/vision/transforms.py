"""Image transforms (Gluon's ``gluon.data.vision.transforms``).

As in MXNet 1.9.1, ``ToTensor``, ``Normalize``, ``Resize``, ``CropResize``,
the random flips, the colour transforms and ``RandomLighting`` are
HybridBlocks that run one ``_image_*`` op each (``npx.image.*``: eagerly on
NDArrays, as graph nodes when hybridized or traced), so their numbers are
MXNet's and the random ones draw from nbdl's kernel generators on the
image's device (``nbdl.random.seed(n)`` reproduces them).  ``CenterCrop``,
``RandomResizedCrop`` and ``RandomCrop`` are plain Blocks over host numpy
helpers (MXNet's use ``mx.image``), drawing from nbdl's host generator
(``nbdl.random.generator()``).

Each takes an HWC image or (where Gluon does, and for every op-backed
transform) an NHWC batch, as an NDArray or a numpy array, and returns the
same kind; ``ToTensor`` gives CHW (NCHW) float32 and ``Normalize`` works on
that layout.  A batch gets independent draws per image.

In a forked DataLoader worker process each process derives its own host
stream from the inherited generator and its pid, and numba reseeds the
kernels' stream in a forked child, so augmentations made in worker
processes differ between workers but are not reproducible by the seed
alone (``thread_pool=True`` workers share the host generator; each thread
has its own kernel stream).
"""
import numbers
import os

import numpy as np

from ....ndarray import random as _random
from .... import ndarray as _nd
from ....ndarray.ndarray import NDArray
from .... import npx
from ....errors import DTypeError
from ...block import Block
from ...hybrid_block import HybridBlock
from ..dataset import DataError
from ....symbol import Symbol
from .image import (center_crop_host, fixed_crop_host, from_host, interp_name, resize_host,
                    to_host)

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


def _size_pair(size, where, positive=True):
    """(w, h) from an int or a (w, h) pair (``positive``: checked here rather
    than by the op that takes it)."""
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        size = (int(size), int(size))
    try:
        w, h = (int(s) for s in size)
    except (TypeError, ValueError):
        raise DataError(f"{where}: size must be an int or a (width, height) pair, "
                        f"got {size!r}") from None
    if positive and (w <= 0 or h <= 0):
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




# -- transforms that run one _image_* op (MXNet's HybridBlocks) ---------------------------------

_INTERP_CODES = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, "nearest": 0, "bilinear": 1, "linear": 1,
                 "bicubic": 2, "cubic": 2, "area": 3, "lanczos": 4}


def _interp_code(interpolation, where):
    try:
        return _INTERP_CODES[interpolation]
    except (KeyError, TypeError):
        raise DataError(f"{where}: interpolation must be 0 (nearest), 1 (bilinear), 2 (bicubic), "
                        f"3 (area) or 4 (Lanczos-4), got {interpolation!r}") from None


class _ImageOp(HybridBlock):
    """A transform that runs ``_image_*`` ops through ``npx.image`` (eagerly
    on NDArrays, as graph nodes on Symbols); a numpy image is converted and
    the result given back as numpy."""

    def __call__(self, x, *args):
        if isinstance(x, np.ndarray):
            return super().__call__(from_host(x, True), *args).asnumpy()
        if not isinstance(x, Symbol):
            to_host(x, type(self).__name__)       # an NDArray, or a DataError naming the type
        return super().__call__(x, *args)


class ToTensor(_ImageOp):
    """HWC (NHWC) [0, 255] to CHW (NCHW) float32 [0, 1] (``image.to_tensor``)."""

    def forward(self, x):
        return npx.image.to_tensor(x)


class Normalize(_ImageOp):
    """``(x - mean) / std`` per channel of a CHW (NCHW) tensor with 1 or 3
    channels (``image.normalize``); ``mean`` and ``std`` are numbers or one
    value per channel."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        try:
            self._mean = tuple(float(v) for v in np.atleast_1d(np.asarray(mean, np.float32)))
            self._std = tuple(float(v) for v in np.atleast_1d(np.asarray(std, np.float32)))
        except (TypeError, ValueError):
            raise DataError(f"Normalize: mean and std must be numbers or sequences of numbers, "
                            f"got {mean!r} and {std!r}") from None
        if any(v == 0 for v in self._std):
            raise DataError(f"Normalize: std must not contain zeros, got {std!r}")

    def forward(self, x):
        return npx.image.normalize(x, mean=self._mean, std=self._std)


class Resize(_ImageOp):
    """Resizes to ``size``: ``(width, height)``, or an int for a square,
    or, with ``keep_ratio``, the length of the short edge (the long edge
    scaled to keep the aspect ratio), as OpenCV does (``image.resize``);
    ``interpolation``: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos-4
    (or their names)."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        one = isinstance(size, numbers.Integral) and not isinstance(size, bool)
        w, h = _size_pair(size, "Resize")
        self._size = (w,) if one else (w, h)
        self._keep = bool(keep_ratio) and one
        self._interp = _interp_code(interpolation, "Resize")

    def forward(self, x):
        return npx.image.resize(x, size=self._size, keep_ratio=self._keep, interp=self._interp)


class CropResize(_ImageOp):
    """The ``width`` x ``height`` region at (``x``, ``y``) (``image.crop``),
    resized to ``size`` when given (``image.resize``)."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        try:
            self._box = tuple(int(v) for v in (x, y, width, height))
        except (TypeError, ValueError):
            raise DataError(f"CropResize: x, y, width, height must be integers, got "
                            f"{(x, y, width, height)!r}") from None
        # sizes and the region are checked by the ops when they run, as in MXNet
        self._size = None if size is None else _size_pair(size, "CropResize", positive=False)
        self._interp = _interp_code(1 if interpolation is None else interpolation, "CropResize")

    def forward(self, x):
        x0, y0, w, h = self._box
        out = npx.image.crop(x, x=x0, y=y0, width=w, height=h)
        if self._size is not None:
            out = npx.image.resize(out, size=self._size, keep_ratio=False, interp=self._interp)
        return out


class _RandomFlip(_ImageOp):
    _op = None

    def __init__(self, p=0.5):
        super().__init__()
        if not isinstance(p, numbers.Real) or not 0 <= p <= 1:
            raise DataError(f"{type(self).__name__}: p must be in [0, 1], got {p!r}")
        self._p = float(p)

    def forward(self, x):
        kw = {} if self._p == 0.5 else {"p": self._p}   # MXNet's op has no p: keep its attrs
        return getattr(npx.image, self._op)(x, **kw)


class RandomFlipLeftRight(_RandomFlip):
    """Flips the image horizontally with probability ``p``
    (``image.random_flip_left_right``)."""
    _op = "random_flip_left_right"


class RandomFlipTopBottom(_RandomFlip):
    """Flips the image vertically with probability ``p``
    (``image.random_flip_top_bottom``)."""
    _op = "random_flip_top_bottom"


class _RandomEnhance(_ImageOp):
    """A factor drawn per image from [max(0, 1 - amount), 1 + amount], as
    MXNet's transforms pass it to the op."""
    _op = None

    def __init__(self, amount):
        super().__init__()
        a = _nonneg(amount, self._op[len("random_"):], type(self).__name__)
        self._args = (max(0.0, 1.0 - a), 1.0 + a)

    def forward(self, x):
        return getattr(npx.image, self._op)(x, *self._args)


class RandomBrightness(_RandomEnhance):
    """Scales pixel values by a random factor (``image.random_brightness``)."""
    _op = "random_brightness"


class RandomContrast(_RandomEnhance):
    """Blends with the mean luma by a random factor (``image.random_contrast``)."""
    _op = "random_contrast"


class RandomSaturation(_RandomEnhance):
    """Blends with a gray level by a random factor (``image.random_saturation``,
    whose gray level is MXNet's: 0.114 * blue)."""
    _op = "random_saturation"


class RandomHue(_RandomEnhance):
    """Rotates the hue by a random factor of a turn in HLS space
    (``image.random_hue``; MXNet's range [1 - hue, 1 + hue] of turns)."""
    _op = "random_hue"


class RandomColorJitter(_ImageOp):
    """Random brightness, contrast, saturation and hue changes (those with a
    non-zero amount), applied in a random order (``image.random_color_jitter``)."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._args = tuple(_nonneg(v, k, "RandomColorJitter") for k, v in (
            ("brightness", brightness), ("contrast", contrast), ("saturation", saturation),
            ("hue", hue)))

    def forward(self, x):
        return npx.image.random_color_jitter(x, *self._args)


class RandomLighting(_ImageOp):
    """AlexNet-style PCA lighting noise with alphas drawn from N(0, alpha)
    per image (``image.random_lighting``)."""

    def __init__(self, alpha):
        super().__init__()
        self._alpha = _nonneg(alpha, "alpha", "RandomLighting")

    def forward(self, x):
        return npx.image.random_lighting(x, alpha_std=self._alpha)


# -- rotations (MXNet's mx.image.imrotate: a rotated grid through BilinearSampler) --------------

def rotation_grid(n, h, w, degrees, zoom_in=False, zoom_out=False):
    """MXNet's ``imrotate`` sampling grid (n, 2, h, w), float32: the pixel
    grid centred, rotated by ``degrees`` (one per image), normalised, and
    scaled so that no padding shows (``zoom_in``) or the whole image does
    (``zoom_out``)."""
    rad = (np.pi * np.asarray(degrees, np.float32) / np.float32(180)).reshape(n, 1, 1)
    hs, ws = np.float32((h - 1) / 2), np.float32((w - 1) / 2)
    hm = np.arange(h, dtype=np.float32).reshape(h, 1).repeat(w, 1)[None] - hs
    wm = np.arange(w, dtype=np.float32).reshape(1, w).repeat(h, 0)[None] - ws
    c, s = np.cos(rad), np.sin(rad)
    grid = np.stack([(wm * c - hm * s) / ws, (wm * s + hm * c) / hs], axis=1)
    if zoom_in or zoom_out:
        hf, wf = np.float32(h), np.float32(w)
        rho, corner = np.sqrt(hf * hf + wf * wf), np.arctan(hf / wf)
        a = np.abs(rad)
        max_x = np.maximum(np.abs(rho * np.cos(corner + a)), np.abs(rho * np.cos(corner - a)))
        max_y = np.maximum(np.abs(rho * np.sin(corner + a)), np.abs(rho * np.sin(corner - a)))
        scale = (np.maximum(max_x / wf, max_y / hf) if zoom_out
                 else np.minimum(wf / max_x, hf / max_y))
        grid = grid * scale.reshape(n, 1, 1, 1)
    return grid.astype(np.float32)


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """Rotate a CHW image or NCHW batch (float32) by ``rotation_degrees`` (a
    number, or one per image), as MXNet's ``mx.image.imrotate``.

    Parameters
    ----------
    src : NDArray
        float32 (C, H, W) or (N, C, H, W).
    rotation_degrees : float or sequence of float
        The angle in degrees (a number for one image; a number or one per
        image for a batch), turned the way MXNet's grid turns it.
    zoom_in, zoom_out : bool
        Scale so that no padding shows / the whole image shows (not both).
    """
    if zoom_in and zoom_out:
        raise DataError("imrotate: zoom_in and zoom_out cannot both be True")
    if src.dtype != np.float32:
        raise DTypeError(f"imrotate: only float32 images are supported, got {src.dtype} "
                         f"(call it after ToTensor)")
    single = src.ndim == 3
    if src.ndim not in (3, 4):
        raise DataError(f"imrotate: expected (C, H, W) or (N, C, H, W), got {src.shape}")
    batch = src.expand_dims(0) if single else src
    n, _, h, w = batch.shape
    if isinstance(rotation_degrees, NDArray):
        rotation_degrees = rotation_degrees.asnumpy()
    deg = np.asarray(rotation_degrees, np.float32).reshape(-1)
    if (single and np.ndim(rotation_degrees) != 0) or deg.size not in (1, n):
        raise DataError(f"imrotate: expected one angle, or one per image ({n}), got "
                        f"{rotation_degrees!r}")
    deg = np.broadcast_to(deg, (n,))
    grid = _nd.array(rotation_grid(n, h, w, deg, zoom_in, zoom_out), ctx=batch.context)
    out = _nd.BilinearSampler(batch, grid)
    return out[0] if single else out


class Rotate(Block):
    """Rotates a float32 CHW image or NCHW batch by ``rotation_degrees``,
    keeping its shape (MXNet's ``imrotate``: a rotated sampling grid through
    ``BilinearSampler``)."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        arr, as_nd = to_host(x, "Rotate")
        out = imrotate(x if as_nd else from_host(arr, True), *self._args)
        return out if as_nd else out.asnumpy()


class RandomRotation(Block):
    """Rotates each float32 CHW image (NCHW batch) by an angle drawn from
    ``angle_limits``, with probability ``rotate_with_proba``."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower >= upper:
            raise DataError(f"RandomRotation: angle_limits must be an ordered pair, got "
                            f"{angle_limits!r}")
        if not 0 <= rotate_with_proba <= 1:
            raise DataError(f"RandomRotation: rotate_with_proba must be in [0, 1], got "
                            f"{rotate_with_proba!r}")
        self._limits = (float(lower), float(upper))
        self._zoom = (zoom_in, zoom_out)
        self._p = float(rotate_with_proba)

    def forward(self, x):
        rng = _rng()
        if rng.random() > self._p:
            return x
        arr, as_nd = to_host(x, "RandomRotation")
        deg = rng.uniform(*self._limits, size=None if arr.ndim == 3 else len(arr))
        out = imrotate(x if as_nd else from_host(arr, True), deg, *self._zoom)
        return out if as_nd else out.asnumpy()


class RandomApply(Block):
    """Applies ``transforms`` (a Block or callable) with probability ``p``."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        if not callable(transforms):
            raise DataError(f"RandomApply: transforms must be callable, got {transforms!r}")
        self.transforms = transforms if isinstance(transforms, Block) else _Callable(transforms)
        self.p = p

    def forward(self, x):
        if self.p < _rng().random():
            return x
        return self.transforms(x)
