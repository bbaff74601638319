"""What a cached eager call keeps (``invoke``): ``EagerCall``, the op's
prepared launch for one call signature with its output shapes, dtypes and
temps, and on the CPU ``Signature``, whose ``run`` closure allocates the
outputs and calls the kernel with every view and scalar worked out."""
import numpy as np

from ..ops.registry import pick_args
from .storage import _prod

_empty = np.empty


class EagerCall:
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


class Signature:
    """One CPU call signature made ready.  ``run(data)`` takes the input
    arrays, allocates the outputs, calls the kernel and returns the output
    arrays (the array itself when ``single``: one output, visible).
    ``raw``/``akey`` are the raw attributes the tape records and their key."""
    __slots__ = ("op", "raw", "akey", "entry", "views", "n_visible", "single", "run")

    def __init__(self, op, raw, akey, entry, in_shapes):
        self.op = op
        self.raw = raw
        self.akey = akey
        self.entry = entry
        self.n_visible = entry.n_visible
        self.single = len(entry.out_shapes) == 1 and entry.n_visible == 1
        shapes = list(in_shapes) + list(entry.out_shapes) + [s for s, _ in entry.temps]
        views = entry.launch.views
        if views is not None:
            views = [None if v is None or tuple(v) == tuple(s) else tuple(v)
                     for v, s in zip(views, shapes)]
            if len(views) == len(shapes) and all(v is None for v in views):
                views = None
        self.views = views
        self.run = _runner(entry, len(in_shapes), views, self.single)


def _runner(entry, n_in, views, single):
    """The closure behind ``Signature.run``: the common shapes of call (one
    output, no temps, one or two inputs) get straight-line code."""
    launch = entry.launch
    fn, sc, pick = launch.fn, tuple(launch.scalars), launch.args
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


def _run_given(sig, data, given):
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
        launch = entry.launch
        launch.fn(*pick_args(launch.args, arrays), *launch.scalars)
    return out
