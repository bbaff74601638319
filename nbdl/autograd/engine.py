"""Reverse mode over the tape, using the ops' own gradient rules.

For each taped op, in reverse order, the op's ``gradient`` rule builds its
input gradients out of registered ops on a one-node IR graph whose inputs and
outputs are placeholders bound to the recorded arrays; the new nodes are then
run eagerly with ``invoke``.  The same rules serve the executor, so eager and
bound gradients agree.  With ``create_graph=True`` those ops are themselves
recorded, which gives higher-order gradients."""
from ..errors import NbdlError
from ..graph.ir import Node, make_variable, topo_order
from . import state
from .tape import TapeNode


def _key(a):
    ag = getattr(a, "_ag", None)
    return ("out", id(ag[0]), ag[1]) if ag is not None else ("leaf", id(a))


def _reachable(heads):
    """Taped nodes reachable from ``heads``, inputs before users."""
    order, seen = [], set()
    stack = []
    for h in heads:
        ag = getattr(h, "_ag", None)
        if ag is not None and id(ag[0]) not in seen:
            seen.add(id(ag[0]))
            stack.append((ag[0], 0))
        while stack:
            node, i = stack.pop()
            if node.freed:
                raise NbdlError(f"backward through {node.name!r}: its graph was freed by an "
                                f"earlier backward; pass retain_graph=True to backward twice")
            if i < len(node.inputs):
                stack.append((node, i + 1))
                ag = getattr(node.inputs[i], "_ag", None)
                if ag is not None and id(ag[0]) not in seen:
                    seen.add(id(ag[0]))
                    stack.append((ag[0], 0))
            else:
                order.append(node)
    return order


def _add(a, b):
    from ..ndarray.invoke import invoke
    if a is None:
        return b
    return invoke("elemwise_add", [a, b])


def _op_input_grads(tn, out_grads, train_mode):
    """Input gradients of one taped op from its gradient rule."""
    from ..ndarray.invoke import invoke
    op = tn.op
    if op.gradient is None:
        return [None] * len(tn.inputs)
    attrs, attr_str = op.parse_attrs(tn.attrs or {})
    holders = [make_variable(f"in{i}") for i in range(len(tn.inputs))]
    node = Node(op, tn.name, attrs, attr_str, [h.output(0) for h in holders])
    env = {h.output(0): a for h, a in zip(holders, tn.inputs)}
    for i, o in enumerate(tn.outputs):
        env[node.output(i)] = o
    og_entries = []
    for i, g in enumerate(out_grads):
        v = make_variable(f"og{i}")
        env[v.output(0)] = g if g is not None else invoke("zeros_like", [tn.outputs[i]])
        og_entries.append(v.output(0))
    in_grads = op.gradient(node, og_entries)
    wanted = [e for e in in_grads if e is not None]
    for n in topo_order(wanted):
        if n.op is None or n.output(0) in env:
            continue
        res = invoke(n.op, [env[e] for e in n.inputs], n.attr_str, is_train=train_mode)
        res = res if isinstance(res, list) else [res]
        for i, r in enumerate(res):
            env[n.output(i)] = r
    return [env[e] if e is not None else None for e in in_grads]


_pass = [0]


def current_pass():
    """A counter bumped by every backward pass.  A custom node that writes a
    variable's gradient buffer itself (a hybridized block) stamps it with the
    pass, so ``write_grads`` adds to it instead of overwriting it."""
    return _pass[0]


def run_backward(heads, head_grads, variables, retain_graph, create_graph, train_mode):
    """Gradients of ``heads`` (weighted by ``head_grads``) for ``variables``
    (NDArrays).  Returns a dict id(variable) -> gradient NDArray (or None)."""
    from ..ndarray.invoke import invoke
    _pass[0] += 1
    order = _reachable(heads)
    var_ids = {id(v) for v in variables}
    # Nodes that lead to a variable: only their inputs need gradients.
    leads = set()
    for tn in order:
        if tn.writes_grads or any(
                id(a) in var_ids or (getattr(a, "_ag", None) is not None and id(a._ag[0]) in leads)
                for a in tn.inputs):
            leads.add(id(tn))
    grads = {}
    with state._Scope(bool(create_graph), train_mode):
        for h, g in zip(heads, head_grads):
            if g is None:
                g = invoke("ones_like", [h])
            k = _key(h)
            grads[k] = _add(grads.get(k), g)
        for tn in reversed(order):
            if id(tn) not in leads:
                continue
            out_grads = [grads.get(("out", id(tn), i)) for i in range(len(tn.outputs))]
            if all(g is None for g in out_grads):
                continue
            if tn.op is None:
                filled = [g if g is not None else invoke("zeros_like", [o])
                          for g, o in zip(out_grads, tn.outputs)]
                in_grads = list(tn.backward_fn(filled))
                if len(in_grads) != len(tn.inputs):
                    raise NbdlError(f"{tn.name}: backward returned {len(in_grads)} gradients "
                                    f"for {len(tn.inputs)} inputs")
            else:
                in_grads = _op_input_grads(tn, out_grads, train_mode)
            for a, g in zip(tn.inputs, in_grads):
                if g is None:
                    continue
                ag = getattr(a, "_ag", None)
                if id(a) in var_ids or (ag is not None and id(ag[0]) in leads):
                    k = _key(a)
                    grads[k] = _add(grads.get(k), g)
    if not retain_graph:
        for tn in order:
            tn.freed = True
            tn.inputs = []
            tn.outputs = []
    return {id(v): grads.get(("leaf", id(v)), grads.get(_key(v))) for v in variables}


def write_grads(variables, results):
    """Store results into the variables' gradient buffers per grad_req."""
    from ..ndarray.invoke import invoke
    with state._Scope(False, None):
        for v in variables:
            var = v._ag_var
            g = results.get(id(v))
            if g is None or var.grad_req == "null":
                continue
            if tuple(g.shape) != tuple(var.grad.shape):
                raise NbdlError(f"gradient of shape {tuple(g.shape)} for a variable of shape "
                                f"{tuple(var.grad.shape)}")
            already = getattr(var.grad, "_written_in", None) == _pass[0]
            if var.grad_req == "add" or already:
                invoke("elemwise_add", [var.grad, g], out=var.grad)
            else:
                invoke("_copy", [g], out=var.grad)
            var.grad._fresh_grad = True


def collect_variables(heads):
    """Every marked variable the heads depend on."""
    out, seen = [], set()
    for h in heads:
        if getattr(h, "_ag_var", None) is not None and id(h) not in seen:
            seen.add(id(h))
            out.append(h)
    for tn in _reachable(heads):
        for a in tn.inputs:
            if getattr(a, "_ag_var", None) is not None and id(a) not in seen:
                seen.add(id(a))
                out.append(a)
    return out


__all__ = ["run_backward", "write_grads", "collect_variables", "TapeNode"]
