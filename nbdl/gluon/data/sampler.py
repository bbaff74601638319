"""Samplers: iterables of dataset indices (Gluon's ``gluon.data.sampler``).

``RandomSampler`` draws its permutation from nbdl's generator, so
``nbdl.random.seed(n)`` reproduces the order of a shuffled DataLoader.
``SequentialSampler`` and ``RandomSampler`` take ``num_parts`` /
``part_index``: in a distributed job (a ``dist_*`` kvstore or
``nbdl.distributed.init()``) they default to the world size and this rank,
so each rank reads its own shard of the data set (pass ``num_parts=1`` to
read all of it).
"""
import abc

import numpy as np

from ... import collective
from ...collective import resolve_parts, shard_indices
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
    """``start, start + 1, ..., start + length - 1``; with several parts, the
    part ``part_index`` of them (``nbdl.collective.shard_indices``: every
    ``num_parts``-th index, wrapped around so all parts are equally long).

    Parameters
    ----------
    length : int
        How many indices.
    start : int, default 0
        The first index.
    num_parts : int, optional
        How many parts (default: the ranks of a distributed job, else 1).
    part_index : int, optional
        This part (default: this rank, else 0).
    """

    def __init__(self, length, start=0, num_parts=None, part_index=None):
        self._length = _int_arg("SequentialSampler", "length", length, 0)
        self._start = _int_arg("SequentialSampler", "start", start, 0)
        self._parts = resolve_parts(num_parts, part_index, "SequentialSampler")

    def __iter__(self):
        if self._parts[0] == 1:
            return iter(range(self._start, self._start + self._length))
        return iter((self._start + shard_indices(self._length, *self._parts)).tolist())

    def __len__(self):
        return -(-self._length // self._parts[0])


class RandomSampler(Sampler):
    """A fresh random permutation of ``0 .. length - 1`` on every pass; with
    several parts, every part draws the same permutation (from a seed the
    ranks share: rank 0's, broadcast when the sampler is made) and reads
    its share of it, so the parts never overlap.

    Parameters
    ----------
    length : int
        How many indices.
    num_parts : int, optional
        How many parts (default: the ranks of a distributed job, else 1).
    part_index : int, optional
        This part (default: this rank, else 0).
    seed : int, optional
        The seed of the shared permutations (default: drawn from nbdl's
        generator, on rank 0 in a distributed job).
    """

    def __init__(self, length, num_parts=None, part_index=None, seed=None):
        self._length = _int_arg("RandomSampler", "length", length, 0)
        self._parts = resolve_parts(num_parts, part_index, "RandomSampler")
        self._epoch = 0
        self._seed = None
        if self._parts[0] > 1:
            if seed is None:
                drawn = np.array([_random.generator().integers(0, 2**62)], np.int64)
                w = collective.world()
                if w is not None and w.size > 1:
                    collective.broadcast(drawn, 0, "RandomSampler seed", world=w)
                seed = int(drawn[0])
            self._seed = _int_arg("RandomSampler", "seed", seed, 0)

    def __iter__(self):
        if self._seed is None:
            perm = _random.generator().permutation(self._length)
            return iter(perm.tolist())
        perm = np.random.default_rng([self._seed, self._epoch]).permutation(self._length)
        self._epoch += 1
        return iter(shard_indices(perm, *self._parts).tolist())

    def __len__(self):
        return -(-self._length // self._parts[0])


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
