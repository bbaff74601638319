"""Prepare-time values of the fill ops (nbdl.ops.init_ops), shared by the CPU
and CUDA kernels: ``(a, b, repeat)`` such that element ``i`` is
``a + (i // repeat) * b`` (a constant fill has ``b = 0``)."""
import numpy as np

from ...ops.init_ops import arange_start, linspace_step


def affine_params(call):
    """``(a, b, repeat)`` of ``_zeros`` / ``_ones`` / ``_full`` / ``_arange``
    in the output's dtype (``repeat`` an int)."""
    name = call.op.name
    a = call.attrs
    t = np.dtype(call.out_dtypes[0]).type
    if name == "_zeros":
        return t(0), t(0), 1
    if name == "_ones":
        return t(1), t(0), 1
    if name == "_full":
        return t(a["value"]), t(0), 1
    return t(arange_start(a)), t(a["step"]), int(a["repeat"])


def linspace_params(call):
    """``(start, step, 1)`` of ``_linspace`` in float64: MXNet computes each
    value in double and casts it once."""
    a = call.attrs
    return np.float64(a["start"]), np.float64(linspace_step(a)), 1
