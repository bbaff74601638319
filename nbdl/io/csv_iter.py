"""``CSVIter``: batches of rows of CSV files, as MXNet 1.x's ``mx.io.CSVIter``."""
import numbers
import os
import warnings

import numpy as np

from ..collective import resolve_parts, shard_indices
from ..errors import ArgumentError, ShapeError
from .host_iter import BatchCursor, HostBatchIter, check_batch_size, check_names

__all__ = ["CSVIter"]

_DTYPES = {None: np.float32, "float32": np.float32, "int32": np.int32, "int64": np.int64}


def _shape(value, what, arg):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = (value,)
    if (not isinstance(value, (tuple, list)) or not value
            or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool) and d > 0
                       for d in value)):
        raise ArgumentError(f"{what}: {arg} must be a non-empty tuple of positive ints, "
                            f"got {value!r}")
    return tuple(int(d) for d in value)


def _files(path, what, arg):
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentError(f"{what}: {arg} must be a file or directory path, "
                            f"got {type(path).__name__}")
    path = os.fspath(path)
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if os.path.isfile(os.path.join(path, n)))
        if not names:
            raise ArgumentError(f"{what}: {arg} directory {path!r} holds no files")
        return [os.path.join(path, n) for n in names]
    if not os.path.isfile(path):
        raise ArgumentError(f"{what}: {arg} {path!r} is not a file or directory")
    return [path]


def _read_rows(path, shape, dtype, what, arg):
    """Every row of the CSV file(s) at ``path`` as an ``(rows,) + shape`` array."""
    width = int(np.prod(shape))
    parts = []
    for fname in _files(path, what, arg):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # numpy warns on an empty file
            try:
                rows = np.loadtxt(fname, delimiter=",", dtype=dtype, ndmin=2)
            except (ValueError, OverflowError) as e:
                raise ShapeError(f"{what}: cannot parse {fname!r} ({arg}) as CSV of "
                                 f"{np.dtype(dtype).name}: {e}") from None
        if rows.size == 0:
            continue
        if rows.shape[1] != width:
            raise ShapeError(f"{what}: the rows of {fname!r} ({arg}) have {rows.shape[1]} "
                             f"values, but the shape {shape} needs {width}")
        parts.append(rows.reshape((rows.shape[0],) + shape))
    if not parts:
        raise ShapeError(f"{what}: {arg} {os.fspath(path)!r} holds no rows")
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


class CSVIter(HostBatchIter):
    """Iterates over the rows of CSV files in batches.

    Each row of ``data_csv`` is one example, reshaped to ``data_shape``; the
    matching row of ``label_csv`` is its label (all labels are 0 without a
    label file). The whole file is read into memory at construction.

    With ``round_batch`` (the default), an incomplete last batch is filled
    with rows from the beginning (``pad`` counts them) and the next epoch,
    after ``reset()``, starts at the first row not yet used by that fill, as
    MXNet does. Without it, the last batch keeps the rows of the batch before
    it in its padding positions and every epoch starts at the first row.

    Parameters
    ----------
    data_csv : str
        A CSV file, or a directory whose files (in name order) are read as
        one.
    data_shape : tuple of int
        Shape of one example; a row has ``prod(data_shape)`` values.
    label_csv : str, optional
        CSV file (or directory) of labels, one row per data row (extra rows
        are ignored). None or ``'NULL'`` gives labels of 0.
    label_shape : tuple of int, optional
        Shape of one label; ``(1,)`` by default, which gives labels of shape
        ``(batch_size,)``.
    batch_size : int
        Examples per batch.
    round_batch : bool, optional
        Fill an incomplete last batch from the beginning (see above).
    dtype : {'float32', 'int32', 'int64'}, optional
        How the values are parsed and stored (float32 by default).
    data_name : str, optional
        Name in ``provide_data``.
    label_name : str, optional
        Name in ``provide_label``.
    prefetch_buffer : int, optional
        Accepted for MXNet compatibility; batches are assembled on demand.
    num_parts : int, optional
        Read only one of this many equal parts of the rows (every
        ``num_parts``-th one; default: the ranks of a distributed job, else 1).
    part_index : int, optional
        Which part (default: this rank, else 0).
    """

    def __init__(self, *, data_csv, data_shape, batch_size, label_csv=None, label_shape=(1,),
                 round_batch=True, dtype=None, data_name="data", label_name="softmax_label",
                 prefetch_buffer=4, num_parts=None, part_index=None):
        what = self._what = "CSVIter"
        parts = resolve_parts(num_parts, part_index, what)
        batch_size = check_batch_size(batch_size, what)
        check_names(data_name, label_name, what)
        if dtype not in _DTYPES:
            raise ArgumentError(f"{what}: dtype must be one of 'float32', 'int32', 'int64', "
                                f"got {dtype!r}")
        del prefetch_buffer
        super().__init__(batch_size, data_name, label_name)
        dt = _DTYPES[dtype]
        self.round_batch = bool(round_batch)
        data_shape = _shape(data_shape, what, "data_shape")
        label_shape = _shape(label_shape, what, "label_shape")
        self._data = _read_rows(data_csv, data_shape, dt, what, "data_csv")
        n = self._data.shape[0]
        if label_csv is None or label_csv == "NULL":
            self._label = np.zeros((n, 1), dtype=dt)
        else:
            label = _read_rows(label_csv, label_shape, dt, what, "label_csv")
            if label.shape[0] < n:
                raise ShapeError(f"{what}: label_csv has {label.shape[0]} rows, fewer than "
                                 f"the {n} rows of data_csv")
            self._label = label[:n]
        if parts[0] > 1:             # this part's rows (equal parts: see shard_indices)
            rows = shard_indices(n, *parts)
            self._data, self._label = self._data[rows], self._label[rows]
        self._buf = [np.zeros((batch_size,) + a.shape[1:], dtype=dt)
                     for a in (self._data, self._label)]
        self._index = np.zeros(batch_size, dtype=np.uint64)
        self._cursor = BatchCursor(self._data.shape[0], batch_size, round_batch, what,
                                   source="rows of data_csv")
        self._describe(self._buf[0].shape, dt, self._buf[1].shape, dt)

    def _next_batch(self):
        nxt = self._cursor.next()
        if nxt is None:
            return None
        rows, pad = nxt
        for buf, src in zip(self._buf, (self._data, self._label)):
            buf[:len(rows)] = src[rows]
        self._index[:len(rows)] = rows
        return (self._buf[0].copy(), self._buf[1].copy(), pad, self._index.copy())

    def _before_first(self):
        self._cursor.before_first()
