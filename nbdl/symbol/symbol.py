"""Symbol: a handle on one or more graph outputs, MXNet 1.x's API."""
import copy as _copy

import numpy as np

from ..errors import GraphError, ShapeError
from ..graph.infer import infer_shapes, infer_types
from ..graph.ir import Entry, classify_variables, make_node, make_variable, topo_order
from ..ops.attrs import attr_to_str


class Symbol:
    __slots__ = ("_outputs", "__weakref__")

    def __init__(self, outputs):
        self._outputs = list(outputs)

    # -- identity ---------------------------------------------------------
    @property
    def name(self):
        if len(self._outputs) != 1:
            return None
        return self._outputs[0].node.name

    def __repr__(self):
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        return "<Symbol group [" + ", ".join(e.node.name for e in self._outputs) + "]>"

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([e]) for e in self._outputs)

    def __getitem__(self, index):
        if isinstance(index, str):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise GraphError(f"no output named {index!r} (outputs: {', '.join(names)})")
            if len(matches) > 1:
                raise GraphError(f"more than one output named {index!r}")
            index = matches[0]
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"output index {index} out of range for {len(self._outputs)} outputs")
        return Symbol([self._outputs[index]])

    def __copy__(self):
        return Symbol(list(self._outputs))

    def __deepcopy__(self, memo):
        from .json_io import load_json
        return load_json(self.tojson())

    def copy(self):
        return _copy.deepcopy(self)

    # -- graph queries ----------------------------------------------------
    def _order(self):
        return topo_order(self._outputs)

    def _variables(self):
        return classify_variables(self._order())

    def list_arguments(self):
        return [n.name for n in self._variables()[0]]

    def list_auxiliary_states(self):
        return [n.name for n in self._variables()[1]]

    def list_inputs(self):
        return [n.name for n in self._order() if n.op is None]

    def list_outputs(self):
        return [e.name for e in self._outputs]

    def get_internals(self):
        outs = []
        for node in self._order():
            for i in range(node.num_visible_outputs if node.op is not None else 1):
                outs.append(node.output(i))
        return Symbol(outs)

    def get_children(self):
        inputs = []
        for e in self._outputs:
            inputs.extend(e.node.inputs)
        return Symbol(inputs) if inputs else None

    # -- attributes -------------------------------------------------------
    def attr(self, key):
        if len(self._outputs) != 1:
            return None
        node = self._outputs[0].node
        if key in node.attr_str:
            return node.attr_str[key]
        v = node.user_attrs.get(key)
        if v is None:
            v = node.user_attrs.get(f"__{key}__")
        return v

    def list_attr(self, recursive=False):
        if recursive:
            return {f"{k}": v for k, v in self.attr_dict().items()}
        node = self._outputs[0].node
        d = {k: v for k, v in node.user_attrs.items()}
        d.update(node.attr_str)
        return d

    def attr_dict(self):
        out = {}
        for node in self._order():
            d = dict(node.user_attrs)
            d.update(node.attr_str)
            if d:
                out[node.name] = d
        return out

    def _set_attr(self, **kwargs):
        for e in self._outputs:
            for k, v in kwargs.items():
                e.node.user_attrs[k] = attr_to_str(v)

    # -- inference --------------------------------------------------------
    def _known(self, args, kwargs, what):
        order = self._order()
        arg_nodes, aux_nodes = classify_variables(order)
        names = [n.name for n in arg_nodes]
        known = {}
        if args:
            if len(args) > len(arg_nodes):
                raise ShapeError(f"infer_{what}: got {len(args)} positional {what}s for "
                                 f"{len(arg_nodes)} arguments {names}")
            for node, v in zip(arg_nodes, args):
                if v is not None and (what != "shape" or len(v) > 0):
                    known[node.output(0)] = v
        by_name = {n.name: n for n in arg_nodes + aux_nodes}
        for k, v in kwargs.items():
            if k not in by_name:
                raise ShapeError(f"infer_{what}: {k!r} is not an argument of the symbol "
                                 f"(arguments: {', '.join(names)})")
            if v is not None:
                known[by_name[k].output(0)] = v
        return order, arg_nodes, aux_nodes, known

    def infer_shape_partial(self, *args, **kwargs):
        order, arg_nodes, aux_nodes, known = self._known(args, kwargs, "shape")
        table = infer_shapes(order, {e: tuple(s) for e, s in known.items()})
        get = lambda e: table.get(e) if table.get(e) is not None else ()  # noqa: E731
        return ([get(n.output(0)) for n in arg_nodes], [get(e) for e in self._outputs],
                [get(n.output(0)) for n in aux_nodes])

    def infer_shape(self, *args, **kwargs):
        """(arg_shapes, out_shapes, aux_shapes), or (None, None, None) when
        the given shapes are not enough (as MXNet)."""
        order, arg_nodes, aux_nodes, known = self._known(args, kwargs, "shape")
        table = infer_shapes(order, {e: tuple(s) for e, s in known.items()})
        ents = [n.output(0) for n in arg_nodes + aux_nodes] + self._outputs
        if any(table.get(e) is None for e in ents):
            return None, None, None
        return ([table[n.output(0)] for n in arg_nodes], [table[e] for e in self._outputs],
                [table[n.output(0)] for n in aux_nodes])

    def infer_type(self, *args, **kwargs):
        order, arg_nodes, aux_nodes, known = self._known(args, kwargs, "type")
        from ..dtype import as_dtype
        table = infer_types(order, {e: as_dtype(t) for e, t in known.items()})
        ents = [n.output(0) for n in arg_nodes + aux_nodes] + self._outputs
        if any(table.get(e) is None for e in ents):
            return None, None, None
        f = lambda e: table[e].type  # noqa: E731  (MXNet returns numpy types)
        return ([f(n.output(0)) for n in arg_nodes], [f(e) for e in self._outputs],
                [f(n.output(0)) for n in aux_nodes])

    # -- serialisation (nbdl.symbol.json_io) ------------------------------
    def tojson(self, remove_amp_cast=True):
        from .json_io import to_json
        return to_json(self)

    def save(self, fname, remove_amp_cast=True):
        from .json_io import save
        save(self, fname)

    # -- execution (nbdl.executor) ----------------------------------------
    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        from ..executor import bind
        return bind(self, ctx, args, args_grad=args_grad, grad_req=grad_req, aux_states=aux_states)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        from ..executor import simple_bind
        return simple_bind(self, ctx, grad_req=grad_req, type_dict=type_dict, **kwargs)

    def eval(self, ctx=None, **kwargs):
        from ..executor import bind
        ex = bind(self, ctx, kwargs, grad_req="null")
        return ex.forward()

    def debug_str(self):
        from ..executor.debug import symbol_debug_str
        return symbol_debug_str(self)

    # -- arithmetic -------------------------------------------------------
    def _binary(self, other, sym_op, scalar_op, reverse_scalar_op=None, reverse=False):
        if isinstance(other, Symbol):
            a, b = (other, self) if reverse else (self, other)
            return _apply(sym_op, [a, b])
        if isinstance(other, (int, float, np.number, bool)):
            op = reverse_scalar_op if reverse else scalar_op
            return _apply(op, [self], {"scalar": other})
        return NotImplemented

    def __add__(self, o): return self._binary(o, "elemwise_add", "_plus_scalar", "_plus_scalar")
    def __radd__(self, o): return self._binary(o, "elemwise_add", "_plus_scalar", "_plus_scalar", True)
    def __sub__(self, o): return self._binary(o, "elemwise_sub", "_minus_scalar", "_rminus_scalar")
    def __rsub__(self, o): return self._binary(o, "elemwise_sub", "_minus_scalar", "_rminus_scalar", True)
    def __mul__(self, o): return self._binary(o, "elemwise_mul", "_mul_scalar", "_mul_scalar")
    def __rmul__(self, o): return self._binary(o, "elemwise_mul", "_mul_scalar", "_mul_scalar", True)
    def __truediv__(self, o): return self._binary(o, "elemwise_div", "_div_scalar", "_rdiv_scalar")
    def __rtruediv__(self, o): return self._binary(o, "elemwise_div", "_div_scalar", "_rdiv_scalar", True)
    def __pow__(self, o): return self._binary(o, "broadcast_power", "_power_scalar", "_rpower_scalar")
    def __rpow__(self, o): return self._binary(o, "broadcast_power", "_power_scalar", "_rpower_scalar", True)
    def __neg__(self): return _apply("negative", [self])
    def __abs__(self): return _apply("abs", [self])
    def __eq__(self, o): return self._binary(o, "broadcast_equal", "_equal_scalar", "_equal_scalar")
    def __ne__(self, o): return self._binary(o, "broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar")
    def __gt__(self, o): return self._binary(o, "broadcast_greater", "_greater_scalar", "_lesser_scalar")
    def __ge__(self, o): return self._binary(o, "broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar")
    def __lt__(self, o): return self._binary(o, "broadcast_lesser", "_lesser_scalar", "_greater_scalar")
    def __le__(self, o): return self._binary(o, "broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar")
    __hash__ = object.__hash__

    def __bool__(self):
        raise GraphError("a Symbol has no truth value; compare values after binding")

    # fluent methods
    def reshape(self, *shape, **kwargs):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        if shape:
            kwargs["shape"] = tuple(shape)
        return _apply("Reshape", [self], kwargs)

    def flatten(self, **kw): return _apply("Flatten", [self], kw)
    def transpose(self, axes=None, **kw): return _apply("transpose", [self], dict(kw, **({"axes": axes} if axes is not None else {})))
    def sum(self, **kw): return _apply("sum", [self], kw)
    def mean(self, **kw): return _apply("mean", [self], kw)
    def max(self, **kw): return _apply("max", [self], kw)
    def min(self, **kw): return _apply("min", [self], kw)
    def exp(self, **kw): return _apply("exp", [self], kw)
    def log(self, **kw): return _apply("log", [self], kw)

    @property
    def T(self):
        return _apply("transpose", [self])


