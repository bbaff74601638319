"""Reverse mode over the tape, using the ops' own gradient rules.

For each taped op, in reverse order, the op's ``gradient`` rule builds its
input gradients out of registered ops on a one-node IR graph whose inputs and
outputs are placeholders bound to the recorded arrays; the new nodes are then
run eagerly (``invoke_step``).  What a rule builds is kept as a ``_Recipe``
per (op, attributes, which inputs need a gradient), so a training loop
applies each rule once.  The same rules serve the executor, so eager and
bound gradients agree.  With ``create_graph=True`` those ops are themselves
recorded, which gives higher-order gradients.  Arrays the pass makes are
of the heads' class (``invoke``'s rule: the class of a call's first input).
``backward`` is ``NDArray.backward`` and ``autograd.backward``."""
from ..errors import NbdlError
from ..graph.signature import raw_attr_key as _attr_key
from ..ops.ir import Node, make_variable, topo_order
from ..ops.registry import REQ_NULL, REQ_WRITE
from . import state
from .invoke import invoke, invoke_step
from .tape import TapeNode


def _key(a):
    ag = getattr(a, "_ag", None)
    return ("out", id(ag[0]), ag[1]) if ag is not None else ("leaf", id(a))


def taped_order(roots, keep):
    """Taped nodes reachable from the taped nodes ``roots``, inputs before
    users (depth-first post-order).

    Parameters
    ----------
    roots : list of TapeNode
        Where to start.
    keep : callable
        ``keep(node)``, called once per node reached: False leaves the node
        and what is reached only through it out; it may raise instead.
    """
    order, seen, stack = [], set(), []
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack.append((root, 0))
        while stack:
            node, i = stack.pop()
            if i == 0 and not keep(node):
                continue
            if i < len(node.inputs):
                stack.append((node, i + 1))
                ag = getattr(node.inputs[i], "_ag", None)
                if ag is not None and id(ag[0]) not in seen:
                    seen.add(id(ag[0]))
                    stack.append((ag[0], 0))
            else:
                order.append(node)
    return order


def _reachable(heads):
    """Taped nodes reachable from ``heads``, inputs before users."""
    roots = [h._ag[0] for h in heads if getattr(h, "_ag", None) is not None]
    head_nodes = {id(n) for n in roots}

    def live(node):
        if node.freed:
            if id(node) in head_nodes:
                raise NbdlError(f"backward through {node.name!r}: its graph was freed by "
                                f"an earlier backward; pass retain_graph=True to backward "
                                f"twice")
            # an array whose history an earlier backward freed, used again in a
            # new recording: a constant there, as MXNet clears its history
            return False
        return True
    return taped_order(roots, live)


def _add(a, b):
    if a is None:
        return b
    return invoke("elemwise_add", [a, b])


class _Recipe:
    """An op's gradient rule applied once and kept: the ops to run, over a
    numbered environment (the op's inputs, its outputs, the output
    gradients, then each step's outputs), for one set of needed inputs.

    ``steps`` holds ``(op, raw attrs, attr key, input slots, output slots,
    req)`` with ``req`` None (all written) or a tuple in which outputs no
    later step reads and no needed gradient is are ``REQ_NULL``;
    ``in_grads`` the slot of each input's gradient (None: not needed or no
    gradient); ``og_read`` the output gradients something reads."""
    __slots__ = ("op", "steps", "in_grads", "og_read", "n_slots", "first_step_slot")


_recipes = {}
_RECIPES_SIZE = 2048


