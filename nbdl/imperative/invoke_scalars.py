"""The eager road of ops with ``scalar_attrs`` (the optimizer updates,
``nbdl/ops/optimizer.py``): ``invoke`` hands such a call here, whose cache
key leaves those attributes' values out, so a learning rate that changes
every step reuses the prepared launch with the new values in its scalar
slots instead of re-preparing it and filling the caches (docs/ops.md).
A call this road cannot take (``None`` back) goes ``invoke``'s general
path."""
import numpy as np

from .. import profiler_core as _prof
from ..graph.signature import raw_attr_key
from ..ops.registry import REQ_INPLACE, REQ_WRITE, get_op
from ..runner.buffers import overlaps as _overlaps
from ..runner.eager import FAST_SIZE, eager_call, raw_attrs, scalar_runner
from .base import NDArrayBase

_new = object.__new__

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
    or arrays sharing no memory with the inputs; anything else returns None
    (the caller takes the general path).  Calls are not taped (the updates
    have no gradient).  On a GPU the same (``dev`` is the inputs' device).
    New arrays are of the first input's class."""
    got = _lookup(op, name, sa, data, shapes, dtypes, dev, attrs, out, train)
    if got is None:
        return None
    run, out_data, values = got
    result = run(data, out_data, values)
    if out is not None:
        return out
    every = []
    kind = type(inputs[0])
    for d in result:
        r = _new(kind)
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
        outs = [out] if isinstance(out, NDArrayBase) else list(out)
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
    skey = raw_attr_key(dict(static)) if static else ()
    if skey is None:
        return None
    key = (name, skey, tuple(given), shapes, dtypes, train, req, dev.key)
    run = _scalar_fast.get(key)
    if run is None:
        run = _make_scalar_run(op, attrs, sa, given, data, shapes, dtypes, dev, train, req,
                               out_data)
        if run is None:
            return None
        if len(_scalar_fast) >= FAST_SIZE:
            _scalar_fast.clear()
        _scalar_fast[key] = run
    return run, out_data, values


def _make_scalar_run(op, attrs, sa, given, data, shapes, dtypes, dev, train, req, out_data):
    """The closure ``run(data, out_data, values)`` for one key of
    ``_invoke_scalars``, or None when ``out_data`` does not fit the outputs
    or an input pairing does not hold (the general path then decides)."""
    opdef = get_op(op) if type(op) is str else op
    raw = raw_attrs(opdef, attrs, len(data))
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
    entry = eager_call(opdef, raw, shapes, dtypes, dev, codes, train)
    if out_data is not None:
        if len(out_data) != entry.n_visible or len(out_data) != len(entry.out_shapes):
            return None
        for od, s, d in zip(out_data, entry.out_shapes, entry.out_dtypes):
            if od.shape != tuple(s) or od.dtype != d:
                return None
    return scalar_runner(entry, entry.launch(bool(train)), shapes, sa, given, dev)


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


def clear():
    """Forget every prepared call (``invoke.clear_cache``)."""
    _scalar_fast.clear()
