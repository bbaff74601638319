"""Running one op eagerly on NDArrays (MXNet's imperative invoke).

``invoke`` infers the output shapes and dtypes with the op's own rules,
allocates the outputs on the inputs' device (or writes into ``out=``),
prepares the kernel and calls it the way the executor does: ``fn(*inputs,
*outputs, *temps, *scalars)`` over the views the ``Launch`` asks for.
Everything up to the kernel call is cached per (op, attributes, input shapes
and dtypes, device, write requests, training flag), so a repeated eager call
costs a dictionary lookup, the allocations and the kernel.
"""
import threading
from collections import OrderedDict

import numpy as np

from ..autograd import state as _ag_state
from ..autograd.tape import record_op
from ..device import as_device
from ..errors import DeviceError, DTypeError, GraphError, ShapeError
from ..executor.interpret import view_args
from ..ops.registry import REQ_INPLACE, REQ_WRITE, Call, get_op, shapes_str
from .ndarray import NDArray, _overlaps, _prod, _same_buffer, _scope

CACHE_SIZE = 512

_cache = OrderedDict()
_lock = threading.Lock()


class Prepared:
    """What a cached eager call of one op needs: parsed attributes, output
    shapes/dtypes, temp requests and the prepared launch."""
    __slots__ = ("op", "attrs", "out_shapes", "out_dtypes", "n_visible", "temps", "launch",
                 "nothing_to_do")

    def __init__(self, op, attrs, out_shapes, out_dtypes, temps, launch):
        self.op = op
        self.attrs = attrs
        self.out_shapes = out_shapes
        self.out_dtypes = out_dtypes
        self.n_visible = op.n_visible(attrs)
        self.temps = temps
        self.launch = launch
        # No output has an element: there is nothing for the kernel to write.
        self.nothing_to_do = bool(out_shapes) and all(_prod(s) == 0 for s in out_shapes) \
            and not op.mutates_aux


_fast = {}          # exact call signature -> (Prepared, views), for the common case
FAST_SIZE = 4096


def invoke(op, inputs, attrs=None, out=None, is_train=None, device=None):
    """See ``_invoke``; this front handles the common case (a cached
    signature, new outputs, all inputs on one CPU device) with as little
    Python as possible: one dictionary lookup, the allocations, the kernel."""
    if out is None and device is None and inputs:
        try:
            dev = inputs[0]._device
            dkey = dev.key
            same = dkey[0] == "cpu" and all(a._device.key == dkey for a in inputs)
        except AttributeError:
            same = False
        if same:
            state = _ag_state._state
            train = state.training if is_train is None else bool(is_train)
            data = [a._data for a in inputs]
            akey = _attr_key(attrs) if attrs else ()
            key = (op if type(op) is str else op.name, akey,
                   tuple([d.shape for d in data]), tuple([d.dtype for d in data]), train)
            hit = _fast.get(key)
            if hit is not None:
                return _run_fast(hit, inputs, data, dev, attrs, train, state.recording)
            result = _invoke(op, inputs, attrs, None, train, None)
            if akey is not None:
                _remember(key, op, attrs, inputs, dev, train)
            return result
    return _invoke(op, inputs, attrs, out, is_train, device)


def _remember(key, op, attrs, inputs, dev, train):
    op = get_op(op) if type(op) is str else op
    entry = prepare(op, _raw(op, attrs, inputs), key[2], key[3], dev, None, train)
    if len(_fast) >= FAST_SIZE:
        _fast.clear()
    views = entry.launch.views
    if views is not None:
        views = [None if v is None else tuple(v) for v in views]
    _fast[key] = (entry, views)


def _raw(op, attrs, inputs):
    raw = dict(attrs) if attrs else {}
    if op.key_var_num_args and op.key_var_num_args not in raw:
        raw[op.key_var_num_args] = len(inputs)
    return raw


def _run_fast(hit, inputs, data, dev, attrs, train, recording):
    entry, views = hit
    out_data = [np.empty(s, d) for s, d in zip(entry.out_shapes, entry.out_dtypes)]
    if not entry.nothing_to_do:
        arrays = data + out_data
        if entry.temps:
            arrays += [np.empty(s, d) for s, d in entry.temps]
        if views is not None:
            arrays = [a if v is None or v == a.shape else a.reshape(v)
                      for a, v in zip(arrays, views)]
        launch = entry.launch
        launch.fn(*arrays, *launch.scalars)
    every = [NDArray(d, dev) for d in out_data]
    if recording:
        record_op(entry.op, _raw(entry.op, attrs, inputs), inputs, every, train)
    n = entry.n_visible
    return every[0] if n == 1 else every[:n]


