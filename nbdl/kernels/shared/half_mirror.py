"""float16 calls run as float32 kernels on float32 mirrors (host code both
devices' ``prepare`` functions use).

Numba's CPU target cannot type float16 arrays, and most kernels accumulate
in the data's dtype; so an op that takes float16 as MXNet does (storing
float16, computing in float32 like MXNet's ``half_t`` arithmetic) declares
its temps with ``with_half(rule)`` and wraps its ``prepare`` with
``with_half_prepare(prepare, rule, copy)``: each float16 input is copied into
a float32 mirror, the float32 kernel runs on the mirrors, and each written
float16 output is rounded once from its mirror (an output whose request is
``REQ_ADD`` starts from a copy of its current value).  ``copy(dst, src)`` is
the device's converting copy of two arrays of the same size.  The launcher
is a Python function, so a schedule with such a step runs its Python loop,
not a generated driver.
"""
import dataclasses

import numpy as np

from ...ops.registry import REQ_ADD, REQ_NULL, Launch, pick_args

F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)


def has_half(call):
    """Whether any input or output of ``call`` is float16."""
    return any(d is not None and np.dtype(d) == F16
               for d in list(call.in_dtypes) + list(call.out_dtypes))


def as_f32(call):
    """``call`` with every float16 dtype read as float32."""
    def f(ds):
        return [F32 if d is not None and np.dtype(d) == F16 else d for d in ds]
    return dataclasses.replace(call, in_dtypes=f(call.in_dtypes), out_dtypes=f(call.out_dtypes))


def _half_slots(call):
    """(float16 inputs, which of them are read for their shape only, float16
    outputs): a shape-only input gets a mirror too (the float32 kernel is
    typed for float32 arrays) but nothing is copied into it."""
    shape_only = set(call.op.list_shape_inputs(call.attrs))
    ins = [i for i, d in enumerate(call.in_dtypes) if np.dtype(d) == F16]
    outs = [i for i, d in enumerate(call.out_dtypes) if np.dtype(d) == F16]
    return ins, shape_only, outs


def with_half(rule):
    """A temp rule: ``rule``'s scratch for the float32 version of the call,
    then one float32 mirror per float16 input and output.

    Parameters
    ----------
    rule : callable or None
        The op's float32 temp rule (None: no scratch).
    """
    def temps(call):
        base = rule(as_f32(call)) if rule is not None else []
        if not has_half(call):
            return base
        ins, _, outs = _half_slots(call)
        return (base + [(tuple(call.in_shapes[i]), F32) for i in ins]
                + [(tuple(call.out_shapes[i]), F32) for i in outs])
    return temps


def half_launch(call, prepare32, copy, rule):
    """A launcher for a float16 call: float16 inputs copied into their
    float32 mirrors, the float32 kernel of ``prepare32`` run on the mirrors,
    the written outputs copied back (rounded once).

    Parameters
    ----------
    call : Call
        The float16 call.
    prepare32 : callable
        The op's prepare for the float32 call.
    copy : callable
        ``copy(dst, src)``: the device's converting copy of two same-size arrays.
    rule : callable or None
        The op's float32 temp rule (None: no scratch).
    """
    c32 = as_f32(call)
    l32 = prepare32(c32)
    n_in, n_out = len(call.in_shapes), len(call.out_shapes)
    n_base = len(rule(c32)) if rule is not None else 0
    ins_h, shape_only, outs_h = _half_slots(call)
    req = list(call.req)

    def fn(*arrays):
        ins = list(arrays[:n_in])
        outs = list(arrays[n_in:n_in + n_out])
        temps = arrays[n_in + n_out:]
        mirrors = iter(temps[n_base:])
        for i in ins_h:
            m = next(mirrors)
            if i not in shape_only:
                copy(m, ins[i])
            ins[i] = m
        back = []
        for i in outs_h:
            m = next(mirrors)
            if req[i] == REQ_ADD:
                copy(m, outs[i])
            back.append((outs[i], m, req[i]))
            outs[i] = m
        args = ins + outs + list(temps[:n_base])
        views = l32.views if l32.views is not None else [None] * len(args)
        args = [a if v is None else a.reshape(v) for a, v in zip(args, views)]
        l32.fn(*pick_args(l32.args, args), *l32.scalars)
        for dst, m, r in back:
            if r != REQ_NULL:
                copy(dst, m)
    return Launch(fn, (), views=None)


def with_half_prepare(prepare, rule, copy):
    """``prepare``, or for a float16 call the float32 kernel on mirrors.

    Parameters
    ----------
    prepare : callable
        The op's prepare (float32/float64 calls).
    rule : callable or None
        The op's float32 temp rule (None: no scratch).
    copy : callable
        The device's converting copy (see ``half_launch``).
    """
    def prep(call):
        if has_half(call):
            return half_launch(call, prepare, copy, rule)
        return prepare(call)
    return prep
