"""Looking at a Symbol's graph (MXNet 1.x's ``mx.visualization``, also
``nbdl.viz``): ``print_summary`` prints a layer table with output shapes and
parameter counts, ``plot_network`` returns a ``graphviz.Digraph``;
``plot_memory`` draws an executor's planned arena (matplotlib).

``plot_network`` needs the ``graphviz`` Python package (``pip install
graphviz``, or ``pip install nbdl[viz]``); rendering the digraph to a file
also needs Graphviz's ``dot`` program.  ``print_summary`` needs nothing.

Both walk the graph in the order MXNet's symbol JSON lists its nodes (inputs
before users, depth first), so their rows come out in MXNet's order.
"""
import re
import warnings

from ._docs import shared_doc
from .errors import ArgumentError, OptionalDependencyError, ShapeError
from .ops.ir import topo_order
from .planner.plot import FIGURE_ARGS, plot_plan
from .symbol import Symbol

__all__ = ["print_summary", "plot_network", "plot_memory"]

_WEIGHT_LIKE = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean",
                "_running_var", "_running_mean")
# Fill colours by op kind (MXNet 1.x's palette).
_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69",
           "#fccde5")


def _digits(text):
    """The integers written in an attribute string: ``'(3, 3)'`` -> ``['3', '3']``."""
    return re.findall(r"\d+", text)


def _check_symbol(where, symbol):
    if not isinstance(symbol, Symbol):
        raise ArgumentError(f"{where}: symbol must be an nbdl Symbol, got {type(symbol).__name__}")


def _entry_table(where, symbol, given, kind):
    """{Entry: shape or dtype} for every visible output of every node, from
    the input shapes (dtypes) ``given`` by name."""
    if not isinstance(given, dict):
        raise ArgumentError(f"{where}: {kind} must be a dict of input name -> {kind}, "
                            f"got {type(given).__name__}")
    internals = symbol.get_internals()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "shape":
            _, outs, _ = internals.infer_shape(**given)
        else:
            _, outs, _ = internals.infer_type(**given)
    if outs is None:
        missing = [n for n, v in zip(*_partial(internals, given, kind)) if not v]
        raise ShapeError(f"{where}: input {kind} is incomplete: {kind}s given for "
                         f"{sorted(given)} do not determine "
                         f"{', '.join(missing) or 'every output'}")
    return dict(zip(internals._outputs, outs))


def _partial(internals, given, kind):
    if kind == "shape":
        args, _, aux = internals.infer_shape_partial(**given)
    else:
        args, _, aux = internals.infer_type_partial(**given)
    names = internals.list_arguments() + internals.list_auxiliary_states()
    return names, list(args) + list(aux)


def _single_output(node):
    """The node's output entry as MXNet's ``<name>_output`` key finds it: the
    variable itself, or an op's only visible output (None for ops with
    several, which MXNet's table leaves blank)."""
    if node.op is None or node.num_visible_outputs == 1:
        return node.output(0)
    return None


def _params(node, pre_filter, node_shape):
    """MXNet 1.x's parameter count for one layer: ``pre_filter`` is the sum of
    the channel (second) dimensions of the layer's listed inputs."""
    op = node.op.name if node.op is not None else "null"
    a = node.attrs
    if op == "Convolution":
        n = pre_filter * int(a["num_filter"]) // int(a.get("num_group") or 1)
        for k in a["kernel"]:
            n *= int(k)
        return n if a.get("no_bias") else n + int(a["num_filter"])
    if op == "FullyConnected":
        hidden = int(a["num_hidden"])
        return pre_filter * hidden if a.get("no_bias") else (pre_filter + 1) * hidden
    if op == "BatchNorm":
        return int(node_shape[1]) * 2 if node_shape is not None else 0
    if op == "Embedding":
        return int(a["input_dim"]) * int(a["output_dim"])
    return 0


