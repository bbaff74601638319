"""``pack_img`` / ``unpack_img``: records holding an encoded image (JPEG or
PNG through Pillow, imported when first needed; BGR channel order as OpenCV,
which MXNet uses)."""
import io

import numpy as np

from ..errors import ArgumentError
from .files import FormatError, ImageError
from .header import pack, unpack

__all__ = ["pack_img", "unpack_img"]


def _pil(what):
    try:
        from PIL import Image
    except ImportError:
        raise ImageError(f"{what} needs an image codec: install the 'Pillow' package "
                         f"(pip install Pillow)") from None
    return Image


def unpack_img(s, iscolor=-1):
    """Split a record into its header and its decoded image.

    Parameters
    ----------
    s : bytes
        A record made by ``pack_img``.
    iscolor : int, optional
        -1: keep the stored channels; 0: decode to grayscale ``(H, W)``;
        1: decode to 3 channels, returned in BGR order as OpenCV (which MXNet
        uses) returns them.

    Returns
    -------
    header : IRHeader
    img : numpy.ndarray of uint8
    """
    image = _pil("unpack_img")
    if iscolor not in (-1, 0, 1):
        raise ArgumentError(f"unpack_img: iscolor must be -1, 0 or 1, got {iscolor!r}")
    header, s = unpack(s)
    try:
        img = image.open(io.BytesIO(s))
        img.load()
    except Exception as e:  # Pillow raises several types for undecodable data
        raise FormatError(f"unpack_img: the payload is not an image Pillow can decode "
                          f"({e})") from None
    if iscolor == 0:
        img = img.convert("L")
    elif iscolor == 1 or img.mode not in ("L", "RGB", "RGBA"):
        img = img.convert("RGB")
    arr = np.asarray(img)
    if arr.ndim == 3:  # OpenCV's channel order
        arr = arr[..., [2, 1, 0] + ([3] if arr.shape[2] == 4 else [])]
    return header, np.ascontiguousarray(arr)


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """Encode an image and ``pack`` it with ``header``.

    Parameters
    ----------
    header : IRHeader
        The record's header.
    img : numpy.ndarray of uint8
        ``(H, W)`` grayscale or ``(H, W, 3)`` in BGR order (OpenCV's, as MXNet
        expects).
    quality : int, optional
        JPEG quality 1-100, or PNG compression level 0-9.
    img_fmt : {'.jpg', '.jpeg', '.png'}, optional
        The encoding.

    Returns
    -------
    bytes
    """
    image = _pil("pack_img")
    fmt = str(img_fmt).upper()
    if fmt not in (".JPG", ".JPEG", ".PNG"):
        raise ArgumentError(f"pack_img: img_fmt must be '.jpg', '.jpeg' or '.png', "
                            f"got {img_fmt!r}")
    arr = np.asarray(img)
    if arr.dtype != np.uint8 or arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] != 3):
        raise ArgumentError(f"pack_img: img must be uint8 of shape (H, W) or (H, W, 3), got "
                            f"{arr.dtype} {arr.shape}")
    if arr.ndim == 3:
        arr = arr[..., ::-1]  # BGR -> RGB for Pillow
    buf = io.BytesIO()
    pil_img = image.fromarray(np.ascontiguousarray(arr))
    if fmt == ".PNG":
        pil_img.save(buf, format="PNG", compress_level=min(max(int(quality), 0), 9))
    else:
        pil_img.save(buf, format="JPEG", quality=int(quality))
    return pack(header, buf.getvalue())
