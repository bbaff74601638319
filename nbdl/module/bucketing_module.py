"""``BucketingModule``: one ``Module`` per bucket key (a sequence length,
...), all using the parameter arrays of the default bucket's module
(MXNet 1.x's ``mx.mod.BucketingModule``).

``sym_gen(bucket_key)`` returns ``(symbol, data_names, label_names)``.  The
default bucket is bound first; a batch with another ``bucket_key`` binds
that bucket's module on first sight (``switch_bucket``) with the default
module as its ``shared_module``, so every bucket trains the same weights
and shares one optimizer.  Every parameter of a bucket's symbol must be a
parameter of the default bucket's symbol, with the same shape."""
import logging
import numbers

import numpy as np

from .. import model as _model
from .. import ndarray as nd
from ..device import cpu
from .._docs import shared_doc
from ..errors import ArgumentError
from ..initializer import Uniform
from ._common import ModuleError, check_input_names
from .base_module import _SET_PARAMS_ARGS, BaseModule
from .module import Module

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """Modules per bucket key sharing their parameters.

    Parameters
    ----------
    sym_gen : callable
        ``sym_gen(bucket_key) -> (symbol, data_names, label_names)``.
    default_bucket_key : hashable
        The key of the largest bucket (bound first; it owns the parameters).
    logger : Logger
        Where ``fit`` logs.
    context : Context or list of one Context
        The device (default ``cpu()``).
    work_load_list : list of number, optional
        As for ``Module``.
    fixed_param_names : list of str, optional
        Parameters that are not trained.
    state_names : list of str, optional
        As for ``Module``.
    group2ctxs : dict, optional
        As for ``Module``.
    compression_params : dict, optional
        As for ``Module``.
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=cpu(),
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise ArgumentError("BucketingModule: default_bucket_key is required")
        if not callable(sym_gen):
            raise ArgumentError(f"BucketingModule: sym_gen must be callable, got "
                                f"{type(sym_gen).__name__}")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        check_input_names(symbol, list(data_names or []), "data", True)
        check_input_names(symbol, list(label_names or []), "label", False)
        check_input_names(symbol, state_names, "state", True)
        check_input_names(symbol, fixed_param_names, "fixed_param", True)
        self._module_args = dict(logger=logger, context=context, work_load_list=work_load_list,
                                 fixed_param_names=fixed_param_names, state_names=state_names,
                                 group2ctxs=group2ctxs, compression_params=compression_params)
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _call_sym_gen(self, bucket_key):
        out = self._sym_gen(bucket_key)
        if not (isinstance(out, tuple) and len(out) == 3):
            raise ArgumentError(f"BucketingModule: sym_gen({bucket_key!r}) must return "
                                f"(symbol, data_names, label_names), got {out!r}")
        return out

    def _new_module(self, bucket_key):
        symbol, data_names, label_names = self._call_sym_gen(bucket_key)
        return Module(symbol, data_names, label_names, **self._module_args)

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    # -- names and shapes ---------------------------------------------------------
    @property
    def default_bucket_key(self):
        """The key of the default bucket."""
        return self._default_bucket_key

    @property
    def data_names(self):
        """The current bucket's data names (the default bucket's before binding)."""
        if self.binded:
            return self._curr_module.data_names
        return list(self._call_sym_gen(self._default_bucket_key)[1] or [])

    @property
    def output_names(self):
        """The current bucket's output names."""
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        """The current bucket's data shapes."""
        self._need("data_shapes")
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        """The current bucket's label shapes."""
        self._need("label_shapes")
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        """The current bucket's output shapes."""
        self._need("output_shapes")
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        """The current bucket's symbol."""
        self._need("symbol")
        return self._curr_module.symbol

    # -- parameters -----------------------------------------------------------------
    def get_params(self):
        """``(arg_params, aux_params)`` of the shared parameters."""
        self._need("get_params", bound=False, params=True)
        self._curr_module._params_dirty = self._params_dirty or self._curr_module._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    @shared_doc(set_params_args=_SET_PARAMS_ARGS)
    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter values (see ``Module.set_params``).

        Parameters
        ----------
        {set_params_args}
        """
        def assign(arg_params, aux_params, allow_extra):
            self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                         force_init=force_init, allow_extra=allow_extra)
        self._set_params_via(assign, arg_params, aux_params, allow_missing, force_init,
                             allow_extra)

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the shared parameters (see ``Module.init_params``).

        Parameters
        ----------
        initializer : Initializer
            For parameters not given.
        arg_params : dict, optional
            Parameter values.
        aux_params : dict, optional
            Auxiliary state values.
        allow_missing : bool
            Whether the dicts may miss names.
        force_init : bool
            Initialize even when already initialized.
        allow_extra : bool
            Whether unknown names are ignored.
        """
        if self.params_initialized and not force_init:
            return
        self._need("init_params")
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        """The current bucket's state arrays.

        Parameters
        ----------
        merge_multi_context : bool
            As for ``Module.get_states``.
        """
        self._need("get_states", params=True)
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the current bucket's state arrays.

        Parameters
        ----------
        states : list of list of NDArray, optional
            Values per state.
        value : number, optional
            One value for every state.
        """
        self._need("set_states", params=True)
        self._curr_module.set_states(states, value)

    # -- binding ----------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind the default bucket's module (other buckets bind on first use).

        Parameters
        ----------
        data_shapes : list of DataDesc or (name, shape)
            The default bucket's data shapes.
        label_shapes : list of DataDesc or (name, shape), optional
            The default bucket's label shapes.
        for_training : bool
            Whether to bind for training.
        inputs_need_grad : bool
            Whether the data inputs get gradients.
        force_rebind : bool
            Rebind when already bound.
        shared_module : None
            Not supported for a BucketingModule (as in MXNet).
        grad_req : str, list or dict
            As for ``Module.bind``.
        """
        if self.params_initialized:
            arg_params, aux_params = self.get_params()
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if shared_module is not None:
            raise ArgumentError("BucketingModule.bind: shared_module is not supported")
        module = self._buckets.get(self._default_bucket_key) or \
            self._new_module(self._default_bucket_key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=grad_req)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self._buckets[self._default_bucket_key] = module
        self.binded = True
        if self.params_initialized:
            self.set_params(arg_params, aux_params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key``'s module the current one, binding it (sharing
        the default bucket's parameters and optimizer) on first use.

        Parameters
        ----------
        bucket_key : hashable
            The bucket.
        data_shapes : list of DataDesc or (name, shape)
            Its data shapes (used when it is bound now).
        label_shapes : list of DataDesc or (name, shape), optional
            Its label shapes.
        """
        self._need("switch_bucket")
        module = self._buckets.get(bucket_key)
        if module is None:
            module = self._new_module(bucket_key)
            self._buckets[bucket_key] = module
        if not module.binded:
            default = self._buckets[self._default_bucket_key]
            if not default.params_initialized:
                raise ModuleError("switch_bucket: initialize the parameters before binding "
                                  "another bucket")
            if data_shapes is None:
                raise ModuleError(f"switch_bucket: bucket {bucket_key!r} is not bound yet; "
                                  f"give its data_shapes")
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=default, grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Install the optimizer on the current module; every bucket borrows it.

        Parameters
        ----------
        kvstore : str, KVStore or None
            As for ``Module.init_optimizer``.
        optimizer : str or Optimizer
            As for ``Module.init_optimizer``.
        optimizer_params : dict or tuple of pairs
            As for ``Module.init_optimizer``.
        force_init : bool
            Replace an installed optimizer.
        """
        self._need("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for mod in self._buckets.values():
            if mod is not self._curr_module and mod.binded:
                mod.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    # -- computation ------------------------------------------------------------------
    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Bind the batch's bucket if it is new (the current bucket stays).

        Parameters
        ----------
        data_batch : DataBatch
            The next batch (its ``bucket_key``, ``provide_data``, ``provide_label``).
        sparse_row_id_fn : callable, optional
            MXNet's row-sparse hook; nbdl has no sparse parameters.
        """
        self._need("prepare", params=True)
        original = self._curr_bucket_key
        self.switch_bucket(self._key_of(data_batch), data_batch.provide_data,
                           getattr(data_batch, "provide_label", None))
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def _key_of(self, data_batch):
        key = getattr(data_batch, "bucket_key", None)
        return self._default_bucket_key if key is None else key

    def forward(self, data_batch, is_train=None):
        """Switch to the batch's bucket and run its forward pass.

        Parameters
        ----------
        data_batch : DataBatch
            With ``bucket_key`` and ``provide_data`` (and ``provide_label``).
        is_train : bool, optional
            Default: ``for_training``.
        """
        self._need("forward", params=True)
        self.switch_bucket(self._key_of(data_batch), getattr(data_batch, "provide_data", None),
                           getattr(data_batch, "provide_label", None))
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        """The current bucket's backward pass.

        Parameters
        ----------
        out_grads : NDArray or list of NDArray, optional
            Head gradients.
        """
        self._need("backward", params=True)
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        """Update the shared parameters from the current bucket's gradients."""
        self._need("update", params=True, optimizer=True)
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        """The current bucket's outputs.

        Parameters
        ----------
        merge_multi_context : bool
            As for ``Module.get_outputs``.
        """
        self._need("get_outputs", params=True)
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The current bucket's input gradients.

        Parameters
        ----------
        merge_multi_context : bool
            As for ``Module.get_input_grads``.
        """
        self._need("get_input_grads", params=True)
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` over the current bucket's outputs.

        Parameters
        ----------
        eval_metric : EvalMetric
            The metric.
        labels : list of NDArray
            The batch's labels.
        pre_sliced : bool
            As for ``Module.update_metric``.
        """
        self._need("update_metric", params=True)
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install ``mon`` on every bucket's executor (and those bound later).

        Parameters
        ----------
        mon : Monitor
            An object with ``install(executor)``.
        """
        self._need("install_monitor")
        self._monitor = mon
        for mod in self._buckets.values():
            if mod.binded:
                mod.install_monitor(mon)

    # -- checkpoints ------------------------------------------------------------------
    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Write ``prefix-%04d.params``, one ``prefix-<key>-symbol.json`` per
        bound bucket and ``prefix.buckets`` (the keys, an int32 NDArray file),
        as MXNet's BucketingModule does (its keys must be ints).

        Parameters
        ----------
        prefix : str
            The path prefix.
        epoch : int
            The epoch number in the parameter file's name.
        remove_amp_cast : bool
            Passed to ``Symbol.save``.
        """
        if not self._buckets:
            raise ModuleError("BucketingModule.save_checkpoint: an empty (unbound) "
                              "BucketingModule cannot be saved")
        keys = list(self._buckets)
        bad = [k for k in keys if isinstance(k, bool) or not isinstance(k, numbers.Integral)]
        if bad:
            raise ArgumentError(f"BucketingModule.save_checkpoint: the bucket keys are saved as "
                                f"int32, so they must be ints; got {bad}")
        self.save_params(_model.params_file(prefix, epoch))
        for key in keys:
            self._call_sym_gen(key)[0].save(f"{prefix}-{key}-symbol.json",
                                            remove_amp_cast=remove_amp_cast)
        nd.save(f"{prefix}.buckets", nd.array(np.array(keys, dtype=np.int32), dtype="int32"))

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule from ``save_checkpoint``'s files: one Module per
        saved bucket (from its saved symbol), the parameters set when bound.

        Parameters
        ----------
        prefix : str
            The checkpoint's path prefix.
        epoch : int
            The epoch to load.
        sym_gen : callable
            As for ``BucketingModule`` (required: it names each bucket's inputs).
        default_bucket_key : int
            The default bucket (required; one of the saved keys).
        **kwargs
            ``BucketingModule``'s other arguments.
        """
        from ..symbol import load as load_symbol
        if sym_gen is None or default_bucket_key is None:
            raise ArgumentError("BucketingModule.load: sym_gen and default_bucket_key are "
                                "required")
        loaded = nd.load(f"{prefix}.buckets")
        if not isinstance(loaded, list) or len(loaded) != 1:
            raise ArgumentError(f"BucketingModule.load: {prefix}.buckets does not hold one "
                                f"array of bucket keys")
        keys = [int(k) for k in loaded[0].asnumpy().astype(np.int32).reshape(-1)]
        if default_bucket_key not in keys:
            raise ArgumentError(f"BucketingModule.load: default_bucket_key "
                                f"{default_bucket_key!r} is not among the saved buckets {keys}")
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key in keys:
            _, data_names, label_names = mod._call_sym_gen(key)
            symbol = load_symbol(f"{prefix}-{key}-symbol.json")
            mod._buckets[key] = Module(symbol, data_names, label_names, **mod._module_args)
        mod._curr_module = mod._buckets[default_bucket_key]
        arg_params, aux_params = _model.load_params(prefix, epoch)
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod
