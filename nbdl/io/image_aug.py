"""MXNet 1.x's default image augmenter (``aug_default``) and the pixel
normalisation of ``ImageRecordIter``, on HWC uint8 numpy images (RGB).

The steps and their order are MXNet 1.9.1's (``src/io/image_aug_default.cc``
and ``ImageRecordIOParser2::ProcessImage``): resize the shorter edge, pad,
crop (random-resized, random-size or fixed-size, centred or random), colour
jitter; then, into the output, mirror and ``(pixel - mean) * scale / std``.
Resizing is ``nbdl.imaging``'s (nearest or bilinear). The affine
augmentations (rotation, shear, random scale and aspect ratio, image size
limits), HSL jitter and PCA noise are not implemented: asking for them is an
``ArgumentError``.
"""
import numbers

import numpy as np

from ..errors import ArgumentError, ShapeError
from ..imaging import resize_host

__all__ = ["ImageAugmenter", "AUG_DEFAULTS", "UNSUPPORTED_AUG"]

# The augmenter's parameters nbdl implements, with MXNet's defaults.
AUG_DEFAULTS = {"resize": -1, "rand_crop": False, "random_resized_crop": False,
                "max_crop_size": -1, "min_crop_size": -1, "max_random_area": 1.0,
                "min_random_area": 1.0, "max_aspect_ratio": 0.0, "min_aspect_ratio": None,
                "pad": 0, "fill_value": 255, "inter_method": 1, "brightness": 0.0,
                "contrast": 0.0, "saturation": 0.0}
# MXNet's parameters nbdl does not implement, with the default that leaves them off.
UNSUPPORTED_AUG = {"max_rotate_angle": 0, "rotate": -1, "rotate_list": None,
                   "max_shear_ratio": 0.0, "max_random_scale": 1.0, "min_random_scale": 1.0,
                   "max_img_size": 1e10, "min_img_size": 0.0, "random_h": 0, "random_s": 0,
                   "random_l": 0, "pca_noise": 0.0}
# CV_RGB2GRAY applied to OpenCV's BGR pixels, as MXNet's colour jitter does: the
# weights land on the channels in reverse, so on RGB data they read B, G, R.
_JITTER_GRAY = np.array([0.114, 0.587, 0.299], dtype=np.float32)


def _number(value, what, arg, integral=False):
    kinds = numbers.Integral if integral else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise ArgumentError(f"{what}: {arg} must be {'an int' if integral else 'a number'}, "
                            f"got {value!r}")
    return int(value) if integral else float(value)


def _saturate(x):
    """float -> uint8 as OpenCV's ``saturate_cast`` (round half to even, clip)."""
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


