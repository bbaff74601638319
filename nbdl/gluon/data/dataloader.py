"""``DataLoader``: batches from a dataset, optionally made by worker
processes or threads (Gluon's ``gluon.data.DataLoader``).

The main process always walks the batch sampler, so the order of batches
(and, for a shuffled loader, the permutation drawn from nbdl's generator) is
the same for any ``num_workers``.  Workers only load samples and batchify
them: worker processes run the host half of nbdl's batchify functions and
send numpy arrays back, which the main process wraps as NDArrays (see
``batchify``); threads run the batchify function whole.  Batches are
delivered in order; up to ``prefetch`` of them are in flight.

Worker processes are started with the 'fork' method where the platform has
it (else 'spawn', which needs a picklable dataset and batchify function),
on the first iteration, and live until ``close()``, until the loader is
garbage-collected or until the interpreter exits.  They hold a copy of the
dataset as it was then.  A worker that dies (a crash, or a forked worker
running parallel nbdl kernels after the main process has started GNU OpenMP
threads, which Numba refuses) is reported as ``WorkerError`` at once rather
than after ``timeout``.
"""
import collections
import multiprocessing
import multiprocessing.pool
import time
import warnings
import weakref

import numpy as np

from ...errors import NbdlError
from .batchify import default_batchify_fn, host_batch, to_nd
from .dataset import DataError
from .sampler import BatchSampler, RandomSampler, SequentialSampler

# How often a waiting loader checks that its worker processes are alive.
_POLL_SECONDS = 0.05


class WorkerError(NbdlError, RuntimeError):
    """A DataLoader worker process died while making a batch."""


class WorkerTimeoutError(WorkerError, multiprocessing.TimeoutError):
    """A DataLoader worker did not deliver a batch within ``timeout`` seconds."""


