"""Gluon's Trainer: applies an optimizer to a set of Parameters.

``trainer.step(batch_size)`` (after ``backward``) scales the gradients by
``1 / batch_size``, sums them across devices when a parameter lives on
several, and updates every parameter whose gradient backward has written
since the last step.  A parameter on several devices is updated once (its
first device's copy, which holds the optimizer state) and the new value is
copied to the other devices, so the copies stay identical.

Only single-machine training is supported: ``kvstore`` may be ``'device'``,
``'local'``, None, or a KVStore from ``nbdl.kv.create``.  With a KVStore the
gradients go through it (``pushpull``): by default (``update_on_kvstore``
None or True) the store applies the optimizer and the trainer pulls the new
weights, as MXNet 1.x does; with ``update_on_kvstore=False`` the store sums
the gradients and the trainer updates.  ``save_states`` writes the optimizer's state arrays and
hyper-parameters as a numpy ``.npz`` archive with a JSON header (never a
pickle); ``load_states`` validates a file completely before changing anything.
"""
import numbers

import numpy as np

from ..errors import NbdlError
from .. import optimizer as opt
from ..kvstore import KVStore
from ..optimizer import state_file
from ..optimizer.optimizer import from_config, get_config, state_structure
from .parameter import Parameter

_FORMAT = "nbdl-trainer-states"
_VERSION = 1


class TrainerError(NbdlError, ValueError):
    """Bad Trainer arguments, stale gradients, or an unusable state file."""


