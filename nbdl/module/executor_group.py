"""``ExecutorGroup``: the executor a ``Module`` runs, its gradient
requirements, and how batches go in and outputs come out.

MXNet's ``DataParallelExecutorGroup`` binds one executor per device and
splits each batch between them; nbdl runs a module on one device, so the
group holds one executor over the whole batch (``Module`` refuses several
contexts).  Rebinding for new input shapes (``reshape``) and binding another
bucket's symbol (``shared_group``) bind a new executor that uses the same
parameter, gradient and auxiliary arrays."""
import numpy as np

from ..errors import ArgumentError, NbdlError, ShapeError
from ..executor import bind, simple_bind
from ..ndarray import NDArray
from ..ops.registry import REQ_NAMES
from ._common import ModuleError

__all__ = ["ExecutorGroup", "grad_reqs"]


def grad_reqs(arg_names, param_names, data_names, fixed_param_names, for_training,
              inputs_need_grad, grad_req):
    """The gradient requirement of every argument, as MXNet's executor group
    decides it.

    Parameters
    ----------
    arg_names : list of str
        The symbol's arguments.
    param_names : list of str
        The arguments that are parameters.
    data_names : list of str
        The data inputs (they get a gradient only with ``inputs_need_grad``).
    fixed_param_names : list of str
        Parameters that are not trained ('null').
    for_training : bool
        False: every requirement is 'null'.
    inputs_need_grad : bool
        Whether the data inputs get gradients.
    grad_req : str, list of str or dict of str to str
        'write', 'add' or 'null' for all parameters, one per argument, or
        by name (overriding the defaults).
    """
    if not for_training:
        grad_req = "null"
    if isinstance(grad_req, str):
        _check_req(grad_req, "grad_req")
        reqs = {}
        for k in arg_names:
            if k in param_names:
                reqs[k] = "null" if k in fixed_param_names else grad_req
            elif k in data_names:
                reqs[k] = grad_req if inputs_need_grad else "null"
            else:
                reqs[k] = "null"
        return reqs
    if isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(arg_names):
            raise ArgumentError(f"Module.bind: grad_req has {len(grad_req)} entries for the "
                                f"{len(arg_names)} arguments {arg_names}")
        for n, r in zip(arg_names, grad_req):
            _check_req(r, f"grad_req[{n!r}]")
        return dict(zip(arg_names, grad_req))
    if isinstance(grad_req, dict):
        unknown = [k for k in grad_req if k not in arg_names]
        if unknown:
            raise ArgumentError(f"Module.bind: grad_req names {unknown}, which are not "
                                f"arguments of the symbol ({arg_names})")
        reqs = grad_reqs(arg_names, param_names, data_names, fixed_param_names, True,
                         inputs_need_grad, "write")
        for k, r in grad_req.items():
            _check_req(r, f"grad_req[{k!r}]")
            reqs[k] = r
        return reqs
    raise ArgumentError(f"Module.bind: grad_req must be a str, a list or a dict, got "
                        f"{type(grad_req).__name__}")


def _check_req(r, what):
    if not isinstance(r, str) or r not in REQ_NAMES:
        raise ArgumentError(f"Module.bind: {what} is {r!r}; expected 'write', 'add', 'inplace' "
                            f"or 'null'")


def _shapes(descs):
    return [(d.name, tuple(d.shape)) for d in descs]


