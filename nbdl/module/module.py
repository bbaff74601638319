"""``Module``: a symbol bound to executors, with parameters, an optimizer
and checkpoints (MXNet 1.x's ``mx.mod.Module``).

``context`` may be a list: as MXNet's ``DataParallelExecutorGroup``, each
batch is then split between the contexts (``work_load_list`` gives their
shares), each has its own executor and parameter copy, and the gradients
are summed through a KVStore (``kvstore='local'``, the default) before the
update, so the result equals one context's up to rounding.  ``group2ctxs``
may only name the module's contexts (an executor's graph runs on its own
context).  Optimizer state files are nbdl's (an ``.npz`` archive read
without pickle), not MXNet's pickle.  See docs/module.md.
"""
import logging
import numbers
import warnings

from .. import model as _model
from .. import ndarray as nd
from ..device import as_device, cpu
from .._docs import shared_doc
from ..errors import ArgumentError, NbdlError, ShapeError
from ..initializer import InitDesc, Uniform
from ._common import DataDesc, ModuleError, check_input_names, parse_descs
from ._optimizer import OptimizerMixin
from .base_module import _SET_PARAMS_ARGS, BaseModule
from .executor_group import ExecutorGroup, grad_reqs

__all__ = ["Module"]


def _devices(context, work_load_list, group2ctxs):
    ctxs = list(context) if isinstance(context, (list, tuple)) else [context]
    if not ctxs:
        raise ArgumentError("Module: context is an empty list; give at least one Context")
    try:
        devices = [as_device(c) for c in ctxs]
    except (NbdlError, TypeError, ValueError) as e:
        raise ArgumentError(f"Module: context={context!r} is not a Context ({e})") from None
    if len(set(devices)) != len(devices):
        raise ArgumentError(f"Module: context={ctxs} names a device more than once")
    if work_load_list is None:
        work_load_list = [1] * len(devices)
    if not isinstance(work_load_list, (list, tuple)) or len(work_load_list) != len(devices) \
            or not all(isinstance(w, numbers.Real) and not isinstance(w, bool) and w > 0
                       for w in work_load_list):
        raise ArgumentError(f"Module: work_load_list={work_load_list!r} must hold one positive "
                            f"number per context ({len(devices)})")
    if group2ctxs is not None:
        groups = group2ctxs if isinstance(group2ctxs, (list, tuple)) else [group2ctxs]
        for g in groups:
            if not isinstance(g, dict):
                raise ArgumentError(f"Module: group2ctxs must be a dict or a list of dicts, got "
                                    f"{group2ctxs!r}")
            for name, c in g.items():
                cs = c if isinstance(c, (list, tuple)) else [c]
                if any(as_device(x) not in devices for x in cs):
                    raise ArgumentError(f"Module: group2ctxs puts group {name!r} on {c}, which "
                                        f"is not among the module's contexts {ctxs}; nbdl runs "
                                        f"each executor's whole graph on its own context")
    return devices, list(work_load_list)


