"""Eager calls as one-node schedules with a cache.

An eager call is a schedule of one node whose inputs and outputs are the
caller's arrays and whose temps are allocated per run.  ``eager_call``
returns its ``PreparedCall`` (``nbdl.runner.call.prepare``, the executor's
path too) made once per call signature (op, attributes, input shapes and
dtypes, device, write requests, training flag): the attributes are parsed,
the input count checked and the outputs' shapes and dtypes inferred by
``nbdl.graph.infer.infer_call``.  On the CPU a ``Signature`` goes one step
further: its ``run`` closure allocates the outputs and calls the kernel with
every view and scalar worked out, so that a repeated call costs one lookup
in ``fast`` (keyed by the caller, ``nbdl.imperative.invoke``), the
allocations and the kernel.  ``scalar_runner`` is the same for ops with
``scalar_attrs`` (their values go into the launch's last scalar slots)."""
import threading
from collections import OrderedDict

import numpy as np

from ..errors import GraphError
from ..graph.infer import infer_call
from ..graph.signature import raw_attr_key
from ..ops.registry import pick_args
from .buffers import device_scope
from .call import prepare

CACHE_SIZE = 512    # eager_call's PreparedCalls (least recently used dropped)
FAST_SIZE = 4096    # ``fast`` is emptied when it reaches this size

_cache = OrderedDict()
_lock = threading.Lock()
_empty = np.empty

fast = {}           # the caller's key of a CPU call signature -> Signature


def eager_call(op, raw, in_shapes, in_dtypes, device, req, is_train):
    """The cached ``PreparedCall`` of one eager call (made on a miss).

    Parameters
    ----------
    op : OpDef
        The op.
    raw : dict
        Its raw attributes (strings or Python values), the variadic count
        included.
    in_shapes, in_dtypes : tuple
        The inputs' shapes and dtypes.
    device : Device
        Where it runs.
    req : tuple of int or None
        Write requests per output (None: all ``REQ_WRITE``).
    is_train : bool
        The training flag.
    """
    key = raw_attr_key(raw)
    if key is not None:
        key = (op.name, id(op), key, in_shapes, in_dtypes, device, req, bool(is_train))
        entry = _cache.get(key)
        if entry is not None and entry.op is op:
            try:
                _cache.move_to_end(key)
            except KeyError:  # evicted by another thread meanwhile
                pass
            return entry
    entry = _make(op, raw, list(in_shapes), list(in_dtypes), device, req, is_train)
    if key is not None:
        with _lock:
            _cache[key] = entry
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return entry


def raw_attrs(op, attrs, n_inputs):
    """A call's raw attributes as its ``PreparedCall`` is keyed by: a copy of
    ``attrs`` (None: none) with the input count of a variadic op added.

    Parameters
    ----------
    op : OpDef
        The op.
    attrs : dict or None
        The attributes the caller gave.
    n_inputs : int
        How many array inputs the call has.
    """
    raw = dict(attrs) if attrs else {}
    if op.key_var_num_args and op.key_var_num_args not in raw:
        raw[op.key_var_num_args] = n_inputs
    return raw


def _make(op, raw, in_shapes, in_dtypes, device, req, is_train):
    attrs, _ = op.parse_attrs(raw)
    names = op.list_inputs(attrs) + op.list_aux(attrs)
    if len(in_shapes) != len(names):
        raise GraphError(f"{op.name}: expected {len(names)} inputs ({', '.join(names) or 'none'}), "
                         f"got {len(in_shapes)}")
    n_out = op.n_outputs(attrs)
    out_shapes = infer_call(op, attrs, in_shapes, n_out, names, "shape")
    out_dtypes = infer_call(op, attrs, in_dtypes, n_out, names, "dtype")
    entry = prepare(op, attrs, in_shapes, in_dtypes, out_shapes, out_dtypes, device, req,
                    is_train)
    entry.launch(bool(is_train))     # prepared now: its errors are the call's
    return entry