def _invoke(op, inputs, attrs=None, out=None, is_train=None, device=None):
    """Run op ``op`` (a name or an ``OpDef``) on NDArrays ``inputs`` (data
    inputs, then aux states, which are updated in place).

    ``attrs`` holds strings or Python values.  ``out`` (an NDArray, or a list
    with one per visible output) receives the result instead of new arrays.
    ``device`` is only needed by ops without inputs.  ``is_train`` defaults
    to ``autograd.is_training()``; under ``autograd.record()`` the call is
    taped.  Returns the visible outputs: one NDArray, or a list when the op
    has several."""
    if isinstance(op, str):
        op = get_op(op)
    inputs = list(inputs)
    for i, a in enumerate(inputs):
        if not isinstance(a, NDArray):
            raise GraphError(f"{op.name}: input {i} must be an NDArray, got {type(a).__name__}")
    dev = _common_device(op, inputs, device)
    recording = _ag_state.is_recording()
    if is_train is None:
        is_train = _ag_state.is_training()
    raw = _raw(op, attrs, inputs)
    in_data = [a._data for a in inputs]
    in_shapes = tuple(tuple(a.shape) for a in in_data)
    in_dtypes = tuple(a.dtype for a in in_data)
    entry = prepare(op, raw, in_shapes, in_dtypes, dev, None, is_train)

    if out is None:
        out_data = [dev.empty(s, d) for s, d in zip(entry.out_shapes, entry.out_dtypes)]
        _launch(entry, in_data, out_data, dev)
        every = [NDArray(d, dev) for d in out_data]
        if recording:
            record_op(op, raw, inputs, every, is_train)
        results = every[:entry.n_visible]
        return results[0] if len(results) == 1 else results

    outs = [out] if isinstance(out, NDArray) else list(out)
    _check_out(entry, outs, dev)
    out_data = [o._data for o in outs]
    out_data += [dev.empty(s, d) for s, d in
                 zip(entry.out_shapes[len(outs):], entry.out_dtypes[len(outs):])]
    # ``out`` may be one of the inputs (``x += y``).  The kernel may write
    # over an input only where the op declares that pair inplace; any other
    # overlap is computed into a fresh buffer and copied over afterwards.
    req = [REQ_WRITE] * len(out_data)
    redirected = []
    pairs = None
    for o in range(len(outs)):
        for i, a in enumerate(in_data):
            b = out_data[o]
            if b is not a and not _overlaps(b, a):
                continue
            if pairs is None:
                pairs = set(op.inplace(entry.attrs)) if op.inplace else set()
            if (i, o) in pairs and req[o] != -1 and (b is a or _same_buffer(b, a)):
                req[o] = REQ_INPLACE
            else:
                req[o] = -1
    for o, r in enumerate(req):
        if r == -1:
            redirected.append(o)
            out_data[o] = dev.empty(entry.out_shapes[o], entry.out_dtypes[o])
            req[o] = REQ_WRITE
    if any(r != REQ_WRITE for r in req):
        entry = prepare(op, raw, in_shapes, in_dtypes, dev, tuple(req), is_train)
    _launch(entry, in_data, out_data, dev)
    for o in redirected:
        with _ag_state.pause(is_train):
            invoke("_copy", [NDArray(out_data[o], dev)], out=outs[o])
    if recording:
        every = list(outs) + [NDArray(d, dev) for d in out_data[len(outs):]]
        record_op(op, raw, inputs, every, is_train)
    return outs[0] if len(outs) == 1 else outs


def prepare(op, raw, in_shapes, in_dtypes, device, req, is_train):
    """The cached ``Prepared`` for one call signature (made on a miss)."""
    key = _attr_key(raw)
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


def clear_cache():
    with _lock:
        _cache.clear()
        _fast.clear()


def cache_info():
    return {"size": len(_cache), "max_size": CACHE_SIZE}


def _make(op, raw, in_shapes, in_dtypes, device, req, is_train):
    attrs, _ = op.parse_attrs(raw)
    names = op.list_inputs(attrs) + op.list_aux(attrs)
    if len(in_shapes) != len(names):
        raise GraphError(f"{op.name}: expected {len(names)} inputs ({', '.join(names) or 'none'}), "
                         f"got {len(in_shapes)}")
    n_out = op.n_outputs(attrs)
    out_shapes = _infer(op, attrs, in_shapes, n_out, names, "shape")
    out_dtypes = _infer(op, attrs, in_dtypes, n_out, names, "dtype")
    call = Call(op, attrs, in_shapes, in_dtypes, out_shapes, out_dtypes, device=device,
                req=list(req) if req else [REQ_WRITE] * n_out, is_train=bool(is_train))
    temps = [(tuple(s), np.dtype(d)) for s, d in (op.temp(call) if op.temp else [])]
    launch = op.prepare(call)
    return Prepared(op, attrs, out_shapes, out_dtypes, temps, launch)


