"""Gluon utilities: splitting a batch across devices, clipping gradients by
their global norm, checking a file's SHA-1 and downloading a file (Gluon's
``gluon.utils``).
"""
import hashlib
import logging
import os
import uuid
import warnings

import numpy as np

from ..device import Device, as_device
from ..errors import ArgumentError, DeviceError, DTypeError, NbdlError, ShapeError
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


class DownloadError(NbdlError, OSError):
    """``download`` could not fetch the file (after its retries), or what it
    fetched does not have the SHA-1 asked for."""


def _download_target(url, path):
    if path is None:
        fname = url.split("/")[-1]
        if not fname:
            raise ArgumentError(f"download: no file name in url {url!r}; give path=")
        return fname
    path = os.path.expanduser(path)
    if os.path.isdir(path):
        name = url.split("/")[-1]
        if not name:
            raise ArgumentError(f"download: no file name in url {url!r} to store in the "
                                f"directory {path!r}; give a file path")
        return os.path.join(path, name)
    return path


def _fetch(url, target, sha1_hash, context, timeout):
    """One attempt: ``url`` into a temporary file beside ``target``, checked,
    then moved over it (so a failed attempt never leaves a partial file)."""
    import urllib.request   # here, not at import: ssl and http cost ~15 ms to load
    tmp = f"{target}.{uuid.uuid4().hex}.part"
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=context) as resp:
            status = getattr(resp, "status", None)
            if status is not None and status != 200:
                raise DownloadError(f"download: {url} answered with status {status}")
            with open(tmp, "wb") as f:
                for chunk in iter(lambda: resp.read(1 << 20), b""):
                    f.write(chunk)
        if sha1_hash and not check_sha1(tmp, sha1_hash):
            raise DownloadError(f"download: the file fetched from {url} does not have the "
                                f"SHA-1 {sha1_hash} (an outdated or incomplete file)")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def download(url, path=None, overwrite=False, sha1_hash=None, retries=5, verify_ssl=True,
             timeout=60):
    """Fetch ``url`` (``http(s)://``, ``ftp://`` or ``file://``) to a file
    and return its path, as Gluon's ``download``.

    Nothing is fetched when the file exists, unless ``overwrite`` or its
    SHA-1 differs from ``sha1_hash``.  Each attempt writes a temporary file
    beside the target and moves it into place only when complete and (with
    ``sha1_hash``) matching, so a failed or mismatched download never leaves
    a partial file; failed attempts (network errors, a status other than
    200, a wrong SHA-1) are retried.

    Parameters
    ----------
    url : str
        What to fetch.
    path : str, optional
        The file to write, or a directory to write it in under the url's
        last component (default: that name in the current directory).
    overwrite : bool
        Fetch even when the file exists.
    sha1_hash : str, optional
        Expected SHA-1 (hex, compared over the shorter of the two, as
        ``check_sha1``).
    retries : int
        Attempts to make (at least one; MXNet's count).
    verify_ssl : bool
        Check HTTPS certificates (False warns).
    timeout : float
        Seconds an attempt may wait for the server.

    Returns
    -------
    str
        The path of the file.
    """
    fname = _download_target(url, path)
    if isinstance(retries, bool) or not isinstance(retries, (int, np.integer)) or retries < 0:
        raise ArgumentError(f"download: retries must be an integer >= 0, got {retries!r}")
    context = None
    if not verify_ssl:
        warnings.warn("download: unverified HTTPS request (verify_ssl=False); certificate "
                      "verification is strongly advised", stacklevel=2)
        import ssl
        context = ssl._create_unverified_context()
    if not (overwrite or not os.path.exists(fname)
            or (sha1_hash and not check_sha1(fname, sha1_hash))):
        return fname
    os.makedirs(os.path.dirname(os.path.abspath(fname)), exist_ok=True)
    attempts = max(1, int(retries))
    log = logging.getLogger(__name__)
    for attempt in range(attempts):
        log.info("Downloading %s from %s...", fname, url)
        try:
            _fetch(url, fname, sha1_hash, context, timeout)
            return fname
        except (OSError, ValueError) as e:   # urllib's URLError is an OSError
            left = attempts - attempt - 1
            if not left:
                if isinstance(e, DownloadError):
                    raise
                raise DownloadError(f"download: fetching {url} failed after {attempts} "
                                    f"attempt{'s' if attempts > 1 else ''}: {e}") from e
            log.warning("download of %s failed (%r), retrying, %d attempt%s left",
                        url, e, left, "s" if left > 1 else "")
    return fname


def _describe(x):
    if isinstance(x, NDArray):
        return f"a single NDArray of shape {x.shape}"
    if isinstance(x, (list, tuple)):
        return f"an empty {type(x).__name__}"
    return f"a {type(x).__name__}"