def print_summary(symbol, shape=None, line_length=120, positions=[.44, .64, .74, 1.]):
    """Print a table of the layers of ``symbol``: name and op, output shape
    (without the batch dimension), parameter count and the layers it reads.

    Parameters
    ----------
    symbol : Symbol
        The graph to summarise.
    shape : dict of str to tuple, optional
        Input shapes by name; without them the shapes are left blank and the
        counts that need them are 0 (or the bias alone).
    line_length : int
        Width of the table in characters.
    positions : list of float or int
        Where each of the four columns ends: fractions of ``line_length``
        (when the last is at most 1) or absolute character positions.

    The rows and counts are MXNet 1.9.1's: op nodes and the graph's first
    node (its data input) are listed; parameters are counted for
    Convolution, FullyConnected, BatchNorm (gamma and beta) and Embedding,
    from the channel dimension of the inputs listed as previous layers (so a
    FullyConnected layer straight after a 4-d layer is counted, as MXNet
    does, from that layer's channels alone).
    """
    where = "print_summary"
    _check_symbol(where, symbol)
    if not isinstance(line_length, int) or isinstance(line_length, bool) or line_length <= 0:
        raise ArgumentError(f"{where}: line_length must be a positive int, got {line_length!r}")
    if not isinstance(positions, (list, tuple)) or len(positions) != 4:
        raise ArgumentError(f"{where}: positions must list 4 column ends, got {positions!r}")
    shapes = _entry_table(where, symbol, shape, "shape") if shape is not None else None
    nodes = topo_order(symbol._outputs)
    index = {id(n): i for i, n in enumerate(nodes)}
    # MXNet reads the first head [node, output index, version] as a set of
    # node indices; the same set lists the same rows.
    head = symbol._outputs[0]
    heads = {index[id(head.node)], head.index, 0}
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]
    lines = []

    def row(fields):
        line = ""
        for field, end in zip(fields, positions):
            line = (line + str(field))[:end]
            line += " " * (end - len(line))
        lines.append(line)

    def shape_of(entry):
        if shapes is None or entry is None:
            return None
        return shapes.get(entry)

    lines.append("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    lines.append("=" * line_length)
    total = 0
    for i, node in enumerate(nodes):
        if node.op is None and i > 0:
            continue
        previous, pre_filter = [], 0
        if node.op is not None:
            for e in node.inputs:
                src = e.node
                if src.op is not None or index[id(src)] in heads:
                    previous.append(src.name)
                    s = shape_of(_single_output(src))
                    if s is not None:
                        pre_filter += int(s[1:][0])
        own = shape_of(_single_output(node)) if (node.op is not None or i in heads) else None
        params = _params(node, pre_filter, own)
        op = node.op.name if node.op is not None else "null"
        row([f"{node.name}({op})", "x".join(str(d) for d in own[1:]) if own else "", params,
             previous[0] if previous else ""])
        for p in previous[1:]:
            row(["", "", "", p])
        total += params
        lines.append(("=" if i == len(nodes) - 1 else "_") * line_length)
    lines.append(f"Total params: {total}")
    lines.append("_" * line_length)
    print("\n".join(lines))


def _graphviz_digraph():
    try:
        from graphviz import Digraph
    except ImportError:
        raise OptionalDependencyError(
            "plot_network needs the 'graphviz' Python package, which is not installed: "
            "pip install graphviz  (or pip install nbdl[viz]); rendering also needs "
            "Graphviz's 'dot' program") from None
    return Digraph


def _node_style(node, base):
    """(label, attributes) of one op node, by op kind as MXNet draws it."""
    op = node.op.name
    a = node.attr_str
    attr = dict(base)
    label = node.name
    if op == "Convolution":
        label = "Convolution\n{}/{}, {}".format(
            "x".join(_digits(a["kernel"])),
            "x".join(_digits(a["stride"])) if "stride" in a else "1", a["num_filter"])
        attr["fillcolor"] = _COLORS[1]
    elif op == "FullyConnected":
        label = f"FullyConnected\n{a['num_hidden']}"
        attr["fillcolor"] = _COLORS[1]
    elif op == "BatchNorm":
        attr["fillcolor"] = _COLORS[3]
    elif op == "Activation":
        label = f"Activation\n{a['act_type']}"
        attr["fillcolor"] = _COLORS[2]
    elif op == "LeakyReLU":
        label = f"LeakyReLU\n{a.get('act_type', 'Leaky')}"
        attr["fillcolor"] = _COLORS[2]
    elif op == "Pooling":
        label = "Pooling\n{}, {}/{}".format(
            a.get("pool_type", "max"), "x".join(_digits(a["kernel"])) if "kernel" in a else "[]",
            "x".join(_digits(a["stride"])) if "stride" in a else "1")
        attr["fillcolor"] = _COLORS[4]
    elif op in ("Concat", "Flatten", "Reshape"):
        attr["fillcolor"] = _COLORS[5]
    elif op == "Softmax":
        attr["fillcolor"] = _COLORS[6]
    else:
        attr["fillcolor"] = _COLORS[7]
        if op == "Custom" and "op_type" in a:
            label = a["op_type"]
    return label, attr


def plot_network(symbol, title="plot", save_format="pdf", shape=None, dtype=None, node_attrs={},
                 hide_weights=True):
    """A ``graphviz.Digraph`` of the graph that computes ``symbol``.

    Parameters
    ----------
    symbol : Symbol
        The graph to draw.
    title : str
        Name of the digraph.
    save_format : str
        Output format of ``Digraph.render`` (``'pdf'``, ``'png'``, ``'svg'``...).
    shape : dict of str to tuple, optional
        Input shapes by name: each edge is labelled with the shape of the
        tensor it carries (without the batch dimension).
    dtype : dict of str to dtype, optional
        Input dtypes by name: each edge label gets ``(float32)``...
    node_attrs : dict of str to str
        Graphviz node attributes that replace the defaults (``shape='box'``,
        ``fixedsize='true'``, ``width='1.3'``, ``height='0.8034'``,
        ``style='filled'``).
    hide_weights : bool
        Leave out variables named like parameters (``*_weight``, ``*_bias``,
        ``*_gamma``, ``*_beta``, ``*_moving_mean``...) and their edges; when
        False they are drawn as the empty nodes graphviz makes for edges to
        undeclared names, as MXNet does.

    Nodes are coloured by op kind as in MXNet 1.x (inputs, convolution and
    fully connected layers, activations, batch norm, pooling, reshaping ops,
    softmax, the rest).  An edge from a multi-output node is labelled with
    the shape of the output it carries (MXNet labels every such edge with
    the node's last output).  Raises ``OptionalDependencyError`` (an
    ``ImportError``) when the graphviz package is missing.
    """
    where = "plot_network"
    Digraph = _graphviz_digraph()
    _check_symbol(where, symbol)
    if not isinstance(node_attrs, dict):
        raise ArgumentError(f"{where}: node_attrs must be a dict, got {type(node_attrs).__name__}")
    shapes = _entry_table(where, symbol, shape, "shape") if shape is not None else None
    dtypes = _entry_table(where, symbol, dtype, "dtype") if dtype is not None else None
    nodes = topo_order(symbol._outputs)
    names = [n.name for n in nodes]
    if len(set(names)) != len(names):
        seen, repeated = set(), []
        for n in names:
            if n in seen and n not in repeated:
                repeated.append(n)
            seen.add(n)
        warnings.warn("There are multiple variables with the same name in your graph, this may "
                      "result in cyclic graph. Repeated names: " + ",".join(repeated),
                      RuntimeWarning, stacklevel=2)
    base = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
            "style": "filled"}
    base.update(node_attrs)
    dot = Digraph(name=title, format=save_format)
    hidden = set()
    for node in nodes:
        if node.op is None:
            if node.name.endswith(_WEIGHT_LIKE):
                if hide_weights:
                    hidden.add(node.name)
                continue
            attr = dict(base, shape="oval", fillcolor=_COLORS[0])
            dot.node(name=node.name, label=node.name, **attr)
            continue
        label, attr = _node_style(node, base)
        dot.node(name=node.name, label=label, **attr)
    for node in nodes:
        if node.op is None:
            continue
        inputs = node.inputs[:1] if node.op.name == "_contrib_BilinearResize2D" else node.inputs
        for e in inputs:
            if e.node.name in hidden:
                continue
            label = ""
            if shapes is not None:
                s = shapes.get(e)
                label = "x".join(str(d) for d in s[1:]) if s is not None else ""
            if dtypes is not None and dtypes.get(e) is not None:
                label += f"({dtypes[e].__name__})"
            dot.edge(tail_name=node.name, head_name=e.node.name, dir="back", arrowtail="open",
                     label=label)
    return dot


@shared_doc(figure_args=FIGURE_ARGS)
def plot_memory(executor, path=None, title=None, size=(10, 5), dpi=100):
    """Draw a bound executor's arena: offset against schedule step, one
    rectangle per planned entry (forward, backward, scratch, and in red the
    entries a memory budget recomputes), with the budget and the arena
    without it as lines (``nbdl.planner.plot.plot_plan``).

    Parameters
    ----------
    executor : Executor or MemoryPlan
        What to draw (an executor's ``memory_plan`` and its forward/backward
        boundary).
    path : str, optional
        Where to save the picture (.png, .svg, .pdf, ...).
    title : str, optional
        The figure's title.
    {figure_args}

    Raises
    ------
    OptionalDependencyError
        When matplotlib is not installed (``pip install nbdl[plot]``).
    """
    plan = getattr(executor, "memory_plan", executor)
    sched = getattr(executor, "_sched", None)
    return plot_plan(plan, path, n_forward=sched.n_forward if sched is not None else None,
                     title=title, size=size, dpi=dpi)
