"""The graph IR: nodes (op applications and variables), the entries they
produce, and topological order.  It lives with the op table because the ops'
gradient rules build nodes; Symbol, the graph passes (``nbdl.graph``), autograd
and the executor all sit above it."""
from operator import itemgetter

from .. import name as _names
from ..errors import GraphError
from .attrs import attr_to_str, is_user_attr
from .registry import get_op

_UNSET = object()


class Node:
    """One operator application, or a variable when ``op`` is None.

    ``attrs`` are the parsed op attributes, ``attr_str`` their MXNet string
    forms, ``user_attrs`` the ``__key__`` attributes (``__shape__``,
    ``__lr_mult__``, ...) that belong to the node rather than the op.
    ``inputs`` lists the op's data inputs and then its aux inputs."""

    __slots__ = ("op", "name", "attrs", "attr_str", "user_attrs", "inputs", "_outs", "_akey",
                 "__weakref__")

    def __init__(self, op, name, attrs=None, attr_str=None, inputs=(), user_attrs=None):
        self.op = op
        self.name = name
        self.attrs = attrs or {}
        self.attr_str = attr_str or {}
        self.inputs = list(inputs)
        self.user_attrs = dict(user_attrs or {})
        self._outs = None
        self._akey = _UNSET     # nbdl.graph.signature.node_attr_key's memo

    @property
    def is_variable(self):
        return self.op is None

    @property
    def num_outputs(self):
        return 1 if self.op is None else self.op.n_outputs(self.attrs)

    @property
    def num_visible_outputs(self):
        return 1 if self.op is None else self.op.n_visible(self.attrs)

    def output(self, i=0):
        outs = self._outs or self.outputs()
        return outs[i] if 0 <= i < len(outs) else Entry(self, i)

    def outputs(self):
        """The node's output entries (a tuple, made once: a node's op and
        attributes do not change after it is made)."""
        outs = self._outs
        if outs is None:
            outs = self._outs = tuple(Entry(self, i) for i in range(self.num_outputs))
        return outs

    def output_names(self):
        if self.op is None:
            return [self.name]
        return [f"{self.name}_{n}" for n in self.op.list_outputs(self.attrs)]

    def __repr__(self):
        return f"Node({self.op.name if self.op else 'var'}, {self.name!r})"


class Entry(tuple):
    """Output ``index`` of ``node``; hashable by node identity.

    A ``(node, index)`` tuple, so hashing and equality (which the inference,
    gradient and scheduling passes do for every edge) run in C: ``Node``
    compares by identity."""

    __slots__ = ()

    def __new__(cls, node, index=0):
        return tuple.__new__(cls, (node, index))

    node = property(itemgetter(0), doc="The producing node.")
    index = property(itemgetter(1), doc="Which of the node's outputs.")

    def __getnewargs__(self):
        return tuple(self)

    @property
    def name(self):
        return self.node.output_names()[self.index]

    def __repr__(self):
        return f"Entry({self.node.name!r}, {self.index})"


def auto_name(hint):
    """MXNet-style automatic names: ``fullyconnected0``, ``fullyconnected1``...
    from the process-wide default name manager (``nbdl.name``), whatever
    ``NameManager`` scope is active: nodes nbdl makes itself (gradients) do
    not follow a user's scope.  Symbols a user creates are named by
    ``nbdl.name.current()`` (``nbdl.symbol.construct``)."""
    return _names.default_manager().get(None, hint.lower())


def reset_auto_names():
    """Restart the default name manager's counts (``fullyconnected0`` again)."""
    _names.default_manager()._counter.clear()


def make_variable(name, user_attrs=None):
    return Node(None, name, user_attrs=user_attrs)


def make_node(op_name, inputs, attrs=None, name=None, user_attrs=None):
    """Create an op node from entries (used by Symbol and by gradient rules).

    ``attrs`` may hold strings or Python values; they are parsed and checked
    against the op's schema here."""
    op = get_op(op_name) if isinstance(op_name, str) else op_name
    raw = dict(attrs or {})
    user = dict(user_attrs or {})
    for k in list(raw):
        if is_user_attr(k):
            user[k] = attr_to_str(raw.pop(k))
    if op.key_var_num_args and op.key_var_num_args not in raw:
        raw[op.key_var_num_args] = len(inputs)
    if name is None:
        name = auto_name(op.name)
    parsed, strings = op.parse_attrs(raw, name)
    if op.key_var_num_args and parsed.get(op.key_var_num_args) != len(inputs):
        raise GraphError(f"{op.name} (node {name!r}): {op.key_var_num_args}="
                         f"{parsed.get(op.key_var_num_args)} but {len(inputs)} inputs were given")
    want = len(op.list_inputs(parsed)) + len(op.list_aux(parsed))
    if len(inputs) != want:
        raise GraphError(f"{op.name} (node {name!r}): expected {want} inputs "
                         f"({', '.join(op.list_inputs(parsed) + op.list_aux(parsed))}), "
                         f"got {len(inputs)}")
    return Node(op, name, parsed, strings, inputs, user)


def backward_node(op_name, inputs, node, attrs=None):
    """The node computing ``node``'s gradients, named ``<node>_backward`` as
    MXNet names them.

    Parameters
    ----------
    op_name : str
        The gradient's op.
    inputs : list of Entry
        Its inputs.
    node : Node
        The forward node.
    attrs : dict, optional
        Its attributes (default: a copy of the forward node's).
    """
    return make_node(op_name, inputs, dict(node.attrs) if attrs is None else attrs,
                     name=f"{node.name}_backward")


def zero_grad(node, i, suffix):
    """``zeros_like`` of ``node``'s input ``i``: the gradient of an input the
    op's own gradient leaves out, named ``<node>_<suffix>``.

    Parameters
    ----------
    node : Node
        The forward node.
    i : int
        The input.
    suffix : str
        The name's suffix (``"backward_rois"``).
    """
    return make_node("zeros_like", [node.inputs[i]], {}, name=f"{node.name}_{suffix}").output(0)


def topo_order(heads, seen=None):
    """Nodes reachable from ``heads`` (entries), inputs before users, in
    MXNet's depth-first post-order (which fixes argument order).

    Parameters
    ----------
    heads : list of Entry or Node
        Where to start.
    seen : set, optional
        Ids of nodes already ordered, left out and extended: with the nodes
        of ``topo_order(earlier_heads)``, the nodes ``topo_order(earlier_heads
        + heads)`` appends after those.
    """
    order = []
    seen = set() if seen is None else seen
    for h in heads:
        root = h.node if isinstance(h, Entry) else h
        if id(root) in seen:
            continue
        stack = [(root, 0)]
        seen.add(id(root))
        while stack:
            node, i = stack.pop()
            if i < len(node.inputs):
                stack.append((node, i + 1))
                child = node.inputs[i].node
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                order.append(node)
    return order


def aux_positions(node):
    """Indices into ``node.inputs`` that are aux states."""
    if node.op is None:
        return range(0)
    n_in = len(node.op.list_inputs(node.attrs))
    return range(n_in, len(node.inputs))


def classify_variables(order):
    """Split variable nodes into (arguments, aux states) in topo order."""
    aux_ids = set()
    for node in order:
        for i in aux_positions(node):
            aux_ids.add(id(node.inputs[i].node))
    args, aux = [], []
    for node in order:
        if node.op is None:
            (aux if id(node) in aux_ids else args).append(node)
    return args, aux
