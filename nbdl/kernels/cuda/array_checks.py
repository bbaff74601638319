"""CUDA kernels for shape_array, size_array, all_finite, multi_all_finite and
_contrib_allclose (views as in ``nbdl.kernels.cpu.array_checks``).  The
checks run one thread per element; a failing element clears the one output
element (every writer writes the same 0, so no atomics are needed)."""
import math

import numpy as np
from numba import cuda

from ...ops.registry import REQ_NULL, Launch
from ..shared.array_checks import py_close
from ._launch import launcher
from ..shared.elemwise_plan import size_of as _size

_is_close = cuda.jit(device=True)(py_close)


@cuda.jit
def _fill(out, value):
    if cuda.grid(1) == 0:
        out[0] = value


@cuda.jit
def _shape(x, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = x.shape[i]


@cuda.jit
def _finite(x, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        if not math.isfinite(np.float32(x[i])):
            out[0] = 0


@cuda.jit
def _close(a, b, out, rtol, atol, equal_nan):
    for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        if not _is_close(a[i], b[i], rtol, atol, equal_nan):
            out[0] = 0


def _noop(*args):
    pass


def prepare_shape_array(call):
    views = [None, None]
    nd = len(call.in_shapes[0])
    if call.req[0] == REQ_NULL or nd == 0:
        return Launch(_noop, (), views=views)
    run = launcher(_shape, nd)

    def fn(x, out):
        run(x, out)
    return Launch(fn, (), views=views)


def prepare_size_array(call):
    n = _size(call.in_shapes[0])
    views = [(n,), (1,)]
    if call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    fill = launcher(_fill, 1)

    def fn(x, out):
        fill(out, n)
    return Launch(fn, (), views=views)


def _finite_launch(shapes, init, req):
    sizes = [_size(s) for s in shapes]
    fill = launcher(_fill, 1)
    runs = [launcher(_finite, s) if s else None for s in sizes]
    k = len(shapes)

    def fn(*arrays):
        if req == REQ_NULL:
            return
        out = arrays[k]
        if init:
            fill(out, np.float32(1))
        for x, run in zip(arrays[:k], runs):
            if run is not None:
                run(x, out)
    return Launch(fn, (), views=[(s,) for s in sizes] + [(1,)])


def prepare_all_finite(call):
    return _finite_launch(call.in_shapes, bool(call.attrs["init_output"]), call.req[0])


def prepare_multi_all_finite(call):
    return _finite_launch(call.in_shapes, bool(call.attrs["init_output"]), call.req[0])


def prepare_allclose(call):
    dt = np.dtype(call.in_dtypes[0])
    t = np.float32 if dt == np.float16 else (dt.type if dt.kind == "f" else np.float64)
    a = call.attrs
    n = _size(call.in_shapes[0])
    views = [(n,), (n,), (1,)]
    if call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    fill = launcher(_fill, 1)
    run = launcher(_close, max(n, 1))
    rtol, atol, equal_nan = t(a["rtol"]), t(a["atol"]), bool(a["equal_nan"])

    def fn(x, y, out):
        fill(out, np.uint8(1))
        if n:
            run(x, y, out, rtol, atol, equal_nan)
    return Launch(fn, (), views=views)
