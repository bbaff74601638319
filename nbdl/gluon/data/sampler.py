"""Samplers: iterables of dataset indices (Gluon's ``gluon.data.sampler``).

``RandomSampler`` draws its permutation from nbdl's generator, so
``nbdl.random.seed(n)`` reproduces the order of a shuffled DataLoader.
"""
import abc

from ...ndarray import random as _random
from .dataset import DataError, _int_arg

_LAST_BATCH = ("keep", "discard", "rollover")


class Sampler(abc.ABC):
    """Base class: ``__iter__`` yields indices, ``__len__`` counts them."""

    @abc.abstractmethod
    def __iter__(self):
        """Yield the indices."""

    @abc.abstractmethod
    def __len__(self):
        """How many indices one pass yields."""


class SequentialSampler(Sampler):
    """``start, start + 1, ..., start + length - 1``."""

    def __init__(self, length, start=0):
        self._length = _int_arg("SequentialSampler", "length", length, 0)
        self._start = _int_arg("SequentialSampler", "start", start, 0)

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """A fresh random permutation of ``0 .. length - 1`` on every pass."""

    def __init__(self, length):
        self._length = _int_arg("RandomSampler", "length", length, 0)

    def __iter__(self):
        perm = _random.generator().permutation(self._length)
        return iter(perm.tolist())

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices ``i`` of ``dataset`` for which ``fn(dataset[i])`` is true
    (evaluated once, at construction)."""

    def __init__(self, fn, dataset):
        if not callable(fn):
            raise DataError(f"FilterSampler: fn must be callable, got {type(fn).__name__}")
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    ``last_batch`` says what happens to a final incomplete batch: ``'keep'``
    yields it, ``'discard'`` drops it, ``'rollover'`` carries its indices over
    to the start of the next pass."""

    def __init__(self, sampler, batch_size, last_batch="keep"):
        self._batch_size = _int_arg("BatchSampler", "batch_size", batch_size, 1)
        if last_batch not in _LAST_BATCH:
            raise DataError(f"BatchSampler: last_batch must be one of {', '.join(_LAST_BATCH)}; "
                            f"got {last_batch!r}")
        self._sampler = sampler
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self):
        n = len(self._sampler)
        if self._last_batch == "keep":
            return (n + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return n // self._batch_size
        return (len(self._prev) + n) // self._batch_size


class IntervalSampler(Sampler):
    """Indices ``0, interval, 2 * interval, ...`` below ``length``; with
    ``rollover`` the passes starting at ``1, 2, ..., interval - 1`` follow, so
    every index is visited once (``length=10, interval=3`` gives
    ``0 3 6 9 1 4 7 2 5 8``)."""

    def __init__(self, length, interval, rollover=True):
        self._length = _int_arg("IntervalSampler", "length", length, 0)
        self._interval = _int_arg("IntervalSampler", "interval", interval, 1)
        if self._interval >= self._length:
            raise DataError(f"IntervalSampler: interval {self._interval} must be smaller than "
                            f"length {self._length}")
        self._rollover = bool(rollover)

    def __iter__(self):
        for start in range(self._interval if self._rollover else 1):
            yield from range(start, self._length, self._interval)

    def __len__(self):
        if self._rollover:
            return self._length
        return (self._length + self._interval - 1) // self._interval