def _recipe(tn, need):
    """The ``_Recipe`` of taped node ``tn`` when the inputs flagged in
    ``need`` want gradients (cached per op, attributes and need)."""
    op = tn.op
    raw = tn.attrs or {}
    akey = tn.akey if tn.akey is not None else _attr_key(raw)
    n_in, n_out = len(tn.inputs), len(tn.outputs)
    key = None if akey is None else (op.name, akey, n_in, n_out, need)
    if key is not None:
        rec = _recipes.get(key)
        if rec is not None and rec.op is op:
            return rec
    attrs, attr_str = op.parse_attrs(raw)
    holders = [make_variable(f"in{i}") for i in range(n_in)]
    node = Node(op, tn.name, attrs, attr_str, [h.output(0) for h in holders])
    slot = {h.output(0): i for i, h in enumerate(holders)}
    for i in range(n_out):
        slot[node.output(i)] = n_in + i
    og_entries = []
    for i in range(n_out):
        e = make_variable(f"og{i}").output(0)
        slot[e] = n_in + n_out + i
        og_entries.append(e)
    in_grads = op.gradient(node, og_entries)
    wanted = [e for e, w in zip(in_grads, need) if w and e is not None]
    first = n = n_in + 2 * n_out
    steps = []
    for gn in topo_order(wanted):
        if gn.op is None or gn.output(0) in slot:
            continue
        ins = tuple(slot[e] for e in gn.inputs)
        outs = tuple(range(n, n + gn.num_outputs))
        n += len(outs)
        for i, s in enumerate(outs):
            slot[gn.output(i)] = s
        steps.append([gn.op, gn.attr_str, _attr_key(gn.attr_str), ins, outs])
    read = {s for st in steps for s in st[3]} | {slot[e] for e in wanted}
    for st in steps:
        req = tuple(REQ_WRITE if s in read else REQ_NULL for s in st[4])
        st.append(None if REQ_NULL not in req else req)
    rec = _Recipe()
    rec.op = op
    rec.steps = [tuple(st) for st in steps]
    rec.in_grads = tuple(slot[e] if w and e is not None else None for e, w in zip(in_grads, need))
    rec.og_read = tuple(i for i in range(n_out) if n_in + n_out + i in read)
    rec.n_slots = n
    rec.first_step_slot = first
    if key is not None:
        if len(_recipes) >= _RECIPES_SIZE:
            _recipes.clear()
        _recipes[key] = rec
    return rec


def _op_input_grads(tn, out_grads, train_mode, need, given=None):
    """Input gradients of one taped op from its gradient rule (None for the
    inputs ``need`` leaves out).  ``given``: per input, an array its
    gradient may be written into directly (or None)."""
    if tn.op.gradient is None:
        if tn.op.name.startswith("_backward_") and any(need):
            # A gradient op recorded by create_graph=True that has no rule of
            # its own: a zero gradient here would be silently wrong.
            raise NbdlError(f"backward through {tn.op.name!r} (recorded by grad(..., "
                            f"create_graph=True)): this gradient op has no gradient rule, so "
                            f"this higher-order gradient is not available")
        return [None] * len(tn.inputs)
    rec = _recipe(tn, need)
    n_in, n_out = len(tn.inputs), len(tn.outputs)
    kind = type(tn.outputs[0]) if n_out else None     # (a step without inputs makes these)
    env = [None] * rec.n_slots
    env[:n_in] = tn.inputs
    env[n_in:n_in + n_out] = tn.outputs
    for i in rec.og_read:
        g = out_grads[i]
        env[n_in + n_out + i] = g if g is not None else invoke("zeros_like", [tn.outputs[i]])
    into = None
    if given is not None:
        into = {}
        for s, g in zip(rec.in_grads, given):
            if g is not None and s is not None and s >= rec.first_step_slot:
                into.setdefault(s, g)
    for op, raw, akey, ins, outs, req in rec.steps:
        gv = None
        if into:
            gv = [into.get(s) for s in outs]
            if all(g is None for g in gv):
                gv = None
        res = invoke_step(op, raw, akey, [env[s] for s in ins], train_mode, req, gv, kind)
        for s, r in zip(outs, res):
            env[s] = r
    return [None if s is None else env[s] for s in rec.in_grads]


_pass = [0]     # bumped by every backward pass (see store_grad)


# -- the one gradient-accumulation policy --------------------------------------------
#
# A variable's gradient buffer (an NDArray) gets gradients from two writers in
# one backward pass: ``write_grads`` (the tape's gradient of the variable) and
# custom nodes that write the buffer themselves (a hybridized block's
# executor).  The policy: with grad_req 'add' every write accumulates; with
# 'write' the first write of a pass overwrites and later writes of the same
# pass accumulate, so a parameter used by two writers gets the sum.  The
# buffer carries the pass of its last write (``NDArray._written_in``) and
# ``NDArray._fresh_grad`` (set by every write; the Trainer clears it when it
# steps and warns on a stale gradient).

def written_this_pass(grad):
    """Whether ``grad`` (a gradient buffer) was already written in this pass.

    Parameters
    ----------
    grad : NDArray
        A variable's gradient buffer.
    """
    return grad._written_in == _pass[0]


