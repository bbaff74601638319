"""Custom operators: ``CustomOp``, ``CustomOpProp``, ``register`` and the
eager ``nd.Custom`` (the package docstring has an example).

``Custom`` is an op of the table (``nbdl.ops.custom``): in a bound graph its
outputs, gradients and scratch are planned like any op's, and ``forward`` /
``backward`` run on NDArrays that view the planned buffers; one operator
instance per node and executor serves the node's forward and backward.
Eagerly (``nbdl.nd.Custom``) each call makes an operator and, under
``autograd.record()``, tapes its ``backward``.  The Python code runs with
recording paused and the training flag set to ``is_train``, as in MXNet.
Exceptions it raises become ``nbdl.errors.CustomOpError`` (an
``MXNetError``) naming the op type and the method.

Storage types other than ``'default'`` do not exist in nbdl
(``infer_storage_type`` is kept for subclasses that call it).
"""
import numpy as np

from .. import autograd
from ..device import Device, as_device, current_device
from ..dtype import as_dtype, to_flag
from ..errors import CustomOpError, GraphError, NbdlError, SparseStorageError
from ..imperative.arguments import attr_value
from ..imperative.tape import record_custom
from ..ndarray import NDArray
from ..ndarray import namespace as _namespace
from ..ndarray.creation import zeros
from ..ops.custom import PROP, register_custom
from ..ops.registry import get_op

__all__ = ["CustomOp", "CustomOpProp", "register", "Custom"]


class CustomOp:
    """Base class of a custom operator's computation: override ``forward``
    and ``backward`` (the defaults do nothing)."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute the outputs.

        Parameters
        ----------
        is_train : bool
            Whether the graph runs for training.
        req : list of str
            How to write each output: ``'null'``, ``'write'``, ``'inplace'``
            or ``'add'`` (``assign`` honours it).
        in_data, out_data, aux : list of NDArray
            The arguments, the outputs to write and the auxiliary states.
        """

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute the arguments' gradients.

        Parameters
        ----------
        req : list of str
            How to write each gradient (see ``forward``).
        out_grad, in_data, out_data : list of NDArray
            The outputs' gradients, the arguments and the outputs; an entry
            ``declare_backward_dependency`` did not ask for is None.
        in_grad : list of NDArray
            The gradients to write, one per argument.
        aux : list of NDArray
            The auxiliary states.
        """

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` as ``req`` says.

        Parameters
        ----------
        dst : NDArray
            The array written.
        req : str
            ``'null'`` (nothing), ``'write'`` / ``'inplace'`` (overwrite) or
            ``'add'`` (accumulate).
        src : NDArray, numpy array or scalar
            The value.
        """
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] += src
        else:
            raise CustomOpError(f"CustomOp.assign: unknown request {req!r} "
                                f"(expected 'null', 'write', 'inplace' or 'add')")


