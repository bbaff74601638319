"""``ExecutorGroup``: the executors a ``Module`` runs, one per context, and
how batches go in and outputs come out (MXNet 1.x's
``DataParallelExecutorGroup``).

Each batch is split along its batch axis (the ``N`` of a descriptor's
layout; axis 0 by default) between the contexts in proportion to
``work_load_list``; every executor has its own copy of the parameters and
its own gradients, which ``Module.update`` sums through a KVStore.  Outputs
are concatenated back on the first context along their batch axis (an
output's ``__layout__`` attribute; axis 0 without one), input gradients
along their data's.  Rebinding for new input shapes (``reshape``) and binding another
bucket's symbol (``shared_group``) bind new executors that use the same
parameter, gradient and auxiliary arrays."""
import numpy as np

from .. import ndarray as nd
from ..errors import ArgumentError, NbdlError, ShapeError
from ..executor import bind, simple_bind
from ..io import DataDesc
from ..ndarray import NDArray
from ..ops.registry import REQ_NAMES
from ._common import ModuleError

__all__ = ["ExecutorGroup", "grad_reqs", "split_slices"]


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
        # names that are not arguments are ignored, as MXNet's simple_bind
        # does (its RNN tests pass {'data': ..., 'parameters': ...})
        reqs = grad_reqs(arg_names, param_names, data_names, fixed_param_names, True,
                         inputs_need_grad, "write")
        for k, r in grad_req.items():
            _check_req(r, f"grad_req[{k!r}]")
            if k in reqs:
                reqs[k] = r
        return reqs
    raise ArgumentError(f"Module.bind: grad_req must be a str, a list or a dict, got "
                        f"{type(grad_req).__name__}")


def _check_req(r, what):
    if not isinstance(r, str) or r not in REQ_NAMES:
        raise ArgumentError(f"Module.bind: {what} is {r!r}; expected 'write', 'add', 'inplace' "
                            f"or 'null'")


def split_slices(batch_size, work_load_list, where="Module.bind"):
    """The batch rows each context gets: ``work_load_list``'s shares of
    ``batch_size`` rounded, the rest to the last context (MXNet's split).

    Parameters
    ----------
    batch_size : int
        The rows of a batch.
    work_load_list : list of number
        One share per context.
    where : str
        The calling function, for messages.
    """
    total = sum(work_load_list)
    counts = [round(w * batch_size / total) for w in work_load_list]
    if sum(counts) < batch_size:
        counts[-1] += batch_size - sum(counts)
    slices, end = [], 0
    for n in counts:
        begin = int(min(end, batch_size))
        end = int(min(begin + n, batch_size))
        if begin >= end:
            raise ShapeError(f"{where}: a batch of {batch_size} rows cannot be split between "
                             f"{len(work_load_list)} contexts with work loads "
                             f"{list(work_load_list)}: some would get no rows")
        slices.append(slice(begin, end))
    return slices


def _shapes(descs):
    return [(d.name, tuple(d.shape)) for d in descs]


def _axis(desc):
    axis = DataDesc.get_batch_axis(getattr(desc, "layout", None))
    return axis if axis < len(desc.shape) else 0


def _take(a, axis, s):
    """Rows ``s`` of ``a`` along ``axis`` (the whole array for axis -1)."""
    if axis < 0:
        return a
    if isinstance(a, np.ndarray):
        return a[(slice(None),) * axis + (s,)]
    if axis == 0:
        return a[s.start:s.stop]
    return nd.slice_axis(a, axis=axis, begin=s.start, end=s.stop)


def _merge(parts, axis=0):
    if len(parts) == 1 or axis < 0:
        return parts[0]
    dev = parts[0].device
    return nd.concat(*[p.as_in_context(dev) for p in parts], dim=axis)