class Trainer:
    """``Trainer(params, optimizer, optimizer_params=None, kvstore='device',
    compression_params=None, update_on_kvstore=None)``.

    ``params``: a dict ``{name: Parameter}`` (what ``Block.collect_params()``
    returns) or a list of Parameters; a parameter shared under several names
    is updated once.  ``optimizer``: a name (``'sgd'``) with
    ``optimizer_params``, or an Optimizer instance."""

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
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
        if not isinstance(kvstore, KVStore) and kvstore not in (None, "device", "local"):
            raise TrainerError(f"Trainer: kvstore={kvstore!r} is not supported; nbdl trains on "
                               f"one machine (kvstore 'device', 'local', None or a KVStore from "
                               f"nbdl.kv.create), distributed kvstores are not supported")
        if compression_params is not None and isinstance(kvstore, KVStore):
            kvstore.set_gradient_compression(compression_params)
        elif compression_params is not None:
            raise TrainerError(f"Trainer: gradient compression ({compression_params!r}) belongs "
                               f"to distributed kvstores, which nbdl does not support")
        if update_on_kvstore not in (None, True, False):
            raise TrainerError(f"Trainer: update_on_kvstore must be None, True or False, got "
                               f"{update_on_kvstore!r}")
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kvstore = kvstore if isinstance(kvstore, KVStore) else None
        self._update_on_kvstore = self._kvstore is not None and update_on_kvstore is not False
        self._kv_keys = set()        # parameter indices initialized in the kvstore
        self._kv_has_optimizer = False
        self._init_optimizer(optimizer, optimizer_params)
        self._scale = self._optimizer.rescale_grad
        self._states = {}            # parameter index -> optimizer state (first device)

    def _param_dict(self):
        return {i: p for i, p in enumerate(self._params)}

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

    # -- properties -----------------------------------------------------------
    @property
    def optimizer(self):
        return self._optimizer

    @property
    def learning_rate(self):
        return self._optimizer.learning_rate

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate (an error when it has a scheduler)."""
        self._optimizer.set_learning_rate(lr)

    # -- training -------------------------------------------------------------
    def step(self, batch_size, ignore_stale_grad=False):
        """One update after ``backward``: gradients are scaled by
        ``1 / batch_size``.  A parameter whose gradient backward has not
        written since the last step is an error, or, with
        ``ignore_stale_grad=True``, is skipped."""
        self._set_rescale(batch_size)
        if self._update_on_kvstore:
            self._update(ignore_stale_grad)
            return
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Sum each parameter's gradients over its devices (nothing to do for
        parameters on one device).  For use with ``update`` instead of ``step``."""
        self._check_not_on_kvstore("allreduce_grads")
        self._allreduce_grads()

    def _check_not_on_kvstore(self, method):
        if self._update_on_kvstore:
            raise TrainerError(f"Trainer.{method}: the parameters are updated in the kvstore; "
                               f"use step(), or create the Trainer with update_on_kvstore=False")

    def _init_kvstore(self):
        """Initialize the kvstore's key of every parameter that has data
        (once), and give the store the optimizer when it updates."""
        if self._update_on_kvstore and not self._kv_has_optimizer:
            self._kvstore.set_optimizer(self._optimizer)      # replaces any updater, as MXNet
            self._kv_has_optimizer = True
        for i, p in enumerate(self._params):
            if i not in self._kv_keys and p._data is not None:
                data = p.list_data()
                self._kvstore.broadcast(i, data[0], out=data)
                self._kv_keys.add(i)

    def update(self, batch_size, ignore_stale_grad=False):
        """``step`` without the gradient reduction (call ``allreduce_grads``
        first when parameters live on several devices)."""
        self._check_not_on_kvstore("update")
        self._set_rescale(batch_size)
        self._update(ignore_stale_grad)

    def _set_rescale(self, batch_size):
        if not isinstance(batch_size, numbers.Real) or isinstance(batch_size, bool) \
                or not batch_size > 0:
            raise TrainerError(f"Trainer.step: batch_size must be a positive number, got "
                               f"{batch_size!r}")
        self._optimizer.rescale_grad = self._scale / batch_size

    def _trainable(self):
        return [(i, p) for i, p in enumerate(self._params) if p.grad_req != "null"]

    def _allreduce_grads(self):
        if self._kvstore is not None:
            self._init_kvstore()
            for i, p in self._trainable():
                if p._data is not None:
                    self._kvstore.pushpull(i, p.list_grad())
            return
        for _, p in self._trainable():
            if p._data is None or len(p._grad) < 2:
                continue
            total = sum(g.asnumpy() for g in p._grad)
            for g in p._grad:
                g[...] = total

    def _update(self, ignore_stale_grad):
        todo, stale = [], []
        for i, p in self._trainable():
            grads = p.list_grad()
            for g in grads:
                if not g._fresh_grad:
                    if not ignore_stale_grad:
                        stale.append(f"{self._label(i)} on {[str(g.device) for g in grads]}")
                    break
            else:
                todo.append((i, p, grads))
        if stale:
            raise TrainerError(
                f"Trainer.step: the gradients of {len(stale)} parameter(s) have not been "
                f"updated by backward since the last step: {'; '.join(stale)}. This can mean a "
                f"bug in the model that left these parameters unused in this iteration; if "
                f"that is intended, call step(batch_size, ignore_stale_grad=True) to skip them")
        if not todo:
            return
        if self._update_on_kvstore:
            self._init_kvstore()
            for i, p, g in todo:
                self._kvstore.pushpull(i, g, out=p.list_data())
                for x in g:
                    x._fresh_grad = False
            return
        indices, weights, grads, states = [], [], [], []
        for i, p, g in todo:
            w = p.list_data()[0]
            if i not in self._states:
                self._states[i] = self._optimizer.create_state_multi_precision(i, w)
            indices.append(i)
            weights.append(w)
            grads.append(g[0])
            states.append(self._states[i])
        self._optimizer.update_multi_precision(indices, weights, grads, states)
        for i, p, g in todo:
            data = p.list_data()
            for other in data[1:]:
                other[...] = data[0]
            for x in g:
                x._fresh_grad = False

    def _label(self, i):
        name = self._names[i]
        return repr(name) if name is not None else f"#{i} ({self._params[i].name!r})"

    # -- states ---------------------------------------------------------------
    def save_states(self, fname):
        """Write the optimizer's states, hyper-parameters, scheduler and update
        counts to ``fname`` (a numpy ``.npz`` archive, no pickle).  When the
        kvstore updates, this is its ``save_optimizer_states(fname,
        dump_optimizer=True)``."""
        if self._update_on_kvstore:
            self._init_kvstore()
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
        if self._update_on_kvstore:
            self._init_kvstore()
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
            self._optimizer.param_dict = self._param_dict()
            return
        header, arrays = _read(fname)
        try:
            if header.get("format") != _FORMAT or header.get("version") != _VERSION:
                raise TrainerError(f"{fname}: not a Trainer state file of version {_VERSION} "
                                   f"(format {header.get('format')!r}, version "
                                   f"{header.get('version')!r})")
            optimizer = from_config(header["optimizer"], param_dict=self._param_dict())
            states = {}
            for entry in header["states"]:
                i, state = self._restore_state(fname, optimizer, entry, arrays)
                states[i] = state
        except NbdlError as e:
            if isinstance(e, TrainerError):
                raise
            raise TrainerError(f"{fname}: cannot restore the trainer ({e})") from None
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise TrainerError(f"{fname}: malformed Trainer state file ({type(e).__name__}: "
                               f"{e})") from None
        self._optimizer = optimizer
        self._states = states

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


def _read(fname):
    """(header dict, {name: numpy array}) of a state file; every read and
    decoding error becomes a TrainerError naming the file."""
    return state_file.unpack(fname, fname, "Trainer state file", TrainerError)


__all__ = ["Trainer", "TrainerError"]
