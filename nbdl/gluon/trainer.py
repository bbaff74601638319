"""Gluon's Trainer: applies an optimizer to a set of Parameters.

``trainer.step(batch_size)`` (after ``backward``) scales the gradients by
``1 / batch_size``, sums them across devices when a parameter lives on
several, and updates every parameter whose gradient backward has written
since the last step.

The kvstore follows MXNet 1.x: a type string (``'device'``, ``'local'``, a
registered type) makes a store at the first step, and only when the
parameters live on several devices (``_kvstore`` stays None otherwise); a
KVStore instance is used as given; None means no store.  With a store the
gradients go through it (``pushpull``): when it can run an optimizer and
``update_on_kvstore`` is not False the store updates the weights and the
trainer pulls them; otherwise the store sums the gradients and the
trainer's Updaters (``_updaters``, one per device, each holding that
device's optimizer states) update every device's copy.  Loading new values
into a parameter (``set_data``, ``load_parameters``) resets a store that
updates, so the next step re-initializes it from the new values.

``save_states`` writes the optimizer's state arrays and hyper-parameters as
a numpy ``.npz`` archive with a JSON header (never a pickle);
``load_states`` validates a file completely before changing anything.
"""
import numbers

import numpy as np

from .._docs import shared_doc
from ..errors import NbdlError
from .. import optimizer as opt
from .. import config
from ..kvstore import DIST_TYPES, LOCAL_TYPES, KVStoreBase, is_distributed_type
from ..kvstore import create as create_kvstore
from ..optimizer import state_file
from ..optimizer.optimizer import from_config, get_config, state_structure
from .grad_buckets import GradBuckets
from .parameter import Parameter

_FORMAT = "nbdl-trainer-states"
_VERSION = 1


class TrainerError(NbdlError, ValueError):
    """Bad Trainer arguments, stale gradients, or an unusable state file."""


class TrainerModeError(TrainerError, AssertionError):
    """``update`` / ``allreduce_grads`` called while the kvstore updates the
    weights (MXNet 1.x raises an AssertionError there, so this is one too)."""


# the parameter size above which a 'local' store leaves the update to the
# trainer (MXNet 1.x's automatic choice)
_LOCAL_UPDATE_LIMIT = 1024 * 1024 * 16

# the arguments of step and update
_STEP_ARGS = """
batch_size : int or float
    The gradients are divided by it.
ignore_stale_grad : bool, default False
    Skip stale parameters instead of raising.
"""


