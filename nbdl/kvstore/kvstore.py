"""MXNet 1.x's single-process key-value store (``mx.kv.create('local')`` /
``'device'``): values by int or str key, pushes that sum the values given
for a key (one per device) and, after ``set_optimizer``, apply the
optimizer to the stored value instead of replacing it (MXNet's
``update_on_kvstore``).

Semantics follow MXNet 1.9.1's ``KVStoreLocal``: a key must be ``init``-ed
once before ``push`` / ``pull``; without an updater a push replaces the
stored value by the sum of the pushed values, with one it calls
``updater(key, summed, stored)``; a pull copies the stored value into every
output; one store takes int keys or str keys, not both; repeated keys in
one push are summed together.  The stored copy lives on the device of the
value ``init`` was given.  The distributed stores (``dist_*``, ``horovod``)
are ``nbdl.kvstore.dist``.
"""
import numbers

import numpy as np

from ..errors import NbdlError, ShapeError
from ..ndarray import NDArray
from ..ndarray.creation import from_host
from ..optimizer import Optimizer, get_updater
from ..optimizer.state_file import write_atomic
from .compression import from_params

# the single-process types of MXNet 1.9.1 (all behave as 'local' / 'device' here)
LOCAL_TYPES = ("local", "device", "local_update_cpu", "local_allreduce_cpu",
               "local_allreduce_device", "nccl")
_DISTRIBUTED = ("dist", "horovod", "byteps", "p3")
# the distributed types (processes started by mpiexec; nbdl.kvstore.dist)
DIST_TYPES = ("dist_sync", "dist_device_sync", "dist_sync_device", "dist_async", "dist",
              "horovod")


class KVStoreError(NbdlError, ValueError):
    """A bad KVStore type, key, value or call order."""


class KVStoreBase:
    """Base class of the KVStore types ``create`` knows.  A subclass
    registered with ``KVStoreBase.register`` is created by its lower-cased
    class name; it implements MXNet's KVStore interface (``broadcast``,
    ``pushpull``, ``set_optimizer``, ``is_capable``, ``type``, ``rank``,
    ``num_workers``, ...)."""

    OPTIMIZER = "optimizer"
    kv_registry = {}

    @staticmethod
    def register(klass):
        """Register ``klass`` (a KVStoreBase subclass) for ``create`` under
        its lower-cased name.

        Parameters
        ----------
        klass : type
            The KVStore class.
        """
        if not (isinstance(klass, type) and issubclass(klass, KVStoreBase)):
            raise KVStoreError(f"KVStoreBase.register: expected a KVStoreBase subclass, got "
                               f"{klass!r}")
        KVStoreBase.kv_registry[klass.__name__.lower()] = klass
        return klass


class SingleProcess:
    """``rank`` and ``num_workers`` of a store that lives in one process."""

    @property
    def rank(self):
        """This worker's rank: always 0 in a single process."""
        return 0

    @property
    def num_workers(self):
        """The number of workers: always 1 in a single process."""
        return 1


def create(name="local"):
    """A new KVStore.

    Parameters
    ----------
    name : str, default 'local'
        ``'local'`` or ``'device'`` (or MXNet's single-process synonyms
        ``'local_update_cpu'``, ``'local_allreduce_cpu'``,
        ``'local_allreduce_device'``, ``'nccl'``), a distributed type
        (``'dist_sync'``, ``'dist_device_sync'``, ``'dist_async'``,
        ``'horovod'``: ``nbdl.kvstore.dist``, on MPI; mpi4py must be
        installed), or the name of a class registered with
        ``KVStoreBase.register``.
    """
    if not isinstance(name, str):
        raise KVStoreError(f"kvstore.create: name must be a string, got {type(name).__name__}")
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if name in DIST_TYPES:
        from .dist import DistKVStore
        return DistKVStore(name)
    if name.startswith(_DISTRIBUTED):
        raise KVStoreError(f"kvstore.create({name!r}): unknown distributed kvstore type; nbdl "
                           f"has {', '.join(DIST_TYPES)} (on MPI)")
    if name not in LOCAL_TYPES:
        raise KVStoreError(f"kvstore.create: unknown kvstore type {name!r}; the single-process "
                           f"types are {', '.join(LOCAL_TYPES)}, the distributed ones "
                           f"{', '.join(DIST_TYPES)}")
    return KVStore(name)


