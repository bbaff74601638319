"""Symbol: a handle on one or more graph outputs, with MXNet 1.x's API.

A Symbol holds entries (node outputs) of the shared graph IR
(``nbdl.ops.ir``); nodes are shared between symbols as in MXNet, so
``_set_attr`` and ``_compose`` change every symbol that holds the node, while
``copy.copy``/``copy.deepcopy``/``__call__`` work on a fresh copy of the graph.
"""
import numbers
import warnings
from functools import partial

import numpy as np

from .. import name as _names
from .._docs import shared_doc
from ..base import NotImplementedForSymbol
from ..dtype import as_dtype
from ..errors import ArgumentError, AttrError, DTypeError, GraphError, ShapeError, UnknownOpError
from ..executor import bind as _bind, simple_bind as _simple_bind
from ..executor.debug import symbol_debug_str
from ..graph.infer import infer_shapes, infer_types
from ..ops.attrs import attr_to_str, is_user_attr
from ..ops.ir import Entry, Node, classify_variables, make_node, topo_order
from ..ops.registry import get_op
from ..util import is_np_shape
from . import json_io
from .base import HIDDEN_KEYS, SymbolBase, single as _single, user_attr_key  # noqa: F401
from .build import OP_NODE_ARGS, op_node


def _with_plain_keys(d):
    """MXNet lists a hidden ``__key__`` attribute under ``key`` as well."""
    out = dict(d)
    for k, v in d.items():
        if k.startswith("__") and k.endswith("__") and k[2:-2] in HIDDEN_KEYS:
            out[k[2:-2]] = v
    return out


