"""MXNet's calling convention of an eager op function (``nd.<op>``, the
fluent methods): array inputs by position (all of them for variadic ops such
as ``add_n`` and ``Concat``) or by input name (``data=``, ``weight=``,
``bias=``), attributes by keyword or, after the inputs, by position in the
op's attribute order (``nd.clip(x, 0, 1)``), and ``out=`` / ``name=``
(ignored, as in MXNet's imperative mode).  ``ctx=`` or ``device=`` chooses
the device of ops without inputs, whose results are of the class the
function was made for.
"""
import numpy as np

from ..errors import GraphError
from ..ops.registry import get_op
from .base import NDArrayBase
from .invoke import invoke

_made = {}      # (op name or alias, class) -> function


def make_function(op, fname, cls):
    """The eager function of ``op`` (named ``fname``) taking MXNet's
    arguments (see the module docstring); an op without array inputs
    returns ``cls`` instances.

    Parameters
    ----------
    op : OpDef
        The op.
    fname : str
        The function's name (the op's name or the alias it was asked by).
    cls : type
        The array class of the results of calls without array inputs.
    """
    def fn(*args, out=None, name=None, **kwargs):
        if not kwargs and args:
            for a in args:
                if not isinstance(a, NDArrayBase):
                    break
            else:       # arrays by position only: nothing to bind
                return invoke(op, args, None, out=out)
        inputs, attrs, device = bind_arguments(op, args, kwargs)
        return invoke(op, inputs, attrs, out=out, device=device, cls=cls)

    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = op.doc or f"The ``{op.name}`` operator, run eagerly on NDArrays."
    return fn


def function_for(name, cls):
    """``make_function`` for op ``name`` (a name or an alias), made once per
    name and class.

    Parameters
    ----------
    name : str
        The op's name or alias.
    cls : type
        As for ``make_function``.
    """
    fn = _made.get((name, cls))
    if fn is None:
        fn = _made[(name, cls)] = make_function(get_op(name), name, cls)
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
        if isinstance(v, NDArrayBase):
            nd_kwargs[k] = v
        elif v is not None or _none_is_value(op, k):
            attrs[k] = attr_value(v)
    n_lead = 0
    while n_lead < len(args) and isinstance(args[n_lead], NDArrayBase):
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
    if any(isinstance(v, NDArrayBase) for v in values):
        raise GraphError(f"{op.name}: NDArray inputs must come before attributes")
    for k, v in op.positional_attrs(op.name, values, kwargs).items():
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
