"""CPU kernels for reductions and broadcasts.

Arrays arrive in the views of ``nbdl.ops.reduce.reduce_plan``: the full-size
array as 6-D ``(K0, R0, K1, R1, K2, R2)`` ("tail" kernels, last group reduced)
or ``(R0, K0, R1, K1, R2, K2)`` ("keep" kernels, last group kept), the
reduced one as 3-D ``(K0, K1, K2)``.  Loops run in memory order of the big
array, so the innermost loop is contiguous either way: a scalar reduction
over R2 (tail) or an elementwise update across K2 (keep).

Accumulation is in float64 for every dtype, into a planned float64 temp
(one slot per output element), then scaled and cast into the output once.
For float32 inputs this keeps sums accurate to float32 rounding without
pairwise summation, at the price of 8 bytes of scratch per output element.
max/min propagate NaN like numpy and MXNet.

All kernels are serial: a ``parallel=True`` variant (prange over K0) is the
natural next step for large inputs, picked by ``nbdl.config.parallel_threshold``.
"""
import numpy as np
from ..shared.jit import njit

from ...ops.reduce import (OP_ASUM, OP_CODES, OP_MAX, OP_MIN, OP_NANPROD, OP_NANSUM, OP_NRM2,
                           OP_PROD, OP_SUM, arg_plan, broadcast_axes, op_name, reduce_axes,
                           reduce_plan)
from ...ops.reduce import reduce_temp, select_mode
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.reduce import py_better

_FASTMATH = {"reassoc", "contract"}  # lets the float64 sum loops vectorise; NaN/inf stay exact

_better = njit(cache=True, inline="always")(py_better)


@njit(cache=True, inline="always")
def _start(acc, op):
    flat = acc.reshape(acc.size)
    if op == 0:
        flat[:] = 0.0
    elif op == 1 or op == 7:
        flat[:] = 1.0
    elif op >= 4:
        flat[:] = 0.0
    elif op == 2:
        flat[:] = -np.inf
    else:
        flat[:] = np.inf


@njit(cache=True, inline="always")
def _finish(acc, out, scale, op, req):
    a = acc.reshape(acc.size)
    o = out.reshape(out.size)
    if op == 5:   # norm ord=2
        for i in range(a.size):
            a[i] = np.sqrt(a[i])
    if req == REQ_ADD:
        for i in range(o.size):
            o[i] += a[i] * scale
    else:
        for i in range(o.size):
            o[i] = a[i] * scale


# Each layout has two kernels: ``reduce_<layout>_sum`` with the sum's loop,
# and ``reduce_<layout>`` with the seven other ops' loops behind a test of
# ``op``.  sum and mean (a loss's mean, a broadcast's gradient) are what
# models reduce with, and the sum's kernel compiles in half the time of one
# holding all eight loops (0.5 s against 1.1 s of a fresh machine's first
# call).  The loops are written once, as the templates below; ``STEPS``
# gives each op's update of the running value ``s`` by the element ``v``,
# max/min taking NaN once seen (``v != v``), as numpy and MXNet.  The
# kernels are module globals compiled from this file (Numba's on-disk cache
# and the compile pool find them like any kernel here).
STEPS = {OP_SUM: "s + v",
         OP_PROD: "s * v",
         OP_MAX: "v if v > s or v != v else s",
         OP_MIN: "v if v < s or v != v else s",
         OP_ASUM: "s + abs(np.float64(v))",
         OP_NRM2: "s + np.float64(v) * np.float64(v)",
         OP_NANSUM: "s + v if v == v else s",
         OP_NANPROD: "s * v if v == v else s"}

_HEAD = """
def {name}(x, out, acc, op, scale, req):
    if req == REQ_NULL:
        return
    _start(acc, op)
"""
_TAIL = """
    _finish(acc, out, scale, op, req)
"""
_LOOPS = {
    # x (K0, R0, K1, R1, K2, R2) -> out (K0, K1, K2): a running value over R2
    "tail": ("""    n_k0, n_r0, n_k1, n_r1, n_k2, n_r2 = x.shape
    for k0 in range(n_k0):
        for r0 in range(n_r0):
            for k1 in range(n_k1):
                for r1 in range(n_r1):
                    for k2 in range(n_k2):
                        s = acc[k0, k1, k2]
{inner}
                        acc[k0, k1, k2] = s""", 24, """for r2 in range(n_r2):
    v = x[k0, r0, k1, r1, k2, r2]
    s = {step}"""),
    # x (R0, K0, R1, K1, R2, K2) -> out (K0, K1, K2): an update across K2
    "keep": ("""    n_r0, n_k0, n_r1, n_k1, n_r2, n_k2 = x.shape
    for r0 in range(n_r0):
        for k0 in range(n_k0):
            for r1 in range(n_r1):
                for k1 in range(n_k1):
                    for r2 in range(n_r2):
{inner}""", 24, """for k2 in range(n_k2):
    s = acc[k0, k1, k2]
    v = x[r0, k0, r1, k1, r2, k2]
    acc[k0, k1, k2] = {step}""")}


