"""Running one op eagerly on NDArrays (MXNet's imperative invoke).

``invoke`` infers the output shapes and dtypes with the op's own rules,
allocates the outputs on the inputs' device (or writes into ``out=``),
prepares the kernel and calls it the way the executor does: ``fn(*inputs,
*outputs, *temps, *scalars)`` over the views the ``Launch`` asks for.
Everything up to the kernel call is cached per (op, attributes, input shapes
and dtypes, device, write requests, training flag).

On the CPU a repeated call signature takes a shorter road: the first call
leaves a ``Signature`` whose ``run`` closure allocates the outputs and calls
the kernel with every view and scalar worked out in advance, so a repeated
eager call costs one dictionary lookup, the allocations, the kernel and the
NDArray wrappers (plus a tape node under ``autograd.record()``).
``scalar_op`` is the same road for ``x * 2``-style operators, and
``invoke_step`` the one autograd's backward takes (write requests and
given output arrays).
"""
import threading
from collections import OrderedDict

import numpy as np

from .. import profiler_core as _prof
from ..autograd import state as _ag_state
from ..autograd.tape import record_op, tape_op
from ..device import as_device
from ..errors import DeviceError, DTypeError, GraphError, ShapeError
from ..executor.interpret import view_args
from ..ops.registry import REQ_INPLACE, REQ_WRITE, Call, get_op, pick_args, shapes_str
from . import invoke_scalars as _scalars
from .eager_call import EagerCall, Signature, _run_given
from .ndarray import NDArray
from .storage import _overlaps, _same_buffer, _scope

CACHE_SIZE = 512

_cache = OrderedDict()
_lock = threading.Lock()
_state = _ag_state._state       # the thread-local recording / training flags
_new = object.__new__
_empty = np.empty


_fast = {}          # call signature -> Signature (CPU, the common case)
FAST_SIZE = 4096


def _cpu_data(inputs):
    """(device, input arrays, shapes, dtypes) when every input is an NDArray
    on one CPU device, else None (the general path then checks and reports)."""
    try:
        dev = inputs[0]._device
        if dev.device_type != "cpu":
            return None
        n = len(inputs)
        if n == 1:
            d = inputs[0]._data
            return dev, (d,), (d.shape,), (d.dtype,)
        if n == 2:
            a, b = inputs
            other = b._device
            if other is not dev and other.key != dev.key:
                return None
            da, db = a._data, b._data
            return dev, (da, db), (da.shape, db.shape), (da.dtype, db.dtype)
        dkey = dev.key
        data = []
        for a in inputs:
            if a._device.key != dkey:
                return None
            data.append(a._data)
    except (AttributeError, IndexError, TypeError):
        return None
    return dev, data, tuple([d.shape for d in data]), tuple([d.dtype for d in data])


def invoke(op, inputs, attrs=None, out=None, is_train=None, device=None):
    """See ``_invoke``; this front handles a cached CPU call signature (new
    outputs, or one ``out=`` array that overlaps no input) with as little
    Python as possible: one dictionary lookup, the allocations, the kernel.
    While the profiler records imperative ops every call takes the general
    path, which times each kernel (``nbdl.profiler``)."""
    if _prof.imperative:
        return _invoke(op, inputs, attrs, out, is_train, device)
    if device is None:
        got = _cpu_data(inputs)
        if got is not None:
            dev, data, shapes, dtypes = got
            state = _state
            train = state.training if is_train is None else bool(is_train)
            name = op if type(op) is str else op.name
            if attrs:
                sa = _scalars.SCALAR_ATTRS.get(name)
                if sa is None:
                    sa = _scalars.scalar_attrs_of(op)
                if sa:
                    return _scalars.invoke_scalars(op, name, sa, inputs, data, shapes, dtypes,
                                                   dev, attrs, out, train)
            akey = _attr_key(attrs) if attrs else ()
            if akey is None:
                return _invoke(op, inputs, attrs, out, train, None)
            key = (name, akey, shapes, dtypes, train)
            sig = _fast.get(key)
            if sig is not None and (type(op) is str or sig.op is op):
                if out is None:
                    if sig.single:
                        r = _new(NDArray)
                        r._data = sig.run(data)
                        r._device = dev
                        if state.recording:
                            _record(sig, inputs, [r], train)
                        return r
                    return _wrap(sig, inputs, sig.run(data), dev, train, state.recording)
                if sig.single and _fits(sig, out, data, dev):
                    _run_given(sig, data, [out._data])
                    if state.recording:
                        _record(sig, inputs, [out], train)
                    return out
                return _invoke(op, inputs, attrs, out, train, None)
            result = _invoke(op, inputs, attrs, out, train, None)
            _remember(key, op, attrs, akey, inputs, shapes, dtypes, dev, train)
            return result
        if attrs:       # a GPU call of an op with scalar attributes (an optimizer update)
            name = op if type(op) is str else op.name
            sa = _scalars.SCALAR_ATTRS.get(name)
            if sa is None:
                sa = _scalars.scalar_attrs_of(op)
            if sa:
                got = _scalars.device_data(inputs)
                if got is not None:
                    dev, data, shapes, dtypes = got
                    train = _state.training if is_train is None else bool(is_train)
                    return _scalars.invoke_scalars(op, name, sa, inputs, data, shapes, dtypes,
                                                   dev, attrs, out, train)
    return _invoke(op, inputs, attrs, out, is_train, device)


