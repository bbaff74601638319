"""Host-side image helpers on numpy arrays: decoding, resizing and cropping.

What MXNet did with OpenCV, written over numpy (and Pillow for decoding),
for the layers that need it: the Gluon vision datasets and transforms
(``nbdl.gluon.data.vision.image`` adds the NDArray-facing functions) and
``nbdl.io.ImageRecordIter``.

Images are numpy arrays in HWC layout (batches NHWC), channels in RGB
order. Decoding uses Pillow when it is installed; it is an optional
dependency, and a ``.npy`` payload (numpy's own format, read with
``allow_pickle=False``) decodes without it. Resizing is vectorised numpy:
``nearest`` picks ``floor(dst * in / out)`` and ``bilinear`` samples at
half-pixel centres (``(dst + 0.5) * in / out - 0.5``, clamped to the
image), as OpenCV's ``INTER_NEAREST`` / ``INTER_LINEAR`` do (OpenCV rounds
its 8-bit bilinear weights to 11 bits, so its results can differ by one
level).
"""
import io

import numpy as np

# The error classes live with the record files (nbdl.recordio), which raise them too.
from .recordio import FormatError, ImageError  # noqa: F401

__all__ = ["decode_host", "read_host", "apply_flag", "resize_host", "fixed_crop_host",
           "center_crop_host", "scale_down", "interp_name", "LUMA", "ImageError", "FormatError"]

_NPY_MAGIC = b"\x93NUMPY"
# ITU-R 601-2 luma weights (Pillow's and OpenCV's RGB -> gray).
LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)

# OpenCV's interpolation codes, which Gluon's transforms take.
_INTERP_NAMES = {0: "nearest", 1: "bilinear", "nearest": "nearest", "bilinear": "bilinear",
                 "linear": "bilinear"}


def _pil_image():
    try:
        from PIL import Image
    except ImportError:
        raise ImageError("decoding PNG/JPEG images needs Pillow, which is not installed: "
                         "run `pip install pillow` (or store images as .npy files, which "
                         "nbdl reads without it)") from None
    return Image


def apply_flag(img, flag, where):
    """HWC with 3 channels (flag 1, RGB), 1 channel (flag 0, gray) or the
    channels it has (flag -1)."""
    if img.ndim == 2:
        img = img[:, :, None]
    if img.ndim != 3 or img.shape[2] not in (1, 3, 4):
        raise ImageError(f"{where}: expected an HxW, HxWx1, HxWx3 or HxWx4 image, got shape "
                         f"{img.shape}")
    if flag == -1:
        return np.ascontiguousarray(img)
    if img.shape[2] == 4:
        img = img[:, :, :3]
    if flag == 0 and img.shape[2] == 3:
        gray = img.astype(np.float32) @ LUMA
        if np.issubdtype(img.dtype, np.integer):
            gray = np.clip(np.rint(gray), np.iinfo(img.dtype).min, np.iinfo(img.dtype).max)
        img = gray.astype(img.dtype)[:, :, None]
    elif flag != 0 and img.shape[2] == 1:
        img = np.repeat(img, 3, axis=2)
    return np.ascontiguousarray(img)


def _check_flag(flag, where):
    if flag not in (0, 1) or isinstance(flag, bool):
        raise ImageError(f"{where}: flag must be 1 (color) or 0 (grayscale), got {flag!r}")
    return int(flag)


def _pil_mode(pil, flag):
    if flag == 1:
        return "RGB"
    if flag == 0:
        return "L"
    if pil.mode in ("RGBA", "LA", "PA") or "transparency" in pil.info:
        return "RGBA"
    return "L" if pil.mode in ("1", "L", "I", "I;16", "F") else "RGB"


def decode_host(buf, flag=1, where="imdecode", keep_channels=False):
    """Decode image bytes (PNG/JPEG/... through Pillow, or ``.npy``) into an
    HWC uint8 numpy array.

    Parameters
    ----------
    buf : bytes
        The encoded image.
    flag : {1, 0}
        1 gives RGB (HxWx3), 0 gray (HxWx1).
    where : str
        What to call the caller in error messages.
    keep_channels : bool
        Keep the image's own channels instead (gray HxWx1, RGB, or RGBA when
        it has transparency), as OpenCV's ``IMREAD_UNCHANGED``.
    """
    flag = -1 if keep_channels else _check_flag(flag, where)
    buf = bytes(buf)
    if buf.startswith(_NPY_MAGIC):
        try:
            img = np.load(io.BytesIO(buf), allow_pickle=False)
        except ValueError as e:
            raise ImageError(f"{where}: cannot read the .npy image ({e})") from None
        return apply_flag(img, flag, where)
    Image = _pil_image()
    try:
        with Image.open(io.BytesIO(buf)) as pil:
            pil = pil.convert(_pil_mode(pil, flag))
            img = np.asarray(pil, dtype=np.uint8)
    except (OSError, ValueError, SyntaxError) as e:
        raise ImageError(f"{where}: cannot decode the image ({e})") from None
    return apply_flag(img, flag, where)