def is_distributed_type(name):
    """Whether ``name`` is a distributed kvstore type (``'dist_sync'``, ...).

    Parameters
    ----------
    name : str
        A kvstore type.
    """
    return isinstance(name, str) and name.lower() in DIST_TYPES


def _is_key(k):
    return (isinstance(k, numbers.Integral) and not isinstance(k, bool)) or isinstance(k, str)


def _arrays(method, key, value, what):
    """``value`` for one key as a list of NDArrays (one per device)."""
    vals = list(value) if isinstance(value, (list, tuple)) else [value]
    if not vals:
        raise KVStoreError(f"KVStore.{method}: no {what} given for key {key!r}")
    for i, v in enumerate(vals):
        if not isinstance(v, NDArray):
            raise KVStoreError(f"KVStore.{method}: the {what} for key {key!r} must be an NDArray "
                               f"or a list of NDArrays, got {type(v).__name__}"
                               + (f" at position {i}" if len(vals) > 1 else ""))
    return vals


def _pairs(method, key, value, what):
    """[(key, [NDArray, ...])] for a single key or a list of keys, in order,
    with repeated keys grouped (their values listed together)."""
    if isinstance(key, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(key):
            n = len(value) if isinstance(value, (list, tuple)) else "one"
            raise KVStoreError(f"KVStore.{method}: {len(key)} keys need a list of {len(key)} "
                               f"{what}s (one NDArray or list of NDArrays per key), got {n}")
        items = list(zip(key, value))
    else:
        items = [(key, value)]
    grouped = {}
    for k, v in items:
        if not _is_key(k):
            raise KVStoreError(f"KVStore.{method}: keys must be int or str, got {k!r} "
                               f"({type(k).__name__})")
        k = int(k) if not isinstance(k, str) else k
        grouped.setdefault(k, []).extend(_arrays(method, k, v, what))
    return list(grouped.items())


class KVStore(SingleProcess, KVStoreBase):
    """A single-process key-value store; make one with ``create``.

    Parameters
    ----------
    kv_type : str
        One of ``LOCAL_TYPES`` (what ``type`` reports).
    """

    _TYPES = LOCAL_TYPES
    distributed = False          # a store whose values are shared by several processes

    def __init__(self, kv_type="local"):
        if kv_type not in self._TYPES:
            raise KVStoreError(f"KVStore: unknown type {kv_type!r}; use kvstore.create")
        self._type = kv_type
        self._store = {}
        self._key_type = None
        self._updater = None
        self._compression = None

    def __repr__(self):
        return f"<KVStore {self._type!r}: {len(self._store)} keys>"

    # -- properties ----------------------------------------------------------
    @property
    def type(self):
        """The type this store was created with (``'local'``, ``'device'``, ...)."""
        return self._type

    def is_capable(self, capability):
        """Whether the store supports ``capability``.

        Parameters
        ----------
        capability : str
            ``'optimizer'`` (True: updates can run in the store).
        """
        if isinstance(capability, str) and capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise KVStoreError(f"KVStore.is_capable: unknown capability {capability!r} (known: "
                           f"{KVStoreBase.OPTIMIZER!r})")

    # -- keys ------------------------------------------------------------------
    def _check_key_type(self, method, pairs):
        for k, _ in pairs:
            kind = str if isinstance(k, str) else int
            if self._key_type is None:
                self._key_type = kind
            elif kind is not self._key_type:
                raise KVStoreError(f"KVStore.{method}: key {k!r} is {kind.__name__} but this "
                                   f"store holds {self._key_type.__name__} keys; mixed key "
                                   f"types are not allowed")

    def _stored(self, method, key):
        if key not in self._store:
            raise KVStoreError(f"KVStore.{method}: key {key!r} has not been initialized; call "
                               f"init({key!r}, value) first")
        return self._store[key]

    @staticmethod
    def _check_shape(method, key, stored, arr, what):
        if tuple(arr.shape) != tuple(stored.shape):
            raise ShapeError(f"KVStore.{method}: key {key!r} holds shape {tuple(stored.shape)} "
                             f"but the {what} has shape {tuple(arr.shape)}")

    # -- init / push / pull ----------------------------------------------------
    def init(self, key, value):
        """Initialize one or several keys (each exactly once).

        Parameters
        ----------
        key : int, str, or list of them
            The key(s).
        value : NDArray or list of NDArray
            One value per key; the store keeps a copy.
        """
        pairs = _pairs("init", key, value, "value")
        self._check_key_type("init", pairs)
        for k, vals in pairs:
            if k in self._store or len(vals) > 1:
                raise KVStoreError(f"KVStore.init: duplicate init of key {k!r}; each key is "
                                   f"initialized once (by init or broadcast)")
        for k, vals in pairs:
            self._store[k] = vals[0].copy()

    def push(self, key, value, priority=0):
        """Push values: the values of a key (one per device) are summed;
        the sum replaces the stored value, or is handed to the updater set
        by ``set_optimizer`` / ``_set_updater``.

        Parameters
        ----------
        key : int, str, or list of them
            The key(s).
        value : NDArray, list of NDArray, or list of lists of NDArray
            For one key an NDArray or a list (one per device); for a list of
            keys a list with one such entry per key.
        priority : int, default 0
            Accepted for MXNet compatibility (operations run in call order).
        """
        pairs = _pairs("push", key, value, "value")
        self._check_key_type("push", pairs)
        for k, vals in pairs:
            stored = self._stored("push", k)
            for v in vals:
                self._check_shape("push", k, stored, v, "pushed value")
        merged = [(k, self._merge(k, vals)) for k, vals in pairs]
        for k, total in merged:
            stored = self._store[k]
            if self._updater is not None:
                self._updater(k, total, stored)
            else:
                stored[...] = total

    def _merge(self, key, vals):
        """The sum of ``vals`` (compressed first when compression is on), on
        the stored value's device and in its dtype."""
        stored = self._store[key]
        return from_host(self._local_sum(key, vals), stored.device)

    def _local_sum(self, key, vals):
        """The sum of ``vals`` as a host array of the stored value's dtype,
        each value compressed first when compression is on."""
        stored = self._store[key]
        dtype = np.dtype(stored.dtype)
        total = np.zeros(stored.shape, dtype)
        for slot, v in enumerate(vals):
            host = v.asnumpy().astype(dtype, copy=False)
            if self._compression is not None:
                host = self._compression.compress(key, slot, host)
            total += host
        return total

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored values into ``out``.

        Parameters
        ----------
        key : int, str, or list of them
            The key(s).
        out : NDArray, list of NDArray, or list of lists of NDArray
            Where to copy each key's value (every array of a key's list gets
            it), cast to the output's dtype.
        priority : int, default 0
            Accepted for MXNet compatibility.
        ignore_sparse : bool, default True
            Accepted for MXNet compatibility; nbdl has no sparse arrays.
        """
        if out is None:
            raise KVStoreError("KVStore.pull: out is required (the arrays to copy into)")
        pairs = _pairs("pull", key, out, "output")
        self._check_key_type("pull", pairs)
        for k, outs in pairs:
            stored = self._stored("pull", k)
            for o in outs:
                self._check_shape("pull", k, stored, o, "output")
        for k, outs in pairs:
            for o in outs:
                self._store[k].copyto(o)

    def pushpull(self, key, value, out=None, priority=0):
        """``push(key, value)`` then ``pull(key, out)``; without ``out`` the
        result is written back into ``value``.

        Parameters
        ----------
        key : int, str, or list of them
            The key(s).
        value : NDArray, list of NDArray, or list of lists of NDArray
            As for ``push``.
        out : like value, optional
            As for ``pull``.
        priority : int, default 0
            Accepted for MXNet compatibility.
        """
        target = value if out is None else out
        pairs = _pairs("pushpull", key, target, "output")
        for k, outs in pairs:
            stored = self._stored("pushpull", k)
            for o in outs:
                self._check_shape("pushpull", k, stored, o, "output")
        self.push(key, value, priority)
        self.pull(key, target, priority)

    def broadcast(self, key, value, out, priority=0):
        """Initialize ``key`` with ``value`` and copy it into ``out``.

        Parameters
        ----------
        key : int, str, or list of them
            New key(s) (broadcasting an initialized key is an error, as in
            MXNet).
        value : NDArray or list of NDArray
            One value per key.
        out : NDArray, list of NDArray, or list of lists of NDArray
            As for ``pull``.
        priority : int, default 0
            Accepted for MXNet compatibility.
        """
        values = dict(_pairs("broadcast", key, value, "value"))
        for k, outs in _pairs("broadcast", key, out, "output"):
            if k not in self._store and len(values[k]) == 1:     # else init raises
                for o in outs:
                    self._check_shape("broadcast", k, values[k][0], o, "output")
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Not available: nbdl has no row-sparse storage; use ``pull``.

        Parameters
        ----------
        key : int, str, or list of them
            The key(s).
        out : NDArray or list
            The outputs.
        priority : int, default 0
            Ignored.
        row_ids : NDArray or list
            The rows to pull.
        """
        raise KVStoreError("KVStore.row_sparse_pull: nbdl has no sparse (row_sparse) storage; "
                           "pull(key, out) copies the whole dense value")

    # -- updates ---------------------------------------------------------------
    def set_optimizer(self, optimizer):
        """Apply ``optimizer`` on every push from now on (the pushed sum is
        the gradient, the stored value the weight).

        Parameters
        ----------
        optimizer : Optimizer
            An ``nbdl.optimizer`` optimizer.
        """
        if not isinstance(optimizer, Optimizer):
            raise KVStoreError(f"KVStore.set_optimizer: expected an nbdl.optimizer.Optimizer, got "
                               f"{type(optimizer).__name__}")
        self._set_updater(get_updater(optimizer))

    def _set_updater(self, updater):
        """Call ``updater(key, pushed_sum, stored)`` on every push instead of
        replacing the stored value (MXNet's ``_set_updater``).

        Parameters
        ----------
        updater : callable
            ``updater(key, input, stored)``, updating ``stored`` in place.
        """
        if not callable(updater):
            raise KVStoreError(f"KVStore._set_updater: updater must be callable, got "
                               f"{type(updater).__name__}")
        self._updater = updater

    def set_gradient_compression(self, compression_params):
        """Quantize pushed values to 2 bits with residuals (types with
        ``'device'`` in the name only, as in MXNet).

        Parameters
        ----------
        compression_params : dict
            ``{'type': '2bit', 'threshold': 0.5}``.
        """
        if "device" not in self._type:
            raise KVStoreError(f"KVStore.set_gradient_compression: gradient compression is not "
                               f"supported for kvstore type {self._type!r} (MXNet compresses in "
                               f"'device' stores only)")
        self._compression = from_params(compression_params)

    def _optimizer_updater(self, method):
        if self._updater is None:
            raise KVStoreError(f"KVStore.{method}: no optimizer is set; call set_optimizer first")
        if not hasattr(self._updater, "get_states"):
            raise KVStoreError(f"KVStore.{method}: the updater {self._updater!r} is a plain "
                               f"function, which keeps no optimizer states")
        return self._updater

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer states to ``fname`` (nbdl's ``.npz`` state
        container with a JSON header; no pickle).

        Parameters
        ----------
        fname : str
            The file to write.
        dump_optimizer : bool, default False
            Whether to save the optimizer's settings too (learning rate,
            schedule, update counts).
        """
        data = self._optimizer_updater("save_optimizer_states").get_states(dump_optimizer)
        write_atomic(fname, data)

    def load_optimizer_states(self, fname):
        """Restore what ``save_optimizer_states`` wrote (the optimizer too
        when it was saved with ``dump_optimizer=True``).  A file that cannot
        be read leaves the store as it was.

        Parameters
        ----------
        fname : str
            The file to read.
        """
        updater = self._optimizer_updater("load_optimizer_states")
        try:
            with open(fname, "rb") as f:
                data = f.read()
        except OSError as e:
            raise KVStoreError(f"KVStore.load_optimizer_states: cannot read {fname!r} "
                               f"({type(e).__name__}: {e})") from None
        updater.set_states(data, label=fname)

    # -- synchronisation -------------------------------------------------------
    def _barrier(self):
        """Wait for all workers: one process, so it returns at once."""
        return None

    barrier = _barrier
