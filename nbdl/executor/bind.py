"""``bind`` / ``simple_bind``: validate what the user passed, build the
forward+backward graph, plan it and compile the schedule.

Binding a big graph makes hundreds of thousands of small objects (entries,
rule results, steps, views) and no garbage cycles worth collecting, so the
cyclic collector is paused while it runs: otherwise its passes over the
growing heap take a fifth of the time."""
import functools
import gc

import numpy as np

from .. import config
from .. import profiler_core as _prof
from ..array import NDArray
from ..device import as_device
from ..dtype import as_dtype
from ..errors import BindError, ShapeError
from ..ops.ir import classify_variables, topo_order
from ..ops.registry import REQ_ADD, REQ_INPLACE, REQ_NAMES, REQ_NULL, REQ_WRITE
from . import graph as _graph
from .executor import Executor, _wrap
from .schedule import compile_schedule

GRAD_NOP, GRAD_WRITE, GRAD_INPLACE, GRAD_ADD = "null", "write", "inplace", "add"
_REQ_BY_INT = {REQ_NULL: REQ_NULL, REQ_WRITE: REQ_WRITE, REQ_INPLACE: REQ_WRITE, REQ_ADD: REQ_ADD}


def _req_code(v, where):
    if isinstance(v, str) and v in REQ_NAMES:
        return _REQ_BY_INT[REQ_NAMES[v]]
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and int(v) in _REQ_BY_INT:
        return _REQ_BY_INT[int(v)]
    raise BindError(f"{where}: invalid grad_req {v!r}; expected 'null', 'write', 'add' or 'inplace'")


def parse_grad_req(grad_req, arg_names):
    """grad_req as a string/constant for all, a list, or a dict by name
    (names not listed get 'null').  Returns {name: req code}."""
    if isinstance(grad_req, (str, int, np.integer)):
        code = _req_code(grad_req, "bind")
        return {n: code for n in arg_names}
    if isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(arg_names):
            raise BindError(f"bind: grad_req has {len(grad_req)} entries for {len(arg_names)} "
                            f"arguments {arg_names}")
        return {n: _req_code(r, f"bind: grad_req for {n!r}") for n, r in zip(arg_names, grad_req)}
    if isinstance(grad_req, dict):
        # names that are not arguments are ignored, as MXNet's bind does (a
        # request written for a convolution with a bias binds one without)
        return {n: _req_code(grad_req[n], f"bind: grad_req for {n!r}") if n in grad_req else REQ_NULL
                for n in arg_names}
    raise BindError(f"bind: grad_req must be a string, list or dict, got {type(grad_req).__name__}")


def _as_list(what, given, names, required, device):
    """Normalise a list or dict of arrays into a list aligned with ``names``."""
    if given is None:
        if required and names:
            raise BindError(f"bind: {what} is required for {names}")
        return [None] * len(names)
    if isinstance(given, dict):
        out = []
        for n in names:
            if n not in given or given[n] is None:
                if required:
                    raise BindError(f"bind: key {n!r} is missing in {what} "
                                    f"(expected {', '.join(names)})")
                out.append(None)
            else:
                out.append(given[n])
    elif isinstance(given, (list, tuple)):
        if len(given) != len(names):
            raise BindError(f"bind: {what} has {len(given)} arrays but the symbol has "
                            f"{len(names)}: {names}")
        out = list(given)
        if required:
            missing = [n for n, a in zip(names, out) if a is None]
            if missing:
                raise BindError(f"bind: {what} has no array for {missing}")
    else:
        raise BindError(f"bind: {what} must be a list or a dict, got {type(given).__name__}")
    result = []
    for n, a in zip(names, out):
        if a is None:
            result.append(None)
            continue
        result.append(_as_ndarray(a, n, what, device))
    return result


def _as_ndarray(a, name, what, device):
    if isinstance(a, NDArray):
        if a.device != device:
            raise BindError(f"bind: {what} {name!r} is on {a.device}, the executor on {device}")
        if not _is_contiguous(a._data):
            raise BindError(f"bind: {what} {name!r} is not contiguous; pass a copy")
        return a
    if isinstance(a, np.ndarray):
        return _wrap(device.from_numpy(a), device)
    raise BindError(f"bind: {what} {name!r} must be an NDArray, got {type(a).__name__}")


def _is_contiguous(d):
    flags = getattr(d, "flags", None)
    if flags is None:
        return True
    try:
        return bool(flags["C_CONTIGUOUS"])
    except (KeyError, TypeError):
        return bool(getattr(flags, "c_contiguous", True))