def _apply(op_name, inputs, attrs=None, name=None):
    node = make_node(op_name, [s._outputs[0] for s in inputs], attrs, name=name)
    return _symbol_of(node)


def _symbol_of(node):
    return Symbol([node.output(i) for i in range(node.num_visible_outputs)])


def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None,
        init=None, stype=None, **kwargs):
    """A variable (an argument of the graph)."""
    if not isinstance(name, str):
        raise GraphError(f"variable name must be a str, got {name!r}")
    ua = {}
    for k, v in (attr or {}).items():
        ua[k] = attr_to_str(v)
    if shape is not None:
        ua["__shape__"] = attr_to_str(tuple(shape))
    if lr_mult is not None:
        ua["__lr_mult__"] = attr_to_str(lr_mult)
    if wd_mult is not None:
        ua["__wd_mult__"] = attr_to_str(wd_mult)
    if dtype is not None:
        from ..dtype import to_flag
        ua["__dtype__"] = str(to_flag(dtype))
    if init is not None:
        ua["__init__"] = init if isinstance(init, str) else getattr(init, "dumps", lambda: str(init))()
    if stype is not None and stype != "default":
        raise GraphError(f"variable {name!r}: storage type {stype!r} is not supported (dense only)")
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            ua[k] = attr_to_str(v)
        else:
            raise GraphError(f"variable {name!r}: unknown keyword {k!r}")
    return Symbol([make_variable(name, ua).output(0)])


