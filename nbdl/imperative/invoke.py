"""Running one op eagerly on arrays (MXNet's imperative invoke).

``invoke`` works on ``NDArrayBase`` instances and makes its outputs of the
class of the first input (or of ``out=``; ``cls=`` for an op without array
inputs), so the NDArray class sits above it.  It infers the output shapes
and dtypes with the op's own rules, allocates the outputs on the inputs'
device (or writes into ``out=``), prepares the kernel and calls it the way
the executor does: ``fn(*inputs, *outputs, *temps, *scalars)`` over the
views the ``Launch`` asks for.  Everything up to the kernel call is a
one-node schedule cached per (op, attributes, input shapes and dtypes,
device, write requests, training flag): ``nbdl.runner.eager``.

On the CPU a repeated call signature takes a shorter road: the first call
leaves a ``Signature`` whose ``run`` closure allocates the outputs and calls
the kernel with every view and scalar worked out in advance, so a repeated
eager call costs one dictionary lookup, the allocations, the kernel and the
array wrappers (plus a tape node under ``autograd.record()``).
``scalar_op`` is the same road for ``x * 2``-style operators, and
``invoke_step`` the one autograd's backward takes (write requests and
given output arrays).
"""
import numpy as np

from .. import profiler_core as _prof
from ..device import as_device
from ..errors import DeviceError, DTypeError, GraphError, ShapeError
from ..graph.signature import raw_attr_key as _attr_key
from ..ops.registry import REQ_INPLACE, REQ_WRITE, get_op
from ..runner import call as _run
from ..runner import eager as _eager
from ..runner.buffers import overlaps as _overlaps, same_buffer as _same_buffer
from ..runner.eager import Signature, eager_call as prepare, raw_attrs as _raw
from ..runner.eager import run_given as _run_given
from . import invoke_scalars as _scalars
from . import state as _ag_state
from .base import NDArrayBase, wrap as _wrap_new
from .tape import record_op, tape_op

_state = _ag_state._state       # the thread-local recording / training flags
_new = object.__new__
_fast = _eager.fast             # call signature -> Signature (CPU, the common case)