def _gc_paused(fn):
    """Run ``fn`` with the cyclic garbage collector off (restored after).

    A big graph's bind makes hundreds of thousands of tracked objects (a
    20k-node chain with gradients: ~600,000), most of them the executor's
    for as long as it lives.  With the collector on, the youngest generation
    fills every 700 of them and older collections follow; off, they all wait
    in the youngest generation, and the first collection after the bind went
    through all of them (0.12-0.2 s of a 0.85 s bind).  So the objects move
    to the oldest generation on the way out (``gc.freeze`` then
    ``gc.unfreeze``, which splice the generations' lists without visiting
    them): the next full collection sees them, as it would have anyway.
    The caller's own young objects move with them: a reference cycle they
    hold is then freed by the next full collection rather than a young one.
    Skipped while the caller keeps objects frozen (``gc.unfreeze`` would
    release them)."""
    @functools.wraps(fn)
    def paused(*args, **kwargs):
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if not gc.get_freeze_count():     # never thaw what the caller froze
                gc.freeze()
                gc.unfreeze()
            gc.enable()
    return paused


def _check_unique(sym, order=None):
    if order is None:
        order = topo_order(sym._outputs)
    seen, dup = {}, []
    for n in order:
        if n.op is None:
            if n.name in seen and seen[n.name] is not n:
                dup.append(n.name)
            seen[n.name] = n
    if dup:
        raise BindError(f"bind: the symbol has more than one variable named "
                        f"{', '.join(repr(d) for d in sorted(set(dup)))}; argument names must be unique")
    return classify_variables(order)


def _finish(sym, device, arg_nds, grad_nds, aux_nds, reqs, shared_arena=None, checked=None,
            memory_budget=None, fuse=True):
    """``checked``: ``(topo_order(sym._outputs), arguments, aux states)`` as
    ``_check_unique`` found them, when the caller has it, then (from
    ``simple_bind``) the shape and dtype tables the arrays were made from;
    ``memory_budget``: the arena's bytes at most (None: ``NBDL_MEMORY_BUDGET``);
    ``fuse``: a bind without gradients gets the inference rewrite
    (``nbdl.graph.fuse``, unless ``NBDL_GRAPH_PASSES=0``), and the executor
    keeps how to bind the plain graph for a forward with ``is_train=True``."""
    budget = config.parse_bytes(memory_budget) if memory_budget is not None \
        else config.memory_budget()
    if checked is None:
        order = topo_order(sym._outputs)
        checked = (order, *_check_unique(sym, order))
    order, arg_nodes, aux_nodes = checked[:3]
    arg_names = [n.name for n in arg_nodes]
    wants = {n for n, g in zip(arg_names, grad_nds) if g is not None and reqs[n] != REQ_NULL}
    reqs = {n: (reqs[n] if n in wants else REQ_NULL) for n in arg_names}
    bg = _graph.build(sym,
                      {n: a.shape for n, a in zip(arg_names, arg_nds)},
                      {n: np.dtype(a.dtype) for n, a in zip(arg_names, arg_nds)},
                      {n.name: a.shape for n, a in zip(aux_nodes, aux_nds)},
                      {n.name: np.dtype(a.dtype) for n, a in zip(aux_nodes, aux_nds)},
                      wants, checked=checked, fuse=fuse and config.graph_passes())
    for n, a, node in zip(arg_names, arg_nds, bg.arg_nodes):
        want = bg.shapes[node.output(0)]
        if tuple(a.shape) != tuple(want):
            raise ShapeError(f"bind: argument {n!r} has shape {tuple(a.shape)}, inferred {want}")
    for n, g, a in zip(arg_names, grad_nds, arg_nds):
        if g is not None and n in wants:
            if tuple(g.shape) != tuple(a.shape):
                raise ShapeError(f"bind: gradient array of {n!r} has shape {tuple(g.shape)}, "
                                 f"the argument {tuple(a.shape)}")
            if np.dtype(g.dtype) != np.dtype(a.dtype):
                raise BindError(f"bind: gradient array of {n!r} has dtype {np.dtype(g.dtype)}, "
                                f"the argument {np.dtype(a.dtype)}")
    external = {}
    for node, a in zip(bg.arg_nodes, arg_nds):
        external[node.output(0)] = a._data
    for node, a in zip(bg.aux_nodes, aux_nds):
        external[node.output(0)] = a._data
    head_grads = [device.zeros(bg.shapes[h], bg.dtypes[h]) for h in bg.head_grads]
    grad_arrays = {n: g._data for n, g in zip(arg_names, grad_nds) if n in wants}
    sched = compile_schedule(bg, device, reqs, external, head_grads, grad_arrays,
                             shared_arena=shared_arena, memory_budget=budget)
    if _prof.memory:
        _prof.counter(f"Executor arena: {device.device_type}/{device.device_id}",
                      _prof.CAT_STORAGE, int(sched.plan.arena_bytes))
    grads_out = [g if n in wants else None for n, g in zip(arg_names, grad_nds)]
    ex = Executor(sym, device, bg, sched, arg_nds, grads_out, aux_nds, reqs, head_grads, rebind)
    if bg.fused:
        ex._plain_graph = functools.partial(_finish, sym, device, arg_nds, grad_nds, aux_nds,
                                            reqs, memory_budget=memory_budget, fuse=False)
    return ex