def scalar_op(name, x, v):
    """``invoke(name, [x], {"scalar": float(v)})`` for the scalar operators
    (``x * 2``, ``1 - x``), keyed on the value itself when that is exact
    (not zero, not NaN; those take the general key)."""
    if _prof.imperative:
        return _invoke(name, [x], {"scalar": float(v)})
    v = float(v)
    if v and v == v:
        try:
            dev = x._device
            d = x._data
            cpu = dev.device_type == "cpu"
        except AttributeError:
            cpu = False
        if cpu:
            state = _state
            train = state.training
            skey = (name, v, d.shape, d.dtype, train)
            sig = _fast.get(skey)
            if sig is not None:
                r = _new(NDArray)
                r._data = sig.run((d,))
                r._device = dev
                if state.recording and (x._ag is not None or x._ag_var is not None):
                    tape_op(sig.op, sig.raw, sig.akey, [x], [r], train)
                return r
            result = invoke(name, [x], {"scalar": v})
            sig = _fast.get((name, (("scalar", float, v.hex()),), (d.shape,), (d.dtype,), train))
            if sig is not None and sig.single:
                _fast[skey] = sig
            return result
    return invoke(name, [x], {"scalar": v})


def invoke_step(op, raw, akey, inputs, is_train, req=None, given=None):
    """One op of a gradient, run by autograd's backward: ``op`` an OpDef,
    ``raw`` its attributes and ``akey`` their ``_attr_key``.  Returns a list
    of the outputs.  On the CPU and while not recording, every output comes
    back (hidden ones too), ``req`` (a tuple with one write request per
    output, or None: all written) lets outputs nobody reads be skipped, and
    ``given`` (an NDArray or None per output) names arrays that outputs are
    written into (one whose shape, dtype or device does not fit, or that
    shares memory with an input, is replaced by a new array: check the
    result).  Otherwise this is ``invoke`` (recorded when recording) and
    only the visible outputs come back, none of them given."""
    got = None if _state.recording or akey is None else _cpu_data(inputs)
    if got is None:
        res = invoke(op, inputs, raw, is_train=is_train)
        return res if type(res) is list else [res]
    dev, data, shapes, dtypes = got
    train = bool(is_train)
    key = (op.name, akey, shapes, dtypes, train, req)
    sig = _fast.get(key)
    if sig is None or sig.op is not op:
        entry = prepare(op, _raw(op, raw, inputs), shapes, dtypes, dev, req, train)
        sig = Signature(op, raw, akey, entry, shapes)
        if len(_fast) >= FAST_SIZE:
            _fast.clear()
        _fast[key] = sig
    if given is not None:
        given = _usable(sig, data, given)
    if given is None:
        out = sig.run(data) if not _prof.imperative else _timed_run(sig, dev, sig.run, data)
        if sig.single:
            out = [out]
    else:
        given_data = [None if g is None else g._data for g in given]
        if _prof.imperative:
            out = _timed_run(sig, dev, _run_given, sig, data, given_data)
        else:
            out = _run_given(sig, data, given_data)
    if _prof.memory:
        for i, o in enumerate(out):
            if given is None or given[i] is None:
                _prof.allocated(dev, o)
    res = []
    for i, o in enumerate(out):
        if given is not None and given[i] is not None:
            res.append(given[i])
            continue
        r = _new(NDArray)
        r._data = o
        r._device = dev
        res.append(r)
    return res


def _timed_run(sig, dev, fn, *args):
    """``fn(*args)`` recorded as one profiler event named after ``sig``'s op."""
    return _prof.timed(sig.op.name, _prof.CAT_OPERATOR, fn, *args)