def mark_written(grad):
    """Record a write of ``grad`` in this pass (see the policy above) and
    tell the gradient listeners.

    Parameters
    ----------
    grad : NDArray
        A variable's gradient buffer, just written.
    """
    grad._written_in = _pass[0]
    grad._fresh_grad = True
    for listener in _listeners:
        listener(grad)


# Gradient listeners: called with every gradient buffer as it is written
# (``mark_written``), so that a distributed trainer can start reducing a
# bucket of gradients while backward still runs.  A hybridized block's
# backward reports each parameter's gradient right after the step that
# writes it when there is a listener (``CachedOp``).
_listeners = []


def add_grad_listener(fn):
    """Call ``fn(grad)`` on every write of a gradient buffer from now on.

    Parameters
    ----------
    fn : callable
        ``fn(grad)`` with ``grad`` the NDArray just written.
    """
    _listeners.append(fn)


def remove_grad_listener(fn):
    """Stop calling ``fn`` (nothing happens if it is not a listener).

    Parameters
    ----------
    fn : callable
        A function given to ``add_grad_listener``.
    """
    if fn in _listeners:
        _listeners.remove(fn)


def has_grad_listeners():
    """Whether some listener wants to hear of gradient writes as they happen."""
    return bool(_listeners)


def accumulates(grad, grad_req):
    """Whether the next write of ``grad`` adds to it: grad_req ``'add'``, or
    ``grad`` already written in this pass.

    Parameters
    ----------
    grad : NDArray
        A variable's gradient buffer.
    grad_req : str
        The variable's grad_req (``'write'`` or ``'add'``).
    """
    return grad_req == "add" or grad._written_in == _pass[0]


def store_grad(grad, value, grad_req):
    """Write ``value`` into the gradient buffer ``grad`` by the policy.

    Parameters
    ----------
    grad : NDArray
        A variable's gradient buffer.
    value : NDArray
        The gradient computed in this pass (may be ``grad`` itself, when the
        pass computed it in place).
    grad_req : str
        The variable's grad_req (``'write'`` or ``'add'``).
    """
    if accumulates(grad, grad_req):
        invoke("elemwise_add", [grad, value], out=grad)
    elif value is not grad:
        invoke("_copy", [value], out=grad)
    mark_written(grad)


def _storage(a):
    """The id of the array owning ``a``'s memory (numpy views share it)."""
    d = a._data
    base = getattr(d, "base", None)
    return id(base if base is not None else d)


def _direct_targets(order, leads, heads, head_grads, variables, var_ids):
    """Variables whose gradient buffer the one op computing their gradient
    may write directly (``backward`` of a plain eager tape, nothing
    recording): grad_req 'write', a leaf that exactly one input of the tape
    (or one head) feeds, and a buffer no taped array shares memory with.
    Returns {id(variable): gradient NDArray}."""
    count = {}
    for h in heads:
        if id(h) in var_ids:
            count[id(h)] = count.get(id(h), 0) + 1
    used = {_storage(a) for a in list(heads) + [g for g in head_grads if g is not None]}
    for tn in order:
        for a in tn.inputs:
            used.add(_storage(a))
            if id(a) in var_ids and id(tn) in leads:
                count[id(a)] = count.get(id(a), 0) + 1
        for o in tn.outputs:
            used.add(_storage(o))
    out = {}
    for v in variables:
        var = v._ag_var
        if count.get(id(v)) != 1 or var.grad_req != "write" or v._ag is not None:
            continue
        g = var.grad
        if g._device.device_type == "cpu" and _storage(g) not in used:
            used.add(_storage(g))           # (two variables never share a target)
            out[id(v)] = g
    return out