def _cpu_data(inputs):
    """(device, input arrays, shapes, dtypes) when every input is an array
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


def invoke(op, inputs, attrs=None, out=None, is_train=None, device=None, cls=None):
    """See ``_invoke``; this front handles a cached CPU call signature (new
    outputs, or one ``out=`` array that overlaps no input) with as little
    Python as possible: one dictionary lookup, the allocations, the kernel.
    While the profiler records imperative ops every call takes the general
    path, which times each kernel (``nbdl.profiler``)."""
    if _prof.imperative:
        return _invoke(op, inputs, attrs, out, is_train, device, cls)
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
                    res = _scalars.invoke_scalars(op, name, sa, inputs, data, shapes, dtypes,
                                                  dev, attrs, out, train)
                    if res is not None:
                        return res
                    return _invoke(op, inputs, attrs, out, train, None)
            akey = _attr_key(attrs) if attrs else ()
            if akey is None:
                return _invoke(op, inputs, attrs, out, train, None)
            key = (name, akey, shapes, dtypes, train)
            sig = _fast.get(key)
            if sig is not None and (type(op) is str or sig.op is op):
                if out is None:
                    if sig.single:
                        r = _new(type(inputs[0]))
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
                    res = _scalars.invoke_scalars(op, name, sa, inputs, data, shapes, dtypes,
                                                  dev, attrs, out, train)
                    if res is not None:
                        return res
                    return _invoke(op, inputs, attrs, out, train, None)
    return _invoke(op, inputs, attrs, out, is_train, device, cls)


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
                r = _new(type(x))
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


def invoke_step(op, raw, akey, inputs, is_train, req=None, given=None, cls=None):
    """One op of a gradient, run by autograd's backward: ``op`` an OpDef,
    ``raw`` its attributes and ``akey`` their ``_attr_key``.  Returns a list
    of the outputs.  On the CPU and while not recording, every output comes
    back (hidden ones too), ``req`` (a tuple with one write request per
    output, or None: all written) lets outputs nobody reads be skipped, and
    ``given`` (an array or None per output) names arrays that outputs are
    written into (one whose shape, dtype or device does not fit, or that
    shares memory with an input, is replaced by a new array: check the
    result).  Otherwise this is ``invoke`` (recorded when recording) and
    only the visible outputs come back, none of them given.  New arrays are
    of the first input's class (``cls`` for a step without inputs)."""
    got = None if _state.recording or akey is None else _cpu_data(inputs)
    if got is None:
        res = invoke(op, inputs, raw, is_train=is_train, cls=cls)
        return res if type(res) is list else [res]
    dev, data, shapes, dtypes = got
    train = bool(is_train)
    key = (op.name, akey, shapes, dtypes, train, req)
    sig = _fast.get(key)
    if sig is None or sig.op is not op:
        entry = prepare(op, _raw(op, raw, len(inputs)), shapes, dtypes, dev, req, train)
        sig = Signature(op, raw, akey, entry, train, shapes)
        _eager.remember(key, sig)
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
    kind = type(inputs[0])
    for i, o in enumerate(out):
        if given is not None and given[i] is not None:
            res.append(given[i])
            continue
        r = _new(kind)
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
    """Whether ``out`` can take ``sig``'s one output directly: an array on
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
    kind = type(inputs[0])
    for d in out_data:
        r = _new(kind)
        r._data = d
        r._device = dev
        every.append(r)
    if recording:
        _record(sig, inputs, every, train)
    n = sig.n_visible
    return every[0] if n == 1 else every[:n]


def _remember(key, op, attrs, akey, inputs, shapes, dtypes, dev, train):
    op = get_op(op) if type(op) is str else op
    raw = _raw(op, attrs, len(inputs))
    entry = prepare(op, raw, shapes, dtypes, dev, None, train)
    _eager.remember(key, Signature(op, raw, akey, entry, train, shapes))


def _invoke(op, inputs, attrs=None, out=None, is_train=None, device=None, cls=None):
    """Run op ``op`` (a name or an ``OpDef``) on arrays ``inputs`` (data
    inputs, then aux states, which are updated in place).

    ``attrs`` holds strings or Python values.  ``out`` (an array, or a list
    with one per visible output) receives the result instead of new arrays.
    ``device`` is only needed by ops without inputs.  ``is_train`` defaults
    to ``autograd.is_training()``; under ``autograd.record()`` the call is
    taped.  New arrays are of the class of the first input (of ``out``, or
    ``cls`` when the op has no array input).  Returns the visible outputs:
    one array, or a list when the op has several."""
    if isinstance(op, str):
        op = get_op(op)
    inputs = list(inputs)
    for i, a in enumerate(inputs):
        if not isinstance(a, NDArrayBase):
            raise GraphError(f"{op.name}: input {i} must be an NDArray, got {type(a).__name__}")
    dev = _common_device(op, inputs, device)
    recording = _ag_state.is_recording()
    if is_train is None:
        is_train = _ag_state.is_training()
    raw = _raw(op, attrs, len(inputs))
    in_data = [a._data for a in inputs]
    in_shapes = tuple(tuple(a.shape) for a in in_data)
    in_dtypes = tuple(a.dtype for a in in_data)
    entry = prepare(op, raw, in_shapes, in_dtypes, dev, None, is_train)

    if out is None:
        kind = _class_of(op, inputs, cls)
        out_data = [dev.empty(s, d) for s, d in zip(entry.out_shapes, entry.out_dtypes)]
        _launch(entry, entry.launch(bool(is_train)), in_data, out_data, dev)
        every = [_wrap_new(kind, d, dev) for d in out_data]
        if recording:
            record_op(op, raw, inputs, every, is_train)
        results = every[:entry.n_visible]
        return results[0] if len(results) == 1 else results

    outs = [out] if isinstance(out, NDArrayBase) else list(out)
    _check_out(entry, outs, dev)
    kind = type(outs[0]) if outs else _class_of(op, inputs, cls)
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
                pairs = set(entry.inplace())
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
    _launch(entry, entry.launch(bool(is_train)), in_data, out_data, dev)
    for o in redirected:
        with _ag_state.pause(is_train):
            invoke("_copy", [_wrap_new(kind, out_data[o], dev)], out=outs[o])
    if recording:
        every = list(outs) + [_wrap_new(kind, d, dev) for d in out_data[len(outs):]]
        record_op(op, raw, inputs, every, is_train)
    return outs[0] if len(outs) == 1 else outs


def clear_cache():
    """Forget every prepared eager call (``nbdl.runner.eager``'s caches and
    the scalar-attribute road's)."""
    _eager.clear()
    _scalars.clear()


def cache_info():
    """``{"size": ..., "max_size": ...}`` of the prepared eager calls."""
    return _eager.info()


def _class_of(op, inputs, cls):
    """The class of a call's new arrays: its first input's, else ``cls``."""
    if inputs:
        return type(inputs[0])
    if cls is None:
        raise GraphError(f"{op.name}: the op has no array inputs, so the class of its result "
                         f"must be given (cls=); call it through nbdl.nd")
    return cls


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
        if not isinstance(o, NDArrayBase):
            raise GraphError(f"{op.name}: out= must hold NDArrays, got {type(o).__name__}")
        if o._device != dev:
            raise DeviceError(f"{op.name}: out= array {i} is on {o._device}, the inputs on {dev}")
        if tuple(o.shape) != tuple(s):
            raise ShapeError(f"{op.name}: out= array {i} has shape {tuple(o.shape)} but the "
                             f"output has shape {tuple(s)}")
        if np.dtype(o._data.dtype) != d:
            raise DTypeError(f"{op.name}: out= array {i} has dtype {np.dtype(o._data.dtype)} "
                             f"but the output has dtype {d}")


def _launch(entry, launch, in_data, out_data, dev):
    if _prof.imperative:
        t0 = _prof.now_ns()
        _run.run(entry, launch, in_data, out_data, dev)
        if dev.device_type != "cpu":
            from numba import cuda
            cuda.synchronize()
        _prof.complete(entry.op.name, _prof.CAT_OPERATOR, t0, _prof.now_ns())
        return
    _run.run(entry, launch, in_data, out_data, dev)
