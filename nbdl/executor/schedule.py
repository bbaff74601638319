"""Compile a bound graph into a schedule: entry ids, the planner's request,
the arena and its views, and one prepared kernel call per node."""
from dataclasses import dataclass, field

import numpy as np

from ..errors import GraphError
from ..ops.ir import make_node
from ..ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, Call
from ..planner import PlanRequest, Step, plan as make_plan


@dataclass
class Prepared:
    """One node's kernel call, ready to run: ``fn(*args)``."""
    node: object
    ids: list                # entry id of each array argument
    fn: object
    args: tuple              # views, then scalars
    arrays: list             # the views alone (inputs, outputs, temps), before launch.views reshape
    scalars: tuple
    views: list              # final array arguments (after reshape)


@dataclass
class Schedule:
    nodes: list                      # forward nodes then backward nodes
    n_forward: int
    ids: dict                        # Entry -> entry id
    entries: list                    # id -> Entry (None for temps)
    request: PlanRequest
    plan: object
    arena: object
    arrays: dict                     # entry id -> device array (planned views and externals)
    req: dict                        # (node id, output index) -> req code
    temps: dict                      # node id -> [temp entry ids]
    fwd_train: list = field(default_factory=list)
    fwd_infer: list = field(default_factory=list)
    backward: list = field(default_factory=list)
    grad_bound: dict = field(default_factory=dict)   # arg name -> bound entry


def bind_gradients(bg, grad_req):
    """Decide where each argument's gradient is written.  The node producing
    it writes straight into the user's gradient array when nothing else reads
    that entry (and, for ``add``, when its kernel accumulates); otherwise a
    ``_copy`` node is appended that copies or accumulates into it."""
    readers = {}
    for node in bg.fwd_nodes + bg.bwd_nodes:
        for e in node.inputs:
            readers[e] = readers.get(e, 0) + 1
    bwd_ids = {id(n) for n in bg.bwd_nodes}
    heads = set(bg.heads)
    taken = set()
    bound = {}
    for name, g in bg.grad_of.items():
        req = grad_req.get(name, REQ_NULL)
        if req == REQ_NULL:
            continue
        direct = (id(g.node) in bwd_ids and g not in taken and g not in heads
                  and readers.get(g, 0) == 0
                  and (req != REQ_ADD or g.node.op.supports_add))
        if not direct:
            c = make_node("_copy", [g], name=f"{name}_grad_copy").output(0)
            bg.bwd_nodes.append(c.node)
            bg.shapes[c] = bg.shapes[g]
            bg.dtypes[c] = bg.dtypes[g]
            readers[g] = readers.get(g, 0) + 1
            g = c
        taken.add(g)
        bound[name] = g
    return bound


def _nbytes(shape, dtype):
    n = 1
    for d in shape:
        n *= d
    return n * np.dtype(dtype).itemsize