class DataLoader:
    """Loads batches from ``dataset``.

    Either ``batch_size`` (with ``shuffle``, ``sampler``, ``last_batch``) or
    a ``batch_sampler`` chooses the indices of each batch;
    ``batchify_fn(samples)`` (default: ``batchify.default_batchify_fn``)
    turns the samples into a batch.  With ``num_workers > 0`` batches are
    made by that many worker processes (threads when ``thread_pool``), each
    batch within ``timeout`` seconds.

    nbdl has no native data pipeline, so ``try_nopython=True`` falls back to
    this Python one with a warning (as Gluon does when it cannot compile the
    pipeline).  CPU memory needs no pinning here: ``pin_memory`` and
    ``pin_device_id`` are accepted and batches are on ``nbdl.cpu()``.

    ``auto_reload=True`` (MXNet 1.x) prepares a pass at construction and the
    next one as soon as a pass ends, so a worker loader has the first
    ``prefetch`` batches of a pass in flight before it is iterated
    (``refresh()`` does that by hand, ``clean()`` drops a prepared pass).

    Parameters
    ----------
    dataset : Dataset
        Samples by index (``len`` and ``[]``).
    batch_size : int, optional
        Samples per batch (unless ``batch_sampler`` is given).
    shuffle : bool
        Draw the samples in random order.
    sampler : Sampler, optional
        The order of the samples (not with ``shuffle``).
    last_batch : {'keep', 'discard', 'rollover'}, optional
        What to do with an incomplete last batch (default 'keep').
    batch_sampler : Sampler, optional
        Yields the indices of each batch (instead of the four above).
    batchify_fn : callable, optional
        ``batchify_fn(samples) -> batch``.
    num_workers : int
        Worker processes (threads with ``thread_pool``); 0 loads in this process.
    pin_memory, pin_device_id : optional
        Accepted for MXNet's signature (nothing to pin here).
    prefetch : int, optional
        Batches in flight with workers (default ``2 * num_workers``).
    thread_pool : bool
        Workers are threads instead of processes.
    timeout : float
        Seconds a worker may take for a batch.
    try_nopython : bool, optional
        Accepted; True warns that there is no nopython pipeline.
    auto_reload : bool
        Prepare each pass ahead (see above; default False, as MXNet 1.9.1).
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False,
                 pin_device_id=0, prefetch=None, thread_pool=False, timeout=120,
                 try_nopython=None, auto_reload=False):
        self._dataset = dataset
        if batch_sampler is None:
            if batch_size is None:
                raise DataError("DataLoader: batch_size must be specified unless batch_sampler "
                                "is specified")
            if sampler is None:
                sampler = RandomSampler(len(dataset)) if shuffle else SequentialSampler(len(dataset))
            elif shuffle:
                raise DataError("DataLoader: shuffle must not be specified if sampler is specified")
            batch_sampler = BatchSampler(sampler, batch_size,
                                         last_batch if last_batch is not None else "keep")
        else:
            given = [name for name, v in (("batch_size", batch_size), ("sampler", sampler),
                                          ("last_batch", last_batch)) if v is not None]
            if shuffle:
                given.append("shuffle")
            if given:
                raise DataError(f"DataLoader: {', '.join(given)} must not be specified if "
                                f"batch_sampler is specified")
        if batchify_fn is not None and not callable(batchify_fn):
            raise DataError(f"DataLoader: batchify_fn must be callable, got "
                            f"{type(batchify_fn).__name__}")
        if isinstance(num_workers, bool) or not isinstance(num_workers, (int, np.integer)):
            raise DataError(f"DataLoader: num_workers must be an integer, got {num_workers!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise DataError(f"DataLoader: timeout must be a positive number of seconds, "
                            f"got {timeout!r}")
        if prefetch is not None and (isinstance(prefetch, bool) or
                                     not isinstance(prefetch, (int, np.integer))):
            raise DataError(f"DataLoader: prefetch must be an integer or None, got {prefetch!r}")
        if try_nopython:
            warnings.warn("DataLoader: nbdl has no nopython data pipeline; try_nopython=True "
                          "falls back to the Python pipeline", stacklevel=2)
        self._batch_sampler = batch_sampler
        self._batchify_fn = default_batchify_fn if batchify_fn is None else batchify_fn
        self._num_workers = max(0, int(num_workers))
        self._thread_pool = bool(thread_pool)
        self._timeout = timeout
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._pool = self._pool_finalizer = self._worker_pids = None
        self._iter = None
        self.auto_reload = bool(auto_reload)
        if self.auto_reload:
            self.refresh()

    def __len__(self):
        return len(self._batch_sampler)

    def __iter__(self):
        it = self._iter if self._iter is not None else self._prefetch_iter()
        self._iter = None           # a prefetched pass is used once
        return self._reloading(it) if self.auto_reload else it

    def _reloading(self, it):
        yield from it
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _prefetch_iter(self):
        if self._num_workers == 0:
            return self._same_process_iter()
        return _PoolIter(self)

    def refresh(self):
        """Start the next pass now: with workers, its first ``prefetch``
        batches are submitted at once, and the next ``iter(loader)`` takes
        them (what ``auto_reload=True`` does after each pass)."""
        self._iter = self._prefetch_iter()

    def clean(self):
        """Drop the pass ``refresh`` prepared; the next ``iter(loader)``
        starts its own."""
        self._iter = None

    def _same_process_iter(self):
        for indices in self._batch_sampler:
            yield self._batchify_fn([self._dataset[i] for i in indices])

    # -- worker pool ------------------------------------------------------
    def _get_pool(self):
        """The worker pool, started on first use (and after a timeout)."""
        if self._pool is None:
            if self._thread_pool:
                self._pool = multiprocessing.pool.ThreadPool(self._num_workers)
            else:
                methods = multiprocessing.get_all_start_methods()
                ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
                self._pool = ctx.Pool(self._num_workers, initializer=_worker_init,
                                      initargs=(self._dataset, self._batchify_fn))
                self._worker_pids = _worker_pids(self._pool)
            # Terminates the pool when the loader is collected or, at the
            # latest, at interpreter exit (before modules are torn down).
            self._pool_finalizer = weakref.finalize(self, _stop_pool, self._pool)
        return self._pool

    def _dead_worker(self):
        """A description of a worker process that has died, or None.  (A
        Pool silently replaces a dead worker and loses its batch; without
        this check the loader would wait for the whole timeout.)"""
        if self._pool is None or self._thread_pool:
            return None
        for proc in getattr(self._pool, "_pool", ()):
            if proc.exitcode is not None:
                return f"worker process {proc.pid} exited with code {proc.exitcode}"
        pids = _worker_pids(self._pool)
        if self._worker_pids is not None and pids is not None and pids != self._worker_pids:
            gone = sorted(self._worker_pids - pids)
            return f"worker process {gone[0] if gone else '?'} exited"
        return None

    def _submit(self, indices):
        pool = self._get_pool()
        if self._thread_pool:
            return pool.apply_async(_thread_batch, (self._dataset, self._batchify_fn, indices))
        return pool.apply_async(_worker_batch, (indices,))

    def _finish(self, result):
        return result if self._thread_pool else to_nd(result)

    def _drop_pool(self, hung=False):
        """Stop the workers; a later pass starts new ones.  After a timeout
        (``hung``) worker threads are only told to exit once idle, since a
        thread cannot be killed and waiting for it would hang too."""
        pool, finalizer = self._pool, self._pool_finalizer
        self._pool = self._pool_finalizer = self._worker_pids = None
        if pool is None:
            return
        if hung and self._thread_pool:
            finalizer.detach()
            pool.close()
        elif hung:
            finalizer.detach()
            _stop_pool(pool, wait=0.0)      # the hung batch will not arrive
        else:
            finalizer()

    def close(self):
        """Stop the worker processes or threads, if any were started (also
        done when the loader is garbage-collected and at interpreter exit)."""
        self._drop_pool()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_pool"] = state["_pool_finalizer"] = state["_worker_pids"] = None
        state["_iter"] = None
        return state


class _PoolIter:
    """One pass over the batches, made by the loader's workers, in order."""

    def __init__(self, loader):
        self._loader = loader
        self._batches = iter(loader._batch_sampler)
        self._pending = collections.deque()
        self._index = 0
        for _ in range(max(1, loader._prefetch)):
            self._push()

    def _push(self):
        for indices in self._batches:
            self._pending.append(self._loader._submit(indices))
            return

    def __len__(self):
        return len(self._loader._batch_sampler)

    def __iter__(self):
        return self

    def __next__(self):
        if not self._pending:
            raise StopIteration
        result = self._pending.popleft()
        self._push()
        loader = self._loader
        deadline = time.monotonic() + loader._timeout
        while not result.ready():
            dead = loader._dead_worker()
            if dead is not None:
                self._fail()
                raise WorkerError(
                    f"DataLoader: {dead} (waiting for batch {self._index}).  If it "
                    f"printed 'fork() called from a process already using GNU OpenMP', the "
                    f"dataset or its transforms ran parallel nbdl kernels in a forked worker; "
                    f"use thread_pool=True or num_workers=0")
            left = deadline - time.monotonic()
            if left <= 0:
                self._fail()
                raise WorkerTimeoutError(
                    f"DataLoader: a worker did not deliver batch {self._index} within "
                    f"timeout={loader._timeout} seconds; a slow dataset or transform may need "
                    f"a larger timeout")
            result.wait(min(left, _POLL_SECONDS))
        value = result.get()
        self._index += 1
        return self._loader._finish(value)

    def _fail(self):
        """Stop the workers (one may hang or be gone); a new pass starts fresh ones."""
        self._pending.clear()
        self._loader._drop_pool(hung=True)