class Symbol(SymbolBase):
    """A handle on one or more outputs of the graph, with MXNet 1.x's API
    (``nbdl.sym.var`` / ``nbdl.sym.<op>`` make them).

    Parameters
    ----------
    outputs : iterable of Entry
        The outputs.
    """
    __slots__ = ()

    # -- identity ---------------------------------------------------------
    @property
    def name(self):
        """The node name when every output comes from one node, else None."""
        nodes = {id(e.node) for e in self._outputs}
        return self._outputs[0].node.name if len(nodes) == 1 else None

    def __repr__(self):
        name = self.name
        if name is None:
            return "<Symbol group [" + ", ".join(s.name for s in self) + "]>"
        return f"<Symbol {name}>"

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([e]) for e in self._outputs)

    def __getitem__(self, index):
        if isinstance(index, slice):
            outs = self._outputs[index]
            if not outs:
                raise GraphError(f"slice {index} selects none of the {len(self)} outputs")
            return Symbol(outs)
        if isinstance(index, str):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise GraphError(f"no output named {index!r} (outputs: {', '.join(names)})")
            if len(matches) > 1:
                raise GraphError(f"there are {len(matches)} outputs named {index!r}")
            index = matches[0]
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise GraphError(f"a Symbol is indexed by output position or name, "
                             f"not {type(index).__name__}")
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"output index {index} out of range for {len(self._outputs)} outputs")
        return Symbol([self._outputs[int(index)]])

    # MXNet's copy is a copy of the graph: attributes set on it or inputs
    # composed into it do not reach the original.
    def __copy__(self):
        """A copy of the graph (nodes copied; attributes set on the copy or
        inputs composed into it do not reach the original)."""
        return Symbol(_copy_graph(self._outputs))

    def __deepcopy__(self, memo):
        return self.__copy__()

    copy = __copy__

    def __reduce__(self):  # pickle through the JSON text, as MXNet does
        return (load_json, (self.tojson(),))

    # -- graph queries ----------------------------------------------------
    def _order(self):
        return topo_order(self._outputs)

    def _variables(self):
        return classify_variables(self._order())

    def list_arguments(self):
        """Names of the arguments (variables that are not auxiliary states), in
        graph order: what ``bind``'s ``args`` list follows."""
        return [n.name for n in self._variables()[0]]

    def list_auxiliary_states(self):
        """Names of the auxiliary states (BatchNorm's moving statistics...), in
        graph order: what ``bind``'s ``aux_states`` list follows."""
        return [n.name for n in self._variables()[1]]

    def list_inputs(self):
        """Arguments and aux states, in graph order."""
        return [n.name for n in self._order() if n.op is None]

    def list_outputs(self):
        """Names of the symbol's outputs (``<node>_output``...)."""
        return [e.name for e in self._outputs]

    def get_internals(self):
        """Every visible output of every node, in graph order: variables by
        name, op outputs as ``<node>_output`` (``<node>_output0``... or the
        op's own output names when it has several)."""
        outs = []
        for node in self._order():
            for i in range(node.num_visible_outputs):
                outs.append(node.output(i))
        return Symbol(outs)

    def _gen_atomic_symbol(self):
        """The output node's operator alone, with its attributes, for
        composing anew (MXNet's ``Symbol._gen_atomic_symbol``).

        MXNet's atomic symbol has no inputs at all; nbdl's nodes always have
        theirs, so each input here is a fresh variable named as the op's
        input (``data``, ``weight``, ...): composing by keyword
        (``atomic(data=x)``) or by position replaces them as MXNet's
        composition does, but ``list_arguments()`` lists them (MXNet: []).

        Returns
        -------
        Symbol
            A node of the same operator, name and attributes, with the op's
            visible outputs.
        """
        nodes = {id(e.node): e.node for e in self._outputs}
        if len(nodes) != 1:
            raise GraphError(f"_gen_atomic_symbol: the symbol has outputs of {len(nodes)} "
                             f"nodes; an atomic symbol is made from one operator node")
        node = next(iter(nodes.values()))
        if node.op is None:
            raise GraphError(f"_gen_atomic_symbol: {node.name!r} is a variable, not an "
                             f"operator node")
        names = node.op.list_inputs(node.attrs) + node.op.list_aux(node.attrs)
        atomic = make_node(node.op, [Node(None, n).output(0) for n in names], node.attr_str,
                           name=node.name, user_attrs=node.user_attrs)
        return Symbol([atomic.output(i) for i in range(atomic.num_visible_outputs)])

    def get_children(self):
        """The inputs of the output nodes, or None for a variable."""
        inputs, seen = [], set()
        for e in self._outputs:
            if id(e.node) not in seen:
                seen.add(id(e.node))
                inputs.extend(e.node.inputs)
        return Symbol(inputs) if inputs else None

    # -- attributes -------------------------------------------------------
    def attr(self, key):
        """An attribute of this symbol's node as a string, or None."""
        if any(e.node is not self._outputs[0].node for e in self._outputs):
            return None
        node = self._outputs[0].node
        if key == "name":
            return node.name
        if key == "op_name":
            return node.op.name if node.op is not None else "null"
        if key in node.attr_str:
            return node.attr_str[key]
        return node.user_attrs.get(key, node.user_attrs.get(user_attr_key(key)))

    def list_attr(self, recursive=False):
        """This node's attributes (``recursive=True``: every node's, keyed
        ``name$key`` as MXNet 0.x did; prefer ``attr_dict``)."""
        if recursive:
            return {f"{n}${k}": v for n, d in self.attr_dict().items() for k, v in d.items()}
        node = self._outputs[0].node
        d = dict(node.user_attrs)
        d.update(node.attr_str)
        return _with_plain_keys(d)

    def attr_dict(self):
        """``{node name: {key: value}}`` for every node that has attributes."""
        out = {}
        for node in self._order():
            d = dict(node.user_attrs)
            d.update(node.attr_str)
            if d:
                out.setdefault(node.name, {}).update(_with_plain_keys(d))
        return out

    def _set_attr(self, **kwargs):
        """Set attributes of this symbol's node (shared with every symbol
        holding it).  ``__key__`` and hidden keys are node attributes; other
        keys of an op node are op attributes and are re-parsed."""
        node = self._outputs[0].node
        if any(e.node is not node for e in self._outputs):
            raise GraphError("_set_attr works on a symbol with one node, not a group")
        params = {}
        for k, v in kwargs.items():
            k = user_attr_key(k)
            if k == "name":
                if not isinstance(v, str):
                    raise AttrError(f"node name must be a str, got {v!r}")
                node.name = v
            elif node.op is None or is_user_attr(k):
                node.user_attrs[k] = attr_to_str(v)
            else:
                params[k] = v
        if params:
            raw = dict(node.attr_str)
            raw.update(params)
            parsed, strings = node.op.parse_attrs(raw, node.name)
            want = len(node.op.list_inputs(parsed)) + len(node.op.list_aux(parsed))
            if want != len(node.inputs):
                raise AttrError(f"{node.op.name} (node {node.name!r}): these attributes need "
                                f"{want} inputs, the node has {len(node.inputs)}")
            node.attrs, node.attr_str = parsed, strings

    # -- composition ------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """A copy of this symbol with variables replaced: positionally in
        ``list_inputs()`` order, or by name (``net(data=other)``)."""
        s = self.__copy__()
        s._compose(*args, **kwargs)
        return s

    def _compose(self, *args, **kwargs):
        """Replace variables of this graph in place (MXNet's ``_compose``)."""
        name = kwargs.pop("name", None)
        if args and kwargs:     # MXNet raises TypeError here too
            raise ArgumentError(f"compose: takes the input symbols either by position or by "
                                f"keyword, not both (got {len(args)} by position and "
                                f"{', '.join(map(repr, kwargs))} by keyword)")
        for k, s in list(enumerate(args)) + list(kwargs.items()):
            if not isinstance(s, Symbol):
                raise GraphError(f"compose: argument {k!r} must be a Symbol, got {type(s).__name__}")
            if len(s._outputs) != 1:
                raise GraphError(f"compose: argument {k!r} has {len(s._outputs)} outputs; "
                                 f"a single output is required")
        order = self._order()
        variables = [n for n in order if n.op is None]
        if len(args) > len(variables):
            raise GraphError(f"compose: {len(args)} positional symbols for "
                             f"{len(variables)} inputs {[n.name for n in variables]}")
        replace = {id(n): s._outputs[0] for n, s in zip(variables, args)}
        matched = set()
        for n in variables[len(args):]:
            if n.name in kwargs:
                replace[id(n)] = kwargs[n.name]._outputs[0]
                matched.add(n.name)
        unknown = [k for k in kwargs if k not in matched]
        if unknown:
            raise GraphError(f"compose: {', '.join(map(repr, unknown))} "
                             f"{'is not an input' if len(unknown) == 1 else 'are not inputs'} "
                             f"of the symbol (inputs: {', '.join(n.name for n in variables)})")
        ops = {id(n) for n in order if n.op is not None}
        for e in set(replace.values()):
            if any(id(n) in ops for n in topo_order([e])):
                raise GraphError(f"compose: {e.node.name!r} shares nodes with the symbol it is "
                                 f"composed into (that would make a cycle); compose into a copy")
        if name:
            self._outputs[0].node.name = name
        for n in order:
            if n.op is not None:
                n.inputs = [replace.get(id(e.node), e) for e in n.inputs]
        self._outputs = [replace.get(id(e.node), e) for e in self._outputs]

    # -- inference --------------------------------------------------------
    def _known(self, args, kwargs, what, unknown_zero=False):
        """The shapes (``what="shape"``) or dtypes given, as {Entry: value};
        ``unknown_zero``: a 0 dim of a shape is unknown (``-1``)."""
        err = ShapeError if what == "shape" else DTypeError
        order = self._order()
        arg_nodes, aux_nodes = classify_variables(order)
        names = [n.name for n in arg_nodes]
        if len(args) > len(arg_nodes):
            raise err(f"infer_{what}: {len(args)} positional {what}s for "
                      f"{len(arg_nodes)} arguments {names}")
        convert = partial(_as_shape, unknown_zero=unknown_zero) if what == "shape" else _as_type
        known = {}
        for node, v in zip(arg_nodes, args):
            v = convert(v, node.name)
            if v is not None:
                known[node.output(0)] = v
        by_name = {}
        for n in arg_nodes + aux_nodes:
            by_name.setdefault(n.name, []).append(n)
        for k, v in kwargs.items():
            if k not in by_name:
                raise err(f"infer_{what}: {k!r} is not an argument of the symbol (arguments: "
                          f"{', '.join(names)}; aux states: "
                          f"{', '.join(n.name for n in aux_nodes) or 'none'})")
            v = convert(v, k)
            if v is not None:
                for n in by_name[k]:
                    known[n.output(0)] = v
        return order, arg_nodes, aux_nodes, known

    def infer_shape_partial(self, *args, **kwargs):
        """As ``infer_shape``, reporting what stays unknown: outside NumPy-shape
        mode a ``0`` dim is unknown (MXNet 1.x) and comes back as ``0``, an
        unknown shape as ``()``; in NumPy-shape mode ``-1`` and ``None``.

        Parameters
        ----------
        *args : tuple
            Shapes of the arguments by position (``list_arguments()`` order).
        **kwargs : tuple
            Shapes by argument or auxiliary-state name.
        """
        return self._infer_shape_partial(args, kwargs, zero_unknown=not is_np_shape(),
                                         report_partial=True)

    def _infer_shape_partial(self, args, kwargs, zero_unknown, report_partial=False):
        """``zero_unknown=False`` reads a 0 dim given here as a size; without
        ``report_partial`` only full shapes are reported, ``()`` for the others
        (what Gluon's deferred initialisation needs)."""
        np_shape = is_np_shape() and report_partial
        order, arg_nodes, aux_nodes, known = self._known(args, kwargs, "shape",
                                                         unknown_zero=zero_unknown)
        table = infer_shapes(order, known, keep_partial=report_partial)

        def get(e):
            s = table.get(e)
            if s is None:
                return None if np_shape else ()
            return tuple(d if d >= 0 or np_shape else 0 for d in s)
        return ([get(n.output(0)) for n in arg_nodes], [get(e) for e in self._outputs],
                [get(n.output(0)) for n in aux_nodes])

    def infer_shape(self, *args, **kwargs):
        """``(arg_shapes, out_shapes, aux_shapes)`` from the shapes given (by
        position in ``list_arguments()`` order, or by name); ``(None, None,
        None)`` with a warning when they are not enough, as MXNet (a ``0`` dim
        is unknown outside NumPy-shape mode, a ``-1`` inside it)."""
        order, arg_nodes, aux_nodes, known = self._known(args, kwargs, "shape",
                                                         unknown_zero=not is_np_shape())
        table = infer_shapes(order, known)
        return _complete(table, arg_nodes, aux_nodes, self._outputs, "shape")

    def infer_type_partial(self, *args, **kwargs):
        """As ``infer_type``, with ``None`` for what cannot be inferred instead
        of a warning.

        Parameters
        ----------
        *args : dtype
            Dtypes of the arguments by position (``list_arguments()`` order).
        **kwargs : dtype
            Dtypes by argument name.
        """
        order, arg_nodes, aux_nodes, known = self._known(args, kwargs, "type")
        table = infer_types(order, known)

        def get(e):
            return table[e].type if table.get(e) is not None else None
        return ([get(n.output(0)) for n in arg_nodes], [get(e) for e in self._outputs],
                [get(n.output(0)) for n in aux_nodes])

    def infer_type(self, *args, **kwargs):
        """``(arg_types, out_types, aux_types)`` as numpy types (``np.float32``)."""
        order, arg_nodes, aux_nodes, known = self._known(args, kwargs, "type")
        table = infer_types(order, known)
        res = _complete(table, arg_nodes, aux_nodes, self._outputs, "type")
        if res[0] is None:
            return res
        return tuple([np.dtype(t).type for t in lst] for lst in res)

    # -- serialisation (nbdl.symbol.json_io) ------------------------------
    def tojson(self, remove_amp_cast=True):
        """The graph as MXNet's JSON text (``nodes``, ``arg_nodes``, ``heads``).

        Parameters
        ----------
        remove_amp_cast : bool
            MXNet's flag; nbdl writes no AMP casts, so it changes nothing.
        """
        return json_io.to_json(self)

    def save(self, fname, remove_amp_cast=True):
        """Write ``tojson()`` to the file ``fname`` (MXNet's ``-symbol.json``).

        Parameters
        ----------
        fname : str
            The file's path.
        remove_amp_cast : bool
            As for ``tojson``.
        """
        json_io.save(self, fname)

    # -- execution (nbdl.executor) ----------------------------------------
    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None, memory_budget=None):
        """Bind the symbol to arrays: an ``Executor`` whose memory plan is made
        here (``nbdl.bind``).

        Parameters
        ----------
        ctx : Context or str
            The device (``nbdl.cpu()``, ``nbdl.gpu(0)``).
        args : list or dict of NDArray
            Every argument's array, in ``list_arguments()`` order or by name.
        args_grad : list or dict of NDArray, optional
            Arrays the gradients are written to (or added to); an argument
            without one gets no gradient.
        grad_req : str, list or dict
            ``'write'``, ``'add'``, ``'inplace'`` or ``'null'``, for all
            arguments, per argument in order, or by name (unlisted: null).
        aux_states : list or dict of NDArray, optional
            The auxiliary states' arrays.
        group2ctx, shared_exec : optional
            MXNet's model-parallel groups and memory sharing: accepted and
            ignored (one device an executor; ``Executor.reshape`` shares).
        memory_budget : int or str, optional
            Arena bytes not to exceed (``'1.5GB'``), by recomputing forward
            entries in backward (docs/memory-budget.md).
        """
        return _bind(self, ctx, args, args_grad=args_grad, grad_req=grad_req,
                     aux_states=aux_states, memory_budget=memory_budget)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, memory_budget=None, **kwargs):
        """Infer every shape from the given ones, allocate the arguments,
        auxiliary states and gradients, and bind (``nbdl.simple_bind``).

        Parameters
        ----------
        ctx : Context or str
            The device.
        grad_req : str, list or dict
            As for ``bind``; every argument whose request is not null gets a
            gradient array, data included, as in MXNet.
        type_dict : dict, optional
            {argument name: dtype}; the others are inferred from these.
            Without it every argument not declared with a dtype is float32,
            as in MXNet.
        stype_dict, group2ctx, shared_arg_names, shared_exec, shared_buffer : optional
            MXNet's storage types, model-parallel groups and memory sharing:
            accepted and ignored (dense storage, one device).
        memory_budget : int or str, optional
            As for ``bind``.
        **kwargs : tuple
            Shapes by argument or auxiliary-state name; keywords whose value
            is not a tuple or list are ignored, as MXNet's.
        """
        # as MXNet's, only tuple (or list) keywords are shapes; others (its
        # tests pass force_rebind=True) are ignored
        shapes = {k: v for k, v in kwargs.items() if isinstance(v, (tuple, list))}
        return _simple_bind(self, ctx, grad_req=grad_req, type_dict=type_dict,
                            memory_budget=memory_budget, **shapes)

    def eval(self, ctx=None, **kwargs):
        """Bind without gradients to the arrays given by name and run forward
        once: the list of outputs.

        Parameters
        ----------
        ctx : Context or str, optional
            The device (default: the current one).
        **kwargs : NDArray
            Every argument's array, by name.
        """
        ex = _bind(self, ctx, kwargs, grad_req="null")
        return ex.forward()

    def debug_str(self):
        """The graph as text, a line per node with its op, inputs and
        attributes (MXNet's ``Symbol.debug_str``)."""
        return symbol_debug_str(self)

    # -- arithmetic: +, -, *, /, %, ** and comparisons are generated below
    def _binary(self, other, sym_ops, scalar_op, reverse=False):
        if isinstance(other, Symbol):
            a, b = (other, self) if reverse else (self, other)
            return _operator(sym_ops, [a, b])
        if isinstance(other, numbers.Number) and not isinstance(other, complex):
            return _operator(scalar_op, [self], {"scalar": other})
        return NotImplemented

    def __neg__(self):
        return self.__mul__(-1.0)   # as MXNet: a _mul_scalar node

    def __abs__(self):
        return create("abs", self)

    __hash__ = object.__hash__

    def __bool__(self):
        raise NotImplementedForSymbol(Symbol.__bool__, None)   # a GraphError, as in MXNet

    # -- fluent methods (more are generated below the class) --------------
    def reshape(self, *shape, **kwargs):
        """``Reshape`` of this symbol (MXNet's fluent method).

        Parameters
        ----------
        *shape : int or tuple
            The new shape, as ints or one tuple (MXNet's special values 0,
            -1, -2, -3, -4 as for ``Reshape``).
        **kwargs
            ``Reshape``'s other attributes (``reverse``...) and ``name``.
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        if shape:
            kwargs["shape"] = tuple(shape)
        return create("Reshape", self, **kwargs)

    def astype(self, dtype, **kwargs):
        """``Cast`` of this symbol to ``dtype``.

        Parameters
        ----------
        dtype : str or numpy dtype
            The target dtype.
        **kwargs
            ``name`` and other attributes of the node.
        """
        return create("Cast", self, dtype=np.dtype(dtype).name, **kwargs)

    @property
    def T(self):
        return create("transpose", self)


# MXNet's Symbol operators call _Plus, _PlusScalar, _RMinusScalar..., so their
# nodes are named _plus0, _plusscalar0...: (method, Symbol-Symbol op names tried
# in order, name hint, scalar op, name hint, reflected scalar op, name hint).
_ARITHMETIC = [
    ("add", ("elemwise_add",), "_plus", "_plus_scalar", "_plusscalar", "_plus_scalar", "_plusscalar"),
    ("sub", ("elemwise_sub",), "_minus", "_minus_scalar", "_minusscalar", "_rminus_scalar", "_rminusscalar"),
    ("mul", ("elemwise_mul",), "_mul", "_mul_scalar", "_mulscalar", "_mul_scalar", "_mulscalar"),
    ("truediv", ("elemwise_div",), "_div", "_div_scalar", "_divscalar", "_rdiv_scalar", "_rdivscalar"),
    ("mod", ("_mod", "broadcast_mod"), "_mod", "_mod_scalar", "_modscalar", "_rmod_scalar", "_rmodscalar"),
    ("pow", ("_power", "broadcast_power"), "_power", "_power_scalar", "_powerscalar",
     "_rpower_scalar", "_rpowerscalar"),
]
_COMPARISONS = [("eq", "equal"), ("ne", "not_equal"), ("gt", "greater"), ("ge", "greater_equal"),
                ("lt", "lesser"), ("le", "lesser_equal")]


def _binary_method(sym_spec, scalar_spec, reverse):
    def method(self, other):
        return self._binary(other, sym_spec, scalar_spec, reverse)
    return method


for _m, _ops, _hint, _sc, _sc_hint, _rsc, _rsc_hint in _ARITHMETIC:
    setattr(Symbol, f"__{_m}__", _binary_method((_ops, _hint), (_sc, _sc_hint), False))
    setattr(Symbol, f"__r{_m}__", _binary_method((_ops, _hint), (_rsc, _rsc_hint), True))
for _m, _op in _COMPARISONS:   # 2 < x calls x.__gt__(2): no reflected forms needed
    setattr(Symbol, f"__{_m}__", _binary_method(((f"_{_op}", f"broadcast_{_op}"), f"_{_op}"),
                                                (f"_{_op}_scalar", f"_{_op}_scalar"), False))
Symbol.__div__, Symbol.__rdiv__ = Symbol.__truediv__, Symbol.__rtruediv__
_FLUENT = ("flatten", "transpose", "expand_dims", "squeeze", "swapaxes", "split", "slice",
           "slice_axis", "slice_like", "take", "pick", "one_hot", "tile", "repeat", "pad",
           "broadcast_to", "broadcast_like", "zeros_like", "ones_like", "clip", "sum", "nansum",
           "prod", "nanprod", "mean", "max", "min", "norm", "argmax", "argmin", "argsort", "sort",
           "topk", "abs", "sign", "round", "rint", "floor", "ceil", "trunc", "fix", "exp", "expm1",
           "log", "log10", "log2", "log1p", "sqrt", "rsqrt", "cbrt", "rcbrt", "square",
           "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
           "tanh", "arcsinh", "arccosh", "arctanh", "degrees", "radians", "relu", "sigmoid",
           "softmax", "log_softmax", "softmin", "diag", "argmax_channel", "shape_array",
           "size_array", "flip", "broadcast_axes", "reshape_like")


# MXNet 1.x's Symbol.flatten / expand_dims / squeeze take ``inplace=`` and ignore it.
_IGNORES_INPLACE = ("flatten", "expand_dims", "squeeze")


def _fluent(op_name):
    def method(self, *args, **kwargs):
        if op_name in _IGNORES_INPLACE:
            kwargs.pop("inplace", None)
        return create(op_name, self, *args, **kwargs)
    method.__name__ = op_name
    method.__doc__ = f"``nbdl.sym.{op_name}(self, ...)``"
    return method


for _m in _FLUENT:
    setattr(Symbol, _m, _fluent(_m))
del _m, _ops, _hint, _sc, _sc_hint, _rsc, _rsc_hint, _op


# -- helpers ---------------------------------------------------------------------

def _copy_graph(outputs):
    new = {}
    for node in topo_order(outputs):
        new[id(node)] = Node(node.op, node.name, dict(node.attrs), dict(node.attr_str),
                             [Entry(new[id(e.node)], e.index) for e in node.inputs],
                             node.user_attrs)
    return [Entry(new[id(e.node)], e.index) for e in outputs]


def _as_shape(v, name, unknown_zero=False):
    """A shape given to infer_shape: ``-1`` dims unknown, and ``0`` dims too
    when ``unknown_zero``; ``()`` means not known at all, as in MXNet."""
    if v is None:
        return None
    if isinstance(v, np.ndarray) or not isinstance(v, (tuple, list)):
        raise ShapeError(f"shape of {name!r} must be a tuple of ints, got {v!r}")
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= -1 for d in v):
        raise ShapeError(f"shape of {name!r} must be a tuple of non-negative ints (-1 or, "
                         f"outside NumPy-shape mode, 0 for an unknown dim), got {v!r}")
    return tuple(-1 if d < 0 or (unknown_zero and d == 0) else int(d) for d in v) or None


def _as_type(v, name):
    if v is None:
        return None
    try:
        return as_dtype(v)
    except DTypeError as e:
        raise DTypeError(f"dtype of {name!r}: {e}") from None


def _complete(table, arg_nodes, aux_nodes, heads, what):
    ents = [n.output(0) for n in arg_nodes + aux_nodes] + list(heads)
    if any(table.get(e) is None for e in ents):
        unknown = [n.name for n in arg_nodes + aux_nodes if table.get(n.output(0)) is None]
        warnings.warn(f"Cannot decide {what} for the following arguments; consider providing "
                      f"them as input: {', '.join(unknown) or '(outputs only)'}", stacklevel=3)
        return None, None, None
    return ([table[n.output(0)] for n in arg_nodes], [table[e] for e in heads],
            [table[n.output(0)] for n in aux_nodes])


def _first_op(names):
    """The first of ``names`` that nbdl has (MXNet's op, then a stand-in)."""
    for n in names[:-1]:
        try:
            return get_op(n)
        except UnknownOpError:
            pass
    return get_op(names[-1])


def _operator(spec, inputs, attrs=None):
    """An operator node for ``+``, ``*``...: ``spec`` is (op names, name hint)
    or (op name, name hint)."""
    names, hint = spec
    op = _first_op((names,) if isinstance(names, str) else names)
    entries = [_single(s, f"operand of {op.name}") for s in inputs]
    return _symbol_of(make_node(op, entries, attrs, name=_names.current().get(None, hint.lower())))



def _symbol_of(node):
    """A Symbol of ``node``'s visible outputs."""
    n = node.num_visible_outputs
    if n < 1:
        raise GraphError(f"{node.op.name} (node {node.name!r}) has no outputs with these "
                         f"attributes ({node.attr_str})")
    return Symbol([node.output(i) for i in range(n)])


@shared_doc(op_node_args=OP_NODE_ARGS)
def create(op_name, *args, name=None, attr=None, **kwargs):
    """``nbdl.sym.<op>(...)``: a Symbol of a new ``op_name`` node
    (``build.op_node``: inputs by position or by input name, missing inputs
    made variables ``<name>_<input>``, attributes by keyword or position).

    Parameters
    ----------
    {op_node_args}
    """
    return _symbol_of(op_node(op_name, *args, name=name, attr=attr, **kwargs))


def load_json(json_str):
    """A Symbol from -symbol.json text (MXNet 0.x or 1.x).

    Parameters
    ----------
    json_str : str or bytes
        The document.
    """
    return Symbol(json_io.read_json(json_str))
