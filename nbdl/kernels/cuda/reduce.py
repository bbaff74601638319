"""CUDA kernels for reductions and broadcasts.

Same geometry as the CPU kernels (``nbdl.ops.reduce.reduce_plan``): the big
array in a 6-D view, the reduced one in a 3-D view, ``tail`` saying whether
the last slot is reduced.  Reductions run one thread per output element with
a float64 accumulator in a register (the op requests an empty temp on the
GPU); broadcasts and the backward ops run one thread per element of the big
array.  Simple rather than fast: a block-level tree reduction is the upgrade
when a real GPU needs it.  Only the simulator has run these so far.
"""
import math
import numpy as np

from numba import cuda

from ...ops.reduce import (OP_CODES, OP_SUM, arg_plan, broadcast_axes, op_name, reduce_axes,
                           reduce_plan)
from ...ops.reduce import reduce_temp, select_mode
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.reduce import py_at, py_better, py_extents
from ._launch import launcher
from ..shared.elemwise_plan import size_of as _size
from ..shared.store import py_put, py_unravel4

_put = cuda.jit(device=True)(py_put)

_better = cuda.jit(device=True)(py_better)
_at = cuda.jit(device=True)(py_at)
_extents = cuda.jit(device=True)(py_extents)
_unravel4 = cuda.jit(device=True)(py_unravel4)


@cuda.jit
def reduce_kernel(x, out, tail, op, scale, req):
    n_r0, n_r1, n_r2 = _extents(x, tail)
    for o in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        _, k0, k1, k2 = _unravel4(o, out.shape[0], out.shape[1], out.shape[2])
        if op == 0:
            acc = 0.0
        elif op == 1 or op == 7:
            acc = 1.0
        elif op >= 4:
            acc = 0.0
        elif op == 2:
            acc = -math.inf
        else:
            acc = math.inf
        for r0 in range(n_r0):
            for r1 in range(n_r1):
                for r2 in range(n_r2):
                    v = _at(x, tail, k0, k1, k2, r0, r1, r2)
                    if op == 0:
                        acc += v
                    elif op == 1:
                        acc *= v
                    elif op == 2:
                        if v > acc or v != v:
                            acc = v
                    elif op == 4:
                        acc += abs(float(v))
                    elif op == 5:
                        acc += float(v) * float(v)
                    elif op == 6:
                        if v == v:
                            acc += v
                    elif op == 7:
                        if v == v:
                            acc *= v
                    else:
                        if v < acc or v != v:
                            acc = v
        if op == 5:
            acc = math.sqrt(acc)
        _put(out, (k0, k1, k2), acc * scale, req == REQ_ADD)


@cuda.jit(device=True)
def _unravel6(i, shape):
    i5 = i % shape[5]
    i //= shape[5]
    i4 = i % shape[4]
    i //= shape[4]
    i3 = i % shape[3]
    i //= shape[3]
    i2 = i % shape[2]
    i //= shape[2]
    i1 = i % shape[1]
    i0 = i // shape[1]
    return i0, i1, i2, i3, i4, i5


@cuda.jit
def bcast_kernel(src, dst, tail, scale, req):
    """dst (big) = src (small) * scale."""
    for i in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
        i0, i1, i2, i3, i4, i5 = _unravel6(i, dst.shape)
        if tail:
            v = src[i0, i2, i4] * scale
        else:
            v = src[i1, i3, i5] * scale
        _put(dst, (i0, i1, i2, i3, i4, i5), v, req == REQ_ADD)


@cuda.jit
def select_kernel(g, x, y, dx, tail, mode, req):
    """max/min (mode 0): g where x equals the result; prod (mode 1): g * y / x;
    norm ord=2 (mode 2): g * x / y; norm ord=1 (mode 3): g * sign(x); nansum
    (mode 4) / nanprod (mode 5): g / g * y / x where x is not NaN, else 0."""
    for i in range(cuda.grid(1), dx.size, cuda.gridsize(1)):
        i0, i1, i2, i3, i4, i5 = _unravel6(i, dx.shape)
        if tail:
            gv = g[i0, i2, i4]
            yv = y[i0, i2, i4]
        else:
            gv = g[i1, i3, i5]
            yv = y[i1, i3, i5]
        xv = x[i0, i1, i2, i3, i4, i5]
        if mode == 0:
            d = gv if xv == yv else gv * 0
        elif mode == 1:
            d = gv * (yv / xv)
        elif mode == 2:
            d = gv * (xv / yv)
        elif mode == 4 or mode == 5:
            if xv != xv:
                d = gv * 0
            elif mode == 4:
                d = gv
            else:
                d = gv * (yv / xv)
        elif xv > 0:
            d = gv
        elif xv < 0:
            d = -gv
        else:
            d = gv * 0
        _put(dx, (i0, i1, i2, i3, i4, i5), d, req == REQ_ADD)