def _indent(text, n):
    return "\n".join(" " * n + line for line in text.split("\n"))


def _kernel_source(name, layout, ops):
    template, depth, loop = _LOOPS[layout]
    if len(ops) == 1:
        inner = _indent(loop.format(step=STEPS[ops[0]]), depth)
    else:
        inner = "\n".join(_indent(f"{'if' if k == 0 else 'elif'} op == {op}:", depth) + "\n"
                           + _indent(loop.format(step=STEPS[op]), depth + 4)
                           for k, op in enumerate(ops))
    return _HEAD.format(name=name) + template.format(inner=inner) + _TAIL


def _define_reductions():
    kernels = {}
    for layout in _LOOPS:
        others = [op for op in STEPS if op != OP_SUM]
        for name, ops in ((f"reduce_{layout}", others), (f"reduce_{layout}_sum", [OP_SUM])):
            ns = {"__name__": __name__, "np": np, "REQ_NULL": REQ_NULL,
                  "_start": _start, "_finish": _finish}
            exec(compile(_kernel_source(name, layout, ops), __file__, "exec"), ns)
            fn = njit(cache=True, fastmath=_FASTMATH)(ns[name])
            globals()[name] = kernels[(layout == "tail", len(ops) == 1)] = fn
    return kernels


_REDUCTIONS = _define_reductions()


def reduce_kernel(tail, op):
    """The kernel ``fn(x, out, acc, op, scale, req)`` reducing with ``op``
    (``nbdl.ops.reduce``'s OP_* codes: 0 sum, 1 prod, 2 max, 3 min, 4 sum of
    |x|, 5 sqrt of the sum of squares, 6 / 7 sum / product skipping NaN) in
    the "tail" (``tail``) or "keep" views of ``reduce_plan``.

    Parameters
    ----------
    tail : bool
        The last group of axes is reduced (``reduce_plan``'s first result).
    op : int
        The reduction.
    """
    return _REDUCTIONS[(bool(tail), op == OP_SUM)]


@njit(cache=True)
def bcast_tail(src, dst, scale, req):
    """dst (K0, R0, K1, R1, K2, R2) = src (K0, K1, K2) * scale, repeated over R."""
    if req == REQ_NULL:
        return
    n_k0, n_r0, n_k1, n_r1, n_k2, n_r2 = dst.shape
    for k0 in range(n_k0):
        for r0 in range(n_r0):
            for k1 in range(n_k1):
                for r1 in range(n_r1):
                    for k2 in range(n_k2):
                        v = src[k0, k1, k2] * scale
                        if req == REQ_ADD:
                            for r2 in range(n_r2):
                                dst[k0, r0, k1, r1, k2, r2] += v
                        else:
                            for r2 in range(n_r2):
                                dst[k0, r0, k1, r1, k2, r2] = v


@njit(cache=True)
def bcast_keep(src, dst, scale, req):
    """dst (R0, K0, R1, K1, R2, K2) = src (K0, K1, K2) * scale, repeated over R."""
    if req == REQ_NULL:
        return
    n_r0, n_k0, n_r1, n_k1, n_r2, n_k2 = dst.shape
    for r0 in range(n_r0):
        for k0 in range(n_k0):
            for r1 in range(n_r1):
                for k1 in range(n_k1):
                    for r2 in range(n_r2):
                        if req == REQ_ADD:
                            for k2 in range(n_k2):
                                dst[r0, k0, r1, k1, r2, k2] += src[k0, k1, k2] * scale
                        else:
                            for k2 in range(n_k2):
                                dst[r0, k0, r1, k1, r2, k2] = src[k0, k1, k2] * scale


@njit(cache=True, error_model="numpy")
def _select(g, x, y, mode):
    """max/min (mode 0): g where x equals the result, else 0 (MXNet gives every
    tied position the gradient); prod (mode 1): g * out / x; norm ord=2
    (mode 2): g * x / out (NaN where the norm is 0, as MXNet); norm ord=1
    (mode 3): g * sign(x); nansum (mode 4): g where x is not NaN, else 0;
    nanprod (mode 5): g * out / x where x is not NaN, else 0."""
    if mode == 0:
        return g if x == y else g * 0
    if mode == 1:
        return g * (y / x)
    if mode == 2:
        return g * (x / y)
    if mode == 4:
        return g if x == x else g * 0
    if mode == 5:
        return g * (y / x) if x == x else g * 0
    return g if x > 0 else (-g if x < 0 else g * 0)


