"""The eager road of ops with ``scalar_attrs`` (the optimizer updates,
``nbdl/ops/optimizer.py``): ``invoke`` hands such a call here, whose cache
key leaves those attributes' values out, so a learning rate that changes
every step reuses the prepared launch with the new values in its scalar
slots instead of re-preparing it and filling the caches (docs/ops.md)."""
import numpy as np

from ..ops.registry import REQ_INPLACE, REQ_WRITE, get_op, pick_args
from .. import profiler_core as _prof
from . import invoke as _inv
from .ndarray import NDArray
from .storage import _overlaps, _scope

_new = object.__new__
_empty = np.empty

SCALAR_ATTRS = {}   # op name -> its OpDef.scalar_attrs (filled on first use)
# (op, static attrs, given scalar attrs, shapes, dtypes, train, req, device) -> run
_scalar_fast = {}
_NUMBER = (int, float)


def scalar_attrs_of(op):
    try:
        opdef = get_op(op) if type(op) is str else op
    except Exception:           # an unknown name: the general path reports it
        return ()
    sa = tuple(opdef.scalar_attrs)
    SCALAR_ATTRS[opdef.name] = sa
    if type(op) is str:
        SCALAR_ATTRS[op] = sa
    return sa


def invoke_scalars(op, name, sa, inputs, data, shapes, dtypes, dev, attrs, out, train):
    """``invoke`` of an op with ``scalar_attrs`` (the optimizer updates) on
    the CPU: the cache key leaves their values out, so a call with another
    learning rate runs the kernel prepared for the first one with the new
    values in its scalar slots (no re-prepare, no cache growth).  ``out``
    may be an input the op pairs in place with that output (``out=weight``)
    or arrays sharing no memory with the inputs; anything else takes the
    general path.  Calls are not taped (the updates have no gradient).  On
    a GPU the same (``dev`` is the inputs' device)."""
    got = _lookup(op, name, sa, data, shapes, dtypes, dev, attrs, out, train)
    if got is None:
        return _inv._invoke(op, inputs, attrs, out, train, None)
    run, out_data, values = got
    result = run(data, out_data, values)
    if out is not None:
        return out
    every = []
    for d in result:
        r = _new(NDArray)
        r._data = d
        r._device = dev
        every.append(r)
    return every[0] if len(every) == 1 else every


def prepared(op, inputs, attrs, out):
    """The prepared call behind ``invoke(op, inputs, attrs, out=out)`` for an
    op with ``scalar_attrs``, for a caller that repeats it on the same arrays
    with new scalar values (``nbdl.optimizer``: one per parameter and op):
    ``(call, data)`` where ``call(values)`` runs the kernel on ``data``
    (the inputs' arrays, which it holds) and ``out`` with ``values`` for the
    attributes in ``attrs``' order; None when this call would take
    ``invoke``'s general path (ask again whenever the arrays or the
    attribute names change).

    Parameters
    ----------
    op : str
        The op's name.
    inputs : list of NDArray
        Its inputs, on one device.
    attrs : dict
        Its attributes; the ones in ``scalar_attrs`` must be numbers.
    out : NDArray or list of NDArray
        Where the outputs go (an input paired in place, or separate arrays).
    """
    if _prof.imperative:
        return None
    sa = SCALAR_ATTRS.get(op)
    if sa is None:
        sa = scalar_attrs_of(op)
    if not sa or any(k not in sa for k in attrs):
        return None
    got = device_data(inputs)
    if got is None:
        return None
    dev, data, shapes, dtypes = got
    found = _lookup(op, op, sa, data, shapes, dtypes, dev, attrs, out, False)
    if found is None or found[1] is None:
        return None
    return found[0].bind(data, found[1]), data


