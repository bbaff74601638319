"""``nbdl.nd.<op>``: one eager function per op of the op table, made on
first use and cached.

The generated function takes MXNet's arguments: NDArray inputs by position
(all of them for variadic ops such as ``add_n`` and ``Concat``) or by input
name (``data=``, ``weight=``, ``bias=``), attributes by keyword or, after the
inputs, by position in the op's attribute order (``nd.clip(x, 0, 1)``), and
``out=`` / ``name=`` (ignored, as in MXNet's imperative mode).  ``ctx=`` or
``device=`` chooses the device of ops without inputs.
"""
import sys
import types

import numpy as np

from ..errors import GraphError, UnknownOpError
from ..ops.registry import get_op, list_ops
from .invoke import invoke
from .ndarray import NDArray

_functions = {}


def register_eager(name, fn):
    """Make ``fn`` the eager function of op ``name`` (``nbdl.nd.<name>`` and
    the fluent methods), for ops whose output shape depends on data values
    and for MXNet's Python functions that fluent methods name (``split_v2``).

    Parameters
    ----------
    name : str
        The op's name in the table (or the Python function's).
    fn : callable
        The function ``nbdl.nd.<name>`` returns.
    """
    def eager(*args, **kwargs):
        return fn(*args, **kwargs)
    eager.__name__ = eager.__qualname__ = name
    eager.__doc__ = fn.__doc__
    eager.__module__ = fn.__module__
    _functions[name] = eager


def function_for(name):
    """The eager function for op ``name`` (a name or an alias)."""
    fn = _functions.get(name)
    if fn is None:
        fn = make_function(get_op(name), name)
        _functions[name] = fn
    return fn


def lookup(name, include_hidden=False):
    """``function_for(name)`` or AttributeError, for module ``__getattr__``."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        op = get_op(name)
    except UnknownOpError:
        raise AttributeError(f"nbdl.ndarray has no attribute or operator {name!r}") from None
    if op.hidden and not include_hidden and not name.startswith("_"):
        raise AttributeError(f"operator {name!r} is internal")
    return function_for(name)


def make_function(op, fname=None):
    fname = fname or op.name

    def fn(*args, out=None, name=None, **kwargs):
        if not kwargs and args:
            for a in args:
                if not isinstance(a, NDArray):
                    break
            else:       # NDArrays by position only: nothing to bind
                return invoke(op, args, None, out=out)
        inputs, attrs, device = bind_arguments(op, args, kwargs)
        return invoke(op, inputs, attrs, out=out, device=device)

    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = op.doc or f"The ``{op.name}`` operator, run eagerly on NDArrays."
    return fn


def bind_arguments(op, args, kwargs):
    """Split a call's arguments into (inputs, raw attrs, device)."""
    device = None
    for k in ("ctx", "device"):
        if k in kwargs and (k not in op.attrs or not op.list_inputs({})):
            # an op without inputs (the samplers) declares MXNet's ``ctx``
            # attribute: it names the output's device
            v = kwargs.pop(k)
            if v is not None and v != "":
                device = v
    nd_kwargs = {}
    attrs = {}
    for k, v in kwargs.items():
        if isinstance(v, NDArray):
            nd_kwargs[k] = v
        elif v is not None or _none_is_value(op, k):
            attrs[k] = attr_value(v)
    n_lead = 0
    while n_lead < len(args) and isinstance(args[n_lead], NDArray):
        n_lead += 1
    pos_inputs, pos_attrs = list(args[:n_lead]), args[n_lead:]
    if pos_attrs:
        _positional_attrs(op, pos_attrs, attrs, kwargs)
    if op.key_var_num_args:
        if nd_kwargs:
            raise GraphError(f"{op.name}: takes its inputs by position, got "
                             f"{', '.join(sorted(nd_kwargs))} by keyword")
        return pos_inputs, attrs, device
    if not nd_kwargs:
        return pos_inputs, attrs, device
    parsed, _ = op.parse_attrs(attrs)
    names = op.list_inputs(parsed) + op.list_aux(parsed)
    unknown = sorted(set(nd_kwargs) - set(names))
    if unknown:
        raise GraphError(f"{op.name}: unknown input(s) {', '.join(map(repr, unknown))} "
                         f"(inputs: {', '.join(names) or 'none'})")
    if len(pos_inputs) > len(names):
        raise GraphError(f"{op.name}: takes {len(names)} inputs ({', '.join(names)}), "
                         f"got {len(pos_inputs)} by position")
    inputs = []
    for i, n in enumerate(names):
        if i < len(pos_inputs):
            if n in nd_kwargs:
                raise GraphError(f"{op.name}: input {n!r} given by position and by keyword")
            inputs.append(pos_inputs[i])
        elif n in nd_kwargs:
            inputs.append(nd_kwargs[n])
        else:
            raise GraphError(f"{op.name}: input {n!r} is missing (inputs: {', '.join(names)})")
    return inputs, attrs, device


def _positional_attrs(op, values, attrs, kwargs):
    if any(isinstance(v, NDArray) for v in values):
        raise GraphError(f"{op.name}: NDArray inputs must come before attributes")
    names = [k for k in op.attrs if k != op.key_var_num_args]
    if len(values) > len(names):
        raise GraphError(f"{op.name}: got {len(values)} positional attributes, the op has "
                         f"{len(names)} ({', '.join(names) or 'none'})")
    for k, v in zip(names, values):
        if k in kwargs:
            raise GraphError(f"{op.name}: attribute {k!r} given by position and by keyword")
        if v is not None:
            attrs[k] = attr_value(v)


def _none_is_value(op, key):
    """``axis=None`` means something (flatten) for an optional attribute whose
    default is not None (``topk``, ``sort``, ``pick``): MXNet passes it on."""
    a = op.attrs.get(key)
    return a is not None and a.optional and a.default is not None


def attr_value(v):
    """Python forms the attribute parser reads: dtypes by name, numpy
    scalars as Python scalars, lists as tuples."""
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, (np.generic, float, int, bool))):
        return np.dtype(v).name
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, list):
        return tuple(attr_value(x) for x in v)
    return v


def make_module(modname, include_hidden):
    """A module whose attributes are the ops (``nbdl.nd.op``, ``nbdl.nd._internal``)."""
    mod = types.ModuleType(modname, f"Operators of the op table as eager functions ({modname}).")

    def __getattr__(name):
        fn = lookup(name, include_hidden)
        setattr(mod, name, fn)
        return fn

    def __dir__():
        return list_ops(include_hidden=include_hidden)

    mod.__getattr__ = __getattr__
    mod.__dir__ = __dir__
    sys.modules[modname] = mod
    return mod


def prefixed_namespace(prefix, where):
    """``(__getattr__, __dir__)`` for a module whose attribute ``X`` is the
    eager function of op ``<prefix>X`` (``nbdl.nd.image.to_tensor`` runs
    ``_image_to_tensor``).

    Parameters
    ----------
    prefix : str
        The ops' name prefix (``"_image_"``).
    where : str
        The module's public name, for error messages.
    """
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            get_op(prefix + name)
        except UnknownOpError:
            raise AttributeError(f"{where} has no attribute or operator {name!r} "
                                 f"(no op {prefix + name!r})") from None
        return function_for(prefix + name)

    def __dir__():
        return sorted(n[len(prefix):] for n in list_ops() if n.startswith(prefix))
    return __getattr__, __dir__
