"""Compile a bound graph into a schedule: entry ids, the planner's request,
the arena and its views, and one prepared kernel call per node (a
``nbdl.runner`` ``PreparedCall`` per call signature, its arguments viewed in
the arena)."""
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from ..errors import GraphError
from ..graph.signature import node_attr_key
from ..ops.ir import make_node
from ..ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, pick_args
from ..planner import PlanRequest, Step, plan as make_plan
from ..runner.call import prepare
from .recompute import within_budget


@dataclass
class Prepared:
    """One node's kernel call, ready to run: ``fn(*args)``."""
    node: object
    ids: tuple               # entry id of each array argument
    fn: object
    args: tuple              # views, then scalars
    arrays: tuple            # the views alone (inputs, outputs, temps), before launch.views reshape
    scalars: tuple
    views: tuple             # final array arguments (after reshape)
    fallback: object = None  # a Prepared over the same arrays (``Launch.fallback``)


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
    temps: dict                      # node id -> [temp entry ids]
    fwd_train: list = field(default_factory=list)
    fwd_infer: list = field(default_factory=list)
    backward: list = field(default_factory=list)
    grad_bound: dict = field(default_factory=dict)   # arg name -> bound entry


def _count_readers(nodes):
    """{Entry: how many times steps read it}."""
    return Counter(chain.from_iterable(node.inputs for node in nodes))


def bind_gradients(bg, grad_req):
    """Decide where each argument's gradient is written.  The node producing
    it writes straight into the user's gradient array when nothing else reads
    that entry (and, for ``add``, when its kernel accumulates); otherwise a
    ``_copy`` node is appended that copies or accumulates into it."""
    readers = _count_readers(bg.fwd_nodes + bg.bwd_nodes)
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


def _signature(node, memo, in_s, in_d, out_s, out_d, reqs):
    """(key or None, what ``memo`` holds for it or None: the ``PreparedCall``,
    its temps, in-place pairs and shape-only inputs).

    ``compile_schedule`` asks an op, per node, for its temps, its in-place
    pairs, its shape-only inputs and its prepared ``Launch`` (per training
    flag): functions of the call signature (op, attributes, shapes, dtypes,
    write requests) alone (docs/ops.md), as the eager path's cache already
    assumes, and big graphs repeat a few signatures: one ``PreparedCall``
    answers for every node of a signature.  A node whose attributes or
    shapes have no exact key gets its own."""
    akey = node_attr_key(node)
    if akey is None:
        return None, None
    key = (id(node.op), akey, in_s, in_d, out_s, out_d, reqs)
    try:
        return key, memo.get(key)
    except TypeError:           # a shape that is a list: no exact key
        return None, None


