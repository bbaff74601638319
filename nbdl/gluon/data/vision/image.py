"""Host-side image helpers used by the vision datasets and transforms (the
parts of MXNet's ``mx.image`` that Gluon's vision package relies on).

The numpy-level decoding, resizing and cropping are ``nbdl.imaging``'s
(shared with ``nbdl.io.ImageRecordIter``); this module adds the functions
that take or return NDArrays.
"""
import os

import numpy as np

from ....imaging import (LUMA, FormatError, ImageError, _cast_like, _pil_image,  # noqa: F401
                         apply_flag, center_crop_host, decode_host, fixed_crop_host,
                         interp_name, read_host, resize_host, scale_down)
from ....ndarray import NDArray
from ....ndarray.creation import share_numpy as from_numpy


def to_host(img, where):
    """(numpy array, was_ndarray) for an NDArray or numpy image."""
    if isinstance(img, NDArray):
        return img.asnumpy(), True
    if isinstance(img, np.ndarray):
        return img, False
    raise ImageError(f"{where}: expected an NDArray or numpy array image, got "
                     f"{type(img).__name__}")


def from_host(arr, as_nd):
    """Give back ``arr`` as the caller passed it in (NDArray or numpy)."""
    arr = np.ascontiguousarray(arr)
    return from_numpy(arr) if as_nd else arr


def imdecode(buf, flag=1, to_rgb=True):
    """Decode image bytes into an HWC uint8 NDArray (RGB; ``to_rgb`` is
    accepted for compatibility: nbdl always returns RGB)."""
    return from_numpy(decode_host(buf, flag))


def imread(filename, flag=1, to_rgb=True):
    """Read an image file into an HWC uint8 NDArray."""
    return from_numpy(read_host(os.fspath(filename), flag))