def run_backward(heads, head_grads, variables, retain_graph, create_graph, train_mode,
                 write_into=False, order=None):
    """Gradients of ``heads`` (weighted by ``head_grads``) for ``variables``
    (NDArrays).  Returns a dict id(variable) -> gradient NDArray (or None).
    With ``write_into`` (``backward``, not ``grad``) a variable's gradient
    may be computed straight into its gradient buffer; it then comes back
    as that buffer.  ``order``: ``_reachable(heads)`` when the caller has it."""
    _pass[0] += 1
    if order is None:
        order = _reachable(heads)
    var_ids = {id(v) for v in variables}
    # Nodes that lead to a variable: only their inputs need gradients, and
    # of those only the inputs that are variables or outputs of such nodes
    # (``needs``; known in one pass, as inputs come before their users).
    leads, needs = set(), {}
    for tn in order:
        need = tuple(id(a) in var_ids or (getattr(a, "_ag", None) is not None
                                          and id(a._ag[0]) in leads) for a in tn.inputs)
        if tn.writes_grads or any(need):
            leads.add(id(tn))
            needs[id(tn)] = need
    direct = None
    if write_into and not create_graph and not any(tn.writes_grads for tn in order):
        direct = _direct_targets(order, leads, heads, head_grads, variables, var_ids) or None
    if create_graph:
        # Gradient rules read the recorded outputs (exp's gradient is
        # og * out); the node's views of them must lead back to the node for
        # the recorded gradient to depend on the inputs through them (the
        # view -> node -> view cycle is left to the garbage collector).
        for tn in order:
            for i, o in enumerate(tn.outputs):
                o._ag = (tn, i)
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
            need = needs[id(tn)]
            if tn.op is None:
                filled = [g if g is not None else invoke("zeros_like", [o])
                          for g, o in zip(out_grads, tn.outputs)]
                in_grads = list(tn.backward_fn(filled))
                if len(in_grads) != len(tn.inputs):
                    raise NbdlError(f"{tn.name}: backward returned {len(in_grads)} gradients "
                                    f"for {len(tn.inputs)} inputs")
            else:
                given = None
                if direct is not None:
                    given = [direct.get(id(a)) for a in tn.inputs]
                    if all(g is None for g in given):
                        given = None
                in_grads = _op_input_grads(tn, out_grads, train_mode, need, given)
            for a, g, w in zip(tn.inputs, in_grads, need):
                if g is None or not w:
                    continue
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
    with state._Scope(False, None):
        for v in variables:
            var = v._ag_var
            g = results.get(id(v))
            if g is None or var.grad_req == "null":
                continue
            if tuple(g.shape) != tuple(var.grad.shape):
                raise NbdlError(f"gradient of shape {tuple(g.shape)} for a variable of shape "
                                f"{tuple(var.grad.shape)}")
            store_grad(var.grad, g, var.grad_req)


def collect_variables(heads, order=None):
    """Every marked variable the heads depend on (``order``:
    ``_reachable(heads)`` when the caller has it)."""
    out, seen = [], set()
    for h in heads:
        if getattr(h, "_ag_var", None) is not None and id(h) not in seen:
            seen.add(id(h))
            out.append(h)
    for tn in (_reachable(heads) if order is None else order):
        for a in tn.inputs:
            if getattr(a, "_ag_var", None) is not None and id(a) not in seen:
                seen.add(id(a))
                out.append(a)
    return out


def as_list(x):
    """None, or ``x`` as a list (an array alone becomes a list of one)."""
    if x is None:
        return None
    return list(x) if isinstance(x, (list, tuple)) else [x]


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Compute the gradients of ``heads`` for every variable they depend on
    and store them in the variables' gradient buffers (per grad_req).

    Parameters
    ----------
    heads : array or list of arrays
        Outputs computed under ``record()``.
    head_grads : array or list, optional
        Their gradients (ones when omitted; None entries are ones too).
    retain_graph : bool
        Keep the tape for another pass.
    train_mode : bool
        Run the gradient ops in training mode.
    """
    heads = as_list(heads)
    head_grads = as_list(head_grads) or [None] * len(heads)
    if len(head_grads) != len(heads):
        raise NbdlError(f"backward: {len(head_grads)} head gradients for {len(heads)} heads")
    for h, g in zip(heads, head_grads):
        if g is not None and tuple(g.shape) != tuple(h.shape):
            raise NbdlError(f"backward: head gradient shape {tuple(g.shape)} differs from the "
                            f"head's {tuple(h.shape)}")
    if not any(getattr(h, "_ag", None) is not None or getattr(h, "_ag_var", None) is not None
               for h in heads):
        raise NbdlError("backward: the heads were not computed under autograd.record() from "
                        "arrays with attach_grad(); there is nothing to differentiate")
    order = _reachable(heads)
    variables = collect_variables(heads, order)
    results = run_backward(heads, head_grads, variables, retain_graph, False, train_mode,
                           write_into=True, order=order)
    write_grads(variables, results)


__all__ = ["backward", "run_backward", "write_grads", "collect_variables", "TapeNode"]