def compile_schedule(bg, device, grad_req, external_arrays, head_grad_arrays, arg_grad_arrays,
                     shared_arena=None, memory_budget=None):
    """``external_arrays``: {Entry: device array} for arguments and aux;
    ``head_grad_arrays``: list aligned with ``bg.head_grads``;
    ``arg_grad_arrays``: {arg name: device array} for arguments with gradients;
    ``shared_arena``: another schedule's arena (uint8) to plan into when it
    is large enough (``Executor.reshape``: the executors share memory);
    ``memory_budget``: arena bytes not to exceed, by recomputing forward
    entries in backward (``recompute.within_budget``)."""
    bound = bind_gradients(bg, grad_req)
    nodes = bg.fwd_nodes + bg.bwd_nodes
    shapes, dtypes = bg.shapes, bg.dtypes
    shape_of, dtype_of = shapes.__getitem__, dtypes.__getitem__
    entries = []
    ids = _EntryIds(entries)    # ids[e]: e's id, a new one for an entry not seen yet
    eid = ids.__getitem__

    ext = {}
    for e, a in external_arrays.items():
        ext[eid(e)] = a
    for e, a in zip(bg.head_grads, head_grad_arrays):
        ext[eid(e)] = a
    bound_req = {}
    for name, e in bound.items():
        ext[eid(e)] = arg_grad_arrays[name]
        bound_req[e] = grad_req[name]

    readers = _count_readers(nodes)
    heads = set(bg.heads)
    memo = {}
    states = {}     # per-node state of stateful ops (Call.states), one dict per schedule

    steps, nbytes, names, temps, calls = [], {}, {}, {}, []
    unwritten_order = []
    no_temps = ()
    for node in nodes:
        op = node.op
        if op.mutates:
            _check_mutated(node, ids, ext)
        inputs = node.inputs
        outs = node._outs or node.outputs()
        reqs = []
        for e in outs:
            if e in bound_req:
                reqs.append(REQ_ADD if bound_req[e] == REQ_ADD else REQ_WRITE)
            elif e not in readers and e not in heads:
                reqs.append(REQ_NULL)
            else:
                reqs.append(REQ_WRITE)
        sig = (tuple(map(shape_of, inputs)), tuple(map(dtype_of, inputs)),
               tuple(map(shape_of, outs)), tuple(map(dtype_of, outs)), tuple(reqs))
        key, known = _signature(node, memo, *sig)
        if known is None:
            pc = prepare(op, node.attrs, *sig[:4], device, sig[4], node_name=node.name,
                         node=node, states=states)
            known = (pc, pc.temps, pc.inplace(), pc.shape_inputs())
            if key is not None:
                memo[key] = known
        pc, node_temps, node_pairs, shape_only = known
        tids = no_temps
        if node_temps:
            name = node.name
            mine = temps[id(node)] = []
            for k, (shape, dt) in enumerate(node_temps):
                t = len(entries)
                entries.append(None)
                nbytes[t] = _nbytes(shape, dt)
                names[t] = f"{name}_temp{k}"
                mine.append((t, shape, dt))
            tids = tuple(t for t, _, _ in mine)
        pairs = ()
        if node_pairs:
            pairs = tuple([(eid(inputs[i_in]), eid(outs[i_out])) for i_in, i_out in node_pairs
                           if reqs[i_out] == REQ_WRITE and i_in < len(inputs)])
        # Inputs used only for their shape are not reads: their data may be
        # overwritten before this step (the kernel still gets a view).
        # Tuples, not lists, here and in ``Prepared``: a big graph's executor
        # holds several a node, and the cyclic collector, which tracks lists
        # for good, stops tracking a tuple of ints or arrays once it has seen
        # it (a 20k-node chain's executor held 270,000 lists).
        in_ids = tuple(map(eid, inputs))
        reads = tuple([i for k, i in enumerate(in_ids) if k not in shape_only]) if shape_only \
            else in_ids
        writes = tuple(map(eid, outs))
        if REQ_NULL in reqs:
            for r, w in zip(reqs, writes):
                if r == REQ_NULL and w not in ext:
                    unwritten_order.append(w)
        # the kernel's array arguments: inputs, outputs, temps
        calls.append((node, pc, in_ids + writes + tids if tids else in_ids + writes))
        steps.append(Step(node.name, op.name, reads, writes, tids, pairs))
    ids = dict(ids)     # a plain dict from here on: a missing entry is an error again
    itemsize = {}
    for e, i in ids.items():
        dt = dtypes[e]
        size = itemsize.get(dt)
        if size is None:
            size = itemsize[dt] = np.dtype(dt).itemsize
        n = size
        for d in shapes[e]:
            n *= d
        nbytes[i] = n
    unwritten = set(unwritten_order)
    request = PlanRequest(steps=steps, nbytes=nbytes, names=EntryNames(entries, names),
                          external=set(ext),
                          outputs={ids[h] for h in bg.heads}, unwritten=unwritten)
    # -- a memory budget (issue 18): the schedule of a graph with recompute
    # nodes, compiled by this function without a budget, or this one as it is
    if memory_budget is not None:
        budgeted, budget_info = within_budget(
            bg, bound, nodes, ids, request, memory_budget, device,
            lambda graph: compile_schedule(graph, device, grad_req, external_arrays,
                                           head_grad_arrays, arg_grad_arrays, shared_arena))
        if budgeted is not None:
            return budgeted
    plan = make_plan(request)
    if memory_budget is not None:
        plan.budget = budget_info
    # -- end of the memory budget

    if shared_arena is not None and shared_arena.shape[0] >= plan.arena_bytes:
        arena = shared_arena
    else:
        arena = device.empty((max(plan.arena_bytes, 1),), np.uint8)
    offsets = plan.offsets
    arrays = dict(ext)
    view = _viewer(device, arena)
    for e, i in ids.items():
        if i not in arrays:
            arrays[i] = view(offsets[i], nbytes[i], shapes[e], dtypes[e])
    for node in nodes:
        for t, shape, dt in temps.get(id(node), ()):
            arrays[t] = view(offsets[t], nbytes[t], shape, dt)

    sched = Schedule(nodes, len(bg.fwd_nodes), ids, entries, request, plan, arena, arrays,
                     {k: [t for t, _, _ in v] for k, v in temps.items()}, grad_bound=bound)
    n_forward = sched.n_forward
    array_of = arrays.__getitem__
    for k, (node, pc, aids) in enumerate(calls):
        arrs = tuple(map(array_of, aids))
        if k < n_forward:
            p_train = _prepared(node, aids, arrs, pc.launch(True))
            both = node.op.train_aware
            p_infer = _prepared(node, aids, arrs, pc.launch(False)) if both else p_train
            sched.fwd_train.append(p_train)
            sched.fwd_infer.append(p_infer)
        else:
            sched.backward.append(_prepared(node, aids, arrs, pc.launch(True)))
    return sched


