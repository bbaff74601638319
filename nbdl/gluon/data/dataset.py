"""Datasets: ``Dataset`` and its lazy views, ``SimpleDataset``, ``ArrayDataset``.

As in Gluon, a dataset is anything with ``__getitem__`` and ``__len__``;
``transform``, ``filter``, ``shard``, ``take`` and ``sample`` return new
datasets that index into the original one (nothing is copied unless
``lazy=False``).
"""
import abc

import numpy as np

from ...errors import NbdlError
from ...ndarray import NDArray


class DataError(NbdlError, ValueError):
    """Bad arguments to a dataset, sampler, batchify function or DataLoader."""


class Dataset(abc.ABC):
    """Abstract dataset: subclasses implement ``__getitem__`` and ``__len__``."""

    @abc.abstractmethod
    def __getitem__(self, idx):
        """The sample at position ``idx``."""

    @abc.abstractmethod
    def __len__(self):
        """The number of samples."""

    def filter(self, fn):
        """A dataset of the samples for which ``fn(sample)`` is true."""
        from .sampler import FilterSampler
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Part ``index`` of ``num_shards`` contiguous parts; the first
        ``len(self) % num_shards`` parts hold one sample more."""
        num_shards = _int_arg("shard", "num_shards", num_shards, 1)
        index = _int_arg("shard", "index", index, 0)
        if index >= num_shards:
            raise DataError(f"shard: index {index} must be smaller than num_shards {num_shards}")
        shard_len, rest = divmod(len(self), num_shards)
        start = shard_len * index + min(index, rest)
        length = shard_len + (1 if index < rest else 0)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(length, start))

    def take(self, count):
        """The first ``count`` samples (all of them when ``count`` is None or
        larger than the dataset)."""
        n = len(self)
        count = n if count is None else min(_int_arg("take", "count", count, 0), n)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices ``sampler`` yields, in its order."""
        from .sampler import Sampler
        if not isinstance(sampler, Sampler):
            raise DataError(f"sample: expected a gluon.data.Sampler, got {type(sampler).__name__}")
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """A dataset whose samples are ``fn(*sample)`` (tuples are unpacked)
        or ``fn(sample)``; computed on access when ``lazy``, else now."""
        if not callable(fn):
            raise DataError(f"transform: fn must be callable, got {type(fn).__name__}")
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn, lazy=True):
        """Like ``transform`` but applies ``fn`` to the first element of each
        sample only (the data, not the label)."""
        if not callable(fn):
            raise DataError(f"transform_first: fn must be callable, got {type(fn).__name__}")
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over any sequence (a list, a numpy array, an NDArray)."""

    def __init__(self, data):
        try:
            len(data)
        except TypeError:
            raise DataError(f"SimpleDataset: data must have a length, got "
                            f"{type(data).__name__}") from None
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class ArrayDataset(Dataset):
    """A dataset of tuples ``(a[i], b[i], ...)`` over arrays of equal length
    (one array gives its elements, not 1-tuples).  1-D NDArrays are read
    into numpy once, so their elements are scalars, as in Gluon."""

    def __init__(self, *args):
        if not args:
            raise DataError("ArrayDataset: needs at least one array")
        lengths = []
        for i, data in enumerate(args):
            try:
                lengths.append(len(data))
            except TypeError:
                raise DataError(f"ArrayDataset: argument {i} ({type(data).__name__}) has no "
                                f"length") from None
        if len(set(lengths)) != 1:
            raise DataError(f"ArrayDataset: all arrays must have the same length, got lengths "
                            f"{lengths}")
        self._length = lengths[0]
        self._data = [a.asnumpy() if isinstance(a, NDArray) and a.ndim == 1 else a for a in args]

    def __len__(self):
        return self._length

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """``fn`` applied to the first element; a class, not a closure, so that
    worker processes started with 'spawn' can unpickle it."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    """The samples of ``dataset`` at the indices ``sampler`` yields."""

    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


def _int_arg(where, name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise DataError(f"{where}: {name} must be an integer, got {value!r}")
    if value < minimum:
        raise DataError(f"{where}: {name} must be >= {minimum}, got {value}")
    return int(value)
