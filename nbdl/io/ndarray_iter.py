"""``NDArrayIter``: batches from in-memory arrays, as MXNet 1.x's ``mx.io.NDArrayIter``."""
import numbers
from collections import OrderedDict

import numpy as np

from ..collective import resolve_parts, shard_indices
from ..errors import ArgumentError, NbdlError, ShapeError
from ..ndarray import NDArray, array as nd_array
from ..ndarray.creation import share_numpy as from_numpy
from .base import DataBatch, DataDesc, DataIter

__all__ = ["NDArrayIter"]

_HANDLES = ("pad", "discard", "roll_over")


def _as_source(value, name, what):
    """``(host numpy array, device)`` of one input; numpy and other array-likes
    become float32 as in MXNet 1.x's ``nd.array``, NDArrays keep their dtype."""
    if isinstance(value, NDArray):
        return value.asnumpy(), value.context
    try:
        return np.array(value, dtype=np.float32), None
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"{what}: input {name!r} must be an NDArray, a numpy array or "
                            f"array-like, got {type(value).__name__} ({e})") from None


def _init_data(data, allow_empty, default_name, what, argname):
    """Canonical ``[(name, numpy array, device)]``, sorted by name like MXNet's."""
    if data is None:
        data = []
    if isinstance(data, (np.ndarray, NDArray)):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise ArgumentError(f"{what}: {argname} must not be empty")
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict((f"_{i}_{default_name}", d) for i, d in enumerate(data))
    if not isinstance(data, dict):
        raise ArgumentError(f"{what}: {argname} must be an NDArray, a numpy array, a list of "
                            f"them or a dict name -> array, got {type(data).__name__}")
    if not data and not allow_empty:
        raise ArgumentError(f"{what}: {argname} must not be empty")
    out = []
    for k in sorted(data):
        if not isinstance(k, str):
            raise ArgumentError(f"{what}: {argname} names must be str, got {k!r}")
        host, dev = _as_source(data[k], k, what)
        out.append((k, host, dev))
    return out


def _take(host, start, stop, batch_axis):
    key = (slice(None),) * batch_axis + (slice(start, stop),)
    return host[key]