class _EntryIds(dict):
    """{Entry: id} while a schedule is compiled: looking up an entry not seen
    yet gives it the next id and appends it to ``entries`` (the lookups of
    the entries already there stay in C)."""

    __slots__ = ("entries",)

    def __init__(self, entries):
        super().__init__()
        self.entries = entries

    def __missing__(self, e):
        i = self[e] = len(self.entries)
        self.entries.append(e)
        return i


class EntryNames(Mapping):
    """``PlanRequest.names`` of a schedule: an entry's name (``conv0_output``)
    made when something asks for it (``debug_str``, an error message), not
    for each of a big graph's entries at bind.  ``entries[i]`` is entry
    ``i``'s ``Entry`` (None for a temp, whose name ``temp_names`` holds).

    Parameters
    ----------
    entries : list
        The schedule's entries by id.
    temp_names : dict
        Names of the temps, by id.
    """

    def __init__(self, entries, temp_names):
        self._entries = entries
        self._names = dict(temp_names)

    def __getitem__(self, i):
        name = self._names.get(i)
        if name is None:
            e = self._entries[i] if type(i) is int and 0 <= i < len(self._entries) else None
            if e is None:
                raise KeyError(i)
            name = self._names[i] = e[0].output_names()[e[1]]
        return name

    def __iter__(self):
        return iter(range(len(self._entries)))

    def __len__(self):
        return len(self._entries)


def _check_mutated(node, ids, ext):
    """An input the op writes in place (``OpDef.mutates``: optimizer states)
    must be a variable bound to an array: the write then lands in that array
    (as MXNet's FMutateInputs), and no planned entry, whose bytes the planner
    may hand to another entry after its last read, is written behind the
    planner's back.  Called only for ops that mutate."""
    op = node.op
    names = op.list_inputs(node.attrs) + op.list_aux(node.attrs)
    for k in op.list_mutates(node.attrs):
        e = node.inputs[k]
        if ids.get(e) not in ext:
            src = e.node.name
            raise GraphError(f"{op.name} (node {node.name!r}): input {names[k]!r} is updated in "
                             f"place, so it must be a variable bound to an array; here it is "
                             f"computed by {src!r}")


def _prepared(node, aids, arrays, launch):
    """The node's step: ``launch`` (a ``PreparedCall``'s) over its arena
    arrays, the arguments the launch picks (``Launch.args``) in its order
    (and its fallback's, likewise)."""
    step = _prepared_one(node, aids, arrays, launch)
    if launch.fallback is not None:
        step.fallback = _prepared_one(node, aids, arrays, launch.fallback)
    return step


def _prepared_one(node, aids, arrays, launch):
    fn, scalars, shapes, pick = launch.fn, launch.scalars, launch.views, launch.args
    if shapes is None and pick is None:     # most nodes: the arrays as they are
        return Prepared(node, aids, fn, (*arrays, *scalars), arrays, scalars, arrays)
    views = arrays
    if shapes is not None:
        views = tuple([a if v is None or v == a.shape else a.reshape(v)
                       for a, v in zip(arrays, shapes)])
    ids = aids
    if pick is not None:
        views = tuple(pick_args(pick, views))
        ids = tuple([aids[a if type(a) is int else a[0]] for a in pick])
    return Prepared(node, ids, fn, views + scalars, arrays, scalars, views)


def _viewer(device, arena):
    """``view(offset, nbytes, shape, dtype)``: the arena's bytes at
    ``offset`` as an array of ``shape`` and ``dtype``."""
    if type(arena) is np.ndarray:
        ndarray = np.ndarray

        def view(offset, n, shape, dtype):
            if n:
                return ndarray(shape, dtype, arena, offset)
            return _view(device, arena, offset, shape, dtype)
    else:
        def view(offset, n, shape, dtype):
            return _view(device, arena, offset, shape, dtype)
    return view


def _view(device, arena, offset, shape, dtype):
    n = _nbytes(shape, dtype)
    return arena[offset:offset + n].view(np.dtype(dtype)).reshape(tuple(shape))
