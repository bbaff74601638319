"""What the file iterators (``CSVIter``, ``MNISTIter``) share: the behaviour of
MXNet 1.x's ``MXDataIter`` wrapper, whose ``getdata()`` / ``getlabel()``
return one NDArray each (not a list) and whose labels of shape ``(N, 1)``
come out as ``(N,)``."""
import numbers

import numpy as np

from ..errors import ArgumentError, NbdlError, ShapeError
from ..ndarray import array as nd_array
from .base import DataBatch, DataDesc, DataIter

__all__ = ["HostBatchIter", "BatchCursor", "check_batch_size", "check_int", "check_names",
           "label_view"]


def check_batch_size(batch_size, what):
    """``batch_size`` as an int, or an ``ArgumentError`` naming ``what``.

    Parameters
    ----------
    batch_size : int
        Must be a positive int (not a bool).
    what : str
        The caller's name, for the message.
    """
    if (isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral)
            or batch_size <= 0):
        raise ArgumentError(f"{what}: batch_size must be a positive int, got {batch_size!r}")
    return int(batch_size)


def check_int(value, what, arg, low=None):
    """``value`` as an int (not a bool) of at least ``low``, or an
    ``ArgumentError`` naming ``what`` and ``arg``.

    Parameters
    ----------
    value : int
        The argument's value.
    what, arg : str
        The caller's and the argument's names, for the message.
    low : int, optional
        The smallest value allowed.
    """
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
            or (low is not None and value < low)):
        raise ArgumentError(f"{what}: {arg} must be an int"
                            f"{'' if low is None else f' >= {low}'}, got {value!r}")
    return int(value)


def check_names(data_name, label_name, what):
    """An ``ArgumentError`` naming ``what`` unless both names are non-empty strs.

    Parameters
    ----------
    data_name, label_name : str
        The names an iterator gives its data and label in ``provide_*``.
    what : str
        The caller's name, for the message.
    """
    for arg, value in (("data_name", data_name), ("label_name", label_name)):
        if not isinstance(value, str) or not value:
            raise ArgumentError(f"{what}: {arg} must be a non-empty str, got {value!r}")


def label_view(label):
    """A label batch as MXNet's file iterators hand it out: ``(N, 1)`` and
    ``(N, 1, 1)`` as ``(N,)``. (MXNet also cuts ``(N, 1, k)`` to its first
    ``N`` values; nbdl keeps such labels whole.)

    Parameters
    ----------
    label : numpy.ndarray
        A batch of labels, batch axis first.
    """
    if label.ndim > 1 and label.size == label.shape[0]:
        return label.reshape(label.shape[0])
    return label


class HostBatchIter(DataIter):
    """Base of iterators that assemble each batch on the host.

    A subclass sets ``self._what`` (its name for messages) and defines
    ``_next_batch()`` returning ``(data, label, pad, index)`` as numpy arrays
    (or None at the end of the epoch) and ``_before_first()``; it calls
    ``_describe`` once it knows the batch shapes.

    Parameters
    ----------
    batch_size : int
        Examples per batch.
    data_name : str
        Name of the data input in ``provide_data``.
    label_name : str
        Name of the label input in ``provide_label``.
    """

    def __init__(self, batch_size, data_name, label_name):
        super().__init__(batch_size)
        self.data_name = data_name
        self.label_name = label_name
        self._current = None

    def _describe(self, data_shape, data_dtype, label_shape, label_dtype):
        label_shape = tuple(label_shape)
        if len(label_shape) > 1 and all(d == 1 for d in label_shape[1:]):
            label_shape = (label_shape[0],)
        self.provide_data = [DataDesc(self.data_name, tuple(data_shape), np.dtype(data_dtype).type)]
        self.provide_label = [DataDesc(self.label_name, label_shape, np.dtype(label_dtype).type)]

    def reset(self):
        """Start the next epoch."""
        self._current = None
        self._before_first()

    def iter_next(self):
        """Assemble the next batch; False at the end of the epoch."""
        self._current = self._next_batch()
        return self._current is not None

    def next(self):
        """The next ``DataBatch`` (one data and one label NDArray)."""
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=[self.getdata()], label=[self.getlabel()],
                         pad=self.getpad(), index=self.getindex())

    def _batch(self, what):
        if self._current is None:
            raise NbdlError(f"{self._what}.{what}: there is no current batch (call iter_next() "
                            f"first, or reset() after the end of the epoch)")
        return self._current

    def getdata(self):
        """The current batch's data, one NDArray."""
        return nd_array(self._batch("getdata")[0], dtype=self._current[0].dtype)

    def getlabel(self):
        """The current batch's label, one NDArray (``(N,)`` for one label per example)."""
        label = label_view(self._batch("getlabel")[1])
        return nd_array(label, dtype=label.dtype)

    def getpad(self):
        """How many examples at the end of the current batch are padding."""
        return int(self._batch("getpad")[2])

    def getindex(self):
        """The current batch's example indices (numpy uint64)."""
        return self._batch("getindex")[3].copy()


class BatchCursor:
    """Which examples each batch holds, as MXNet's C++ file iterators
    (``CSVIter``, ``ImageRecordIter``) choose them.

    Batches take the examples of a pass in order. With ``round_batch`` an
    incomplete last batch is filled from the start of the next pass (``pad``
    counts the examples it took there), that batch ends the epoch, and the
    next epoch goes on after them; without it, the last batch is short and
    its ``pad`` is the number of missing examples.

    Parameters
    ----------
    size : int
        Number of examples (at least 1).
    batch_size : int
        Examples per batch.
    round_batch : bool
        Fill an incomplete last batch from the next pass.
    what : str
        The iterator's name, for messages.
    new_pass : callable, optional
        ``new_pass()`` gives the order of the examples (positions in
        ``range(size)``) for each pass, e.g. a fresh shuffle; in order by default.
    source : str, optional
        What the examples are, for messages (``'rows of data_csv'``).
    """

    def __init__(self, size, batch_size, round_batch, what, new_pass=None, source="examples"):
        self.size, self.batch_size, self.round_batch = size, batch_size, bool(round_batch)
        self._what, self._source = what, source
        self._new_pass = new_pass or (lambda: range(size))
        self._seq = self._new_pass()
        self._pos = 0
        self._overflow = 0

    def next(self):
        """``(positions, pad)`` of the next batch (``positions`` shorter than
        ``batch_size`` only without ``round_batch``), or None at the end of
        the epoch."""
        if self._overflow:  # the last batch wrapped around; the epoch is over
            return None
        bs = self.batch_size
        take = list(self._seq[self._pos:self._pos + bs])
        self._pos += len(take)
        if not take or len(take) == bs:
            return (take, 0) if take else None
        need = bs - len(take)
        if not self.round_batch:
            return take, need
        if need > self.size:
            raise ShapeError(f"{self._what}: batch_size {bs} needs more than the {self.size} "
                             f"{self._source} to fill a batch with round_batch=True")
        self._seq = self._new_pass()
        take += list(self._seq[:need])
        self._pos = self._overflow = need
        return take, need

    def before_first(self):
        """Start the next epoch (after a wrapped batch: where that batch stopped)."""
        if self._overflow:
            self._overflow = 0
        else:
            self._pos = 0
            self._seq = self._new_pass()
