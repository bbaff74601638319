"""The gradient pass: reverse-mode over the graph using each op's
``gradient`` rule, which builds the input gradients out of registered ops.
The result is an ordinary graph, so backward is planned like forward."""
from ..errors import GraphError
from ..ops.ir import Entry, make_node, topo_order


def _sum(entries, name_hint):
    if len(entries) == 1:
        return entries[0]
    return make_node("add_n", entries, name=f"{name_hint}_sum").output(0)


def build_gradient(heads, head_grads, wrt, order=None):
    """Gradient entries of ``wrt`` (variable entries) given the head gradients.

    Parameters
    ----------
    heads : list of Entry
        The outputs differentiated.
    head_grads : list of Entry
        One gradient entry per head.
    wrt : list of Entry
        Variable entries whose gradients are wanted.
    order : list of Node, optional
        ``topo_order(heads)``, when the caller has it.

    Returns a list with one Entry per ``wrt``; an argument no head depends on
    gets a ``zeros_like`` node."""
    if order is None:
        order = topo_order(heads)
    wrt_ids = {id(e.node) for e in wrt}
    # Only nodes downstream of a wrt variable carry gradient.
    live = set(wrt_ids)
    for node in order:
        if node.op is not None:
            for e in node.inputs:
                if id(e[0]) in live:
                    live.add(id(node))
                    break
    contribs = {}
    for h, g in zip(heads, head_grads):
        contribs.setdefault(h, []).append(g)
    for node in reversed(order):
        op = node.op
        if op is None or id(node) not in live:
            continue
        outs = node.outputs()
        for o in outs:
            if o in contribs:
                break
        else:
            continue
        if op.gradient is None:
            continue  # not differentiable: no gradient flows through it
        out_grads = []
        for o in outs:
            c = contribs.get(o)
            if c:
                out_grads.append(c[0] if len(c) == 1 else _sum(c, f"{node.name}_{o.index}_grad"))
            else:
                zero = make_node("zeros_like", [o], name=f"{node.name}_out{o.index}_zero")
                out_grads.append(zero.output(0))
        in_grads = op.gradient(node, out_grads)
        inputs = node.inputs
        if len(in_grads) > len(inputs):
            raise GraphError(f"{op.name}: gradient rule returned {len(in_grads)} "
                             f"gradients for {len(inputs)} inputs")
        for inp, g in zip(inputs, in_grads):
            if g is None or id(inp[0]) not in live:
                continue
            if not isinstance(g, Entry):
                raise GraphError(f"{op.name}: gradient rule returned {g!r}, not an Entry")
            c = contribs.get(inp)
            if c is None:
                contribs[inp] = [g]
            else:
                c.append(g)
    result = []
    for e in wrt:
        c = contribs.get(e)
        if c:
            result.append(_sum(c, f"{e.node.name}_grad"))
        else:
            result.append(make_node("zeros_like", [e], name=f"{e.node.name}_zerograd").output(0))
    return result