class Trainer:
    """Applies an optimizer to a set of Parameters.

    Parameters
    ----------
    params : dict or list of Parameter
        ``{name: Parameter}`` (what ``Block.collect_params()`` returns) or a
        list of Parameters; a parameter shared under several names is updated
        once.
    optimizer : str or Optimizer
        A name (``'sgd'``) with ``optimizer_params``, or an Optimizer.
    optimizer_params : dict, optional
        Keyword arguments of the optimizer.
    kvstore : str, KVStore or None, default 'device'
        A store type (``'device'``, ``'local'``, MXNet's single-process
        synonyms, or a type registered with ``KVStoreBase.register``),
        created at the first step when the parameters live on several devices
        (``_kvstore`` is None before and for one device); a KVStore instance,
        used as given; or None (no store: each device's copy is updated from
        its own gradient, as in MXNet).
    compression_params : dict, optional
        Gradient compression, set on the store when there is one.
    update_on_kvstore : bool or None, default None
        Whether the store applies the optimizer; None: when the store can.
    bucket_size_mb : float, optional
        With a distributed kvstore (``'dist_sync'``, ...), the size of a
        gradient bucket, the unit of one allreduce started during backward
        (``nbdl.gluon.grad_buckets``); default ``NBDL_DIST_BUCKET_MB`` (1).
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None, bucket_size_mb=None):
        if isinstance(params, dict):
            items = list(params.items())
        elif isinstance(params, (list, tuple)):
            items = [(getattr(p, "name", None), p) for p in params]
        else:
            raise TrainerError(f"Trainer: params must be a dict of Parameters (e.g. "
                               f"block.collect_params()) or a list of them, got "
                               f"{type(params).__name__}")
        self._params, self._names, seen = [], [], set()
        for name, p in items:
            if not isinstance(p, Parameter):
                raise TrainerError(f"Trainer: params must hold Parameters, but {name!r} is a "
                                   f"{type(p).__name__}")
            if p._uuid in seen:
                continue             # shared: only one copy is updated
            seen.add(p._uuid)
            self._params.append(p)
            self._names.append(name)
        if not isinstance(kvstore, KVStoreBase) and kvstore is not None and not (
                isinstance(kvstore, str) and (kvstore.lower() in LOCAL_TYPES
                                              or kvstore.lower() in DIST_TYPES
                                              or kvstore.lower() in KVStoreBase.kv_registry)):
            raise TrainerError(f"Trainer: kvstore={kvstore!r} is not supported; use one of "
                               f"{', '.join(LOCAL_TYPES + DIST_TYPES)}, a type registered "
                               f"with KVStoreBase.register, None, or a KVStore from "
                               f"nbdl.kv.create")
        if bucket_size_mb is not None and not (isinstance(bucket_size_mb, numbers.Real)
                                               and bucket_size_mb > 0):
            raise TrainerError(f"Trainer: bucket_size_mb must be a positive number, got "
                               f"{bucket_size_mb!r}")
        self._bucket_bytes = None if bucket_size_mb is None else int(bucket_size_mb * 2**20)
        self._buckets = None
        # what each gradient bucket is multiplied by before its sum (a subclass
        # may set it before calling this constructor)
        self._grad_prescale = getattr(self, "_grad_prescale", 1.0)
        if compression_params is not None and isinstance(kvstore, KVStoreBase):
            kvstore.set_gradient_compression(compression_params)
        elif compression_params is not None and kvstore is None:
            raise TrainerError(f"Trainer: gradient compression ({compression_params!r}) needs a "
                               f"kvstore, but kvstore is None")
        if update_on_kvstore not in (None, True, False):
            raise TrainerError(f"Trainer: update_on_kvstore must be None, True or False, got "
                               f"{update_on_kvstore!r}")
        self._compression_params = None if isinstance(kvstore, KVStoreBase) \
            else compression_params
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._contexts = self._check_contexts(strict=False)
        self._init_optimizer(optimizer, optimizer_params)
        self._scale = self._optimizer.rescale_grad
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._params_to_init = []
        self._reset_kvstore()
        for p in self._params:
            p._set_trainer(self)
        if (is_distributed_type(kvstore) or getattr(kvstore, "distributed", False)) \
                and self._contexts is not None:
            # every rank makes its trainer: start from rank 0's values now, before
            # the first forward pass, and lay out the gradient buckets
            self._prepare()
            self._bucketed()

    def _param_dict(self):
        return {i: p for i, p in enumerate(self._params)}

    def _check_contexts(self, strict=True):
        """The devices every parameter lives on (the same list for all, as
        in MXNet); None when some parameter is not initialized yet and
        ``strict`` is False."""
        contexts, first = None, None
        for i, p in enumerate(self._params):
            try:
                devices = p.list_device()
            except NbdlError:
                if strict:
                    raise
                return None
            if contexts is not None and devices != contexts:
                raise TrainerError(f"Trainer: all Parameters must live on the same devices, but "
                                   f"{self._label(i)} is on {[str(d) for d in devices]} and "
                                   f"{self._label(first)} on {[str(d) for d in contexts]}")
            if contexts is None:
                contexts, first = devices, i
        return contexts

    def _init_optimizer(self, optimizer, optimizer_params):
        if optimizer_params is not None and not isinstance(optimizer_params, dict):
            raise TrainerError(f"Trainer: optimizer_params must be a dict, got "
                               f"{type(optimizer_params).__name__}")
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise TrainerError("Trainer: optimizer_params must be empty when optimizer is an "
                                   "Optimizer instance (set them on the instance)")
            self._optimizer = optimizer
            # not a copy: lr_mult/wd_mult changed on a Parameter later still apply
            self._optimizer.param_dict = self._param_dict()
        else:
            self._optimizer = opt.create(optimizer, param_dict=self._param_dict(),
                                         **(optimizer_params or {}))
        self._updaters = [opt.get_updater(self._optimizer)
                          for _ in range(len(self._contexts or [None]))]

    def _sync_updaters(self):
        """One Updater per device once the devices are known."""
        self._contexts = self._check_contexts()
        while len(self._updaters) < len(self._contexts):
            self._updaters.append(opt.get_updater(self._optimizer))

    @property
    def _states(self):
        """The optimizer states of the first device's copies, by parameter index."""
        return self._updaters[0].states

    # -- properties -----------------------------------------------------------
    @property
    def optimizer(self):
        """The optimizer."""
        return self._optimizer

    @property
    def learning_rate(self):
        """The optimizer's current learning rate."""
        return self._optimizer.learning_rate

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate (an error when it has a scheduler).

        Parameters
        ----------
        lr : float
            The new learning rate.
        """
        self._optimizer.set_learning_rate(lr)

    # -- the kvstore ------------------------------------------------------------
    def _reset_kvstore(self):
        """Forget the kvstore; the next step creates it again and initializes
        every parameter in it (what loading new parameter values needs)."""
        self._kv_initialized = False
        self._kvstore = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)
        if getattr(self, "_buckets", None) is not None:
            self._buckets.close()
        self._buckets = None

    def _init_kvstore(self):
        """Create the kvstore (MXNet 1.x's rules): a type string makes a store
        only for parameters on several devices; the store updates the weights
        when it can, unless ``update_on_kvstore=False`` (or a 'local' store
        holds a parameter of over 16M elements); ``update_on_kvstore=True``
        with a store that cannot run an optimizer is an error."""
        self._sync_updaters()
        config = self._kvstore_params
        kv, update = config["kvstore"], True
        if isinstance(kv, str):
            if len(self._contexts) == 1 and not is_distributed_type(kv):
                kv = None        # no store needed for one device
            else:
                if kv.lower() == "local" and any(
                        int(np.prod(p.shape)) > _LOCAL_UPDATE_LIMIT for p in self._params):
                    update = False
                kv = create_kvstore(kv)
        if kv is None:
            self._kvstore = self._update_on_kvstore = None
            self._kv_initialized = True
            return
        update = update and kv.is_capable(KVStoreBase.OPTIMIZER)
        if config["update_on_kvstore"] is not None:
            update = config["update_on_kvstore"]
        if kv.type == "dist_async" and config["update_on_kvstore"] is False:
            raise TrainerError("Trainer: update_on_kvstore=False is not allowed with kvstore "
                               "'dist_async' (as in MXNet); set update_on_kvstore=True")
        if update and not kv.is_capable(KVStoreBase.OPTIMIZER):
            raise TrainerError(f"Trainer: update_on_kvstore=True but the kvstore "
                               f"{type(kv).__name__} (type {kv.type!r}) cannot run an optimizer; "
                               f"set update_on_kvstore=False when training with it")
        if self._compression_params is not None:
            kv.set_gradient_compression(self._compression_params)
        if update:
            kv.set_optimizer(self._optimizer)     # replaces any updater, as MXNet
        self._kvstore, self._update_on_kvstore = kv, update
        self._kv_initialized = True

    def _init_params(self):
        """Put every parameter that has data into the kvstore (broadcasting
        its first copy to the others); deferred ones wait for a later step."""
        waiting = []
        if self._kvstore is not None:
            for p in self._params_to_init:
                if p._data is None:
                    waiting.append(p)
                    continue
                data = p.list_data()
                self._kvstore.broadcast(self._params.index(p), data[0], out=data)
        self._params_to_init = waiting

    def _prepare(self):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    # -- training -------------------------------------------------------------
    @shared_doc(step_args=_STEP_ARGS)
    def step(self, batch_size, ignore_stale_grad=False):
        """One update after ``backward``: gradients are scaled by
        ``1 / batch_size``, summed over the devices through the kvstore, and
        applied.  A parameter whose gradient backward has not written since
        the last step is an error (nothing is changed), or, with
        ``ignore_stale_grad=True``, is skipped.

        Parameters
        ----------
        {step_args}
        """
        self._set_rescale(batch_size)
        self._prepare()
        todo = self._fresh(ignore_stale_grad)
        if self._kvstore is not None and self._update_on_kvstore:
            if self._reduce_buckets():
                self._kvstore.update_reduced([i for i, _ in todo],
                                             [p.list_grad()[0] for _, p in todo],
                                             [p.list_data() for _, p in todo])
                self._clear_fresh(todo)
                return
            for i, p in todo:
                self._kvstore.pushpull(i, p.list_grad(), out=p.list_data(), priority=-i)
            self._clear_fresh(todo)
            return
        self._allreduce_grads(todo)
        self._apply(todo)

    def allreduce_grads(self):
        """Sum each parameter's gradients over its devices through the
        kvstore (nothing to do without one).  For use with ``update`` instead
        of ``step``."""
        self._prepare()
        self._check_not_on_kvstore("allreduce_grads")
        self._allreduce_grads(self._trainable())

    @shared_doc(step_args=_STEP_ARGS)
    def update(self, batch_size, ignore_stale_grad=False):
        """``step`` without the gradient reduction (call ``allreduce_grads``
        first when parameters live on several devices).

        Parameters
        ----------
        {step_args}
        """
        self._prepare()
        self._check_not_on_kvstore("update")
        self._set_rescale(batch_size)
        self._apply(self._fresh(ignore_stale_grad))

    def _check_not_on_kvstore(self, method):
        if self._kvstore is not None and self._update_on_kvstore:
            raise TrainerModeError(f"Trainer.{method}: the parameters are updated in the "
                                   f"kvstore; use step(), or create the Trainer with "
                                   f"update_on_kvstore=False")

    def _set_rescale(self, batch_size):
        if not isinstance(batch_size, numbers.Real) or isinstance(batch_size, bool) \
                or not batch_size > 0:
            raise TrainerError(f"Trainer.step: batch_size must be a positive number, got "
                               f"{batch_size!r}")
        self._optimizer.rescale_grad = self._scale / batch_size

    def _trainable(self):
        return [(i, p) for i, p in enumerate(self._params) if p.grad_req != "null"]

    def _fresh(self, ignore_stale_grad):
        """The trainable (index, parameter) pairs whose gradients backward has
        written on every device; stale ones raise unless ignored."""
        todo, stale = [], []
        for i, p in self._trainable():
            grads = p.list_grad()
            if all(g._fresh_grad for g in grads):
                todo.append((i, p))
            elif not ignore_stale_grad:
                stale.append(f"{self._label(i)} on {[str(g.device) for g in grads]}")
        if stale:
            raise TrainerError(
                f"Trainer.step: the gradients of {len(stale)} parameter(s) have not been "
                f"updated by backward since the last step: {'; '.join(stale)}. This can mean a "
                f"bug in the model that left these parameters unused in this iteration; if "
                f"that is intended, call step(batch_size, ignore_stale_grad=True) to skip them")
        return todo

    @staticmethod
    def _clear_fresh(todo):
        for _, p in todo:
            for g in p.list_grad():
                g._fresh_grad = False

    def _bucketed(self):
        """The gradient buckets (made, or remade when parameters got new
        gradient arrays) when the store is distributed and the parameters
        live on one CPU device; None otherwise (per-key pushpull)."""
        kv = self._kvstore
        if kv is None or not getattr(kv, "distributed", False) or len(self._contexts) != 1 \
                or self._contexts[0].device_type != "cpu":
            return None
        trainable = [p for _, p in self._trainable()]
        if self._buckets is None or not self._buckets.valid(trainable):
            if self._buckets is not None:
                self._buckets.close()
            size = self._bucket_bytes if self._bucket_bytes is not None \
                else config.dist_bucket_bytes()
            self._buckets = GradBuckets(trainable, kv._world, size, kv.compression,
                                        self._grad_prescale)
        return self._buckets

    def _reduce_buckets(self):
        """Sum every trainable gradient over the ranks through the gradient
        buckets and return True; False when there are none (see
        ``_bucketed``)."""
        buckets = self._bucketed()
        if buckets is None:
            return False
        buckets.reduce()
        return True

    def _allreduce_grads(self, todo):
        if self._kvstore is None or self._reduce_buckets():
            return
        for i, p in todo:
            self._kvstore.pushpull(i, p.list_grad(), priority=-i)

    def _apply(self, todo):
        """Each device's Updater updates that device's copies."""
        if not todo:
            return
        self._sync_updaters()
        for k, updater in enumerate(self._updaters[:len(self._contexts)]):
            indices = [i for i, _ in todo]
            grads = [p.list_grad()[k] for _, p in todo]
            weights = [p.list_data()[k] for _, p in todo]
            updater(indices, grads, weights)
        self._clear_fresh(todo)

    def _label(self, i):
        name = self._names[i]
        return repr(name) if name is not None else f"#{i} ({self._params[i].name!r})"

    # -- states ---------------------------------------------------------------
    def save_states(self, fname):
        """Write the optimizer's states, hyper-parameters, scheduler and update
        counts to ``fname`` (a numpy ``.npz`` archive, no pickle).  When the
        kvstore updates, this is its ``save_optimizer_states(fname,
        dump_optimizer=True)``."""
        self._prepare()
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
            return
        try:
            config = get_config(self._optimizer)
        except NbdlError as e:
            raise TrainerError(f"save_states({fname!r}): {e}") from None
        arrays, entries = {}, []
        for i in sorted(self._states):
            structure, flat = state_structure(self._states[i])
            entries.append({"index": i, "name": self._names[i], "structure": structure})
            for k, a in enumerate(flat):
                arrays[f"state{i}_{k}"] = a.asnumpy()
        header = {"format": _FORMAT, "version": _VERSION, "optimizer": config, "states": entries}
        try:
            data = state_file.pack(header, arrays)
        except (TypeError, ValueError) as e:
            raise TrainerError(f"save_states({fname!r}): the optimizer's settings are not plain "
                               f"data ({e})") from None
        state_file.write_atomic(fname, data)

    def load_states(self, fname):
        """Restore what ``save_states`` wrote.  The optimizer is rebuilt from
        the file (as in MXNet, ``trainer.optimizer`` is a new object).  The
        parameters must be initialized.  A missing, truncated or corrupted
        file, or one that does not fit these parameters, raises a
        TrainerError and leaves the trainer as it was.  When the kvstore
        updates, this is its ``load_optimizer_states(fname)``."""
        self._prepare()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
            self._optimizer.param_dict = self._param_dict()
            for updater in self._updaters:
                updater.optimizer = self._optimizer
            return
        header, arrays = _read(fname)
        with state_file.restoring(fname, TrainerError, "the trainer", "Trainer state file"):
            if header.get("format") != _FORMAT or header.get("version") != _VERSION:
                raise TrainerError(f"{fname}: not a Trainer state file of version {_VERSION} "
                                   f"(format {header.get('format')!r}, version "
                                   f"{header.get('version')!r})")
            optimizer = from_config(header["optimizer"], param_dict=self._param_dict())
            states = {}
            for entry in header["states"]:
                i, state = self._restore_state(fname, optimizer, entry, arrays)
                states[i] = state
        self._optimizer = optimizer
        for k, updater in enumerate(self._updaters):
            updater.optimizer = optimizer
            if k == 0:
                updater.states = states
            else:                    # each device keeps its own copy of the states
                device = self._contexts[k]
                updater.states = {i: _copy_state(st, device) for i, st in states.items()}
            updater.states_synced = {i: True for i in updater.states}

    def _restore_state(self, fname, optimizer, entry, arrays):
        """A new state for one saved entry, filled from the file (the trainer
        itself is not touched)."""
        i = entry["index"]
        if not isinstance(i, int) or not 0 <= i < len(self._params):
            raise TrainerError(f"{fname}: holds a state for parameter #{i!r}, but the trainer "
                               f"has {len(self._params)} parameters")
        if entry["name"] != self._names[i]:
            raise TrainerError(f"{fname}: parameter #{i} is {entry['name']!r} in the file but "
                               f"{self._names[i]!r} in this trainer")
        p = self._params[i]
        if p._data is None:
            raise TrainerError(f"{fname}: parameter {self._label(i)} is not initialized; "
                               f"initialize the parameters (and run a forward pass for deferred "
                               f"ones) before load_states")
        state = optimizer.create_state_multi_precision(i, p.list_data()[0])
        structure, targets = state_structure(state)
        if structure != entry["structure"]:
            raise TrainerError(f"{fname}: the state of {self._label(i)} has layout "
                               f"{entry['structure']!r} but {type(optimizer).__name__} makes "
                               f"{structure!r}")
        for k, target in enumerate(targets):
            key = f"state{i}_{k}"
            if key not in arrays:
                raise TrainerError(f"{fname}: array {key!r} is missing")
            src = arrays[key]
            if tuple(src.shape) != tuple(target.shape) or src.dtype != np.dtype(target.dtype):
                raise TrainerError(f"{fname}: state array {k} of {self._label(i)} is "
                                   f"{src.dtype}{tuple(src.shape)} in the file but "
                                   f"{np.dtype(target.dtype)}{tuple(target.shape)} here")
            target[...] = src
        return i, state


def _copy_state(state, device):
    """A copy of an optimizer state (None, an NDArray or nested tuples) on ``device``."""
    if isinstance(state, (tuple, list)):
        copied = [_copy_state(x, device) for x in state]
        return tuple(copied) if isinstance(state, tuple) else copied
    if state is None:
        return None
    return state.copyto(device)


def _read(fname):
    """(header dict, {name: numpy array}) of a state file; every read and
    decoding error becomes a TrainerError naming the file."""
    return state_file.unpack(fname, fname, "Trainer state file", TrainerError)


__all__ = ["Trainer", "TrainerError", "TrainerModeError"]
