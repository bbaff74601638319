"""The distributed KVStores (``create('dist_sync')``, ``'dist_device_sync'``,
``'dist_async'``, ``'horovod'``) on MPI (``nbdl.collective``).

MXNet 1.x ran ``dist_*`` on parameter servers; here every process (rank)
holds a full copy of the store and a push sums the values of all ranks with
one allreduce, so the stored values stay identical on every rank:

- ``init`` / ``broadcast``: rank 0's value is broadcast and stored on every
  rank (as MXNet's first init from worker 0).
- ``push``: the values a rank pushes for a key are summed locally (each
  compressed first when 2-bit compression is on), then summed over the
  ranks; the total replaces the stored value, or, after ``set_optimizer``,
  is the gradient the optimizer applies to it, on every rank alike (what a
  server would do once, each rank does itself: the updates are
  deterministic, so the copies do not drift).
- ``pull`` copies the local stored value; ``pushpull`` is both.
- ``barrier``, ``rank``, ``num_workers`` are MPI's.
- ``save_optimizer_states`` writes from rank 0 only (every rank holds the
  same states) and then waits for all; ``load_optimizer_states`` waits for
  the file, then every rank reads it.

``dist_sync``, ``dist_device_sync`` (and ``dist_sync_device``, ``dist``)
behave alike: nbdl has one device per rank.  ``dist_async`` warns once and
runs synchronously: MXNet's asynchronous mode applies each worker's
gradient on the servers as it arrives, which needs a parameter server; an
allreduce is a rendezvous of all ranks by nature (an asynchronous scheme
over MPI one-sided windows would be a home-made parameter server, which
nbdl does not build).  ``horovod`` is Horovod's store: it cannot run an
optimizer (``is_capable('optimizer')`` is False), so a Trainer reduces the
gradients through it and updates the weights itself.
"""
import os
import warnings

import numpy as np

from .. import collective
from ..errors import OptionalDependencyError
from ..ndarray.creation import from_host
from .kvstore import DIST_TYPES, KVStore, KVStoreBase, KVStoreError, _pairs

_warned_async = [False]