class ExecutorGroup:
    """One executor of ``symbol`` per device, over the rows of each batch
    ``split_slices`` gives it.

    Parameters
    ----------
    symbol : Symbol
        The graph.
    devices : list of Device
        Where the executors run.
    work_load_list : list of number
        Each device's share of a batch.
    data_shapes : list of DataDesc
        The (whole-batch) data inputs, in the order of a batch's ``data``.
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

    def __init__(self, symbol, devices, work_load_list, data_shapes, label_shapes, param_names,
                 reqs, shared_group=None):
        self.symbol = symbol
        self.devices = list(devices)
        self.work_load_list = list(work_load_list)
        self.param_names = list(param_names)
        self.aux_names = symbol.list_auxiliary_states()
        self.output_names = symbol.list_outputs()
        # the batch axis of each output (its ``__layout__`` attribute, axis 0
        # without one; -1: no batch axis, every context's output is the same)
        self.output_layouts = [DataDesc.get_batch_axis(symbol[i].attr("__layout__"))
                               for i in range(len(self.output_names))]
        self.grad_req = dict(reqs)
        self.execs = []
        if shared_group is not None and len(shared_group.execs) != len(self.devices):
            raise ModuleError(f"Module.bind: the shared module runs on "
                              f"{len(shared_group.execs)} contexts, this one on "
                              f"{len(self.devices)}")
        self._bind(data_shapes, label_shapes, shared_group, "Module.bind")

    @property
    def executor(self):
        """The first context's executor (the only one with one context)."""
        return self.execs[0]

    # -- binding ----------------------------------------------------------
    def _bind(self, data_shapes, label_shapes, shared, where, old=None):
        args = self.symbol.list_arguments()
        labels = [d for d in (label_shapes or []) if d.name in args]
        inputs = list(data_shapes) + labels
        batch_size = data_shapes[0].shape[_axis(data_shapes[0])] if data_shapes else 0
        if len(self.devices) > 1:
            slices = split_slices(batch_size, self.work_load_list, where)
        else:
            slices = [slice(0, batch_size)]
        types = {d.name: np.dtype(getattr(d, "dtype", np.float32)) for d in inputs}
        execs = []
        try:
            for i, (dev, s) in enumerate(zip(self.devices, slices)):
                shapes = {}
                for d in inputs:
                    shp, axis = list(d.shape), _axis(d)
                    if axis >= 0 and len(self.devices) > 1:
                        shp[axis] = s.stop - s.start
                    shapes[d.name] = tuple(shp)
                if shared is None:
                    execs.append(simple_bind(self.symbol, dev, grad_req=self.grad_req,
                                             type_dict=types, **shapes))
                else:
                    execs.append(self._bind_shared(dev, shapes, types, shared.execs[i], where))
        except ShapeError as e:
            if old is None:
                raise ShapeError(f"{where}: cannot bind with data shapes {_shapes(data_shapes)} "
                                 f"and label shapes {_shapes(labels)}: {e}") from None
            raise ShapeError(f"{where}: the module was bound with data shapes {old} and cannot "
                             f"take data shapes {_shapes(data_shapes)}: {e}") from None
        self.execs = execs
        self.slices = slices
        self.batch_size = batch_size
        self.data_shapes = list(data_shapes)
        self.label_shapes = None if label_shapes is None else list(label_shapes)
        self.data_names = [d.name for d in data_shapes]
        self.label_names = [d.name for d in labels]
        self.param_arrays = [[e.arg_dict[n] for e in execs] for n in self.param_names]
        self.grad_arrays = [[e.grad_dict.get(n) for e in execs] for n in self.param_names]
        self.aux_arrays = [[e.aux_dict[n] for e in execs] for n in self.aux_names]
        # one entry per data input that is an argument, None where its
        # grad_req is 'null' (MXNet's: get_input_grads() gives [None] then)
        args = set(self.symbol.list_arguments())
        with_grad = [d for d in data_shapes if d.name in args]
        self.input_grad_arrays = [[e.grad_dict.get(d.name) for e in execs] for d in with_grad]
        self._input_grad_axes = [_axis(d) for d in with_grad]

    def _bind_shared(self, dev, shapes, types, shared_exec, where):
        sym = self.symbol
        try:
            arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
            arg_types, _, aux_types = sym.infer_type(**types)
        except NbdlError as e:
            raise ShapeError(str(e)) from None
        if arg_shapes is None or arg_types is None:
            raise ShapeError(f"the shapes {shapes} do not determine every argument's shape")
        s_args, s_grads, s_aux = shared_exec.arg_dict, shared_exec.grad_dict, shared_exec.aux_dict
        args, grads, auxs = {}, {}, {}
        for name, shp, dt in zip(sym.list_arguments(), arg_shapes, arg_types):
            shp = tuple(shp)
            if name in self.param_names:
                if name not in s_args:
                    raise ModuleError(f"{where}: parameter {name!r} of this symbol is not a "
                                      f"parameter of the module it shares parameters with "
                                      f"(for a BucketingModule: of the default bucket's symbol)")
                if tuple(s_args[name].shape) != shp:
                    raise ShapeError(f"parameter {name!r} has shape {tuple(s_args[name].shape)} "
                                     f"but these inputs need {shp}")
                args[name] = s_args[name]
                if self.grad_req[name] != "null":
                    g = s_grads.get(name)
                    grads[name] = g if g is not None else _zeros(shp, dt, dev)
            else:
                args[name] = _zeros(shp, dt, dev)
                if self.grad_req[name] != "null":
                    grads[name] = _zeros(shp, dt, dev)
        for name, shp, dt in zip(self.aux_names, aux_shapes, aux_types):
            shp = tuple(shp)
            if name in s_aux:
                if tuple(s_aux[name].shape) != shp:
                    raise ShapeError(f"auxiliary state {name!r} has shape "
                                     f"{tuple(s_aux[name].shape)} but these inputs need {shp}")
                auxs[name] = s_aux[name]
            else:
                auxs[name] = _zeros(shp, dt, dev)
        return bind(sym, dev, args, args_grad=grads, aux_states=auxs, grad_req=self.grad_req)

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
        """Copy parameter values into every executor.

        Parameters
        ----------
        arg_params : dict of str to NDArray
            Argument values by name.
        aux_params : dict of str to NDArray
            Auxiliary state values by name.
        allow_extra : bool
            Whether names the executors do not have are ignored (else an error).
        """
        for e in self.execs:
            e.copy_params_from(dict(arg_params or {}), dict(aux_params or {}),
                               allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Copy the bound values (averaged over the contexts, as MXNet does)
        into ``arg_params`` / ``aux_params``.

        Parameters
        ----------
        arg_params : dict of str to NDArray
            Filled for every parameter name.
        aux_params : dict of str to NDArray
            Filled for every auxiliary state.
        """
        for names, arrays, out in ((self.param_names, self.param_arrays, arg_params),
                                   (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, arrays):
                if len(block) == 1:
                    block[0].copyto(out[name])
                else:
                    out[name][...] = sum(b.asnumpy() for b in block) / len(block)

    # -- running ------------------------------------------------------------
    def forward(self, data_batch, is_train):
        """Split the batch's data (and labels, when it has them) between the
        executors and run their forward passes.

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
        feed = [(d, a) for d, a in zip(self.data_shapes, data)]
        label = getattr(data_batch, "label", None)
        if label and self.label_shapes:
            feed += [(d, a) for d, a in zip(self.label_shapes, as_arrays(label, "label"))
                     if d.name in self.label_names]
        for d, a in feed:
            if tuple(a.shape) != tuple(d.shape):
                raise ShapeError(f"Module.forward: input {d.name!r} has shape {tuple(a.shape)}, "
                                 f"the module is bound with {tuple(d.shape)}")
        multi = len(self.execs) > 1
        for e, s in zip(self.execs, self.slices):
            e.forward(is_train=is_train,
                      **{d.name: _take(a, _axis(d), s) if multi else a for d, a in feed})

    def backward(self, out_grads=None):
        """Run the backward passes (``out_grads``: None for loss outputs, or
        one whole-batch array per output, split like the data).

        Parameters
        ----------
        out_grads : NDArray or list of NDArray, optional
            Head gradients.
        """
        if all(r == "null" for r in self.grad_req.values()):
            return      # nothing has a gradient (a graph without parameters)
        if out_grads is not None and len(self.execs) > 1:
            grads = out_grads if isinstance(out_grads, (list, tuple)) else [out_grads]
            for e, s in zip(self.execs, self.slices):
                e.backward([_take(g, axis, s).as_in_context(e.device)
                            for g, axis in zip(grads, self.output_layouts)])
            return
        for e in self.execs:
            e.backward(out_grads)

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward pass: one array per output
        (concatenated over the contexts), or a list per output of each
        context's part.

        Parameters
        ----------
        merge_multi_context : bool
            Whether to concatenate.
        """
        parts = [[e.outputs[i] for e in self.execs] for i in range(len(self.output_names))]
        if not merge_multi_context:
            return parts
        return [_merge(p, axis) for p, axis in zip(parts, self.output_layouts)]

    def get_input_grads(self, merge_multi_context=True):
        """The data inputs' gradients, merged as ``get_outputs``'s.

        Parameters
        ----------
        merge_multi_context : bool
            Whether to concatenate.
        """
        parts = self.input_grad_arrays
        if not merge_multi_context:
            return [list(p) for p in parts]
        return [None if p[0] is None else _merge(p, axis)
                for p, axis in zip(parts, self._input_grad_axes)]

    def get_output_shapes(self):
        """``(name, shape)`` of every output for the whole batch."""
        shapes = []
        for i, (n, axis) in enumerate(zip(self.output_names, self.output_layouts)):
            shp = list(self.execs[0].outputs[i].shape)
            if len(self.execs) > 1 and 0 <= axis < len(shp):
                shp[axis] = sum(e.outputs[i].shape[axis] for e in self.execs)
            shapes.append((n, tuple(shp)))
        return shapes

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with each context's outputs and labels (by
        name through ``update_dict`` when the metric has it).

        Parameters
        ----------
        eval_metric : EvalMetric
            The metric.
        labels : list of NDArray
            The batch's labels in ``label_shapes`` order (with ``pre_sliced``:
            one such list per context).
        pre_sliced : bool
            Whether the labels are already split per context.
        """
        descs = self.label_shapes or []
        names = [d.name for d in descs]
        for k, (e, s) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                mine = as_arrays(labels[k], "label")
            elif labels is None:
                mine = []
            else:
                whole = as_arrays(labels, "label")
                multi = len(self.execs) > 1
                extra = [None] * (len(whole) - len(descs))   # labels the symbol does not take
                mine = [_take(a, 0 if d is None else _axis(d), s) if multi else a
                        for d, a in zip(descs + extra, whole)]
            outputs = list(e.outputs)
            if hasattr(eval_metric, "update_dict"):
                keys = names + [f"label{i}" for i in range(len(names), len(mine))]
                eval_metric.update_dict(dict(zip(keys, mine)),
                                        dict(zip(self.output_names, outputs)))
            else:
                eval_metric.update(mine, outputs)

    def install_monitor(self, mon):
        """``mon.install(executor)`` for every executor.

        Parameters
        ----------
        mon : Monitor
            An object with ``install(executor)``.
        """
        for e in self.execs:
            mon.install(e)


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


def _zeros(shape, dtype, device):
    return NDArray(device.zeros(tuple(shape), np.dtype(dtype)), device)
