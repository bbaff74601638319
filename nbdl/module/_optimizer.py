"""The optimizer side of ``Module``: ``init_optimizer`` (MXNet's default
``rescale_grad = 1 / batch_size``), ``borrow_optimizer``, ``update`` and the
optimizer state files.

``kvstore`` as MXNet picks it: for one context 'local', 'device' and None
mean no store; for several, 'local' / 'device' create an ``nbdl.kvstore``
that sums the contexts' gradients and (unless a parameter is over 16M
elements with 'local') runs the optimizer on the store; None updates each
context with its own gradient.  An object with the KVStore interface
(``init``, ``push``, ``pull``, and ``set_optimizer`` to update on the store)
is used as given.  A distributed type ('dist_sync', ...: ``nbdl.kvstore.dist``
on MPI) always makes a store, which sums every rank's gradients (one
allreduce per parameter) and, as MXNet's, makes ``rescale_grad``
``1 / (batch_size * num_workers)`` for the synchronous types."""
import warnings

import numpy as np

from .. import optimizer as opt
from ..errors import ArgumentError
from ._common import ModuleError
from ..serialization.atomic import atomic_write

__all__ = ["OptimizerMixin"]


def _kvstore(kvstore, num_device, arg_params):
    """(store or None, update_on_kvstore) as MXNet's ``_create_kvstore`` picks
    them: no store for one context unless a KVStore object is given."""
    if kvstore is None:
        return None, False
    if isinstance(kvstore, str):
        from .. import kvstore as kvs
        if kvs.is_distributed_type(kvstore):      # MPI: nbdl.kvstore.dist
            kv = kvs.create(kvstore)
            return kv, kv.is_capable("optimizer")
        if kvstore not in ("local", "device", "nccl"):
            raise ArgumentError(f"init_optimizer: unknown kvstore {kvstore!r}; expected 'local', "
                                f"'device', one of {', '.join(kvs.DIST_TYPES)}, None or a "
                                f"KVStore")
        if num_device == 1:
            return None, False
        kv = kvs.create("device" if kvstore == "nccl" else kvstore)
        big = max((int(np.prod(p.shape)) for p in arg_params.values()), default=0)
        return kv, not (kvstore == "local" and big > 1024 * 1024 * 16)
    if not all(hasattr(kvstore, m) for m in ("init", "push", "pull")):
        raise ArgumentError(f"init_optimizer: kvstore must be a str, None or a KVStore (with "
                            f"init/push/pull), got {type(kvstore).__name__}")
    capable = getattr(kvstore, "is_capable", None)
    update_on = hasattr(kvstore, "set_optimizer") and (capable is None or capable("optimizer"))
    return kvstore, bool(update_on)


class OptimizerMixin:
    """``Module``'s optimizer methods (they use its executor group, parameter
    names and host parameter copies)."""

    # -- optimizer ----------------------------------------------------------------
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Install the optimizer.  A named optimizer gets
        ``rescale_grad = 1 / batch_size`` unless ``optimizer_params`` sets it.

        Parameters
        ----------
        kvstore : str, KVStore or None
            'local' (default), 'device', None, or a KVStore object.
        optimizer : str or Optimizer
            A name for ``nbdl.optimizer.create`` (default 'sgd') or an instance.
        optimizer_params : dict or tuple of pairs
            The optimizer's arguments (default learning_rate 0.01).
        force_init : bool
            Replace an installed optimizer (else a warning and nothing).
        """
        self._need("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        num_device = len(self._exec_group.execs)
        kv, update_on_kvstore = _kvstore(kvstore, num_device, self._arg_params)
        rescale_grad = 1.0 / max(self._exec_group.batch_size, 1)
        if kv is not None and "_sync" in str(getattr(kv, "type", "")) \
                and getattr(kv, "distributed", False):
            rescale_grad /= kv.num_workers      # MXNet: the batch of every worker together
        if update_on_kvstore:
            idx2name = dict(enumerate(self._param_names))
        else:       # one optimizer state per parameter and context, as MXNet's indices
            idx2name = {i * num_device + k: n for i, n in enumerate(self._param_names)
                        for k in range(num_device)}
        if isinstance(optimizer, str):
            try:
                params = dict(optimizer_params)
            except (TypeError, ValueError):
                raise ArgumentError(f"init_optimizer: optimizer_params must be a dict or pairs, "
                                    f"got {optimizer_params!r}") from None
            params.setdefault("rescale_grad", rescale_grad)
            optimizer = opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name,
                                   **params)
        elif isinstance(optimizer, opt.Optimizer):
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn(f"Optimizer created manually outside Module but rescale_grad is "
                              f"not normalized to 1.0/batch_size ({optimizer.rescale_grad} vs. "
                              f"{rescale_grad}). Is this intended?", stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        else:
            raise ArgumentError(f"init_optimizer: optimizer must be a name or an "
                                f"nbdl.optimizer.Optimizer, got {type(optimizer).__name__}")
        self._optimizer = optimizer
        self._param_index = {n: i for i, n in enumerate(self._param_names)}
        self._kvstore = kv
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kv is not None:
            if self._compression_params and hasattr(kv, "set_gradient_compression"):
                kv.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kv.set_optimizer(self._optimizer)
            for name, arrays in zip(self._param_names, self._exec_group.param_arrays):
                kv.init(name, self._arg_params[name])
                if update_on_kvstore:
                    kv.pull(name, out=list(arrays))
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer, store and updater (bucketing).

        Parameters
        ----------
        shared_module : Module
            A module with an installed optimizer.
        """
        if not shared_module.optimizer_initialized:
            raise ModuleError("borrow_optimizer: the shared module has no optimizer installed")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        # the optimizer's indices are the shared module's, whatever this
        # symbol's argument order (a bucket's symbol may order them otherwise)
        self._param_index = shared_module._param_index
        self.optimizer_initialized = True

    def update(self):
        """Apply the optimizer to every trained parameter with the gradients of
        the last backward pass."""
        self._need("update", params=True, optimizer=True)
        self._params_dirty = True
        group = self._exec_group
        n = len(group.execs)
        for name, ws, gs in zip(self._param_names, group.param_arrays, group.grad_arrays):
            if gs[0] is None:
                continue
            index = self._param_index[name]
            if self._update_on_kvstore:
                self._kvstore.push(name, list(gs), priority=-index)
                self._kvstore.pull(name, out=list(ws), priority=-index)
                continue
            if self._kvstore is not None:           # sum the contexts' gradients
                self._kvstore.push(name, list(gs), priority=-index)
                self._kvstore.pull(name, out=list(gs), priority=-index)
            for k, (w, g) in enumerate(zip(ws, gs)):
                self._updater(index * n + k, g, w)

    def save_optimizer_states(self, fname):
        """Write the optimizer's states to ``fname`` (nbdl's ``.npz`` state file).

        Parameters
        ----------
        fname : str
            The file.
        """
        self._need("save_optimizer_states", optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            data = self._updater.get_states(dump_optimizer=False)
            atomic_write(fname, lambda f: f.write(data))

    def load_optimizer_states(self, fname):
        """Restore the optimizer's states from ``fname`` (checked completely
        before anything changes).

        Parameters
        ----------
        fname : str
            A file ``save_optimizer_states`` wrote.
        """
        self._need("load_optimizer_states", optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            self._updater.set_states(fname, label=f"load_optimizer_states({fname!r})")
