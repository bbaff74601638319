"""Assemble what an executor runs: the forward graph, the gradient graph for
the arguments that want gradients, and every entry's shape and dtype."""
from dataclasses import dataclass, field

import numpy as np

from ..errors import ShapeError
from ..graph.fuse import fuse_for_inference
from ..graph.gradient import build_gradient
from ..graph.infer import infer_shapes, infer_types
from ..ops.ir import classify_variables, make_node, make_variable, topo_order
from ..ops.registry import shapes_str


@dataclass
class BoundGraph:
    heads: list                  # forward output entries
    arg_nodes: list              # variable nodes, list_arguments order
    aux_nodes: list
    fwd_nodes: list              # op nodes of the forward pass, in order
    bwd_nodes: list              # op nodes of the backward pass, in order
    head_grads: list             # variable entries holding the head gradients
    grad_of: dict                # arg name -> entry holding its gradient
    shapes: dict                 # Entry -> shape
    dtypes: dict                 # Entry -> np.dtype
    grad_copy_nodes: set = field(default_factory=set)
    fused: list = field(default_factory=list)   # nbdl.graph.fuse's rewrites (inference binds)


def forward_heads(sym):
    """The symbol's outputs; a variable that is itself an output is copied so
    that every output is produced by a kernel into planned memory."""
    heads = []
    for e in sym._outputs:
        if e.node.op is None:
            e = make_node("_copy", [e], name=f"{e.node.name}_output_copy").output(0)
        heads.append(e)
    return heads


def infer_all(order, arg_nodes, known_shapes, known_types, what="bind"):
    shapes = infer_shapes(order, known_shapes)
    dtypes = infer_types(order, known_types)
    # Variables nobody constrained default to float32, as in MXNet (and only
    # then is a second sweep needed).
    defaulted = False
    for node in order:
        if node.op is None and dtypes.get(node.output(0)) is None:
            dtypes[node.output(0)] = np.dtype(np.float32)
            defaulted = True
    if defaulted:
        dtypes = infer_types(order, dtypes)
    return shapes, dtypes


def check_complete(order, shapes, arg_nodes, aux_nodes):
    missing_args = [n.name for n in arg_nodes + aux_nodes if shapes.get(n.output(0)) is None]
    if missing_args:
        raise ShapeError(f"shape inference is incomplete: cannot infer the shapes of "
                         f"{', '.join(repr(m) for m in missing_args)}; give their shapes "
                         f"(or the shapes they depend on)")
    for node in order:
        if node.op is None:
            continue
        for i in range(node.num_outputs):
            if shapes.get(node.output(i)) is None:
                ins = [shapes.get(e) for e in node.inputs]
                raise ShapeError(f"{node.op.name} (node {node.name!r}): output {i} shape could not "
                                 f"be inferred from input shapes {shapes_str(ins)}")


def _plain_shape(s):
    return type(s) is tuple and all(type(d) is int for d in s)


def _reuse(s_table, t_table, known_s, known_t):
    """Copies of ``simple_bind``'s tables as ``infer_all`` from the bound
    arrays would give them: every variable's value is the array's; None
    when a value is not in the canonical form (a shape a tuple of ints, a
    dtype an ``np.dtype``), so that the caller infers again."""
    for e, v in known_s.items():
        if s_table.get(e) != v:
            return None, None
    for e, v in known_t.items():
        if t_table.get(e) != v:
            return None, None
    if not (all(map(_plain_shape, s_table.values()))
            and all(isinstance(t, np.dtype) for t in t_table.values())):
        return None, None
    shapes, dtypes = dict(s_table), dict(t_table)
    shapes.update(known_s)
    dtypes.update(known_t)
    return shapes, dtypes


def build(sym, arg_shapes, arg_dtypes, aux_shapes, aux_dtypes, wants_grad, checked=None,
          fuse=False):
    """``arg_shapes``/``arg_dtypes``: {name: value} for the bound arguments;
    ``wants_grad``: names of the arguments that get gradients;
    ``checked``: ``(topo_order(sym._outputs), arguments, aux states)`` when
    the caller has them, followed by ``simple_bind``'s shape and dtype tables
    when the arrays were made from them; ``fuse``: rewrite the graph for
    inference (``nbdl.graph.fuse``; only without gradients)."""
    heads = forward_heads(sym)
    if checked is not None and all(h is e for h, e in zip(heads, sym._outputs)):
        order, arg_nodes, aux_nodes = checked[:3]   # no output was a variable: the same graph
    else:
        order = topo_order(heads)
        arg_nodes, aux_nodes = classify_variables(order)
    by_name = {n.name: n for n in arg_nodes + aux_nodes}
    known_s = {by_name[k].output(0): v for k, v in list(arg_shapes.items()) + list(aux_shapes.items())
               if v is not None}
    known_t = {by_name[k].output(0): v for k, v in list(arg_dtypes.items()) + list(aux_dtypes.items())
               if v is not None}
    if checked is not None and len(checked) > 3 and order is checked[0]:
        # ``simple_bind`` inferred this graph and made the arrays from its
        # tables: as in MXNet, those are the shapes (an incomplete table
        # infers again, for the same error as before).
        shapes, dtypes = _reuse(checked[3], checked[4], known_s, known_t)
        if shapes is not None:
            try:
                check_complete(order, shapes, arg_nodes, aux_nodes)
            except ShapeError:
                shapes = None
    else:
        shapes = None
    if shapes is None:
        shapes, dtypes = infer_all(order, arg_nodes, known_s, known_t)
        check_complete(order, shapes, arg_nodes, aux_nodes)
    fused = []
    if fuse and not wants_grad:
        heads, order, fused = fuse_for_inference(heads, order, shapes, dtypes)
    fwd_nodes = [n for n in order if n.op is not None]

    head_grads, grad_of, bwd_nodes = [], {}, []
    wrt = [n for n in arg_nodes if n.name in wants_grad]
    if wrt:
        for i, h in enumerate(heads):
            v = make_variable(f"{h.name}_head_grad{i}" if len(heads) > 1 else f"{h.name}_head_grad")
            head_grads.append(v.output(0))
            shapes[v.output(0)] = shapes[h]
            dtypes[v.output(0)] = dtypes[h]
        grads = build_gradient(heads, head_grads, [n.output(0) for n in wrt], order=order)
        # The nodes ``topo_order(heads + grads)`` puts after the forward ones.
        # Every forward entry is known, so inferring over these alone gives
        # what a pass over the whole graph would (forward nodes are skipped
        # as finished there).
        new = topo_order(grads, {id(n) for n in order})
        shapes, dtypes = infer_all(new, arg_nodes, shapes, dtypes)
        check_complete(new, shapes, arg_nodes, aux_nodes)
        bwd_nodes = [n for n in new if n.op is not None]
        for n, g in zip(wrt, grads):
            grad_of[n.name] = g
    return BoundGraph(heads, arg_nodes, aux_nodes, fwd_nodes, bwd_nodes, head_grads,
                      grad_of, shapes, dtypes, fused=fused)
