"""``debug_str``: MXNet's graph listing, then nbdl's memory table."""
from ..ops.ir import topo_order
from ..planner import format_plan_table


def _graph_listing(heads, nodes, variables):
    lines = ["Symbol Outputs:"]
    for i, h in enumerate(heads):
        lines.append(f"\toutput[{i}]={h.node.name}({h.index})")
    for v in variables:
        lines.append(f"Variable:{v.name}")
    for node in nodes:
        lines.append("--------------------")
        lines.append(f"Op:{node.op.name}, Name={node.name}")
        lines.append("Inputs:")
        for i, e in enumerate(node.inputs):
            lines.append(f"\targ[{i}]={e.node.name}({e.index}) version=0")
        if node.attr_str:
            lines.append("Attrs:")
            for k, v in node.attr_str.items():
                lines.append(f"\t{k}={v}")
    return lines


def symbol_debug_str(sym):
    order = topo_order(sym._outputs)
    return "\n".join(_graph_listing(sym._outputs, [n for n in order if n.op is not None],
                                    [n for n in order if n.op is None])) + "\n"


def executor_debug_str(ex):
    sched = ex._sched
    bg = ex._bg
    variables = bg.arg_nodes + bg.aux_nodes + [e.node for e in bg.head_grads]
    lines = _graph_listing(bg.heads, sched.nodes, variables)
    if bg.fused:
        lines.append("--------------------")
        lines.append("Fused for inference (nbdl.graph.fuse; NBDL_GRAPH_PASSES=0 binds the graph "
                     "as written):")
        lines += [f"\t{f.describe()}" for f in bg.fused]
    chosen = [(p.node.name, p.fn.nbdl_describe(p.scalars)) for p in sched.fwd_infer
              if getattr(p.fn, "nbdl_describe", None)]
    if chosen:
        lines.append("--------------------")
        lines.append("Kernels chosen at bind for the layer's shape (inference forward):")
        lines += [f"\t{name}: {algo}" for name, algo in chosen]
    plan = sched.plan
    # Temps a kernel requested with zero size (scratch it needs only in some
    # modes) are not counted.
    n_temp = sum(1 for v in sched.temps.values() for t in v if plan.request.nbytes.get(t, 0) > 0)
    lines.append(f"Total {plan.arena_bytes >> 20} MB allocated "
                 f"({plan.arena_bytes} bytes planned, temp space included)")
    lines.append(f"Total {n_temp} TempSpace resource requested")
    lines.append("")
    lines.append(format_plan_table(plan))
    return "\n".join(lines) + "\n"


def debug_str(obj):
    """``nbdl.debug_str(executor)`` (or anything with a ``debug_str`` method)."""
    return obj.debug_str()
