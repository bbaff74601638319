"""A memory budget at bind time: the forward nodes' recompute rules, the
planner's choice (``nbdl.planner.recompute``) and the graph it asks for.

``compile_schedule`` builds the plan request of the bound graph; when a
budget is given and the schedule does not fit, ``fit`` turns every forward
node into a rule the planner can use (``OpDef.recompute``: run the node again,
a replacement call on kept entries, or never), asks the planner which entries
to drop, and returns the bound graph with the recompute nodes placed in the
backward pass and the backward nodes reading their outputs.  The schedule of
that graph is then compiled as any other; its plan is checked against the
budget and carries the ``BudgetInfo``.
"""
import dataclasses
import math

import numpy as np

from ..errors import MemoryBudgetError
from ..ops.ir import Node, make_node
from ..runner.call import prepare
from ..planner import plan as make_plan
from ..planner.recompute import BudgetRequest, Recompute, RecomputeStep, fit_budget


def node_flops(node, shapes):
    """FLOPs of one call of ``node`` (``OpDef.flops``; by default one per
    element read or written).

    Parameters
    ----------
    node : Node
        An op node of a bound graph.
    shapes : dict
        Entry -> shape for every entry of the graph.
    """
    op = node.op
    ins = [tuple(shapes[e]) for e in node.inputs]
    outs = [tuple(shapes[e]) for e in node.outputs()]
    if op.flops is not None:
        return int(op.flops(node.attrs, ins, outs))
    skip = op.list_shape_inputs(node.attrs)
    return sum(math.prod(s) for k, s in enumerate(ins) if k not in skip) + \
        sum(math.prod(s) for s in outs)


@dataclasses.dataclass
class _Rule:
    """A forward node's recompute call: ``node`` re-run, or ``repl`` (a
    replacement node on entries of the forward graph, output k making the
    node's output ``outputs[k]``)."""
    node: Node
    repl: Node = None
    outputs: tuple = ()


def _rules(nodes, n_forward, request, ids, bg, device):
    """({step: planner Recompute}, {step: _Rule}, forward FLOPs)."""
    shapes, dtypes = bg.shapes, bg.dtypes
    rules, graph_rules, fwd_flops = {}, {}, 0
    for k in range(n_forward):
        node = nodes[k]
        op = node.op
        flops = node_flops(node, shapes)
        fwd_flops += flops
        rule = op.recompute
        st = request.steps[k]
        if rule is None:
            if op.train_aware or op.mutates_aux or op.list_mutates(node.attrs):
                continue
            reads, writes = list(st.reads), list(st.writes)
            if any(w in request.external for w in writes):
                continue
            rules[k] = Recompute(reads, writes, [request.nbytes[t] for t in st.temps],
                                 [(reads.index(i), writes.index(o)) for i, o in st.inplace],
                                 flops)
            graph_rules[k] = _Rule(node)
            continue
        if rule is False:
            continue
        rc = rule(node)
        if rc is None:
            continue
        repl = make_node(rc.op, rc.inputs, rc.attrs, name=f"{node.name}_recompute")
        rop = repl.op
        outs = [node.output(j) for j in rc.outputs]
        in_s = [tuple(shapes[e]) for e in rc.inputs]
        in_d = [dtypes[e] for e in rc.inputs]
        call = prepare(rop, repl.attrs, in_s, in_d, [tuple(shapes[e]) for e in outs],
                       [dtypes[e] for e in outs], device, node_name=repl.name)
        skip = call.shape_inputs()
        read_pos = {}
        reads = []
        for i, e in enumerate(rc.inputs):
            if i not in skip:
                read_pos[i] = len(reads)
                reads.append(ids[e])
        temps = [_nbytes(s, d) for s, d in call.temps]
        pairs = [(read_pos[i], o) for i, o in call.inplace()
                 if i in read_pos and o < len(outs)]
        rshapes = dict(zip(rc.inputs, in_s))
        rshapes.update(zip(repl.outputs(), call.out_shapes))
        rules[k] = Recompute(reads, [ids[e] for e in outs], temps, pairs,
                             node_flops(repl, rshapes))
        graph_rules[k] = _Rule(node, repl, tuple(rc.outputs))
    return rules, graph_rules, fwd_flops


def _nbytes(shape, dtype):
    return math.prod(shape) * np.dtype(dtype).itemsize


def _remapped(node, inputs, name=None):
    return Node(node.op, name or node.name, node.attrs, node.attr_str, inputs, node.user_attrs)