@_gc_paused
def bind(sym, ctx, args, args_grad=None, aux_states=None, grad_req="write", memory_budget=None):
    """Bind ``sym`` to the given arrays (MXNet's ``Symbol.bind``).

    ``args``: a list in ``list_arguments()`` order or a dict with every
    argument; ``args_grad`` likewise (a missing array means no gradient for
    that argument); ``grad_req``: 'null'|'write'|'add'|'inplace', a list, or a
    dict by name (unlisted names get 'null'); ``memory_budget``: bytes (or a
    string such as ``'1.5GB'``) the planned arena must fit, by recomputing
    forward entries in backward (docs/memory-budget.md; default
    ``NBDL_MEMORY_BUDGET``, else none)."""
    device = as_device(ctx)
    order = topo_order(sym._outputs)
    arg_nodes, aux_nodes = _check_unique(sym, order)
    arg_names = [n.name for n in arg_nodes]
    aux_names = [n.name for n in aux_nodes]
    reqs = parse_grad_req(grad_req, arg_names)
    arg_nds = _as_list("args", args, arg_names, True, device)
    grad_nds = _as_list("args_grad", args_grad, arg_names, False, device)
    aux_nds = _as_list("aux_states", aux_states, aux_names, True, device)
    return _finish(sym, device, arg_nds, grad_nds, aux_nds, reqs, checked=(order, arg_nodes, aux_nodes),
                   memory_budget=memory_budget)


@_gc_paused
def simple_bind(sym, ctx, grad_req="write", type_dict=None, memory_budget=None, **shapes):
    """Infer every shape from the given ones, allocate zeros for arguments,
    aux states and, as MXNet does, a gradient for every argument whose
    grad_req is not 'null' (data included: pass a dict such as
    ``{"data": "null", ...}`` or ``'null'`` entries to skip them), and bind.
    ``type_dict``: {argument name: dtype}; the others are inferred.  Without
    one, as in MXNet, every argument not declared with a dtype is float32.
    ``memory_budget``: as for ``bind``."""
    device = as_device(ctx)
    order = topo_order(sym._outputs)
    arg_nodes, aux_nodes = _check_unique(sym, order)
    arg_names = [n.name for n in arg_nodes]
    # MXNet reads only the tuple-valued keywords as shapes (simple_bind(..., axis=1) binds)
    shapes = {k: v for k, v in shapes.items() if isinstance(v, (tuple, list))}
    unknown = [k for k in shapes if k not in arg_names and k not in [n.name for n in aux_nodes]]
    if unknown:
        raise BindError(f"simple_bind: {unknown} are not arguments of the symbol "
                        f"(arguments: {arg_names})")
    if type_dict is None:
        # MXNet's simple_bind without a type_dict: every argument not
        # declared with a dtype (``__dtype__``) is float32 (aux states are
        # inferred), so one inference sweep settles the graph.
        type_dict = {n.name: np.float32 for n in arg_nodes if "__dtype__" not in n.user_attrs}
    type_dict = dict(type_dict)
    bad = [k for k in type_dict if k not in arg_names]
    if bad:
        raise BindError(f"simple_bind: type_dict names {bad} that are not arguments")
    reqs = parse_grad_req(grad_req, arg_names)
    known_s = {n.output(0): tuple(shapes[n.name]) for n in arg_nodes + aux_nodes if n.name in shapes}
    known_t = {n.output(0): as_dtype(type_dict[n.name]) for n in arg_nodes if n.name in type_dict}
    s_table, t_table = _graph.infer_all(order, arg_nodes, known_s, known_t)
    missing = [n.name for n in arg_nodes + aux_nodes if s_table.get(n.output(0)) is None]
    if missing:
        raise ShapeError(f"simple_bind: cannot infer the shapes of {', '.join(map(repr, missing))} "
                         f"from the given shapes {shapes}; give them explicitly")

    def alloc(node):
        e = node.output(0)
        return NDArray(device.zeros(s_table[e], t_table[e]), device)
    arg_nds = [alloc(n) for n in arg_nodes]
    grad_nds = [alloc(n) if reqs[n.name] != REQ_NULL else None for n in arg_nodes]
    aux_nds = [alloc(n) for n in aux_nodes]
    return _finish(sym, device, arg_nds, grad_nds, aux_nds, reqs,
                   checked=(order, arg_nodes, aux_nodes, s_table, t_table),
                   memory_budget=memory_budget)