def clear():
    """Forget every prepared eager call."""
    with _lock:
        _cache.clear()
        fast.clear()


def info():
    """``{"size": ..., "max_size": ...}`` of ``eager_call``'s cache."""
    return {"size": len(_cache), "max_size": CACHE_SIZE}


def remember(key, sig):
    """``fast[key] = sig``, emptying ``fast`` first when it is full."""
    if len(fast) >= FAST_SIZE:
        fast.clear()
    fast[key] = sig


class Signature:
    """One CPU call signature made ready.  ``run(data)`` takes the input
    arrays, allocates the outputs, calls the kernel and returns the output
    arrays (the array itself when ``single``: one output, visible).
    ``raw``/``akey`` are the raw attributes the tape records and their key;
    ``entry`` the ``PreparedCall`` and ``launch`` its launch for the
    signature's training flag."""
    __slots__ = ("op", "raw", "akey", "entry", "launch", "views", "n_visible", "single", "run")

    def __init__(self, op, raw, akey, entry, is_train, in_shapes):
        self.op = op
        self.raw = raw
        self.akey = akey
        self.entry = entry
        launch = self.launch = entry.launch(bool(is_train))
        self.n_visible = entry.n_visible
        self.single = len(entry.out_shapes) == 1 and entry.n_visible == 1
        self.views = own_views(launch.views, list(in_shapes) + list(entry.out_shapes)
                               + [s for s, _ in entry.temps])
        self.run = _runner(entry, launch, len(in_shapes), self.views, self.single)


def own_views(views, shapes):
    """``views`` with None where a view is the array's own shape, or None
    when every one is."""
    if views is None:
        return None
    views = [None if v is None or v == tuple(s) else v for v, s in zip(views, shapes)]
    if len(views) == len(shapes) and all(v is None for v in views):
        return None
    return views


def _runner(entry, launch, n_in, views, single):
    """The closure behind ``Signature.run``: the common shapes of call (one
    output, no temps, one or two inputs, every array passed) get
    straight-line code."""
    fn, sc, pick = launch.fn, launch.scalars, launch.args
    outs = list(zip(entry.out_shapes, entry.out_dtypes))
    temps = entry.temps
    if entry.nothing_to_do:
        if single:
            shape, dtype = outs[0]
            return lambda data: _empty(shape, dtype)
        return lambda data: [_empty(s, d) for s, d in outs]
    if (single and not temps and pick is None and n_in in (1, 2)
            and (views is None or len(views) == n_in + 1)):
        (shape, dtype), = outs
        vs = views or [None] * (n_in + 1)
        if n_in == 1:
            v0, vo = vs
            if v0 is None and vo is None:
                def run(data):
                    o = _empty(shape, dtype)
                    fn(data[0], o, *sc)
                    return o
            else:
                def run(data):
                    o = _empty(shape, dtype)
                    a = data[0]
                    fn(a if v0 is None else a.reshape(v0), o if vo is None else o.reshape(vo), *sc)
                    return o
            return run
        v0, v1, vo = vs
        if v0 is None and v1 is None and vo is None:
            def run(data):
                o = _empty(shape, dtype)
                fn(data[0], data[1], o, *sc)
                return o
        else:
            def run(data):
                o = _empty(shape, dtype)
                a, b = data
                fn(a if v0 is None else a.reshape(v0), b if v1 is None else b.reshape(v1),
                   o if vo is None else o.reshape(vo), *sc)
                return o
        return run

    def run(data):
        out = [_empty(s, d) for s, d in outs]
        arrays = [*data, *out]
        if temps:
            arrays += [_empty(s, d) for s, d in temps]
        if views is not None:
            arrays = [a if v is None else a.reshape(v) for a, v in zip(arrays, views)]
        if pick is not None:
            arrays = pick_args(pick, arrays)
        fn(*arrays, *sc)
        return out[0] if single else out
    return run