class Module(OptimizerMixin, BaseModule):
    """A symbol bound to an executor, trained with an optimizer.

    Parameters
    ----------
    symbol : Symbol
        The network (its loss outputs, e.g. SoftmaxOutput, at the top).
    data_names : list of str
        The data inputs (default ``('data',)``).
    label_names : list of str
        The label inputs (default ``('softmax_label',)``; None for none).
    logger : Logger
        Where ``fit`` logs.
    context : Context or list of one Context
        The device (default ``cpu()``).
    work_load_list : list of number, optional
        One entry per context (only one context).
    fixed_param_names : list of str, optional
        Parameters that are not trained (no gradient, never updated).
    state_names : list of str, optional
        Inputs that are neither data nor labels nor parameters: zeros until
        ``set_states``.
    group2ctxs : dict, optional
        ``ctx_group`` to context; every group must be on ``context``.
    compression_params : dict, optional
        Gradient compression for a KVStore object that supports it.
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=cpu(), work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        from ..symbol import Symbol
        if not isinstance(symbol, Symbol):
            raise ArgumentError(f"Module: symbol must be an nbdl Symbol, got "
                                f"{type(symbol).__name__}")
        self._devices, self._work_load_list = _devices(context, work_load_list, group2ctxs)
        self._context = list(context) if isinstance(context, (list, tuple)) else [context]
        self._group2ctxs = group2ctxs
        self._symbol = symbol
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        check_input_names(symbol, data_names, "data", True)
        check_input_names(symbol, label_names, "label", False)
        check_input_names(symbol, state_names, "state", True)
        check_input_names(symbol, fixed_param_names, "fixed_param", True)
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in symbol.list_arguments() if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()
        self._arg_params = None
        self._aux_params = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._updater = None
        self._param_index = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None
        self._monitor = None

    # -- checkpoints --------------------------------------------------------------
    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module from ``prefix-symbol.json`` and ``prefix-%04d.params``
        (``save_checkpoint``'s files, or MXNet's); its parameters are set
        when it is bound.

        Parameters
        ----------
        prefix : str
            The checkpoint's path prefix.
        epoch : int
            The epoch to load.
        load_optimizer_states : bool
            Also load ``prefix-%04d.states`` when the optimizer is installed.
        **kwargs
            ``Module``'s other arguments (data_names, label_names, context, ...).
        """
        sym, args, auxs = _model.load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = f"{prefix}-{epoch:04d}.states"
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and, with
        ``save_optimizer_states``, ``prefix-%04d.states``.

        Parameters
        ----------
        prefix : str
            The path prefix.
        epoch : int
            The epoch number in the file names.
        save_optimizer_states : bool
            Whether to save the optimizer's states too (to resume training).
        remove_amp_cast : bool
            Passed to ``Symbol.tojson``.
        """
        arg_params, aux_params = self.get_params()
        _model.save_checkpoint(prefix, epoch, self._symbol, arg_params, aux_params,
                               remove_amp_cast=remove_amp_cast)
        logging.info('Saved checkpoint to "%s"', _model.params_file(prefix, epoch))
        if save_optimizer_states:
            state_name = f"{prefix}-{epoch:04d}.states"
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    # -- names and shapes -----------------------------------------------------------
    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    @property
    def data_names(self):
        """The names of the data inputs."""
        return self._data_names

    @property
    def label_names(self):
        """The names of the label inputs."""
        return self._label_names

    @property
    def output_names(self):
        """The names of the outputs."""
        return self._output_names

    @property
    def data_shapes(self):
        """The data inputs as ``DataDesc`` (name, shape)."""
        self._need("data_shapes")
        return self._data_shapes

    @property
    def label_shapes(self):
        """The labels as ``DataDesc`` (name, shape); None when bound without labels."""
        self._need("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        """``(name, shape)`` of each output."""
        self._need("output_shapes")
        return self._exec_group.get_output_shapes()

    # -- parameters ---------------------------------------------------------------
    def get_params(self):
        """``(arg_params, aux_params)``: the module's host copies of the
        parameters, brought up to date with the executor first."""
        self._need("get_params", bound=False, params=True)
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the parameters and auxiliary states: values in
        ``arg_params`` / ``aux_params`` are copied, the others come from
        ``initializer``.

        Parameters
        ----------
        initializer : Initializer
            Fills parameters not given (default Uniform(0.01)); None: every
            parameter must be given (unless ``allow_missing``).
        arg_params : dict of str to NDArray, optional
            Parameter values.
        aux_params : dict of str to NDArray, optional
            Auxiliary state values.
        allow_missing : bool
            Whether the dicts may miss names (the initializer fills them).
        force_init : bool
            Initialize even when already initialized (else a warning).
        allow_extra : bool
            Kept for MXNet's signature: names the module does not have are
            ignored here either way.
        """
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "init_params call ignored.", stacklevel=2)
            return
        self._need("init_params")
        attrs = self._symbol.attr_dict()

        def impl(name, arr, cache):
            desc = InitDesc(name, attrs.get(name, None))
            if cache is not None and name in cache:
                src = cache[name]
                if src is arr:
                    return
                if tuple(src.shape) != tuple(arr.shape):
                    raise ShapeError(f"init_params: {name!r} is given with shape "
                                     f"{tuple(src.shape)}, the module's has {tuple(arr.shape)}")
                arr[...] = src.asnumpy() if hasattr(src, "asnumpy") else src
                return
            if cache is not None and not allow_missing:
                # a RuntimeError, as MXNet's
                raise ModuleError(f"init_params: {name!r} is not in the given parameters "
                                  f"(pass allow_missing=True to initialize it)")
            if initializer is None:
                if cache is None:
                    raise ArgumentError("init_params: initializer=None and no parameters given")
                return
            initializer(desc, arr)
        for name, arr in sorted(self._arg_params.items()):
            impl(name, arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            impl(name, arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    @shared_doc(set_params_args=_SET_PARAMS_ARGS)
    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter and auxiliary state values (see ``BaseModule.set_params``).

        Parameters
        ----------
        {set_params_args}
        """
        self._set_params_via(self._exec_group.set_params, arg_params, aux_params, allow_missing,
                             force_init, allow_extra)

    def _sync_params_from_devices(self):
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    # -- binding ------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind the executor for these input shapes (allocates its memory).

        Parameters
        ----------
        data_shapes : list of DataDesc or (name, shape)
            Typically ``data_iter.provide_data``; names must be ``data_names``.
        label_shapes : list of DataDesc or (name, shape), optional
            Typically ``data_iter.provide_label``.
        for_training : bool
            False binds for inference only (no gradient arrays).
        inputs_need_grad : bool
            Whether the data inputs get gradients (``get_input_grads``).
        force_rebind : bool
            Rebind when already bound (else a warning and nothing).
        shared_module : Module, optional
            A bound, initialized module whose parameter arrays this one uses
            (bucketing); its optimizer is borrowed when it has one.
        grad_req : str, list or dict
            'write' (default), 'add' or 'null' for the parameters, or per argument.
        """
        if force_rebind:
            if self.binded and self._params_dirty:
                self._sync_params_from_devices()    # the new executors start from them
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise ArgumentError("bind: inputs_need_grad=True needs for_training=True")
        data_shapes = parse_descs("Module.bind", self._data_names, data_shapes, "data", True)
        label_shapes = None if label_shapes is None else parse_descs(
            "Module.bind", self._label_names, label_shapes, "label", False)
        shared_group = None
        if shared_module is not None:
            if not isinstance(shared_module, Module) or not shared_module.binded \
                    or not shared_module.params_initialized:
                raise ModuleError("bind: shared_module must be a bound Module with initialized "
                                  "parameters")
            shared_group = shared_module._exec_group
        reqs = grad_reqs(self._symbol.list_arguments(), self._param_names, self._data_names,
                         self._fixed_param_names, for_training, inputs_need_grad, grad_req)
        group = ExecutorGroup(self._symbol, self._devices, self._work_load_list, data_shapes,
                              label_shapes, self._param_names, reqs, shared_group)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._exec_group = group
        self._data_shapes, self._label_shapes = data_shapes, label_shapes
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            group.set_params(self._arg_params, self._aux_params)
        else:
            self._arg_params = {n: nd.zeros(a[0].shape, dtype=a[0].dtype)
                                for n, a in zip(self._param_names, group.param_arrays)}
            self._aux_params = {n: nd.zeros(a[0].shape, dtype=a[0].dtype)
                                for n, a in zip(group.aux_names, group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes, label_shapes=None):
        """Bind anew for other input shapes (a new batch size, ...), keeping
        the parameters.

        Parameters
        ----------
        data_shapes : list of DataDesc or (name, shape)
            The new data shapes.
        label_shapes : list of DataDesc or (name, shape), optional
            The new label shapes.
        """
        self._need("reshape")
        data_shapes = parse_descs("Module.reshape", self._data_names, data_shapes, "data", True)
        label_shapes = None if label_shapes is None else parse_descs(
            "Module.reshape", self._label_names, label_shapes, "label", False)
        self._exec_group.reshape(data_shapes, label_shapes)
        self._data_shapes, self._label_shapes = data_shapes, label_shapes
        self._reinstall_monitor()

    # -- computation --------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Run the forward pass on ``data_batch``; a batch of other shapes
        (a smaller last batch, ...) rebinds the module for them first.

        Parameters
        ----------
        data_batch : DataBatch
            ``data`` (and ``label``) in ``data_shapes`` order.
        is_train : bool, optional
            Default: ``for_training``.
        """
        self._need("forward", params=True)
        if is_train is None:
            is_train = self.for_training
        data = getattr(data_batch, "data", None)
        if data is None:
            raise ArgumentError(f"forward: expected a DataBatch (with .data), got "
                                f"{type(data_batch).__name__}")
        from .executor_group import as_arrays
        data = as_arrays(data, "data")
        if len(data) != len(self._data_shapes):
            raise ArgumentError(f"forward: the batch has {len(data)} data arrays, the module "
                                f"takes {len(self._data_shapes)} ({self._data_names})")
        new = tuple(tuple(a.shape) for a in data)
        if tuple(tuple(d.shape) for d in self._data_shapes) != new:
            self._reshape_for(data_batch, new)
        self._exec_group.forward(data_batch, is_train)
        if is_train and self._aux_names:
            self._params_dirty = True

    def _reshape_for(self, data_batch, new):
        provided = getattr(data_batch, "provide_data", None)
        if provided:
            new_d = parse_descs("Module.forward", self._data_names, provided, "data", True)
        else:
            new_d = [DataDesc(d.name, s, getattr(d, "dtype", "float32"),
                              getattr(d, "layout", "NCHW"))
                     for d, s in zip(self._data_shapes, new)]
        label = getattr(data_batch, "label", None)
        provided_l = getattr(data_batch, "provide_label", None)
        if provided_l:
            new_l = parse_descs("Module.forward", self._label_names, provided_l, "label", False)
        elif label and self._label_shapes:
            new_l = [DataDesc(d.name, tuple(a.shape), getattr(d, "dtype", "float32"),
                              getattr(d, "layout", "NCHW"))
                     for d, a in zip(self._label_shapes, label)]
        else:
            new_l = None
        self._exec_group.reshape(new_d, new_l, where="Module.forward")
        self._data_shapes, self._label_shapes = new_d, new_l
        self._reinstall_monitor()

    def _reinstall_monitor(self):
        if self._monitor is not None:
            self._exec_group.install_monitor(self._monitor)

    def backward(self, out_grads=None):
        """Run the backward pass.

        Parameters
        ----------
        out_grads : NDArray or list of NDArray, optional
            Head gradients, for outputs that are not losses.
        """
        self._need("backward", params=True)
        if not self.for_training:
            raise ModuleError("backward: the module is bound with for_training=False; bind it "
                              "with for_training=True")
        self._exec_group.backward(out_grads=out_grads)

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward pass (overwritten by the next).

        Parameters
        ----------
        merge_multi_context : bool
            True: one array per output (the contexts' parts concatenated);
            False: a list per output of each context's part.
        """
        self._need("get_outputs", params=True)
        return self._exec_group.get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs from the last backward pass.

        Parameters
        ----------
        merge_multi_context : bool
            True: one array per input; False: a list per input of each
            context's part.
        """
        self._need("get_input_grads", params=True)
        if not self.inputs_need_grad:
            raise ModuleError("get_input_grads: bind the module with inputs_need_grad=True")
        return self._exec_group.get_input_grads(merge_multi_context)

    def get_states(self, merge_multi_context=True):
        """The arrays of ``state_names``.

        Parameters
        ----------
        merge_multi_context : bool
            True: one array per state (the contexts' parts concatenated);
            False: a list per state of each context's array.
        """
        self._need("get_states", params=True)
        parts = [[e.arg_dict[n] for e in self._exec_group.execs] for n in self._state_names]
        if not merge_multi_context:
            return parts
        return [p[0] if len(p) == 1 else nd.concat(*[a.as_in_context(p[0].device) for a in p],
                                                   dim=0) for p in parts]

    def set_states(self, states=None, value=None):
        """Set the ``state_names`` arrays, from ``states`` or to ``value``.

        Parameters
        ----------
        states : list of list of NDArray, optional
            Per state, one array per context (``get_states(False)``'s form).
        value : number, optional
            One value for every state.
        """
        self._need("set_states", params=True)
        if (states is None) == (value is None):
            raise ArgumentError("set_states: give exactly one of states and value")
        execs = self._exec_group.execs
        if value is not None:
            for e in execs:
                for n in self._state_names:
                    e.arg_dict[n][...] = value
            return
        if len(states) != len(self._state_names):
            raise ArgumentError(f"set_states: {len(states)} states for {self._state_names}")
        for n, per_ctx in zip(self._state_names, states):
            per_ctx = list(per_ctx) if isinstance(per_ctx, (list, tuple)) else [per_ctx]
            if len(per_ctx) != len(execs):
                raise ArgumentError(f"set_states: state {n!r} has {len(per_ctx)} arrays for "
                                    f"{len(execs)} contexts")
            for e, src in zip(execs, per_ctx):
                dst = e.arg_dict[n]
                if tuple(src.shape) != tuple(dst.shape):
                    raise ShapeError(f"set_states: state {n!r} has shape {tuple(dst.shape)}, "
                                     f"got {tuple(src.shape)}")
                dst[...] = src.asnumpy() if hasattr(src, "asnumpy") else src

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` over the last outputs and ``labels``.

        Parameters
        ----------
        eval_metric : EvalMetric
            The metric.
        labels : list of NDArray
            Typically ``data_batch.label``.
        pre_sliced : bool
            Whether ``labels`` is already split: one list of labels per context.
        """
        if pre_sliced and (not isinstance(labels, (list, tuple))
                           or len(labels) != len(self._exec_group.execs)):
            raise ArgumentError(f"update_metric: pre_sliced labels are one list of labels per "
                                f"context ({len(self._exec_group.execs)})")
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Install a monitor: ``mon.install(executor)`` (MXNet's Monitor
        interface, which calls ``executor.set_monitor_callback``).

        Parameters
        ----------
        mon : Monitor
            An object with ``install(executor)``.
        """
        self._need("install_monitor")
        if not hasattr(mon, "install"):
            raise ArgumentError(f"install_monitor: expected a Monitor (with install(executor)), "
                                f"got {type(mon).__name__}")
        self._monitor = mon
        self._exec_group.install_monitor(mon)
