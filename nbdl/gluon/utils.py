"""Gluon utilities: splitting a batch across devices, clipping gradients by
their global norm, and checking a file's SHA-1 (Gluon's ``gluon.utils``).

There is no ``download``: nbdl never reaches the network.
"""
import hashlib
import warnings

import numpy as np

from ..device import Device, as_device
from ..errors import DeviceError, DTypeError, ShapeError
from .. import ndarray as nd
from ..ndarray import NDArray


def split_data(data, num_slice, batch_axis=0, even_split=True):
    """Split ``data`` (an NDArray or numpy array) into ``num_slice`` slices
    along ``batch_axis``.  Slices along axis 0 of an NDArray are views.

    With ``even_split`` the size along ``batch_axis`` must be a multiple of
    ``num_slice``; without it the first ``size % num_slice`` slices are one
    longer than the rest."""
    if isinstance(num_slice, bool) or not isinstance(num_slice, (int, np.integer)) or num_slice < 1:
        raise ShapeError(f"split_data: num_slice must be a positive integer, got {num_slice!r}")
    shape = tuple(data.shape)
    if not -len(shape) <= batch_axis < len(shape):
        raise ShapeError(f"split_data: batch_axis {batch_axis} is out of range for data with "
                         f"shape {shape}")
    axis = batch_axis % len(shape)
    size = shape[axis]
    if size < num_slice:
        raise ShapeError(f"split_data: too many slices for data with shape {shape}: "
                         f"num_slice={num_slice}, batch_axis={batch_axis}")
    if even_split and size % num_slice != 0:
        raise ShapeError(f"split_data: data with shape {shape} cannot be evenly split into "
                         f"{num_slice} slices along axis {batch_axis}; use a batch size that is "
                         f"a multiple of {num_slice} or set even_split=False")
    step, extras = divmod(size, num_slice)
    bounds = np.cumsum([0] + [step + 1] * extras + [step] * (num_slice - extras)).tolist()
    slices = []
    for begin, end in zip(bounds[:-1], bounds[1:]):
        if axis == 0:
            slices.append(data[begin:end])
        elif isinstance(data, NDArray):
            slices.append(nd.slice_axis(data, axis=axis, begin=begin, end=end))
        else:
            slices.append(data[(slice(None),) * axis + (slice(begin, end),)])
    return slices


def split_and_load(data, device_list=None, batch_axis=0, even_split=True, ctx_list=None):
    """Split ``data`` along ``batch_axis`` and load slice ``i`` onto
    ``device_list[i]`` (``ctx_list`` is the MXNet 1.x name).  Data that is not
    an NDArray is first made one (``nd.array``: float32) on the first device."""
    if device_list is not None and ctx_list is not None:
        raise DeviceError("split_and_load: give device_list or ctx_list, not both")
    devices = device_list if device_list is not None else ctx_list
    if devices is None:
        raise DeviceError("split_and_load: device_list is required")
    if isinstance(devices, (Device, str)):
        devices = [devices]
    devices = [as_device(d) for d in devices]
    if not devices:
        raise DeviceError("split_and_load: device_list is empty")
    if not isinstance(data, NDArray):
        data = nd.array(data, ctx=devices[0])
    if len(devices) == 1:
        return [data.as_in_context(devices[0])]
    slices = split_data(data, len(devices), batch_axis, even_split)
    return [s.as_in_context(d) for s, d in zip(slices, devices)]


def clip_global_norm(arrays, max_norm, check_isfinite=True):
    """Scale ``arrays`` in place so that the 2-norm of all their elements
    together is at most ``max_norm``; returns that norm taken before
    clipping (a float, or a 1-element NDArray when ``check_isfinite`` is
    false, which avoids waiting for the value).  A NaN or infinite norm
    is reported with a warning and leaves the results undefined, as in Gluon."""
    if isinstance(arrays, NDArray) or not isinstance(arrays, (list, tuple)) or not arrays:
        raise ShapeError(f"clip_global_norm: expected a non-empty list of NDArrays, got "
                         f"{_describe(arrays)}")
    for i, a in enumerate(arrays):
        if not isinstance(a, NDArray):
            raise DTypeError(f"clip_global_norm: arrays[{i}] is a {type(a).__name__}, "
                             f"expected an NDArray")
    if isinstance(max_norm, bool) or not isinstance(max_norm, (int, float, np.number)) \
            or not max_norm > 0:
        raise ShapeError(f"clip_global_norm: max_norm must be a positive number, got {max_norm!r}")
    device = arrays[0].context
    dtype = arrays[0].dtype
    squares = []
    for a in arrays:
        flat = a.reshape((-1,))
        sq = nd.dot(flat, flat) if flat.size else nd.zeros((1,), ctx=a.context, dtype=a.dtype)
        if sq.dtype != dtype:
            sq = sq.astype(dtype)
        squares.append(sq.as_in_context(device))
    total = nd.sqrt(nd.add_n(*squares) if len(squares) > 1 else squares[0])
    if check_isfinite and not np.isfinite(total.asscalar()):
        warnings.warn("clip_global_norm: nan or inf is detected; clipping results will be "
                      "undefined", UserWarning, stacklevel=2)
    scale = nd._internal._minimum_scalar(float(max_norm) / (total + 1e-8), scalar=1.0)
    for a in arrays:
        s = scale if a.dtype == scale.dtype else scale.astype(a.dtype)
        a *= s.as_in_context(a.context)
    return float(total.asscalar()) if check_isfinite else total


def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 of the file's contents matches ``sha1_hash`` (hex;
    compared over the shorter of the two, as Gluon does)."""
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha1.update(chunk)
    digest = sha1.hexdigest()
    n = min(len(digest), len(sha1_hash))
    return digest[:n] == sha1_hash[:n].lower()


def _describe(x):
    if isinstance(x, NDArray):
        return f"a single NDArray of shape {x.shape}"
    if isinstance(x, (list, tuple)):
        return f"an empty {type(x).__name__}"
    return f"a {type(x).__name__}"