def _resized(dev, a, shape, name, what, allow_up_sizing):
    """``a`` itself for an unchanged shape, a view of its first elements
    for a smaller one, a new zero array for a larger one (with
    ``allow_up_sizing``), as MXNet's reshape shares memory."""
    shape = tuple(shape)
    if shape == tuple(a.shape):
        return a
    n = int(np.prod(shape, dtype=np.int64))
    if n > a.size:
        if not allow_up_sizing:
            raise BindError(f"reshape: the new shape {shape} of {what} {name!r} is larger than "
                            f"its bound shape {tuple(a.shape)}; making a big executor and "
                            f"then reshaping it smaller is more efficient than the reverse; "
                            f"pass allow_up_sizing=True to allocate new arrays")
        return NDArray(dev.zeros(shape, a.dtype), dev)
    return NDArray(a._data.reshape(a.size)[:n].reshape(shape), dev)


@_gc_paused
def rebind(ex, new_shapes, partial_shaping=False, allow_up_sizing=False):
    """``Executor.reshape``, MXNet's semantics: an argument or aux state
    whose shape is unchanged keeps its arrays (value and gradient), one that
    gets smaller is a view of the first elements of its old arrays, one that
    gets larger is allocated anew (only with ``allow_up_sizing``); the new
    executor runs in the old one's memory arena when it fits, so the two
    share memory and are not to be run in parallel.  Without
    ``partial_shaping`` an array whose shape changes although it was not
    named in ``new_shapes`` is an error."""
    sym = ex._symbol
    names = ex._arg_names + ex._aux_names
    unknown = [k for k in new_shapes if k not in names]
    if unknown:
        raise BindError(f"reshape: {unknown} are not arguments (arguments: {ex._arg_names})")
    order = topo_order(sym._outputs)
    arg_nodes, aux_nodes = classify_variables(order)
    known = {n.output(0): _shape_of(new_shapes[n.name], n.name)
             for n in arg_nodes + aux_nodes if n.name in new_shapes}
    types = {n.output(0): np.dtype(a.dtype) for n, a in zip(arg_nodes, ex.arg_arrays)}
    s_table, _ = _graph.infer_all(order, arg_nodes, known, types)
    # Arguments the new shapes do not determine keep their current shapes.
    for n, a in zip(arg_nodes + aux_nodes, ex.arg_arrays + ex.aux_arrays):
        if s_table.get(n.output(0)) is None:
            known[n.output(0)] = tuple(a.shape)
    s_table, _ = _graph.infer_all(order, arg_nodes, known, types)
    dev = ex._device

    def new_shape(n, a, what):
        shp = tuple(s_table.get(n.output(0), tuple(a.shape)))
        if shp != tuple(a.shape) and n.name not in new_shapes and not partial_shaping:
            raise BindError(f"reshape: the shape of {what} {n.name!r}, which was not given, "
                            f"changes from {tuple(a.shape)} to {shp}, so the new executor "
                            f"would not share it with the old one; check the network, or "
                            f"pass partial_shaping=True if this is intended")
        return shp
    arg_nds, grad_nds, aux_nds = [], [], []
    for n, a, g in zip(arg_nodes, ex.arg_arrays, ex.grad_arrays):
        shp = new_shape(n, a, "argument")
        arg_nds.append(_resized(dev, a, shp, n.name, "argument", allow_up_sizing))
        grad_nds.append(None if g is None else
                        _resized(dev, g, shp, n.name, "gradient of", allow_up_sizing))
    for n, a in zip(aux_nodes, ex.aux_arrays):
        shp = new_shape(n, a, "aux state")
        aux_nds.append(_resized(dev, a, shp, n.name, "aux state", allow_up_sizing))
    budget = ex._sched.plan.budget
    return _finish(sym, dev, arg_nds, grad_nds, aux_nds, dict(ex._grad_req),
                   shared_arena=ex._sched.arena,
                   memory_budget=budget.budget if budget is not None else None)


def _shape_of(v, name):
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    if not isinstance(v, (tuple, list)) or not all(isinstance(d, (int, np.integer)) for d in v):
        raise BindError(f"reshape: the shape of {name!r} must be a tuple of ints, got {v!r}")
    return tuple(int(d) for d in v)