def _usable(sig, data, given):
    """``given`` with None for each array that cannot take its output (shape,
    dtype, device or memory shared with an input); None when none can."""
    entry = sig.entry
    ok = []
    for g, s, d in zip(given, entry.out_shapes, entry.out_dtypes):
        if g is not None:
            gd = g._data
            if gd.shape != s or gd.dtype != d or g._device.device_type != "cpu" \
                    or any(a is gd or _overlaps(a, gd) for a in data):
                g = None
        ok.append(g)
    return ok if any(g is not None for g in ok) else None


def _fits(sig, out, data, dev):
    """Whether ``out`` can take ``sig``'s one output directly: an NDArray on
    the inputs' device with the output's shape and dtype, sharing no memory
    with an input."""
    try:
        od = out._data
        if out._device.key != dev.key:
            return False
    except AttributeError:
        return False
    entry = sig.entry
    if od.shape != entry.out_shapes[0] or od.dtype != entry.out_dtypes[0]:
        return False
    for a in data:
        if a is od or _overlaps(a, od):
            return False
    return True


def _record(sig, inputs, outputs, train):
    for a in inputs:
        if a._ag is not None or a._ag_var is not None:
            tape_op(sig.op, sig.raw, sig.akey, list(inputs), outputs, train)
            return


def _wrap(sig, inputs, out_data, dev, train, recording):
    every = []
    for d in out_data:
        r = _new(NDArray)
        r._data = d
        r._device = dev
        every.append(r)
    if recording:
        _record(sig, inputs, every, train)
    n = sig.n_visible
    return every[0] if n == 1 else every[:n]


def _remember(key, op, attrs, akey, inputs, shapes, dtypes, dev, train):
    op = get_op(op) if type(op) is str else op
    raw = _raw(op, attrs, inputs)
    entry = prepare(op, raw, shapes, dtypes, dev, None, train)
    if len(_fast) >= FAST_SIZE:
        _fast.clear()
    _fast[key] = Signature(op, raw, akey, entry, shapes)


def _raw(op, attrs, inputs):
    raw = dict(attrs) if attrs else {}
    if op.key_var_num_args and op.key_var_num_args not in raw:
        raw[op.key_var_num_args] = len(inputs)
    return raw


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
    """The cached ``EagerCall`` for one call signature (made on a miss)."""
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
        _scalars.clear()


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
    temps = [(tuple(s), np.dtype(d)) for s, d in op.temps(call)]
    launch = op.prepare(call)
    return EagerCall(op, attrs, out_shapes, out_dtypes, temps, launch)


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


_PLAIN = {int, str, bool, type(None)}
_NUMBERS = (int, float, type(None), np.integer)


def _attr_key(raw):
    """A hashable, exact key for raw attribute values (``float.hex``/``repr``
    keep ``-0.0`` apart from ``0.0``, and the type ``1`` from ``1.0``); None
    when a value cannot be represented, which turns caching off for that
    call.  The key follows the dict's order: the same attributes given in
    another order make another (equally valid) key."""
    if not raw:
        return ()
    items = []
    for k, v in raw.items():
        t = type(v)
        if t is float:
            items.append((k, t, v.hex()))
        elif t in _PLAIN:
            items.append((k, t, v))
        elif t is tuple or t is list:
            if not all(isinstance(x, _NUMBERS) for x in v):
                return None
            items.append((k, t, repr(tuple(v))))
        elif isinstance(v, (str, int, float, bool, np.number, np.bool_)):
            items.append((k, t, repr(v)))
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
    if _prof.imperative:
        t0 = _prof.now_ns()
        _launch_now(entry, in_data, out_data, dev)
        if dev.device_type != "cpu":
            from numba import cuda
            cuda.synchronize()
        _prof.complete(entry.op.name, _prof.CAT_OPERATOR, t0, _prof.now_ns())
        return
    _launch_now(entry, in_data, out_data, dev)


def _launch_now(entry, in_data, out_data, dev):
    if entry.nothing_to_do:
        return
    launch = entry.launch
    temps = [dev.empty(s, d) for s, d in entry.temps]
    arrays = pick_args(launch.args, view_args(in_data + out_data + temps, launch.views))
    if dev.device_type == "cpu":
        launch.fn(*arrays, *launch.scalars)
    else:
        with _scope(dev):
            launch.fn(*arrays, *launch.scalars)