class ImageAugmenter:
    """MXNet's ``aug_default`` augmenter for one output ``(C, H, W)`` shape.

    Parameters
    ----------
    data_shape : tuple of int
        ``(channels, height, width)`` of the output images.
    what : str
        The iterator's name, for messages.
    **params
        The augmenter's parameters (``AUG_DEFAULTS`` names, MXNet's meanings):
        ``resize`` (shorter edge, -1 off), ``rand_crop``, ``random_resized_crop``
        with ``min/max_random_area`` and ``min/max_aspect_ratio``,
        ``min/max_crop_size``, ``pad`` with ``fill_value``, ``inter_method`` (0
        nearest, 1 bilinear), ``brightness``, ``contrast``, ``saturation``.
    """

    def __init__(self, data_shape, what, **params):
        self.what = what
        self.out_h, self.out_w = int(data_shape[1]), int(data_shape[2])
        p = dict(AUG_DEFAULTS)
        p.update(params)
        for arg in ("resize", "max_crop_size", "min_crop_size", "pad", "fill_value",
                    "inter_method"):
            p[arg] = _number(p[arg], what, arg, integral=True)
        for arg in ("max_random_area", "min_random_area", "max_aspect_ratio", "brightness",
                    "contrast", "saturation"):
            p[arg] = _number(p[arg], what, arg)
        if p["inter_method"] not in (0, 1):
            raise ArgumentError(f"{what}: inter_method {p['inter_method']} is not implemented "
                                f"in nbdl (0 nearest and 1 bilinear are; MXNet's 2 cubic, 3 "
                                f"area, 4 lanczos, 9 auto and 10 random are not)")
        if p["resize"] == 0 or p["resize"] < -1 or p["pad"] < 0:
            raise ArgumentError(f"{what}: resize must be -1 or positive and pad >= 0, got "
                                f"resize={p['resize']}, pad={p['pad']}")
        if p["min_aspect_ratio"] is None:
            self.ratio = (1 - p["max_aspect_ratio"], 1 + p["max_aspect_ratio"])
        else:
            self.ratio = (_number(p["min_aspect_ratio"], what, "min_aspect_ratio"),
                          p["max_aspect_ratio"])
        rrc = bool(p["random_resized_crop"])
        if not rrc and self.ratio != (1.0, 1.0):
            raise ArgumentError(f"{what}: a random aspect ratio without random_resized_crop "
                                f"(an affine warp in MXNet) is not implemented in nbdl")
        sized = p["max_crop_size"] != -1 or p["min_crop_size"] != -1
        if rrc and (sized or p["rand_crop"]):
            raise ArgumentError(f"{what}: random_resized_crop conflicts with min_crop_size, "
                                f"max_crop_size and rand_crop")
        if rrc and not (0 < self.ratio[0] <= self.ratio[1]
                        and p["min_random_area"] <= p["max_random_area"]):
            raise ArgumentError(f"{what}: random_resized_crop needs 0 < min_aspect_ratio <= "
                                f"max_aspect_ratio and min_random_area <= max_random_area, got "
                                f"ratios {self.ratio}, areas ({p['min_random_area']}, "
                                f"{p['max_random_area']})")
        if sized and not 0 <= p["min_crop_size"] <= p["max_crop_size"]:
            raise ArgumentError(f"{what}: need 0 <= min_crop_size <= max_crop_size, got "
                                f"{p['min_crop_size']}, {p['max_crop_size']}")
        self.p = p
        self.rrc = rrc and (self.ratio != (1.0, 1.0) or p["min_random_area"] != 1.0
                            or p["max_random_area"] != 1.0)
        self.sized = sized and not rrc
        self.jitter = p["brightness"] > 0 or p["contrast"] > 0 or p["saturation"] > 0

    def _resize(self, img, w, h):
        return resize_host(img, w, h, self.p["inter_method"])

    def __call__(self, img, rng):
        """The augmented image (HWC uint8).

        Parameters
        ----------
        img : numpy.ndarray
            A decoded HWC uint8 image.
        rng : numpy.random.RandomState
            The image's random stream.
        """
        p = self.p
        rows, cols = img.shape[:2]
        if p["resize"] != -1:
            if rows > cols:
                img = self._resize(img, p["resize"], p["resize"] * rows // cols)
            else:
                img = self._resize(img, p["resize"] * cols // rows, p["resize"])
        if p["pad"] > 0:
            n = p["pad"]
            img = np.pad(img, ((n, n), (n, n), (0, 0)), constant_values=p["fill_value"])
        cropped = None
        if self.rrc:
            cropped = self._random_resized_crop(img, rng)
        elif self.sized:
            cropped = self._sized_crop(img, rng)
        img = self._crop(img, rng) if cropped is None else cropped
        if self.jitter:
            img = self._color_jitter(img, rng)
        return img

    def _random_resized_crop(self, img, rng):
        p = self.p
        rows, cols = img.shape[:2]
        area = np.float32(rows * cols)
        for _ in range(10):
            rand_area = rng.uniform(p["min_random_area"], p["max_random_area"])
            ratio = rng.uniform(*self.ratio)
            target = area * rand_area
            y, x = int(round(np.sqrt(target / ratio))), int(round(np.sqrt(target * ratio)))
            if rng.uniform() > 0.5:
                y, x = x, y
            if y <= rows and x <= cols:
                y0, x0 = rng.randint(0, rows - y + 1), rng.randint(0, cols - x + 1)
                return self._resize(img[y0:y0 + y, x0:x0 + x], self.out_w, self.out_h)
        return None

    def _sized_crop(self, img, rng):
        p = self.p
        rows, cols = img.shape[:2]
        if min(rows, cols) < p["max_crop_size"]:
            raise ShapeError(f"{self.what}: an image of {cols}x{rows} is smaller than "
                             f"max_crop_size {p['max_crop_size']}")
        size = rng.randint(p["min_crop_size"], p["max_crop_size"] + 1)
        y, x = rows - size, cols - size
        if p["rand_crop"]:
            y, x = rng.randint(0, y + 1), rng.randint(0, x + 1)
        else:
            y, x = y // 2, x // 2
        return self._resize(img[y:y + size, x:x + size], self.out_w, self.out_h)

    def _crop(self, img, rng):
        h, w = self.out_h, self.out_w
        rows, cols = img.shape[:2]
        if rows < h:  # MXNet scales a too-small image up, in float32
            cols = int(np.float32(h) / np.float32(rows) * np.float32(cols))
            rows = h
            img = self._resize(img, cols, rows)
        if cols < w:
            rows = int(np.float32(w) / np.float32(cols) * np.float32(rows))
            cols = w
            img = self._resize(img, cols, rows)
        if rows < h:
            raise ShapeError(f"{self.what}: an image of {cols}x{rows} is smaller than the "
                             f"data_shape's {w}x{h} after scaling up")
        y, x = rows - h, cols - w
        if self.p["rand_crop"]:
            y, x = rng.randint(0, y + 1), rng.randint(0, x + 1)
        else:
            y, x = y // 2, x // 2
        return img[y:y + h, x:x + w]

    def _color_jitter(self, img, rng):
        p = self.p
        if img.shape[2] != 3:
            raise ShapeError(f"{self.what}: brightness, contrast and saturation need 3-channel "
                             f"images, got {img.shape[2]} channel(s)")
        alphas = [1.0 + rng.uniform(-p[k], p[k]) for k in ("brightness", "contrast",
                                                             "saturation")]
        for i in rng.permutation(3):
            f = img.astype(np.float32)
            if i == 0:
                img = _saturate(f * np.float32(alphas[0]))
                continue
            gray = _saturate(f @ _JITTER_GRAY).astype(np.float32)
            a = np.float32(alphas[i])
            if i == 1:
                img = _saturate(f * a + (1 - a) * gray.mean())
            else:
                img = _saturate(f * a + gray[:, :, None] * (1 - a))
        return img
