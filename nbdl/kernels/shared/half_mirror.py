"""float16 calls run as float32 kernels on float32 mirrors (host code both
devices' ``prepare`` functions use).

Numba's CPU target cannot type float16 arrays, and most kernels accumulate
in the data's dtype; so an op that takes float16 as MXNet does (storing
float16, computing in float32 like MXNet's ``half_t`` arithmetic) either sets
``OpDef.half_mirrors`` (the op table then does it all) or, when a kernel
module wants to choose per call, declares its temps with ``with_half(rule)``
and wraps its ``prepare`` with ``with_half_prepare(prepare, rule, copy)``:
each float16 input is copied into a float32 mirror, the float32 kernel runs
on the mirrors, and each written float16 output is rounded once from its
mirror (an output whose request is ``REQ_ADD`` starts from a copy of its
current value).  ``copy(dst, src)`` is the device's converting copy of two
arrays of the same size.  The launcher is a Python function, so a schedule
with such a step runs its Python loop, not a generated driver.  The
mechanism itself is the op table's (``ops/registry.py``: ``has_half``,
``as_f32``, ``half_mirror_temps``, ``half_launch``).
"""
import numpy as np

from ...ops.registry import as_f32, has_half, half_mirror_temps
from ...ops.registry import half_launch as _registry_half_launch

F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)

__all__ = ["F16", "F32", "as_f32", "has_half", "with_half", "half_launch", "with_half_prepare"]


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
        return base + half_mirror_temps(call) if has_half(call) else base
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
    n_base = len(rule(as_f32(call))) if rule is not None else 0
    return _registry_half_launch(call, prepare32, copy, n_base)


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
