"""``BaseModule``: MXNet 1.x's module interface and the training and
prediction loops built on it (``fit``, ``score``, ``predict``,
``iter_predict``), parameter files, and the state flags.

A module moves through four states: created, bound (``bind``: input shapes
known, executor and memory made), parameters initialized (``init_params``)
and optimizer installed (``init_optimizer``).  A subclass supplies the
abstract methods; the loops work with any data iterator that has
``reset()``, is iterable and yields batches with ``data``, ``label``, ``pad``
(and ``provide_data`` / ``provide_label`` for ``fit``)."""
import logging
import warnings

import numpy as np

from .. import ndarray as nd
from .._docs import shared_doc
from ..errors import ArgumentError, ShapeError
from ..initializer import Uniform
from ..io import DataBatch
from ._common import ModuleError, call_batch_end
from ._loops import create_metric, train_epochs

__all__ = ["BaseModule"]


_SET_PARAMS_ARGS = """
arg_params : dict of str to NDArray
    Parameter values.
aux_params : dict of str to NDArray
    Auxiliary state values.
allow_missing : bool
    Whether values may be missing (those keep their current values).
force_init : bool
    Assign even when the parameters are already initialized (default True).
allow_extra : bool
    Whether names the module does not have are ignored (else an error,
    with ``allow_missing``).
"""


