"""``MNISTIter``: batches of MNIST-format (idx) files, as MXNet 1.x's ``mx.io.MNISTIter``."""
import gzip
import logging
import os
import struct

import numpy as np

from ..collective import resolve_parts
from ..errors import ArgumentError, ShapeError
from .host_iter import HostBatchIter, check_batch_size, check_int, check_names

__all__ = ["MNISTIter", "read_idx"]

_IMAGE_MAGIC, _LABEL_MAGIC = 2051, 2049
_log = logging.getLogger("nbdl.io")


def read_idx(path, magic, what, arg):
    """The uint8 array of an idx file (``train-images-idx3-ubyte`` and the like,
    optionally gzip-compressed), checking its magic number.

    Parameters
    ----------
    path : str
        The file.
    magic : int
        Its expected magic number: 2051 for images, 2049 for labels.
    what : str
        The caller's name, for messages.
    arg : str
        The argument that named the file, for messages.

    Returns
    -------
    numpy.ndarray of uint8
        Shape ``(count, rows, cols)`` for images, ``(count,)`` for labels.
    """
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        raise ArgumentError(f"{what}: {arg} must name an existing idx file, got {path!r}")
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise ShapeError(f"{what}: {arg} {os.fspath(path)!r} is a broken gzip file ({e})") \
                from None
    kind = "image" if magic == _IMAGE_MAGIC else "label"
    found = struct.unpack(">i", raw[:4])[0] if len(raw) >= 4 else None
    if found != magic:
        raise ShapeError(f"{what}: {arg} {os.fspath(path)!r} has magic number {found}, "
                         f"not {magic} (an MNIST {kind} file)")
    ndim = 3 if magic == _IMAGE_MAGIC else 1
    head = 4 * (1 + ndim)
    if len(raw) < head:
        raise ShapeError(f"{what}: {arg} {os.fspath(path)!r} is too short for an idx header")
    values = struct.unpack(f">{1 + ndim}i", raw[:head])
    shape = values[1:]
    need = int(np.prod(shape))
    if len(raw) - head < need:
        raise ShapeError(f"{what}: {arg} {os.fspath(path)!r} declares shape {shape} but holds "
                         f"{len(raw) - head} bytes of values")
    return np.frombuffer(raw, dtype=np.uint8, count=need, offset=head).reshape(shape)


def _part(count, num_parts, part_index):
    start = int(count / num_parts * part_index)
    end = int(count / num_parts * (part_index + 1))
    return start, end


class MNISTIter(HostBatchIter):
    """Iterates over MNIST images and labels read from local idx files.

    Pixels are scaled to ``[0, 1)`` (divided by 256) and stored as float32;
    the data has shape ``(batch_size, 1, rows, cols)``, or
    ``(batch_size, rows * cols)`` with ``flat``; labels have shape
    ``(batch_size,)``. An incomplete last batch is dropped. With ``shuffle``
    the examples are shuffled once, at construction, with ``seed`` (nbdl's
    order is reproducible but not MXNet's, whose C++ shuffle it does not
    replicate). ``getindex()`` gives each example's position in the files.

    Parameters
    ----------
    image : str
        The image file (``train-images-idx3-ubyte``, optionally ``.gz``).
    label : str
        The label file (``train-labels-idx1-ubyte``, optionally ``.gz``).
    batch_size : int, optional
        Examples per batch.
    shuffle : bool, optional
        Shuffle the examples once.
    flat : bool, optional
        Give each image as a vector.
    seed : int, optional
        Seed of the shuffle.
    silent : bool, optional
        Do not log what was loaded.
    num_parts : int, optional
        Split the examples into this many contiguous parts (default: the ranks of a
        distributed job, else 1) ...
    part_index : int, optional
        ... and read only this one (default: this rank, else 0).
    data_name : str, optional
        Name in ``provide_data``.
    label_name : str, optional
        Name in ``provide_label``.
    data_shape, prefetch_buffer : optional
        Accepted for MXNet compatibility and ignored (MXNet ignores them too).
    """

    def __init__(self, *, image="./train-images-idx3-ubyte", label="./train-labels-idx1-ubyte",
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False,
                 num_parts=None, part_index=None, data_name="data", label_name="softmax_label",
                 data_shape=None, prefetch_buffer=4):
        what = self._what = "MNISTIter"
        batch_size = check_batch_size(batch_size, what)
        check_names(data_name, label_name, what)
        num_parts, part_index = resolve_parts(num_parts, part_index, what)
        check_int(seed, what, "seed")
        del data_shape, prefetch_buffer
        super().__init__(batch_size, data_name, label_name)
        images = read_idx(image, _IMAGE_MAGIC, what, "image")
        labels = read_idx(label, _LABEL_MAGIC, what, "label")
        if images.shape[0] != labels.shape[0]:
            raise ShapeError(f"{what}: image holds {images.shape[0]} images but label holds "
                             f"{labels.shape[0]} labels")
        start, end = _part(images.shape[0], num_parts, part_index)
        order = np.arange(start, end)
        if shuffle:
            order = order[np.random.RandomState(seed).permutation(len(order))]
        rows, cols = images.shape[1:]
        self.flat = bool(flat)
        self._images = images[order].astype(np.float32) * np.float32(1.0 / 256.0)
        self._images = self._images.reshape((len(order), rows * cols) if self.flat
                                            else (len(order), 1, rows, cols))
        self._labels = labels[order].astype(np.float32)
        self._order = order.astype(np.uint64)
        self._loc = 0
        self._describe((batch_size,) + self._images.shape[1:], np.float32,
                       (batch_size,), np.float32)
        if not silent:
            _log.info("MNISTIter: load %d images, shuffle=%d, shape=%s", len(order),
                      int(bool(shuffle)), self.provide_data[0].shape)

    def _next_batch(self):
        lo, hi = self._loc, self._loc + self.batch_size
        if hi > self._images.shape[0]:
            return None
        self._loc = hi
        return (self._images[lo:hi], self._labels[lo:hi], 0, self._order[lo:hi])

    def _before_first(self):
        self._loc = 0