Variable = var


def Group(symbols):
    outs = []
    for s in symbols:
        if not isinstance(s, Symbol):
            raise GraphError(f"Group expects Symbols, got {type(s).__name__}")
        outs.extend(s._outputs)
    return Symbol(outs)


def create(op_name, *args, name=None, attr=None, **kwargs):
    """``nbdl.sym.<op>(...)``: inputs by position or by input name, missing
    inputs become variables named ``<name>_<input>`` (``fc1_weight``)."""
    from ..graph.ir import auto_name
    from ..ops.registry import get_op
    op = get_op(op_name)
    sym_kwargs = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
    attrs = {k: v for k, v in kwargs.items() if not isinstance(v, Symbol) and v is not None}
    for a in args:
        if not isinstance(a, Symbol):
            raise GraphError(f"{op.name}: positional arguments must be Symbols, got "
                             f"{type(a).__name__}; pass attributes by keyword")
    if op.key_var_num_args:
        if sym_kwargs:
            raise GraphError(f"{op.name}: takes its inputs by position")
        inputs = [s._outputs[0] for s in args]
        attrs.setdefault(op.key_var_num_args, len(inputs))
        if name is None:
            name = auto_name(op.name)
        node = make_node(op, inputs, attrs, name=name, user_attrs=attr)
        return _symbol_of(node)
    # parse attrs first (they decide the input list)
    parsed, _ = op.parse_attrs(attrs, name)
    in_names = op.list_inputs(parsed)
    aux_names = op.list_aux(parsed)
    if len(args) > len(in_names):
        raise GraphError(f"{op.name}: takes {len(in_names)} inputs ({', '.join(in_names)}), "
                         f"got {len(args)} positional")
    for k in sym_kwargs:
        if k not in in_names and k not in aux_names:
            raise GraphError(f"{op.name}: unknown input {k!r} (inputs: {', '.join(in_names + aux_names)})")
    if name is None:
        name = auto_name(op.name.lstrip("_") or op.name)
    inputs = []
    for i, iname in enumerate(in_names + aux_names):
        if i < len(args):
            if iname in sym_kwargs:
                raise GraphError(f"{op.name}: input {iname!r} given twice")
            inputs.append(args[i]._outputs[0])
        elif iname in sym_kwargs:
            inputs.append(sym_kwargs[iname]._outputs[0])
        else:
            inputs.append(make_variable(f"{name}_{iname}").output(0))
    node = make_node(op, inputs, attrs, name=name, user_attrs=attr)
    return _symbol_of(node)


def load_json(json_str):
    from .json_io import load_json as _lj
    return _lj(json_str)


def load(fname):
    from .json_io import load as _l
    return _l(fname)
