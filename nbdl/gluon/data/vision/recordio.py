"""The RecordIO helpers of nbdl's Gluon vision datasets.

The record files themselves (``MXRecordIO``, ``MXIndexedRecordIO``,
``IRHeader``, ``pack``, ``unpack``) are ``nbdl.recordio``'s, MXNet's
``mx.recordio``: see that module for the on-disk format. This module adds
image helpers in Gluon's conventions: ``unpack_img`` decodes to an HWC RGB
array (grayscale as HxWx1) and ``pack_img`` takes one, with numpy's
``.npy`` as a format that needs no image library. (``nbdl.recordio``'s own
``pack_img`` / ``unpack_img`` follow MXNet's OpenCV conventions instead: BGR
channels, grayscale as HxW.)
"""
import io

import numpy as np

from ....recordio import (IR_HEADER_SIZE, MAGIC, IRHeader, MXIndexedRecordIO,  # noqa: F401
                          MXRecordIO, pack, unpack)
from .image import ImageError, _pil_image, decode_host

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack", "pack_img",
           "unpack_img", "MAGIC", "IR_HEADER_SIZE"]


def unpack_img(s, iscolor=1, where="unpack_img"):
    """(``IRHeader``, HWC uint8 numpy image) from an image record."""
    header, img = unpack(s, where)
    return header, decode_host(img, iscolor, where)


def pack_img(header, img, quality=95, img_fmt=".png"):
    """An image record holding ``img`` (HWC uint8) encoded as ``img_fmt``:
    ``.png`` / ``.jpg`` through Pillow, or ``.npy`` without it."""
    arr = img.asnumpy() if hasattr(img, "asnumpy") else np.asarray(img)
    fmt = img_fmt.lower().lstrip(".")
    out = io.BytesIO()
    if fmt == "npy":
        np.save(out, arr, allow_pickle=False)
        return pack(header, out.getvalue())
    Image = _pil_image()
    if fmt not in ("png", "jpg", "jpeg"):
        raise ImageError(f"pack_img: img_fmt must be '.png', '.jpg' or '.npy', got {img_fmt!r}")
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    Image.fromarray(np.ascontiguousarray(arr, dtype=np.uint8)).save(
        out, format="PNG" if fmt == "png" else "JPEG", quality=quality)
    return pack(header, out.getvalue())
