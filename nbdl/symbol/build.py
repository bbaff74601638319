"""Building graph nodes for ``nbdl.sym``: an op node from MXNet's arguments
(``op_node``, behind ``sym.<op>`` and Symbol's methods) and a variable
(``variable_entry``, behind ``sym.var``), with the current name and
attribute scopes applied.  Symbols are read through ``base.SymbolBase``;
wrapping the result in a Symbol is the caller's (``symbol.py``)."""
import numpy as np

from .. import attribute as _attribute
from .. import name as _names
from .._docs import shared_doc
from ..dtype import to_flag
from ..errors import AttrError, GraphError, NbdlError
from ..ops.attrs import attr_to_str, is_user_attr
from ..ops.ir import Entry, make_node, make_variable
from ..ops.registry import get_op
from .base import HIDDEN_KEYS, SymbolBase, single, user_attr_key


def _with_scope(attr):
    """``attr`` merged over the attributes of the current ``AttrScope``
    (``nbdl.attribute``); a non-dict is left for the callers' checks."""
    if attr is None or isinstance(attr, dict):
        return _attribute.current().get(attr) or None
    return attr


def _node_name(name, op_name):
    """The node's name from the current ``NameManager`` (``nbdl.name``):
    ``name`` itself, or an automatic one from the lower-cased op name; a
    ``Prefix`` scope prefixes both."""
    return _names.current().get(name, op_name.lower())


def _node_user_attrs(attr, where):
    """The ``attr=`` dict of an op: hidden keys -> ``__key__``; every key must
    then be a ``__key__`` (others would be op parameters)."""
    out = {}
    if attr is None:
        return out
    if not isinstance(attr, dict):
        raise AttrError(f"{where}: attr must be a dict, got {type(attr).__name__}")
    for k, v in attr.items():
        key = user_attr_key(str(k))
        if not is_user_attr(key):
            raise AttrError(f"{where}: attr key {k!r} is not supported; node attributes are "
                            f"written __key__ (or one of {', '.join(HIDDEN_KEYS)})")
        out[key] = attr_to_str(v)
    return out


# -- construction ----------------------------------------------------------------

def variable_entry(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None,
                   init=None, stype=None, **kwargs):
    """The output entry of a new variable node (``sym.var``: see there for
    the parameters); the attributes of the current ``AttrScope`` are added
    under ``attr``."""
    attr = _with_scope(attr)
    if not isinstance(name, str):
        raise GraphError(f"variable name must be a str, got {name!r}")
    if attr is not None and not isinstance(attr, dict):
        raise AttrError(f"variable {name!r}: attr must be a dict, got {type(attr).__name__}")
    ua = {user_attr_key(str(k)): attr_to_str(v) for k, v in (attr or {}).items()}
    if shape is not None:
        if isinstance(shape, (int, np.integer)):
            shape = (shape,)
        ua["__shape__"] = attr_to_str(tuple(int(d) if d is not None else None for d in shape))
    if lr_mult is not None:
        ua["__lr_mult__"] = attr_to_str(lr_mult)
    if wd_mult is not None:
        ua["__wd_mult__"] = attr_to_str(wd_mult)
    if dtype is not None:
        ua["__dtype__"] = str(to_flag(dtype))
    if init is not None:
        ua["__init__"] = init if isinstance(init, str) else getattr(init, "dumps", lambda: str(init))()
    if stype is not None:
        if stype != "default":
            raise GraphError(f"variable {name!r}: storage type {stype!r} is not supported (dense only)")
        ua["__storage_type__"] = "0"
    for k, v in kwargs.items():
        if not is_user_attr(k):
            raise AttrError(f"variable {name!r}: attribute {k!r} is not supported; extra "
                            f"attributes are written with double underscores (__{k}__)")
        ua[k] = attr_to_str(v)
    return make_variable(name, ua).output(0)


def _positional_attrs(op, where, values, attrs, kwargs):
    """Attributes given by position after the inputs, into ``attrs``."""
    if any(isinstance(v, SymbolBase) for v in values):
        raise GraphError(f"{where}: Symbol inputs must come before attributes")
    attrs.update(op.positional_attrs(where, values, kwargs))


def _inputs_with(op, where, values, attrs, kwargs):
    """How many inputs ``op`` takes when ``values`` are its first attributes
    (None when they cannot be: not attribute values, or refused)."""
    if any(isinstance(v, SymbolBase) or v is None for v in values):
        return None
    trial = dict(attrs)
    try:
        _positional_attrs(op, where, values, trial, kwargs)
        parsed, _ = op.parse_attrs(trial)
        return len(op.list_inputs(parsed))
    except NbdlError:
        return None


def _none_is_value(op, key):
    """``axis=None`` means something (flatten) for an optional attribute whose
    default is not None (``topk``, ``sort``, ``pick``): MXNet passes it on."""
    a = op.attrs.get(key)
    return a is not None and a.optional and a.default is not None