def _infer(op, attrs, given, n_out, names, what):
    """Run the op's shape (or dtype) rule on fully known inputs; check that it
    agrees with them and that it determines every output."""
    rule = op.infer_shape if what == "shape" else op.infer_type
    err = ShapeError if what == "shape" else DTypeError
    fmt = (lambda s: str(tuple(s))) if what == "shape" else (lambda t: str(np.dtype(t)))
    outs = [None] * n_out
    if rule is None:
        if what == "shape" or not given:
            raise err(f"{op.name}: the op has no {what} rule")
        return [np.dtype(given[0])] * n_out
    ins = list(given)
    for _ in range(3):  # a two-way rule may need a second look at its own results
        new_in, new_out = rule(attrs, list(ins), list(outs))
        for name, g, v in zip(names, given, new_in):
            if v is not None and _norm(v, what) != _norm(g, what):
                raise err(f"{op.name}: input {name!r} has {what} {fmt(g)} but the op expects "
                          f"{fmt(v)}; input {what}s {_list(given, what)}")
        outs = [None if v is None else _norm(v, what) for v in new_out]
        if all(v is not None for v in outs):
            return outs
    if what == "dtype":  # an op without inputs that says nothing: MXNet's default
        return [np.dtype(np.float32) if v is None else v for v in outs]
    raise ShapeError(f"{op.name}: output shapes could not be inferred from input shapes "
                     f"{shapes_str(given)}")


def _norm(v, what):
    return tuple(int(d) for d in v) if what == "shape" else np.dtype(v)


def _list(vals, what):
    if what == "shape":
        return shapes_str(vals)
    return "[" + ", ".join(str(np.dtype(t)) for t in vals) + "]"


def _attr_key(raw):
    """A hashable, exact key for raw attribute values (``repr`` keeps ``-0.0``
    apart from ``0.0`` and ``1`` from ``1.0``); None when a value cannot be
    represented, which turns caching off for that call."""
    if not raw:
        return ()
    if len(raw) == 1:               # the common eager case: one scalar attribute
        (k, v), = raw.items()
        t = type(v)
        if t is float:
            return ((k, t, v.hex()),)
        if t is int or t is str or t is bool:
            return ((k, t, v),)
    items = []
    for k in sorted(raw):
        v = raw[k]
        if isinstance(v, (str, int, float, bool, type(None), np.number, np.bool_)):
            items.append((k, type(v), repr(v)))
        elif isinstance(v, (tuple, list)) and all(
                isinstance(x, (int, float, type(None), np.integer)) for x in v):
            items.append((k, type(v), repr(tuple(v))))
        else:
            return None
    return tuple(items)


def _common_device(op, inputs, device):
    if not inputs:
        return as_device(device)
    dev = inputs[0]._device
    for a in inputs[1:]:
        if a._device != dev:
            where = ", ".join(f"input {i} on {x._device}" for i, x in enumerate(inputs))
            raise DeviceError(f"{op.name}: inputs are on different devices ({where}); "
                              f"move them to one device with .as_in_context()")
    if device is not None and as_device(device) != dev:
        raise DeviceError(f"{op.name}: device {as_device(device)} was asked for but the "
                          f"inputs are on {dev}")
    return dev


def _check_out(entry, outs, dev):
    op = entry.op
    if len(outs) != entry.n_visible:
        raise GraphError(f"{op.name}: out= needs {entry.n_visible} arrays, got {len(outs)}")
    for i, (o, s, d) in enumerate(zip(outs, entry.out_shapes, entry.out_dtypes)):
        if not isinstance(o, NDArray):
            raise GraphError(f"{op.name}: out= must hold NDArrays, got {type(o).__name__}")
        if o._device != dev:
            raise DeviceError(f"{op.name}: out= array {i} is on {o._device}, the inputs on {dev}")
        if tuple(o.shape) != tuple(s):
            raise ShapeError(f"{op.name}: out= array {i} has shape {tuple(o.shape)} but the "
                             f"output has shape {tuple(s)}")
        if np.dtype(o._data.dtype) != d:
            raise DTypeError(f"{op.name}: out= array {i} has dtype {np.dtype(o._data.dtype)} "
                             f"but the output has dtype {d}")


def _launch(entry, in_data, out_data, dev):
    if entry.nothing_to_do:
        return
    launch = entry.launch
    temps = [dev.empty(s, d) for s, d in entry.temps]
    arrays = view_args(in_data + out_data + temps, launch.views)
    if dev.device_type == "cpu":
        launch.fn(*arrays, *launch.scalars)
    else:
        with _scope(dev):
            launch.fn(*arrays, *launch.scalars)