@njit(cache=True, error_model="numpy")
def select_tail(g, x, y, dx, mode, req):
    if req == REQ_NULL:
        return
    n_k0, n_r0, n_k1, n_r1, n_k2, n_r2 = x.shape
    for k0 in range(n_k0):
        for r0 in range(n_r0):
            for k1 in range(n_k1):
                for r1 in range(n_r1):
                    for k2 in range(n_k2):
                        gv = g[k0, k1, k2]
                        yv = y[k0, k1, k2]
                        for r2 in range(n_r2):
                            d = _select(gv, x[k0, r0, k1, r1, k2, r2], yv, mode)
                            if req == REQ_ADD:
                                dx[k0, r0, k1, r1, k2, r2] += d
                            else:
                                dx[k0, r0, k1, r1, k2, r2] = d


@njit(cache=True, error_model="numpy")
def select_keep(g, x, y, dx, mode, req):
    if req == REQ_NULL:
        return
    n_r0, n_k0, n_r1, n_k1, n_r2, n_k2 = x.shape
    for r0 in range(n_r0):
        for k0 in range(n_k0):
            for r1 in range(n_r1):
                for k1 in range(n_k1):
                    for r2 in range(n_r2):
                        for k2 in range(n_k2):
                            d = _select(g[k0, k1, k2], x[r0, k0, r1, k1, r2, k2], y[k0, k1, k2], mode)
                            if req == REQ_ADD:
                                dx[r0, k0, r1, k1, r2, k2] += d
                            else:
                                dx[r0, k0, r1, k1, r2, k2] = d


@njit(cache=True)
def arg_reduce(x, out, is_min, req):
    """out (outer, inner) = index of the max (min) of x (outer, n, inner) over n,
    stored as a float; the first of ties wins, and a NaN beats any number.
    The running best index lives in ``out`` itself, so the inner loop reads
    x contiguously."""
    if req == REQ_NULL:
        return
    n_outer, n, n_inner = x.shape
    for o in range(n_outer):
        for i in range(n_inner):
            out[o, i] = 0
        for j in range(1, n):
            for i in range(n_inner):
                best = x[o, int(out[o, i]), i]
                v = x[o, j, i]
                if _better(v, best, is_min):
                    out[o, i] = j


# ---------------------------------------------------------------- prepare

def prepare_reduce(call):
    ishape = call.in_shapes[0]
    axes = reduce_axes(call.attrs, len(ishape), call.where())
    tail, big, small, count = reduce_plan(ishape, axes, call.where())
    name = op_name(call)
    scale = 1.0
    if name == "mean":
        scale = 1.0 / count if count else float("nan")
    op = OP_CODES[name]
    return Launch(reduce_kernel(tail, op), (op, np.float64(scale), call.req[0]),
                  [big, small, small])


def prepare_bcast_backward(call):
    """_backward_sum / _backward_mean: (out_grad, data) -> data_grad."""
    ishape = call.in_shapes[1]
    axes = reduce_axes(call.attrs, len(ishape), call.where())
    tail, big, small, count = reduce_plan(ishape, axes, call.where())
    scale = 1.0
    if op_name(call) == "mean":
        scale = 1.0 / count if count else float("nan")
    fn = bcast_tail if tail else bcast_keep
    dt = np.dtype(call.out_dtypes[0]).type
    # arrays: out_grad, data (shape only), data_grad: the broadcast's own kernel
    return Launch(fn, (dt(scale), call.req[0]), [small, big, big], args=(0, 2))


def prepare_select_backward(call):
    """_backward_max / _backward_min / _backward_prod / _backward_norm:
    (out_grad, data, out) -> data_grad."""
    ishape = call.in_shapes[1]
    axes = reduce_axes(call.attrs, len(ishape), call.where())
    tail, big, small, _ = reduce_plan(ishape, axes, call.where())
    mode = select_mode(call)
    fn = select_tail if tail else select_keep
    return Launch(fn, (mode, call.req[0]), [small, big, small, big])


def prepare_broadcast(call):
    ishape, oshape = call.in_shapes[0], call.out_shapes[0]
    tail, big, small, _ = reduce_plan(oshape, broadcast_axes(ishape, oshape), call.where())
    fn = bcast_tail if tail else bcast_keep
    dt = np.dtype(call.out_dtypes[0]).type
    return Launch(fn, (dt(1), call.req[0]), [small, big])


def prepare_broadcast_backward(call):
    gshape, ishape = call.in_shapes[0], call.in_shapes[1]
    tail, big, small, _ = reduce_plan(gshape, broadcast_axes(ishape, gshape), call.where())
    fn = reduce_kernel(tail, OP_SUM)
    # arrays: out_grad, data (shape only), data_grad, accumulators: the sum's own kernel
    return Launch(fn, (OP_SUM, np.float64(1.0), call.req[0]), [big, small, small, small],
                  args=(0, 2, 3))


def prepare_arg(call):
    outer, n, inner = arg_plan(call.attrs, call.in_shapes[0], call.where())
    is_min = 1 if call.op.name == "argmin" else 0
    return Launch(arg_reduce, (is_min, call.req[0]), [(outer, n, inner), (outer, inner)])


# -- scratch rule: float64 accumulators in memory -------------------------------

def temp_reduce(call):
    return reduce_temp(call, accumulators=True)