def _graph(bg, bound, nodes, n_forward, ids, graph_rules, bp):
    """(the bound graph of ``bp.order``: recompute nodes among the backward
    ones, reads of dropped entries redirected to their copies; {copy Entry:
    original Entry}; the ids of the recompute nodes)."""
    entry_of = {i: e for e, i in ids.items()}
    redirect = {entry_of[o]: c for o, c in bp.redirect.items()}    # Entry -> copy id
    made = {}                                                        # copy id -> Entry
    rename = {}                                                      # old Entry -> new Entry
    copy_of = {}
    shapes, dtypes = dict(bg.shapes), dict(bg.dtypes)
    bwd = []

    def read(node, k, e):
        e = rename.get(e, e)
        if e not in redirect or k in node.op.list_shape_inputs(node.attrs):
            return e          # shape-only inputs are not reads: no copy needed
        return made[redirect[e]]

    for item in bp.order[n_forward:]:
        if isinstance(item, RecomputeStep):
            rule = graph_rules[item.step]
            src = rule.repl or rule.node
            clone = _remapped(src, [read(src, k, e) for k, e in enumerate(src.inputs)],
                              name=f"{rule.node.name}_recompute")
            outs = rule.outputs if rule.repl is not None else range(rule.node.num_outputs)
            for j, i in enumerate(outs):
                orig = rule.node.output(i)
                c = clone.output(j)
                made[item.copies[ids[orig]]] = c
                copy_of[c] = orig
                shapes[c], dtypes[c] = shapes[orig], dtypes[orig]
            bwd.append(clone)
            continue
        node = nodes[item]
        new_inputs = [read(node, k, e) for k, e in enumerate(node.inputs)]
        if any(a is not b for a, b in zip(new_inputs, node.inputs)):
            new = _remapped(node, new_inputs)
            for old_e, new_e in zip(node.outputs(), new.outputs()):
                rename[old_e] = new_e
                shapes[new_e], dtypes[new_e] = shapes[old_e], dtypes[old_e]
            node = new
        bwd.append(node)
    # the gradients bound_gradients bound (a second pass then binds the same)
    grad_of = dict(bg.grad_of)
    grad_of.update(bound)
    grad_of = {k: rename.get(v, v) for k, v in grad_of.items()}
    graph = dataclasses.replace(bg, bwd_nodes=bwd, grad_of=grad_of, shapes=shapes, dtypes=dtypes)
    return graph, copy_of


def within_budget(bg, bound, nodes, ids, request, budget, device, compile_graph):
    """Fit the schedule being compiled into ``budget`` arena bytes.

    Returns ``(schedule, info)``: ``schedule`` is None when the schedule fits
    as it is (the caller plans it and gives its plan ``info``); otherwise it
    is the compiled schedule of the graph with recompute nodes, its plan
    already carrying ``info``.

    Parameters
    ----------
    bg : BoundGraph
        The graph being compiled.
    bound : dict
        Argument name -> the entry its gradient array is bound to
        (``schedule.bind_gradients``).
    nodes : list
        The schedule's nodes, forward then backward (step k is node k).
    ids : dict
        Entry -> planner id, as in ``request``.
    request : PlanRequest
        The schedule's plan request.
    budget : int
        Arena bytes.
    device : Device
        Where the graph runs (a recompute call's scratch depends on it).
    compile_graph : callable
        ``compile_graph(bound_graph) -> Schedule`` without a budget.

    Raises
    ------
    MemoryBudgetError
        When no recompute choice fits (it names the smallest budget that does).
    """
    n_forward = len(bg.fwd_nodes)
    rules, graph_rules, fwd_flops = _rules(nodes, n_forward, request, ids, bg, device)
    base = make_plan(dataclasses.replace(request, mode="greedy"))
    target = budget
    for _ in range(_ATTEMPTS):
        try:
            bp = fit_budget(BudgetRequest(request, n_forward, rules, target, fwd_flops), base)
        except MemoryBudgetError as e:
            if target == budget:
                raise
            raise MemoryBudgetError(f"memory budget of {budget:,} bytes is too small for this "
                                    f"graph: the smallest budget nbdl's planner meets is "
                                    f"{e.smallest:,} bytes", smallest=e.smallest) from None
        info = dataclasses.replace(bp.plan.budget, budget=budget)
        if not info.recompute_steps:
            return None, info
        graph, copy_of = _graph(bg, bound, nodes, n_forward, ids, graph_rules, bp)
        sched = compile_graph(graph)
        # the compiled graph numbers its entries anew
        sid = sched.ids
        unread = sched.request.unwritten
        info.recomputed = {sid[c]: sid[o] for c, o in copy_of.items()
                           if c in sid and sid[c] not in unread}
        clones = {id(c.node) for c in copy_of}
        info.recompute_steps = [k for k, n in enumerate(sched.nodes) if id(n) in clones]
        sched.plan.budget = info
        if sched.plan.stats.packer == "naive" or sched.plan.arena_bytes <= budget:
            return sched, info
        # a compiled call's scratch differs from the rule's (its outputs
        # nobody reads are not written): aim lower by the difference
        target -= sched.plan.arena_bytes - budget
    raise MemoryBudgetError(f"memory budget of {budget:,} bytes: the recompute schedule still "
                            f"plans {sched.plan.arena_bytes:,} bytes after {_ATTEMPTS} attempts",
                            smallest=sched.plan.arena_bytes)


_ATTEMPTS = 3

__all__ = ["within_budget", "node_flops"]