OP_NODE_ARGS = """
op_name : str
    The op's name or alias.
*args
    Inputs, then attributes in the op's order.
name : str, optional
    The node's name (else the current ``NameManager``'s).
attr : dict, optional
    Node attributes (``__key__`` or a hidden key).
**kwargs
    Inputs by name and attributes.
"""


@shared_doc(op_node_args=OP_NODE_ARGS)
def op_node(op_name, *args, name=None, attr=None, **kwargs):
    """The node of ``nbdl.sym.<op>(...)`` (``symbol.create`` wraps it):
    inputs (Symbols) by position or by input name; missing inputs become
    variables ``<name>_<input>`` (``fc1_weight``) that carry a copy of the
    node's attributes, as MXNet's do.  MXNet's hidden keys given as keywords
    (``lr_mult=0``, ``wd_mult``, ``ctx_group``, ...) are node attributes
    ``__lr_mult__`` ..., not operator parameters.

    Parameters
    ----------
    {op_node_args}
    """
    op = get_op(op_name)
    if name is not None and not isinstance(name, str):
        raise GraphError(f"{op.name}: name must be a str, got {name!r}")
    where = f"{op.name}" + (f" (node {name!r})" if name else "")
    user = _node_user_attrs(_with_scope(attr), where)
    sym_kwargs, attrs = {}, {}
    for k, v in kwargs.items():
        if isinstance(v, SymbolBase):
            sym_kwargs[k] = single(v, f"{where}: input {k!r}")
        elif is_user_attr(k):
            user[k] = attr_to_str(v)
        elif k in HIDDEN_KEYS and k not in op.attrs:
            # ``FullyConnected(..., lr_mult=0)``: MXNet stores ``__lr_mult__`` on
            # the node, and the variables created for it inherit it
            if v is not None:
                user[user_attr_key(k)] = attr_to_str(v)
        elif v is not None or _none_is_value(op, k):
            attrs[k] = v
    # trailing None inputs are left out, as MXNet's generated functions skip an
    # input given as None (``BilinearResize2D(data, None, mode='size')``)
    args = list(args)
    while args and args[-1] is None:
        args.pop()
    # once every input of an op with a fixed input list is given by position,
    # further values are attributes in the op's order, as in MXNet's generated
    # functions (``col2im(data, (4, 4), kernel=(2, 2))``)
    n_lead = 0
    while n_lead < len(args) and isinstance(args[n_lead], SymbolBase):
        n_lead += 1
    # (an op whose inputs depend on its attributes, ``depth_to_space(data, 2)``,
    # when the values given as attributes make exactly the inputs given)
    fixed = not callable(op.input_names) and not op.key_var_num_args
    rest = args[n_lead:]
    if rest and ((fixed and n_lead == len(op.input_names)) or (
            callable(op.input_names) and not op.key_var_num_args
            and _inputs_with(op, where, rest, attrs, kwargs) == n_lead)):
        _positional_attrs(op, where, rest, attrs, kwargs)
        args = args[:n_lead]
    inputs = [single(a, f"{where}: positional argument {i}") if isinstance(a, SymbolBase) else a
              for i, a in enumerate(args)]
    for i, a in enumerate(inputs):
        if not isinstance(a, Entry):
            raise GraphError(f"{where}: positional arguments must be Symbols, got "
                             f"{type(a).__name__} (argument {i}); pass attributes by keyword")
    if op.key_var_num_args:
        if sym_kwargs:
            raise GraphError(f"{where}: takes its inputs by position, got "
                             f"{', '.join(sym_kwargs)} by keyword")
        name = _node_name(name, op_name)
        return make_node(op, inputs, attrs, name=name, user_attrs=user)
    parsed, strings = op.parse_attrs(attrs, name)   # the attributes decide the input list
    names = op.list_inputs(parsed) + op.list_aux(parsed)
    if len(inputs) > len(names):
        raise GraphError(f"{where}: takes {len(names)} inputs ({', '.join(names)}), "
                         f"got {len(inputs)} positional")
    for k in sym_kwargs:
        if k not in names:
            raise GraphError(f"{where}: unknown input {k!r} (inputs: {', '.join(names)})")
        if names.index(k) < len(inputs):
            raise GraphError(f"{where}: input {k!r} given by position and by keyword")
    name = _node_name(name, op_name)
    var_attrs = dict(user)
    var_attrs.update(strings)
    for iname in names[len(inputs):]:
        e = sym_kwargs.get(iname)
        inputs.append(e if e is not None else make_variable(f"{name}_{iname}", var_attrs).output(0))
    _set_input_var_init(op, names, inputs)
    return make_node(op, inputs, attrs, name=name, user_attrs=user)


def _set_input_var_init(op, names, inputs):
    """Give the variables feeding ``op`` the op's default ``__init__`` where
    they have none (MXNet: a PReLU gamma starts at 0.25), as MXNet's compose
    does; a variable's own ``init=`` wins."""
    for iname, e in zip(names, inputs):
        init = op.input_var_init.get(iname)
        if init and e.node.op is None and "__init__" not in e.node.user_attrs:
            e.node.user_attrs["__init__"] = init