class ExecutorGroup:
    """One executor of ``symbol`` on ``device`` with its inputs described by
    ``data_shapes`` and ``label_shapes``.

    Parameters
    ----------
    symbol : Symbol
        The graph.
    device : Device
        Where it runs.
    data_shapes : list of DataDesc
        The data inputs, in the order of a batch's ``data``.
    label_shapes : list of DataDesc or None
        The labels, in the order of a batch's ``label``; those the symbol
        does not take are ignored.
    param_names : list of str
        The arguments that are parameters.
    reqs : dict of str to str
        Every argument's gradient requirement (``grad_reqs``).
    shared_group : ExecutorGroup or None
        A group whose parameter, gradient and auxiliary arrays this one
        uses (every parameter must be there, with the same shape).
    """

    def __init__(self, symbol, device, data_shapes, label_shapes, param_names, reqs,
                 shared_group=None):
        self.symbol = symbol
        self.device = device
        self.param_names = list(param_names)
        self.aux_names = symbol.list_auxiliary_states()
        self.grad_req = dict(reqs)
        self.executor = None
        self._bind(data_shapes, label_shapes, shared_group, "Module.bind")

    @property
    def execs(self):
        """The executors (one; MXNet's group has one per device)."""
        return [self.executor]

    # -- binding ----------------------------------------------------------
    def _bind(self, data_shapes, label_shapes, shared, where, old=None):
        args = self.symbol.list_arguments()
        labels = [d for d in (label_shapes or []) if d.name in args]
        inputs = list(data_shapes) + labels
        shapes = {d.name: tuple(d.shape) for d in inputs}
        types = {d.name: np.dtype(getattr(d, "dtype", np.float32)) for d in inputs}
        try:
            if shared is None:
                exe = simple_bind(self.symbol, self.device, grad_req=self.grad_req,
                                  type_dict=types, **shapes)
            else:
                exe = self._bind_shared(shapes, types, shared, where, old)
        except ShapeError as e:
            if old is None:
                raise ShapeError(f"{where}: cannot bind with data shapes {_shapes(data_shapes)} "
                                 f"and label shapes {_shapes(labels)}: {e}") from None
            raise ShapeError(f"{where}: the module was bound with data shapes {old} and cannot "
                             f"take data shapes {_shapes(data_shapes)}: {e}") from None
        self.executor = exe
        self.data_shapes = list(data_shapes)
        self.label_shapes = None if label_shapes is None else list(label_shapes)
        self.data_names = [d.name for d in data_shapes]
        self.label_names = [d.name for d in labels]
        arg = exe.arg_dict
        self.param_arrays = [arg[n] for n in self.param_names]
        grads = exe.grad_dict
        self.grad_arrays = [grads.get(n) for n in self.param_names]
        self.aux_arrays = list(exe.aux_arrays)
        self.input_grad_arrays = [grads[n] for n in self.data_names if n in grads]
        self.batch_size = data_shapes[0].shape[_batch_axis(data_shapes[0])] if data_shapes else 0

    def _bind_shared(self, shapes, types, shared, where, old):
        sym = self.symbol
        try:
            arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
            arg_types, _, aux_types = sym.infer_type(**types)
        except NbdlError as e:
            raise ShapeError(str(e)) from None
        if arg_shapes is None or arg_types is None:
            raise ShapeError(f"the shapes {shapes} do not determine every argument's shape")
        s_args = shared.executor.arg_dict
        s_grads = shared.executor.grad_dict
        s_aux = shared.executor.aux_dict
        args, grads, auxs = {}, {}, {}
        for name, shp, dt in zip(sym.list_arguments(), arg_shapes, arg_types):
            shp = tuple(shp)
            if name in self.param_names:
                if name not in s_args:
                    raise ModuleError(f"{where}: parameter {name!r} of this symbol is not a "
                                      f"parameter of the module it shares parameters with "
                                      f"(for a BucketingModule: of the default bucket's symbol)")
                arr = s_args[name]
                if tuple(arr.shape) != shp:
                    raise ShapeError(f"parameter {name!r} has shape {tuple(arr.shape)} but "
                                     f"these inputs need {shp}")
                args[name] = arr
                if self.grad_req[name] != "null":
                    g = s_grads.get(name)
                    grads[name] = g if g is not None else _zeros(shp, dt, self.device)
            else:
                args[name] = _zeros(shp, dt, self.device)
                if self.grad_req[name] != "null":
                    grads[name] = _zeros(shp, dt, self.device)
        for name, shp, dt in zip(self.aux_names, aux_shapes, aux_types):
            shp = tuple(shp)
            if name in s_aux:
                if tuple(s_aux[name].shape) != shp:
                    raise ShapeError(f"auxiliary state {name!r} has shape "
                                     f"{tuple(s_aux[name].shape)} but these inputs need {shp}")
                auxs[name] = s_aux[name]
            else:
                auxs[name] = _zeros(shp, dt, self.device)
        return bind(sym, self.device, args, args_grad=grads, aux_states=auxs,
                    grad_req=self.grad_req)

    def reshape(self, data_shapes, label_shapes, where="Module.reshape"):
        """Bind anew for new input shapes, keeping the parameter, gradient and
        auxiliary arrays (a no-op when the shapes are the bound ones).

        Parameters
        ----------
        data_shapes : list of DataDesc
            The new data shapes.
        label_shapes : list of DataDesc or None
            The new label shapes.
        where : str
            The calling function, for messages.
        """
        if _shapes(data_shapes) == _shapes(self.data_shapes) and \
                _shapes(label_shapes or []) == _shapes(self.label_shapes or []):
            return
        self._bind(data_shapes, label_shapes, self, where, old=_shapes(self.data_shapes))

    # -- parameters ---------------------------------------------------------
    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy parameter values into the bound arrays.

        Parameters
        ----------
        arg_params : dict of str to NDArray
            Argument values by name.
        aux_params : dict of str to NDArray
            Auxiliary state values by name.
        allow_extra : bool
            Whether names the executor does not have are ignored (else an error).
        """
        arg = {k: v for k, v in (arg_params or {}).items()}
        self.executor.copy_params_from(arg, aux_params or {}, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Copy the bound parameter values into ``arg_params`` / ``aux_params``
        (dicts of NDArrays of the same shapes).

        Parameters
        ----------
        arg_params : dict of str to NDArray
            Filled for every parameter name.
        aux_params : dict of str to NDArray
            Filled for every auxiliary state.
        """
        for name, arr in zip(self.param_names, self.param_arrays):
            arr.copyto(arg_params[name])
        for name, arr in zip(self.aux_names, self.aux_arrays):
            arr.copyto(aux_params[name])

    # -- running ------------------------------------------------------------
    def forward(self, data_batch, is_train):
        """Copy the batch's data (and labels, when it has them) into the bound
        inputs and run the forward pass.

        Parameters
        ----------
        data_batch : DataBatch
            Its ``data`` (and ``label``) follow ``data_shapes`` (``label_shapes``).
        is_train : bool
            Training or inference mode.
        """
        data = as_arrays(data_batch.data, "data")
        if len(data) != len(self.data_shapes):
            raise ArgumentError(f"Module.forward: the batch has {len(data)} data arrays, the "
                                f"module takes {len(self.data_shapes)} ({self.data_names})")
        feed = {d.name: a for d, a in zip(self.data_shapes, data)}
        label = getattr(data_batch, "label", None)
        if label and self.label_shapes:
            label = as_arrays(label, "label")
            for d, a in zip(self.label_shapes, label):
                if d.name in self.label_names:
                    feed[d.name] = a
        arg = self.executor.arg_dict
        for name, a in feed.items():
            if tuple(a.shape) != tuple(arg[name].shape):
                raise ShapeError(f"Module.forward: input {name!r} has shape {tuple(a.shape)}, "
                                 f"the module is bound with {tuple(arg[name].shape)}")
        self.executor.forward(is_train=is_train, **feed)

    def backward(self, out_grads=None):
        """Run the backward pass (``out_grads``: None for loss outputs, or one
        array per output).

        Parameters
        ----------
        out_grads : NDArray or list of NDArray, optional
            Head gradients.
        """
        if all(r == "null" for r in self.grad_req.values()):
            return      # nothing has a gradient (a graph without parameters)
        self.executor.backward(out_grads)

    def get_outputs(self):
        """The outputs of the last forward pass."""
        return list(self.executor.outputs)

    def get_output_shapes(self):
        """``(name, shape)`` of every output."""
        return [(n, tuple(o.shape)) for n, o in zip(self.symbol.list_outputs(),
                                                    self.executor.outputs)]

    def update_metric(self, eval_metric, labels):
        """Update ``eval_metric`` with ``labels`` and the last outputs (by name
        through ``update_dict`` when the metric has it).

        Parameters
        ----------
        eval_metric : EvalMetric
            The metric.
        labels : list of NDArray
            The batch's labels, in ``label_shapes`` order.
        """
        labels = as_arrays(labels, "label") if labels is not None else []
        names = [d.name for d in (self.label_shapes or [])]
        outputs = self.get_outputs()
        if hasattr(eval_metric, "update_dict"):
            if len(names) < len(labels):
                names = names + [f"label{i}" for i in range(len(names), len(labels))]
            eval_metric.update_dict(dict(zip(names, labels)),
                                    dict(zip(self.symbol.list_outputs(), outputs)))
        else:
            eval_metric.update(labels, outputs)


def as_arrays(arrays, what):
    """A batch's ``data`` or ``label`` as a list of NDArrays / numpy arrays.

    Parameters
    ----------
    arrays : NDArray, numpy array or list of them
        What the batch holds.
    what : str
        'data' or 'label', for messages.
    """
    if isinstance(arrays, (NDArray, np.ndarray)):
        arrays = [arrays]
    if not isinstance(arrays, (list, tuple)):
        raise ArgumentError(f"Module.forward: the batch's {what} must be a list of NDArrays, "
                            f"got {type(arrays).__name__}")
    for i, a in enumerate(arrays):
        if not isinstance(a, (NDArray, np.ndarray)):
            raise ArgumentError(f"Module.forward: the batch's {what}[{i}] is a "
                                f"{type(a).__name__}, expected an NDArray")
    return list(arrays)


def _batch_axis(desc):
    layout = getattr(desc, "layout", None)
    if isinstance(layout, str) and "N" in layout and len(layout) == len(desc.shape):
        return layout.find("N")
    return 0


def _zeros(shape, dtype, device):
    return NDArray(device.zeros(tuple(shape), np.dtype(dtype)), device)