class BaseModule:
    """The interface of a module (MXNet 1.x's ``mx.mod.BaseModule``).  The
    interface methods a subclass defines (``bind``, ``forward``, ...) raise
    a ModuleError here.

    Parameters
    ----------
    logger : Logger
        Where ``fit`` logs (default: the ``logging`` module).
    """

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    # -- state checks ---------------------------------------------------------
    def _undefined(self, what):
        """The error for a method or property every subclass must define."""
        return ModuleError(f"{type(self).__name__} does not define {what}; every "
                           f"BaseModule subclass must")

    def _need(self, where, bound=True, params=False, optimizer=False):
        if bound and not self.binded:
            raise ModuleError(f"{where}: the module is not bound; call bind() (or fit) first")
        if params and not self.params_initialized:
            raise ModuleError(f"{where}: the parameters are not initialized; call "
                              f"init_params() (or set_params) first")
        if optimizer and not self.optimizer_initialized:
            raise ModuleError(f"{where}: no optimizer is installed; call init_optimizer() first")

    # -- high-level API ---------------------------------------------------------
    def forward_backward(self, data_batch):
        """``forward(data_batch, is_train=True)`` then ``backward()``.

        Parameters
        ----------
        data_batch : DataBatch
            The batch.
        """
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Run inference over ``eval_data`` and evaluate ``eval_metric``
        (padded examples of a last batch are counted, as in MXNet).

        Parameters
        ----------
        eval_data : DataIter
            The data.
        eval_metric : EvalMetric, str or list
            The metric (or its name, e.g. 'acc', or a list of them).
        num_batch : int, optional
            Stop after this many batches (default: the whole iterator).
        batch_end_callback : callable or list of callables, optional
            Called with a ``BatchEndParam`` after each batch.
        score_end_callback : callable or list of callables, optional
            Called with a ``BatchEndParam`` at the end.
        reset : bool
            Whether to ``reset()`` the iterator first.
        epoch : int
            Passed to the callbacks.
        sparse_row_id_fn : callable, optional
            MXNet's row-sparse hook; nbdl has no sparse parameters.

        Returns
        -------
        list of (str, float)
            The metric's ``get_name_value()``.
        """
        self._need("score", params=True)
        if reset:
            eval_data.reset()
        eval_metric = create_metric(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            self.update_metric(eval_metric, eval_batch.label)
            call_batch_end(batch_end_callback, epoch, nbatch, eval_metric, locals())
            actual_num_batch += 1
        if score_end_callback:
            call_batch_end(score_end_callback, epoch, actual_num_batch, eval_metric, locals())
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield ``(outputs, nbatch, batch)`` per batch, the outputs without
        the batch's padding (views, overwritten by the next forward).

        Parameters
        ----------
        eval_data : DataIter
            The data.
        num_batch : int, optional
            Stop after this many batches.
        reset : bool
            Whether to ``reset()`` the iterator first.
        sparse_row_id_fn : callable, optional
            MXNet's row-sparse hook; nbdl has no sparse parameters.
        """
        self._need("iter_predict", params=True)
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(eval_batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, eval_batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """Run inference and collect the outputs, dropping each batch's padding.

        Parameters
        ----------
        eval_data : DataIter, NDArray or numpy array
            The data; an array is one batch (its output is returned).
        num_batch : int, optional
            Stop after this many batches.
        merge_batches : bool
            True: one array per output, the batches concatenated; False: a
            list per batch of its outputs.
        reset : bool
            Whether to ``reset()`` the iterator first.
        always_output_list : bool
            With ``merge_batches``, return a list even for one output.
        sparse_row_id_fn : callable, optional
            MXNet's row-sparse hook; nbdl has no sparse parameters.
        """
        self._need("predict", params=True)
        if isinstance(eval_data, (nd.NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = nd.array(eval_data)
            self.forward(DataBatch([eval_data]), is_train=False)
            return self.get_outputs()[0]
        if not (hasattr(eval_data, "reset") and hasattr(eval_data, "__iter__")):
            raise ArgumentError(f"predict: eval_data must be a DataIter, an NDArray or a numpy "
                                f"array, got {type(eval_data).__name__}")
        output_list = [[out.copy() for out in outs] for outs, _, _ in
                       self.iter_predict(eval_data, num_batch, reset, sparse_row_id_fn)]
        if not output_list:
            return output_list
        if merge_batches:
            num_outputs = len(output_list[0])
            if any(len(out) != num_outputs for out in output_list):
                raise ShapeError("predict: cannot merge the batches, they do not all have "
                                 f"{num_outputs} outputs (bucketing?); pass merge_batches=False")
            merged = [nd.concat(*[out[i] for out in output_list], dim=0)
                      for i in range(num_outputs)]
            if num_outputs == 1 and not always_output_list:
                return merged[0]
            return merged
        return output_list

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=Uniform(0.01), arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Train: bind, initialize, install the optimizer, then for each epoch
        run ``forward_backward`` and ``update`` on every batch, log the
        training metric, call the epoch-end callbacks and score ``eval_data``.

        Parameters
        ----------
        train_data : DataIter
            The training data (``provide_data`` / ``provide_label`` bind the module).
        eval_data : DataIter, optional
            Scored after each epoch.
        eval_metric : EvalMetric, str or list
            The training metric (default 'acc').
        epoch_end_callback : callable or list, optional
            Called as ``callback(epoch, symbol, arg_params, aux_params)``.
        batch_end_callback : callable or list, optional
            Called with a ``BatchEndParam`` after each batch.
        kvstore : str or KVStore
            'local', 'device' or None (one context needs no store; several sum
            their gradients through one), or a KVStore object.
        optimizer : str or Optimizer
            Default 'sgd'.
        optimizer_params : dict or tuple of pairs
            Arguments of the optimizer (default learning_rate 0.01).
        eval_end_callback : callable or list, optional
            The ``score_end_callback`` of the validation.
        eval_batch_end_callback : callable or list, optional
            The ``batch_end_callback`` of the validation.
        initializer : Initializer
            For parameters not given in ``arg_params`` (default Uniform(0.01)).
        arg_params : dict, optional
            Initial parameter values (they win over the initializer).
        aux_params : dict, optional
            Initial auxiliary states.
        allow_missing : bool
            Whether ``arg_params`` may miss parameters (the initializer fills them).
        force_rebind : bool
            Rebind even when bound.
        force_init : bool
            Initialize even when initialized.
        begin_epoch : int
            The first epoch's number (N+1 when resuming from epoch N).
        num_epoch : int
            The epoch to stop before (required).
        validation_metric : EvalMetric or str, optional
            The validation metric (default: ``eval_metric``).
        monitor : Monitor, optional
            Installed with ``install_monitor``; ``tic()`` / ``toc_print()`` around
            each batch.
        sparse_row_id_fn : callable, optional
            MXNet's row-sparse hook; nbdl has no sparse parameters.
        """
        train_epochs(self, train_data, eval_data, eval_metric, epoch_end_callback,
                     batch_end_callback, kvstore, optimizer, optimizer_params,
                     eval_end_callback, eval_batch_end_callback, initializer, arg_params,
                     aux_params, allow_missing, force_rebind, force_init, begin_epoch,
                     num_epoch, validation_metric, monitor, sparse_row_id_fn)

    # -- symbol and shapes (subclasses) ------------------------------------------
    @property
    def data_names(self):
        """The names of the data inputs."""
        raise self._undefined("data_names")

    @property
    def output_names(self):
        """The names of the outputs."""
        raise self._undefined("output_names")

    @property
    def data_shapes(self):
        """The data inputs as ``DataDesc`` (name, shape) (bound modules only)."""
        raise self._undefined("data_shapes")

    @property
    def label_shapes(self):
        """The labels as ``DataDesc`` (name, shape), None without labels."""
        raise self._undefined("label_shapes")

    @property
    def output_shapes(self):
        """``(name, shape)`` of each output (bound modules only)."""
        raise self._undefined("output_shapes")

    @property
    def symbol(self):
        """The module's symbol (for a BucketingModule: the current bucket's)."""
        return self._symbol

    # -- parameters -------------------------------------------------------------
    def get_params(self):
        """``(arg_params, aux_params)``: dicts name -> NDArray (host copies)."""
        raise self._undefined("get_params")

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialize the parameters and auxiliary states.

        Parameters
        ----------
        initializer : Initializer
            For parameters not given.
        arg_params : dict of str to NDArray, optional
            Parameter values (they win over the initializer).
        aux_params : dict of str to NDArray, optional
            Auxiliary state values.
        allow_missing : bool
            Whether the dicts may miss names.
        force_init : bool
            Initialize even when already initialized.
        allow_extra : bool
            Whether names the module does not have are ignored.
        """
        raise self._undefined("init_params")

    @shared_doc(set_params_args=_SET_PARAMS_ARGS)
    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter and auxiliary state values.

        Parameters
        ----------
        {set_params_args}
        """
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def _set_params_via(self, assign, arg_params, aux_params, allow_missing, force_init,
                        allow_extra):
        """``set_params`` of a bound module that assigns the given values itself,
        ``assign(arg_params, aux_params, allow_extra=...)``: without
        ``allow_missing`` the values go through ``init_params``; an initialized
        module without ``force_init`` warns and keeps its values."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=3)
            return
        self._need("set_params")
        assign(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def save_params(self, fname):
        """Write the parameters to ``fname`` as an NDArray file with
        ``arg:<name>`` / ``aux:<name>`` keys (MXNet's ``.params`` format).

        Parameters
        ----------
        fname : str
            The file.
        """
        arg_params, aux_params = self.get_params()
        save_dict = {f"arg:{k}": v for k, v in arg_params.items()}
        save_dict.update({f"aux:{k}": v for k, v in aux_params.items()})
        nd.save(fname, save_dict)

    def load_params(self, fname):
        """Read a file ``save_params`` (or MXNet) wrote and ``set_params`` it.

        Parameters
        ----------
        fname : str
            The file.
        """
        loaded = nd.load(fname)
        if not isinstance(loaded, dict):
            raise ArgumentError(f"load_params: {fname!r} holds unnamed arrays; a parameter file "
                                f"names them 'arg:<name>' / 'aux:<name>'")
        arg_params, aux_params = {}, {}
        for k, value in loaded.items():
            kind, sep, name = k.partition(":")
            if not sep or kind not in ("arg", "aux"):
                raise ArgumentError(f"load_params: {fname!r}: key {k!r} does not start with "
                                    f"'arg:' or 'aux:'")
            (arg_params if kind == "arg" else aux_params)[name] = value
        self.set_params(arg_params, aux_params)

    def get_states(self, merge_multi_context=True):
        """The state arrays (``state_names``); none here.

        Parameters
        ----------
        merge_multi_context : bool
            Kept for MXNet's signature (a module without states has none to merge).
        """
        self._need("get_states", params=True)
        return []

    def set_states(self, states=None, value=None):
        """Set the state arrays; a module without states takes nothing.

        Parameters
        ----------
        states : list of list of NDArray, optional
            Values per state.
        value : number, optional
            One value for every state.
        """
        self._need("set_states", params=True)
        if states or value is not None:
            raise ArgumentError("set_states: this module has no states")

    # -- computation (subclasses) -------------------------------------------------
    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Get ready for ``data_batch`` (a BucketingModule binds its bucket);
        nothing to do for a plain module.

        Parameters
        ----------
        data_batch : DataBatch
            The next batch.
        sparse_row_id_fn : callable, optional
            MXNet's row-sparse hook; nbdl has no sparse parameters, so it
            only draws a warning.
        """
        if sparse_row_id_fn is not None:
            warnings.warn("prepare: sparse_row_id_fn is ignored: nbdl has no row_sparse "
                          "parameters", stacklevel=2)

    def forward(self, data_batch, is_train=None):
        """Run the forward pass on ``data_batch``.

        Parameters
        ----------
        data_batch : DataBatch
            The batch.
        is_train : bool, optional
            Default: ``for_training``.
        """
        raise self._undefined("forward")

    def backward(self, out_grads=None):
        """Run the backward pass.

        Parameters
        ----------
        out_grads : NDArray or list of NDArray, optional
            Head gradients for outputs that are not losses.
        """
        raise self._undefined("backward")

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward pass.

        Parameters
        ----------
        merge_multi_context : bool
            True: one array per output; False: a list per output.
        """
        raise self._undefined("get_outputs")

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs (``inputs_need_grad=True``).

        Parameters
        ----------
        merge_multi_context : bool
            True: one array per input; False: a list per input.
        """
        raise self._undefined("get_input_grads")

    def update(self):
        """Apply the optimizer to the gradients of the last backward pass."""
        raise self._undefined("update")

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate ``eval_metric`` over the last outputs and ``labels``.

        Parameters
        ----------
        eval_metric : EvalMetric
            The metric.
        labels : list of NDArray
            Typically ``data_batch.label``.
        pre_sliced : bool
            Whether the labels are already split per device.
        """
        raise self._undefined("update_metric")

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind the executor(s) for the given input shapes.

        Parameters
        ----------
        data_shapes : list of DataDesc or (name, shape)
            The data inputs.
        label_shapes : list of DataDesc or (name, shape), optional
            The labels.
        for_training : bool
            Whether gradients are computed.
        inputs_need_grad : bool
            Whether the data inputs get gradients.
        force_rebind : bool
            Rebind when already bound.
        shared_module : BaseModule, optional
            A module whose parameters this one uses.
        grad_req : str, list or dict
            The gradient requirements.
        """
        raise self._undefined("bind")

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Install the optimizer.

        Parameters
        ----------
        kvstore : str, KVStore or None
            'local', 'device', None or a KVStore object.
        optimizer : str or Optimizer
            A name (default 'sgd') or an instance.
        optimizer_params : dict or tuple of pairs
            The optimizer's arguments.
        force_init : bool
            Replace an installed optimizer.
        """
        raise self._undefined("init_optimizer")

    def install_monitor(self, mon):
        """Install ``mon`` on the executors.

        Parameters
        ----------
        mon : Monitor
            An object with ``install(executor)``.
        """
        raise self._undefined("install_monitor")