class DistKVStore(KVStore):
    """A KVStore shared by the ranks of an MPI job; make one with
    ``nbdl.kv.create('dist_sync')`` (or another of ``DIST_TYPES``).

    Parameters
    ----------
    kv_type : str
        One of ``DIST_TYPES``.
    """

    _TYPES = DIST_TYPES
    distributed = True

    def __init__(self, kv_type="dist_sync"):
        super().__init__(kv_type)
        try:
            self._world = collective.init(f"kvstore {kv_type!r}")
        except OptionalDependencyError as e:
            raise OptionalDependencyError(str(e)) from None
        if kv_type == "dist_async" and not _warned_async[0]:
            _warned_async[0] = True
            warnings.warn("kvstore 'dist_async': nbdl runs on MPI allreduce, which has no "
                          "asynchronous mode; the store runs synchronously (as 'dist_sync')",
                          stacklevel=3)

    def __repr__(self):
        return (f"<DistKVStore {self._type!r}: rank {self.rank} of {self.num_workers}, "
                f"{len(self._store)} keys>")

    @property
    def rank(self):
        """This process's rank (0 .. num_workers - 1)."""
        return self._world.rank

    @property
    def num_workers(self):
        """How many ranks the job has."""
        return self._world.size

    def is_capable(self, capability):
        """``'optimizer'``: True, except for ``'horovod'`` (Horovod's store
        only reduces).

        Parameters
        ----------
        capability : str
            The capability asked about.
        """
        if isinstance(capability, str) and capability.lower() == KVStoreBase.OPTIMIZER:
            return self._type != "horovod"
        return super().is_capable(capability)

    # -- init / push ---------------------------------------------------------------
    def init(self, key, value):
        """Initialize key(s) on every rank with rank 0's value(s).

        Parameters
        ----------
        key : int, str, or list of them
            The key(s); every rank must initialize the same keys in the same
            order.
        value : NDArray or list of NDArray
            One value per key (only rank 0's are kept).
        """
        super().init(key, value)
        for k, _ in _pairs("init", key, value, "value"):
            stored = self._store[k]
            host = np.ascontiguousarray(stored.asnumpy())
            self._check_agree("init", k, host)
            collective.broadcast(host, 0, f"kvstore init of key {k!r}", world=self._world)
            stored[...] = host

    def _check_agree(self, method, key, host):
        """Raise when the ranks hold different shapes or dtypes for ``key``
        (a broadcast of mismatched buffers would corrupt memory)."""
        sig = np.array([host.ndim, np.dtype(host.dtype).num] + list(host.shape)[:8]
                       + [0] * (8 - min(8, host.ndim)), np.int64)
        low, high = sig.copy(), sig.copy()
        collective.allreduce(low, f"kvstore {method} of key {key!r}", world=self._world,
                             op="min")
        collective.allreduce(high, f"kvstore {method} of key {key!r}", world=self._world,
                             op="max")
        if not np.array_equal(low, high):
            raise KVStoreError(f"KVStore.{method}: the ranks disagree on key {key!r}: rank "
                               f"{self.rank} has {host.dtype}{host.shape}; every rank must "
                               f"use the same shapes and dtypes")

    def _merge(self, key, vals):
        """The local sum of ``vals`` summed over the ranks."""
        stored = self._store[key]
        return from_host(self.reduce_host(self._local_sum(key, vals),
                                          f"kvstore push of key {key!r}"), stored.device)

    def reduce_host(self, host, what):
        """``host`` (a numpy array) summed over the ranks; float16 is summed
        in float32 (MPI has no float16 type).

        Parameters
        ----------
        host : numpy.ndarray
            This rank's values.
        what : str
            A name for the watchdog's message.
        """
        dtype = host.dtype
        buf = np.ascontiguousarray(host, np.float32 if dtype == np.float16 else dtype)
        collective.allreduce(buf, what, world=self._world)
        return buf.astype(dtype, copy=False)

    def update_reduced(self, keys, grads, outs):
        """Apply the optimizer to the stored values of ``keys`` with
        gradients already summed over the ranks (a Trainer's gradient
        buckets), then copy the stored values into ``outs``.

        Parameters
        ----------
        keys : list of int or str
            Initialized keys.
        grads : list of NDArray
            The reduced gradient of each key.
        outs : list of list of NDArray
            Where each key's new value goes.
        """
        if self._updater is None:
            raise KVStoreError("KVStore.update_reduced: no optimizer is set")
        stored = [self._stored("update_reduced", k) for k in keys]
        self._updater(list(keys), list(grads), stored)
        for s, out in zip(stored, outs):
            for o in out:
                if o is not s:
                    s.copyto(o)

    def set_gradient_compression(self, compression_params):
        """2-bit compression of what each rank pushes (``{'type': '2bit',
        'threshold': t}``), with per-key residuals on each rank.

        Parameters
        ----------
        compression_params : dict
            ``{'type': '2bit', 'threshold': 0.5}``.
        """
        from .compression import from_params
        self._compression = from_params(compression_params)

    @property
    def compression(self):
        """The gradient compression (None when off)."""
        return self._compression

    # -- states ------------------------------------------------------------------
    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Rank 0 writes the optimizer states (identical on every rank) to
        ``fname``; every rank returns once it is written.

        Parameters
        ----------
        fname : str
            The file to write.
        dump_optimizer : bool, default False
            Whether to save the optimizer's settings too.
        """
        error = None
        if self.rank == 0:
            try:
                super().save_optimizer_states(fname, dump_optimizer)
            except Exception as e:          # every rank must reach the barrier
                error = e
        self._barrier()
        if error is not None:
            raise error

    def load_optimizer_states(self, fname):
        """Every rank reads ``fname`` (after a barrier, so that a file rank 0
        has just written is complete).

        Parameters
        ----------
        fname : str
            The file to read.
        """
        self._barrier()
        if not os.path.exists(fname):
            raise KVStoreError(f"KVStore.load_optimizer_states: {fname!r} does not exist on "
                               f"rank {self.rank} (the ranks need a shared file system, or a "
                               f"copy of the file each)")
        super().load_optimizer_states(fname)

    # -- synchronisation -------------------------------------------------------------
    def _barrier(self):
        """Wait for every rank (with the watchdog)."""
        collective.barrier("kvstore barrier", world=self._world)

    barrier = _barrier