def _lookup(op, name, sa, data, shapes, dtypes, dev, attrs, out, train):
    """``(run, out_data, values)`` of a call of ``invoke_scalars``, or None
    for the general path."""
    static = []
    given = []
    values = []
    for k, v in attrs.items():
        if k in sa:
            t = type(v)
            if t is float or t is int or t is bool:
                pass
            elif isinstance(v, (np.floating, np.integer)):
                v = v.item()
            elif t is tuple or t is list:
                if not all(type(x) in _NUMBER for x in v):
                    return None
                v = tuple(float(x) for x in v)
            else:
                return None
            given.append(k)
            values.append(v)
        else:
            static.append((k, v))
    req = None
    out_data = None
    if out is not None:
        outs = [out] if isinstance(out, NDArray) else list(out)
        req, out_data = [], []
        for o in outs:
            od = getattr(o, "_data", None)
            if od is None or o._device.key != dev.key:
                return None
            same = [i for i, a in enumerate(data) if a is od]
            if same:
                req.append((same[0], len(out_data)))
            elif any(_overlaps(a, od) for a in data):
                return None
            else:
                req.append(None)
            out_data.append(od)
        req = tuple(req)
    skey = _inv._attr_key(dict(static)) if static else ()
    if skey is None:
        return None
    key = (name, skey, tuple(given), shapes, dtypes, train, req, dev.key)
    run = _scalar_fast.get(key)
    if run is None:
        run = _make_scalar_run(op, attrs, sa, given, data, shapes, dtypes, dev, train, req,
                               out_data)
        if run is None:
            return None
        if len(_scalar_fast) >= _inv.FAST_SIZE:
            _scalar_fast.clear()
        _scalar_fast[key] = run
    return run, out_data, values


def _make_scalar_run(op, attrs, sa, given, data, shapes, dtypes, dev, train, req, out_data):
    """The closure ``run(data, out_data, values)`` for one key of
    ``_invoke_scalars``, or None when ``out_data`` does not fit the outputs
    or an input pairing does not hold (the general path then decides)."""
    opdef = get_op(op) if type(op) is str else op
    raw = _inv._raw(opdef, attrs, data)
    codes = None
    if req is not None:
        pairs = None
        codes = []
        for o, r in enumerate(req):
            if r is None:
                codes.append(REQ_WRITE)
                continue
            if pairs is None:
                parsed, _ = opdef.parse_attrs(raw)
                pairs = set(opdef.inplace(parsed)) if opdef.inplace else set()
            if r not in pairs:
                return None
            codes.append(REQ_INPLACE)
        codes = tuple(codes)
    entry = _inv.prepare(opdef, raw, shapes, dtypes, dev, codes, train)
    if out_data is not None:
        if len(out_data) != entry.n_visible or len(out_data) != len(entry.out_shapes):
            return None
        for od, s, d in zip(out_data, entry.out_shapes, entry.out_dtypes):
            if od.shape != tuple(s) or od.dtype != d:
                return None
    return scalar_runner(entry, shapes, sa, given, dev)


def device_data(inputs):
    """``_cpu_data`` for inputs on one device of any kind, or None."""
    try:
        dev = inputs[0]._device
        dkey = dev.key
        data = []
        for a in inputs:
            if a._device.key != dkey:
                return None
            data.append(a._data)
    except (AttributeError, IndexError, TypeError):
        return None
    return dev, data, tuple([tuple(d.shape) for d in data]), \
        tuple([np.dtype(d.dtype) for d in data])


def scalar_runner(entry, in_shapes, scalar_attrs, given, device):
    """``run(data, out_data, values)`` for an op with ``scalar_attrs``: the
    prepared launch of ``entry`` with the values of the attributes named in
    ``given`` (a subset of ``scalar_attrs``, in call order) put into their
    slots among the launch's last scalars, each converted to the type of the
    value it replaces (``np.float32(lr)``).  ``out_data`` is None (new
    outputs) or an array per output.  Returns the output arrays.  On a GPU
    ``device`` allocates the outputs and the kernel runs in its context."""
    launch = entry.launch
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
    views = launch.views
    if views is not None:        # no reshape where a view is the array's own shape
        shapes = list(in_shapes) + list(entry.out_shapes) + [sh for sh, _ in temps]
        views = [None if v is None or tuple(v) == tuple(sh) else tuple(v)
                 for v, sh in zip(views, shapes)]
        if all(v is None for v in views):
            views = None
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
            with _scope(device):
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


def clear():
    """Forget every prepared call (``invoke.clear_cache``)."""
    _scalar_fast.clear()