class NDArrayIter(DataIter):
    """Iterates over NDArrays or numpy arrays in batches.

    ``data`` and ``label`` may each be one array, a list of arrays (named
    ``_0_<data_name>``, ``_1_<data_name>``, ...) or a dict name -> array;
    inputs are ordered by name. numpy inputs are stored as float32 (as MXNet
    1.x's ``nd.array`` does); NDArray inputs keep their dtype and device.
    Batches hold new NDArrays.

    ``last_batch_handle`` says what happens to the examples left over when
    ``batch_size`` does not divide their number: ``'pad'`` fills the last
    batch with examples from the beginning (``batch.pad`` counts them),
    ``'discard'`` drops them, ``'roll_over'`` keeps them and puts them first
    in the next epoch's first batch (after ``reset``; as in MXNet, that
    batch's ``pad`` is the number of rolled-over examples it starts with).

    Parameters
    ----------
    data : array, list of arrays or dict str -> array
        The input data.  The first array (by name) sets the number of
        examples along the batch axis; the other data and label arrays need
        at least as many (of a longer one, the first are read, as in MXNet).
    label : array, list of arrays or dict str -> array, optional
        The labels.
    batch_size : int
        Examples per batch (positive).
    shuffle : bool, optional
        Shuffle the examples at construction and at every ``reset`` (with
        numpy's global random state, as MXNet does; data and label rows stay
        paired).
    last_batch_handle : {'pad', 'discard', 'roll_over'}, optional
        What to do with an incomplete last batch (see above).
    data_name : str, optional
        Name of a single (or base name of listed) data input.
    label_name : str, optional
        Name of a single (or base name of listed) label input.
    layout : str, optional
        Layout of the inputs; the batch axis is the position of ``'N'``.
    num_parts : int, optional
        Read only one of this many equal parts of the examples (every
        ``num_parts``-th one; default: the ranks of a distributed job, else 1).
    part_index : int, optional
        Which part (default: this rank, else 0).
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False,
                 last_batch_handle="pad", data_name="data",
                 label_name="softmax_label", layout="NCHW", num_parts=None, part_index=None):
        what = "NDArrayIter"
        parts = resolve_parts(num_parts, part_index, what)
        if (isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral)
                or batch_size <= 0):
            raise ArgumentError(f"{what}: batch_size must be a positive int, got {batch_size!r}")
        if last_batch_handle not in _HANDLES:
            raise ArgumentError(f"{what}: last_batch_handle must be one of {_HANDLES}, "
                                f"got {last_batch_handle!r}")
        if not isinstance(layout, str) or "N" not in layout:
            raise ArgumentError(f"{what}: layout must be a str with an 'N' (batch) axis, "
                                f"got {layout!r}")
        super().__init__(int(batch_size))
        self.layout = layout
        self._axis = layout.find("N")
        self._data = _init_data(data, False, data_name, what, "data")
        self._label = _init_data(label, True, label_name, what, "label")
        sizes = []
        for kind, sources in (("data", self._data), ("label", self._label)):
            for name, host, _ in sources:
                if host.ndim <= self._axis:
                    raise ShapeError(f"{what}: {kind} {name!r} has shape {host.shape}, which has "
                                     f"no batch axis {self._axis} (layout {layout!r})")
                sizes.append((kind, name, host.shape))
        # as in MXNet, the first data array sets the number of examples; an
        # array with more is read for its first ones only, one with fewer
        # cannot give every batch its rows
        num = sizes[0][2][self._axis]
        bad = [s for s in sizes if s[2][self._axis] < num]
        if bad:
            raise ShapeError(f"{what}: every data and label array needs at least as many "
                             f"examples along axis {self._axis} as the first data array "
                             f"({num}); got " + ", ".join(f"{k} {n!r} {s}" for k, n, s in sizes))
        self._data = [(k, _take(h, 0, num, self._axis), d) for k, h, d in self._data]
        self._label = [(k, _take(h, 0, num, self._axis), d) for k, h, d in self._label]
        if parts[0] > 1:             # this part's examples (equal parts: see shard_indices)
            rows = shard_indices(num, *parts)
            self._data = [(k, np.take(h, rows, self._axis), d) for k, h, d in self._data]
            self._label = [(k, np.take(h, rows, self._axis), d) for k, h, d in self._label]
            num = len(rows)
        if last_batch_handle == "roll_over" and self.batch_size > num:
            raise ArgumentError(f"{what}: last_batch_handle='roll_over' needs batch_size <= the "
                                f"number of examples, got batch_size={self.batch_size} for "
                                f"{num} examples")
        self.idx = np.arange(num)
        self.shuffle = bool(shuffle)
        self.last_batch_handle = last_batch_handle
        self.num_data = num
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None
        self._rolled = False
        self.reset()

    # -- the arrays, as MXNet exposes them ---------------------------------
    @property
    def data(self):
        """``[(name, NDArray)]`` of the data in its current (shuffled) order."""
        return [(k, self._wrap(h, d)) for k, h, d in self._data]

    @property
    def label(self):
        """``[(name, NDArray)]`` of the labels in their current order."""
        return [(k, self._wrap(h, d)) for k, h, d in self._label]

    @staticmethod
    def _wrap(host, dev):
        return from_numpy(host) if dev is None else nd_array(host, ctx=dev, dtype=host.dtype)

    def _descs(self, sources):
        out = []
        for name, host, _ in sources:
            shape = list(host.shape)
            shape[self._axis] = self.batch_size
            out.append(DataDesc(name, tuple(shape), host.dtype.type, layout=self.layout))
        return out

    @property
    def provide_data(self):
        """``DataDesc`` of each data input for one batch (name-sorted)."""
        return self._descs(self._data)

    @property
    def provide_label(self):
        """``DataDesc`` of each label input for one batch (name-sorted)."""
        return self._descs(self._label)

    # -- epoch control ------------------------------------------------------
    def hard_reset(self):
        """Start over at the first example, dropping any rolled-over examples."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        """Start the next epoch (reshuffling when ``shuffle``).

        With ``'roll_over'``, examples left over from an incomplete last
        batch lead the first batch of the new epoch."""
        if self.shuffle:
            self._shuffle_data()
        if (self.last_batch_handle == "roll_over"
                and self.num_data - self.batch_size < self.cursor < self.num_data):
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        """Advance the cursor by ``batch_size``; False past the last example."""
        if self._rolled:  # the rolled-over examples have been delivered
            self._cache_data = self._cache_label = None
            self._rolled = False
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        """The next full ``DataBatch``; an incomplete last batch ends the epoch
        (it is kept for ``'roll_over'``)."""
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[self._axis] != self.batch_size:
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    # -- the current batch --------------------------------------------------
    def _in_roll_batch(self):
        return self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0

    def _batchify(self, sources, cache, what):
        if self.cursor >= self.num_data:
            raise NbdlError(f"NDArrayIter.{what}: the iterator is past its last batch "
                            f"(cursor {self.cursor}, {self.num_data} examples); call reset()")
        ax = self._axis
        if self._in_roll_batch():
            if cache is None:
                raise NbdlError(f"NDArrayIter.{what}: no examples were kept from the last "
                                f"epoch to roll over (the epoch was not ended by next(); "
                                f"call hard_reset() to start over)")
            self._rolled = True
            end = self.cursor + self.batch_size
            return [nd_array(np.concatenate([c.asnumpy(), _take(h, 0, end, ax)], axis=ax),
                             ctx=c.context, dtype=h.dtype)
                    for c, (_, h, _) in zip(cache, sources)]
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            pad = self.cursor + self.batch_size - self.num_data
            rows = np.concatenate([np.arange(self.cursor, self.num_data),
                                   np.arange(pad) % self.num_data])
            return [self._out(np.take(h, rows, axis=ax), h, d) for _, h, d in sources]
        end = min(self.cursor + self.batch_size, self.num_data)
        return [self._out(_take(h, self.cursor, end, ax), h, d) for _, h, d in sources]

    @staticmethod
    def _out(batch, host, dev):
        return nd_array(batch, ctx=dev, dtype=host.dtype)

    def getdata(self):
        """The data of the current batch: a list of NDArray (name-sorted)."""
        return self._batchify(self._data, self._cache_data, "getdata")

    def getlabel(self):
        """The labels of the current batch: a list of NDArray (empty without labels)."""
        return self._batchify(self._label, self._cache_label, "getlabel")

    def getpad(self):
        """Padding examples in the current batch: the filled-in count for
        ``'pad'``, and for the first batch of a rolled-over epoch the number
        of rolled-over examples it starts with (MXNet's value); 0 otherwise."""
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self._in_roll_batch():
            return -self.cursor
        return 0

    def _shuffle_data(self):
        np.random.shuffle(self.idx)
        ax = self._axis
        self._data = [(k, np.take(h, self.idx, axis=ax), d) for k, h, d in self._data]
        self._label = [(k, np.take(h, self.idx, axis=ax), d) for k, h, d in self._label]