def _stop_pool(pool, wait=10.0):
    """Stop ``pool``'s workers.  ``Pool.terminate`` deadlocks while a worker is
    blocked sending a result larger than the pipe's buffer (the result thread
    stops reading, the worker keeps the queue's lock, terminate waits for it),
    which is what dropping an iterator with batches still in flight does: so
    the in-flight batches are let arrive first (at most ``wait`` seconds),
    then the workers are terminated."""
    pool.close()
    deadline = time.monotonic() + wait
    while getattr(pool, "_cache", None) and time.monotonic() < deadline:
        time.sleep(0.005)
    pool.terminate()


def _worker_pids(pool):
    procs = getattr(pool, "_pool", None)
    return None if procs is None else {p.pid for p in procs}


# -- worker side ------------------------------------------------------------
_worker_dataset = None
_worker_batchify_fn = None


def _worker_init(dataset, batchify_fn):
    global _worker_dataset, _worker_batchify_fn
    _worker_dataset = dataset
    _worker_batchify_fn = batchify_fn


def _worker_batch(indices):
    """Runs in a worker process: the host half of the batch (numpy arrays)."""
    return host_batch(_worker_batchify_fn, [_worker_dataset[i] for i in indices])


def _thread_batch(dataset, batchify_fn, indices):
    return batchify_fn([dataset[i] for i in indices])