def run_given(sig, data, given):
    """Run ``sig`` writing into the arrays of ``given`` (one storage array or
    None per output; None: a new array).  Returns every output array."""
    entry = sig.entry
    out = [_empty(s, d) if g is None else g
           for g, s, d in zip(given, entry.out_shapes, entry.out_dtypes)]
    if not entry.nothing_to_do:
        arrays = [*data, *out] + [_empty(s, d) for s, d in entry.temps]
        views = sig.views
        if views is not None:
            arrays = [a if v is None else a.reshape(v) for a, v in zip(arrays, views)]
        launch = sig.launch
        launch.fn(*pick_args(launch.args, arrays), *launch.scalars)
    return out


def scalar_runner(entry, launch, in_shapes, scalar_attrs, given, device):
    """``run(data, out_data, values)`` for an op with ``scalar_attrs``: the
    prepared ``launch`` of ``entry`` with the values of the attributes named
    in ``given`` (a subset of ``scalar_attrs``, in call order) put into their
    slots among the launch's last scalars, each converted to the type of the
    value it replaces (``np.float32(lr)``).  ``out_data`` is None (new
    outputs) or an array per output.  Returns the output arrays.  On a GPU
    ``device`` allocates the outputs and the kernel runs in its context.
    ``run.bind(data, out_data)`` is ``call(values)`` with the arrays fixed.

    Parameters
    ----------
    entry : PreparedCall
        The call.
    launch : _Launch
        Its launch for the call's training flag.
    in_shapes : sequence
        The inputs' shapes.
    scalar_attrs : tuple of str
        The op's ``scalar_attrs``.
    given : list of str
        The ones the caller passes values for.
    device : Device
        Where the arrays live.
    """
    fn, pick = launch.fn, launch.args
    base = list(launch.scalars)
    first = len(base) - len(scalar_attrs)
    slots = [first + scalar_attrs.index(k) for k in given]
    kinds = [type(base[p]) for p in slots]
    tail = slots == list(range(first, len(base))) and len(set(kinds)) == 1
    head = base[:first]
    kind = kinds[0] if kinds else None
    outs = list(zip(entry.out_shapes, entry.out_dtypes))
    temps = entry.temps
    views = own_views(launch.views, list(in_shapes) + list(entry.out_shapes)
                      + [sh for sh, _ in temps])
    nothing = entry.nothing_to_do
    cpu = device.device_type == "cpu"
    empty = _empty if cpu else device.empty

    def run(data, out_data, values):
        if out_data is None:
            out_data = [empty(s, d) for s, d in outs]
        if nothing:
            return out_data
        if tail:        # every scalar attribute given, in order, of one type
            sc = head + [kind(v) for v in values]
        else:
            sc = base[:]
            for p, t, v in zip(slots, kinds, values):
                sc[p] = t(v)
        arrays = [*data, *out_data]
        if temps:
            arrays += [empty(s, d) for s, d in temps]
        if views is not None:
            arrays = [a if v is None or tuple(a.shape) == v else a.reshape(v)
                      for a, v in zip(arrays, views)]
        if pick is not None:
            arrays = pick_args(pick, arrays)
        if cpu:
            fn(*arrays, *sc)
        else:
            with device_scope(device):
                fn(*arrays, *sc)
        return out_data

    def bind(data, out_data):
        """``call(values)``: ``run(data, out_data, values)`` with the arrays
        (and their views) fixed once, for a caller that repeats the call."""
        if nothing or temps or not cpu or not tail:
            return lambda values: run(data, out_data, list(values))
        arrays = [*data, *out_data]
        if views is not None:
            arrays = [a if v is None or tuple(a.shape) == v else a.reshape(v)
                      for a, v in zip(arrays, views)]
        arrays = tuple(pick_args(pick, arrays)) + tuple(head)

        def call(values):
            fn(*arrays, *[kind(v) for v in values])
        return call
    run.bind = bind
    return run