class CustomOpProp:
    """Base class of what a custom operator is: its inputs, outputs and aux
    states, shape and type rules, backward dependencies, and the
    ``CustomOp`` that computes it.  Keyword arguments of ``Custom`` (other
    than ``op_type``) reach the subclass's constructor as strings.

    Parameters
    ----------
    need_top_grad : bool
        Whether backward reads the outputs' gradients (the default
        ``declare_backward_dependency`` asks for them when True).
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """Shapes from the arguments' shapes.

        Parameters
        ----------
        in_shape : list of list of int
            The arguments' shapes, in ``list_arguments`` order.

        Returns
        -------
        (in_shape, out_shape) or (in_shape, out_shape, aux_shape)
            Lists of shapes; the default gives every output the first
            argument's shape and no aux states.
        """
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type):
        """Dtypes from the arguments' dtypes.

        Parameters
        ----------
        in_type : list of numpy type
            The arguments' dtypes (``numpy.float32``, ...).

        Returns
        -------
        (in_type, out_type) or (in_type, out_type, aux_type)
            The default gives every output and aux state the first
            argument's dtype.
        """
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        """Storage types (nbdl's arrays are dense: every one is ``'default'``).

        Parameters
        ----------
        in_stype : list of str
            The arguments' storage types.
        """
        for i, stype in enumerate(in_stype):
            if stype != "default":
                raise SparseStorageError(f"CustomOpProp.infer_storage_type: argument {i} has "
                                         f"storage type {stype!r}; nbdl's arrays are dense")
        return (list(in_stype), ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype,
                                    aux_stype):
        """Backward storage types (all ``'default'`` in nbdl).

        Parameters
        ----------
        ograd_stype, in_stype, out_stype, igrad_stype, aux_stype : list of str
            The storage types of the outputs' gradients, arguments, outputs,
            arguments' gradients and aux states.
        """
        lists = [ograd_stype, in_stype, out_stype, igrad_stype, aux_stype]
        for lst in lists:
            for stype in lst:
                if stype not in ("default", "undefined"):
                    raise SparseStorageError(f"CustomOpProp.infer_storage_type_backward: "
                                             f"storage type {stype!r}; nbdl's arrays are dense")
        return tuple(["default"] * len(lst) for lst in lists)

    def list_outputs(self):
        """The outputs' names (default ``['output']``)."""
        return ["output"]

    def list_arguments(self):
        """The arguments' names (default ``['data']``)."""
        return ["data"]

    def list_auxiliary_states(self):
        """The aux states' names (default none)."""
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Which arrays ``backward`` reads (the others may be freed earlier).

        Parameters
        ----------
        out_grad, in_data, out_data : list of int
            Ids of the outputs' gradients, the arguments and the outputs.

        Returns
        -------
        list of int
            The ids needed; the default: all of them, the outputs' gradients
            only when ``need_top_grad``.
        """
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The ``CustomOp`` that computes this operator.

        Parameters
        ----------
        ctx : Context
            The device it runs on.
        in_shapes : list of list of int
            The shapes of the arguments and aux states.
        in_dtypes : list of int
            Their dtypes as MXNet's type flags (0 float32, 1 float64, ...).
        """
        return CustomOp()


def _user(where, fn, *args, **kwargs):
    """Call user code; what it raises becomes an nbdl error naming ``where``."""
    try:
        return fn(*args, **kwargs)
    except CustomOpError:
        raise
    except NbdlError as e:
        raise CustomOpError(f"{where}: {type(e).__name__}: {e}") from e
    except Exception as e:
        raise CustomOpError(f"{where} raised {type(e).__name__}: {e}") from e


def _triple(where, ret, counts, what, convert):
    """A ``(in, out[, aux])`` answer checked against the op's counts."""
    if not isinstance(ret, (tuple, list)) or len(ret) not in (2, 3):
        raise CustomOpError(f"{where} must return 2 or 3 lists, got {ret!r}")
    ret = list(ret) + ([[]] if len(ret) == 2 else [])
    out = []
    for lst, n, part in zip(ret, counts, ("input", "output", "aux state")):
        lst = list(lst)
        if len(lst) != n:
            raise CustomOpError(f"{where}: expected {n} {part} {what}, got {len(lst)}")
        try:
            out.append([convert(v) for v in lst])
        except (TypeError, ValueError, NbdlError) as e:
            raise CustomOpError(f"{where}: bad {part} {what} in {lst!r}: {e}") from None
    return out


def _shape(v):
    return tuple(int(d) for d in v)


def _names(where, v):
    if isinstance(v, str) or not all(isinstance(n, str) for n in v):
        raise CustomOpError(f"{where} must return a list of names, got {v!r}")
    return list(v)


class _Prop:
    """The protocol of ``nbdl.ops.custom`` over a user's ``CustomOpProp``."""

    def __init__(self, op_type, prop_cls, kwargs):
        self.op_type = op_type
        where = f"custom operator {op_type!r}"
        self.prop = prop = _user(f"{where}: {prop_cls.__name__}({kwargs})", prop_cls, **kwargs)
        self.arguments = _names(f"{where}: list_arguments", _user(where, prop.list_arguments))
        self.outputs = _names(f"{where}: list_outputs", _user(where, prop.list_outputs))
        self.aux = _names(f"{where}: list_auxiliary_states",
                          _user(where, prop.list_auxiliary_states))
        n_in, n_out = len(self.arguments), len(self.outputs)
        ids = list(range(2 * n_out + n_in))
        deps = _user(f"{where}: declare_backward_dependency", prop.declare_backward_dependency,
                     ids[:n_out], ids[n_out:n_out + n_in], ids[n_out + n_in:])
        bad = [d for d in deps if not isinstance(d, (int, np.integer)) or not 0 <= d < len(ids)]
        if bad:
            raise CustomOpError(f"{where}: declare_backward_dependency returned ids {bad} "
                                f"outside 0..{len(ids) - 1}")
        self.backward_deps = [int(d) for d in deps]
        self._counts = (n_in, n_out, len(self.aux))

    def infer_shape(self, in_shapes):
        where = f"custom operator {self.op_type!r}: infer_shape"
        ret = _user(where, self.prop.infer_shape, [list(s) for s in in_shapes])
        return _triple(where, ret, self._counts, "shapes", _shape)

    def infer_type(self, in_dtypes):
        where = f"custom operator {self.op_type!r}: infer_type"
        ret = _user(where, self.prop.infer_type, [np.dtype(t).type for t in in_dtypes])
        return _triple(where, ret, self._counts, "types", as_dtype)

    def create_operator(self, device, in_shapes, in_dtypes):
        where = f"custom operator {self.op_type!r}: create_operator"
        op = _user(where, self.prop.create_operator, Device(device or current_device()),
                   [list(s) for s in in_shapes], [to_flag(d) for d in in_dtypes])
        if not callable(getattr(op, "forward", None)) or not callable(getattr(op, "backward", None)):
            raise CustomOpError(f"{where} returned {op!r}, not a CustomOp")
        return _Operator(self.op_type, op)


def _views(arrays, device):
    return [None if a is None else NDArray(a, device) for a in arrays]


class _Operator:
    """A user's ``CustomOp`` called with NDArrays over device arrays, with
    recording paused, the training flag and the default device set."""

    def __init__(self, op_type, op):
        self.op_type = op_type
        self.op = op

    def forward(self, is_train, reqs, in_data, out_data, aux, device):
        with autograd.pause(train_mode=is_train), Device(device):
            _user(f"custom operator {self.op_type!r}: forward", self.op.forward,
                  is_train=is_train, req=list(reqs), in_data=_views(in_data, device),
                  out_data=_views(out_data, device), aux=_views(aux, device))

    def backward(self, reqs, out_grad, in_data, out_data, in_grad, aux, device):
        with autograd.pause(train_mode=True), Device(device):
            _user(f"custom operator {self.op_type!r}: backward", self.op.backward,
                  req=list(reqs), out_grad=_views(out_grad, device),
                  in_data=_views(in_data, device), out_data=_views(out_data, device),
                  in_grad=_views(in_grad, device), aux=_views(aux, device))


def register(reg_name):
    """Register a ``CustomOpProp`` subclass as custom operator ``reg_name``
    (a decorator; a later registration of the name replaces the earlier).

    Parameters
    ----------
    reg_name : str
        The name ``Custom(op_type=...)`` uses.

    Returns
    -------
    callable
        ``do_register(prop_cls) -> prop_cls``.
    """
    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise CustomOpError(f"operator.register({reg_name!r}): expected a CustomOpProp "
                                f"subclass, got {prop_cls!r}")
        register_custom(reg_name, lambda kwargs: _Prop(reg_name, prop_cls, kwargs))
        return prop_cls
    return do_register


register("custom_op")(CustomOpProp)


def Custom(*data, op_type=None, name=None, out=None, ctx=None, **kwargs):
    """Run custom operator ``op_type`` eagerly (``nbdl.nd.Custom``).

    Parameters
    ----------
    *data : NDArray
        The arguments, then the aux states, by position (or by name as
        keyword arguments).
    op_type : str
        The name the operator was registered under.
    name : str, optional
        Ignored (MXNet's imperative calls take it too).
    out : NDArray or list of NDArray, optional
        Where to write the outputs.
    ctx : Context, optional
        The device of an operator without inputs (default: the current one).
    **kwargs
        Arguments or aux states by name (NDArrays), and the attributes
        passed to the property's constructor as strings.
    """
    op = get_op("Custom")
    arrays = {k: v for k, v in kwargs.items() if isinstance(v, NDArray)}
    raw = {k: attr_value(v) for k, v in kwargs.items()
           if k not in arrays and v is not None}
    if op_type is None:
        raise GraphError("Custom: the op_type argument is required")
    raw["op_type"] = op_type
    attrs, _ = op.parse_attrs(raw)
    prop = attrs[PROP]
    inputs = _bind_inputs(prop, data, arrays)
    n_in = len(prop.arguments)
    device = inputs[0].device if inputs else as_device(ctx)
    in_shapes, out_shapes = op.infer_shape(attrs, [a.shape for a in inputs],
                                           [None] * len(prop.outputs))
    in_types, out_types = op.infer_type(attrs, [np.dtype(a.dtype) for a in inputs],
                                        [None] * len(prop.outputs))
    outputs = _outputs(out, out_shapes, out_types, device)
    operator = prop.create_operator(device, [a.shape for a in inputs],
                                    [np.dtype(a.dtype) for a in inputs])
    is_train = autograd.is_training()
    operator.forward(is_train, ["write"] * len(outputs), [a._data for a in inputs[:n_in]],
                     [o._data for o in outputs], [a._data for a in inputs[n_in:]], device)
    if autograd.is_recording():
        _record(prop, operator, inputs, outputs, device)
    return outputs[0] if len(outputs) == 1 else outputs


def _bind_inputs(prop, data, arrays):
    names = prop.arguments + prop.aux
    if len(data) > len(names):
        raise GraphError(f"Custom ({prop.op_type!r}): takes {len(names)} inputs "
                         f"({', '.join(names) or 'none'}), got {len(data)} by position")
    inputs = list(data)
    for n in names[len(data):]:
        if n not in arrays:
            raise GraphError(f"Custom ({prop.op_type!r}): input {n!r} is missing "
                             f"(inputs: {', '.join(names)})")
        inputs.append(arrays.pop(n))
    if arrays:
        raise GraphError(f"Custom ({prop.op_type!r}): unknown input(s) {sorted(arrays)} "
                         f"(inputs: {', '.join(names) or 'none'})")
    for i, a in enumerate(inputs):
        if not isinstance(a, NDArray):
            raise GraphError(f"Custom ({prop.op_type!r}): input {names[i]!r} must be an "
                             f"NDArray, got {type(a).__name__}")
    return inputs


def _outputs(out, shapes, dtypes, device):
    if out is None:
        return [zeros(s, ctx=device, dtype=d) for s, d in zip(shapes, dtypes)]
    outs = [out] if isinstance(out, NDArray) else list(out)
    if len(outs) != len(shapes) or any(tuple(o.shape) != tuple(s) for o, s in zip(outs, shapes)):
        raise GraphError(f"Custom: out= must be {len(shapes)} NDArray(s) of shapes "
                         f"{[tuple(s) for s in shapes]}")
    return outs


def _record(prop, operator, inputs, outputs, device):
    """Tape the call: its backward is the operator's (the arguments get
    gradients; aux states none)."""
    n_in, n_out = len(prop.arguments), len(prop.outputs)
    deps = set(prop.backward_deps)
    args, aux = inputs[:n_in], inputs[n_in:]

    def backward_fn(out_grads):
        slots = [g._data for g in out_grads] + [a._data for a in args] + [o._data for o in outputs]
        slots = [s if i in deps else None for i, s in enumerate(slots)]
        grads = [zeros(a.shape, ctx=device, dtype=a.dtype) for a in args]
        operator.backward(["write"] * n_in, slots[:n_out], slots[n_out:n_out + n_in],
                          slots[n_out + n_in:], [g._data for g in grads],
                          [a._data for a in aux], device)
        return grads
    record_custom(args, outputs, backward_fn, name=prop.op_type)


_namespace.register_eager("Custom", Custom)
_namespace.register_eager("_npi_Custom", Custom)