def compile_schedule(bg, device, grad_req, external_arrays, head_grad_arrays, arg_grad_arrays,
                     shared_arena=None):
    """``external_arrays``: {Entry: device array} for arguments and aux;
    ``head_grad_arrays``: list aligned with ``bg.head_grads``;
    ``arg_grad_arrays``: {arg name: device array} for arguments with gradients;
    ``shared_arena``: another schedule's arena (uint8) to plan into when it
    is large enough (``Executor.reshape``: the executors share memory)."""
    bound = bind_gradients(bg, grad_req)
    nodes = bg.fwd_nodes + bg.bwd_nodes
    ids, entries = {}, []

    def eid(e):
        i = ids.get(e)
        if i is None:
            i = ids[e] = len(entries)
            entries.append(e)
        return i

    ext = {}
    for e, a in external_arrays.items():
        ext[eid(e)] = a
    for e, a in zip(bg.head_grads, head_grad_arrays):
        ext[eid(e)] = a
    bound_req = {}
    for name, e in bound.items():
        ext[eid(e)] = arg_grad_arrays[name]
        bound_req[e] = grad_req[name]

    readers = {}
    for node in nodes:
        for e in node.inputs:
            readers[e] = readers.get(e, 0) + 1
    heads = set(bg.heads)

    steps, nbytes, names, req, temps, calls = [], {}, {}, {}, {}, {}
    for node in nodes:
        _check_mutated(node, ids, ext)
        outs = node.outputs()
        reqs = []
        for e in outs:
            if e in bound_req:
                reqs.append(REQ_ADD if bound_req[e] == REQ_ADD else REQ_WRITE)
            elif readers.get(e, 0) == 0 and e not in heads:
                reqs.append(REQ_NULL)
            else:
                reqs.append(REQ_WRITE)
        call = Call(node.op, node.attrs, [bg.shapes[e] for e in node.inputs],
                    [bg.dtypes[e] for e in node.inputs], [bg.shapes[e] for e in outs],
                    [bg.dtypes[e] for e in outs], device=device, req=reqs, is_train=True,
                    node_name=node.name)
        calls[id(node)] = call
        for i, r in enumerate(reqs):
            req[(id(node), i)] = r
        tids = []
        for k, (shape, dt) in enumerate(node.op.temps(call)):
            t = len(entries)
            entries.append(None)
            nbytes[t] = _nbytes(shape, dt)
            names[t] = f"{node.name}_temp{k}"
            tids.append(t)
            temps.setdefault(id(node), []).append((t, tuple(shape), np.dtype(dt)))
        pairs = []
        if node.op.inplace:
            for i_in, i_out in node.op.inplace(node.attrs):
                if reqs[i_out] == REQ_WRITE and i_in < len(node.inputs):
                    pairs.append((eid(node.inputs[i_in]), eid(outs[i_out])))
        # Inputs used only for their shape are not reads: their data may be
        # overwritten before this step (the kernel still gets a view).
        shape_only = node.op.list_shape_inputs(node.attrs)
        reads = [eid(e) for k, e in enumerate(node.inputs) if k not in shape_only]
        for e in node.inputs:
            eid(e)
        writes = [eid(e) for e in outs]
        steps.append(Step(node.name, node.op.name, reads, writes, tids, pairs))
    for e, i in ids.items():
        nbytes[i] = _nbytes(bg.shapes[e], bg.dtypes[e])
        names[i] = e.name
    unwritten = {ids[node.output(i)] for node in nodes for i in range(node.num_outputs)
                 if req[(id(node), i)] == REQ_NULL and ids[node.output(i)] not in ext}
    request = PlanRequest(steps=steps, nbytes=nbytes, names=names, external=set(ext),
                          outputs={ids[h] for h in bg.heads}, unwritten=unwritten)
    plan = make_plan(request)

    if shared_arena is not None and shared_arena.shape[0] >= plan.arena_bytes:
        arena = shared_arena
    else:
        arena = device.empty((max(plan.arena_bytes, 1),), np.uint8)
    arrays = dict(ext)
    for e, i in ids.items():
        if i not in arrays:
            arrays[i] = _view(device, arena, plan.offsets[i], bg.shapes[e], bg.dtypes[e])
    for node in nodes:
        for t, shape, dt in temps.get(id(node), []):
            arrays[t] = _view(device, arena, plan.offsets[t], shape, dt)

    sched = Schedule(nodes, len(bg.fwd_nodes), ids, entries, request, plan, arena, arrays, req,
                     {k: [t for t, _, _ in v] for k, v in temps.items()}, grad_bound=bound)
    for k, node in enumerate(nodes):
        call = calls[id(node)]
        aids = ([ids[e] for e in node.inputs] + [ids[e] for e in node.outputs()]
                + sched.temps.get(id(node), []))
        arrs = [arrays[i] for i in aids]
        if k < sched.n_forward:
            p_train = _prepare(node, call, aids, arrs, True)
            p_infer = _prepare(node, call, aids, arrs, False) if node.op.train_aware else p_train
            sched.fwd_train.append(p_train)
            sched.fwd_infer.append(p_infer)
        else:
            sched.backward.append(_prepare(node, call, aids, arrs, True))
    return sched


def _check_mutated(node, ids, ext):
    """An input the op writes in place (``OpDef.mutates``: optimizer states)
    must be a variable bound to an array: the write then lands in that array
    (as MXNet's FMutateInputs), and no planned entry, whose bytes the planner
    may hand to another entry after its last read, is written behind the
    planner's back."""
    op = node.op
    if not op.mutates:
        return
    names = op.list_inputs(node.attrs) + op.list_aux(node.attrs)
    for k in op.list_mutates(node.attrs):
        e = node.inputs[k]
        if ids.get(e) not in ext:
            src = e.node.name
            raise GraphError(f"{op.name} (node {node.name!r}): input {names[k]!r} is updated in "
                             f"place, so it must be a variable bound to an array; here it is "
                             f"computed by {src!r}")


def _prepare(node, call, aids, arrays, is_train):
    call.is_train = is_train
    launch = node.op.prepare(call)
    views = list(arrays)
    if launch.views is not None:
        views = [a if v is None or tuple(v) == tuple(a.shape) else a.reshape(tuple(v))
                 for a, v in zip(arrays, launch.views)]
    scalars = tuple(launch.scalars)
    return Prepared(node, list(aids), launch.fn, tuple(views) + scalars, arrays, scalars, views)


def _view(device, arena, offset, shape, dtype):
    n = _nbytes(shape, dtype)
    return arena[offset:offset + n].view(np.dtype(dtype)).reshape(tuple(shape))