def read_host(filename, flag=1):
    """Read and decode an image file (``.npy`` or any format Pillow reads)."""
    where = f"imread({filename!r})"
    flag = _check_flag(flag, where)
    try:
        if filename.lower().endswith(".npy"):
            try:
                img = np.load(filename, allow_pickle=False)
            except ValueError as e:
                raise ImageError(f"{where}: not a valid .npy image ({e})") from None
            return apply_flag(img, flag, where)
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ImageError(f"{where}: cannot read the file ({e})") from None
    return decode_host(data, flag, where)


def interp_name(interpolation, where):
    """The name of an interpolation given as MXNet's code or name
    (0/'nearest', 1/'bilinear'); an ``ImageError`` naming ``where`` otherwise.

    Parameters
    ----------
    interpolation : int or str
        The interpolation.
    where : str
        The calling op or function, for the message.
    """
    try:
        return _INTERP_NAMES[interpolation]
    except (KeyError, TypeError):
        raise ImageError(f"{where}: interpolation must be 0/'nearest' or 1/'bilinear', got "
                         f"{interpolation!r} (other OpenCV modes are not implemented in "
                         f"nbdl)") from None


def _cast_like(out, dtype):
    """float32 results back to ``dtype`` (integers rounded and saturated)."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        out = np.clip(np.rint(out), info.min, info.max)
    return out.astype(dtype, copy=False)


def resize_host(img, w, h, interpolation=1):
    """Resize an HWC image or NHWC batch to width ``w`` and height ``h``."""
    mode = interp_name(interpolation, "resize")
    if img.ndim not in (3, 4):
        raise ImageError(f"resize: expected an HWC image or NHWC batch, got shape {img.shape}")
    if w <= 0 or h <= 0:
        raise ImageError(f"resize: output size must be positive, got width {w}, height {h}")
    in_h, in_w = img.shape[-3], img.shape[-2]
    if in_h == 0 or in_w == 0:
        raise ImageError(f"resize: cannot resize an empty image of shape {img.shape}")
    if (in_h, in_w) == (h, w):
        return img.copy()
    if mode == "nearest":
        ys = np.minimum(np.floor(np.arange(h) * (in_h / h)).astype(np.intp), in_h - 1)
        xs = np.minimum(np.floor(np.arange(w) * (in_w / w)).astype(np.intp), in_w - 1)
        return np.ascontiguousarray(img[..., ys, :, :][..., :, xs, :])
    y0, y1, wy = _linear_coords(in_h, h)
    x0, x1, wx = _linear_coords(in_w, w)
    src = img.astype(np.float32, copy=False)
    top = src[..., y0, :, :]
    bottom = src[..., y1, :, :]
    rows = top + (bottom - top) * wy[:, None, None]
    left = rows[..., :, x0, :]
    right = rows[..., :, x1, :]
    out = left + (right - left) * wx[:, None]
    return _cast_like(out, img.dtype)


def _linear_coords(n_in, n_out):
    pos = (np.arange(n_out, dtype=np.float64) + 0.5) * (n_in / n_out) - 0.5
    pos = np.clip(pos, 0, n_in - 1)
    i0 = np.floor(pos).astype(np.intp)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return i0, i1, (pos - i0).astype(np.float32)


def fixed_crop_host(img, x0, y0, w, h, size=None, interpolation=1):
    """The ``w`` x ``h`` region at (``x0``, ``y0``), resized to ``size``
    (``(w, h)``) when given."""
    in_h, in_w = img.shape[-3], img.shape[-2]
    if x0 < 0 or y0 < 0 or w <= 0 or h <= 0 or x0 + w > in_w or y0 + h > in_h:
        raise ImageError(f"crop: region x={x0}, y={y0}, width={w}, height={h} does not fit in "
                         f"an image of width {in_w}, height {in_h}")
    out = img[..., y0:y0 + h, x0:x0 + w, :]
    if size is not None and tuple(size) != (w, h):
        return resize_host(out, size[0], size[1], interpolation)
    return np.ascontiguousarray(out)


def scale_down(src_size, size):
    """Shrink ``size`` (w, h) so that it fits in ``src_size`` (w, h), keeping
    its aspect ratio (MXNet's ``mx.image.scale_down``)."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def center_crop_host(img, size, interpolation=1):
    """The centred crop of size ``(w, h)``; an image smaller than that is
    cropped to the largest region of the same aspect ratio and resized up."""
    in_h, in_w = img.shape[-3], img.shape[-2]
    new_w, new_h = scale_down((in_w, in_h), size)
    new_w, new_h = max(new_w, 1), max(new_h, 1)
    x0 = (in_w - new_w) // 2
    y0 = (in_h - new_h) // 2
    return fixed_crop_host(img, x0, y0, new_w, new_h, size, interpolation)