@cuda.jit
def arg_kernel(x, out, is_min):
    n_outer, n, n_inner = x.shape
    for t in range(cuda.grid(1), n_outer * n_inner, cuda.gridsize(1)):
        o = t // n_inner
        i = t % n_inner
        best = x[o, 0, i]
        idx = 0
        for j in range(1, n):
            v = x[o, j, i]
            if _better(v, best, is_min):
                best = v
                idx = j
        out[o, i] = idx


def _skip_null(run, req, n):
    def fn(*args):
        if req != REQ_NULL and n > 0:
            run(*args)
    return fn


# ---------------------------------------------------------------- prepare

def prepare_reduce(call):
    ishape = call.in_shapes[0]
    axes = reduce_axes(call.attrs, len(ishape), call.where())
    tail, big, small, count = reduce_plan(ishape, axes, call.where())
    name = op_name(call)
    scale = (1.0 / count if count else math.nan) if name == "mean" else 1.0
    run = launcher(reduce_kernel, _size(small))
    req = call.req[0]

    def fn(x, out, acc, op, scale, req):
        run(x, out, tail, op, scale, req)
    return Launch(_skip_null(fn, req, _size(small)), (OP_CODES[name], scale, req), [big, small, None])


def prepare_bcast_backward(call):
    ishape = call.in_shapes[1]
    axes = reduce_axes(call.attrs, len(ishape), call.where())
    tail, big, small, count = reduce_plan(ishape, axes, call.where())
    scale = (1.0 / count if count else math.nan) if op_name(call) == "mean" else 1.0
    run = launcher(bcast_kernel, _size(big))

    def fn(g, x, dx, scale, req):
        run(g, dx, tail, scale, req)
    return Launch(_skip_null(fn, call.req[0], _size(big)), (scale, call.req[0]), [small, big, big])


def prepare_select_backward(call):
    ishape = call.in_shapes[1]
    axes = reduce_axes(call.attrs, len(ishape), call.where())
    tail, big, small, _ = reduce_plan(ishape, axes, call.where())
    mode = select_mode(call)
    run = launcher(select_kernel, _size(big))

    def fn(g, x, y, dx, mode, req):
        run(g, x, y, dx, tail, mode, req)
    return Launch(_skip_null(fn, call.req[0], _size(big)), (mode, call.req[0]), [small, big, small, big])


def prepare_broadcast(call):
    ishape, oshape = call.in_shapes[0], call.out_shapes[0]
    tail, big, small, _ = reduce_plan(oshape, broadcast_axes(ishape, oshape), call.where())
    run = launcher(bcast_kernel, _size(big))

    def fn(x, out, scale, req):
        run(x, out, tail, scale, req)
    one = np.dtype(call.out_dtypes[0]).type(1)   # integer data stays integer
    return Launch(_skip_null(fn, call.req[0], _size(big)), (one, call.req[0]), [small, big])


def prepare_broadcast_backward(call):
    gshape, ishape = call.in_shapes[0], call.in_shapes[1]
    tail, big, small, _ = reduce_plan(gshape, broadcast_axes(ishape, gshape), call.where())
    run = launcher(reduce_kernel, _size(small))

    def fn(g, x, dx, acc, op, scale, req):
        run(g, dx, tail, op, scale, req)
    return Launch(_skip_null(fn, call.req[0], _size(small)), (OP_SUM, 1.0, call.req[0]),
                  [big, small, small, None])


def prepare_arg(call):
    outer, n, inner = arg_plan(call.attrs, call.in_shapes[0], call.where())
    is_min = 1 if call.op.name == "argmin" else 0
    run = launcher(arg_kernel, outer * inner)

    def fn(x, out, is_min, req):
        run(x, out, is_min)
    return Launch(_skip_null(fn, call.req[0], outer * inner), (is_min, call.req[0]),
                  [(outer, n, inner), (outer, inner)])


def temp_reduce(call):
    return reduce_temp(call, accumulators=False)   # accumulates in registers
