"""CPU kernels for binary elementwise ops: same-shape (``elemwise_*``) and
scalar (``_plus_scalar``...) ops run the generated flat loops of
``_elemwise_gen``; ``broadcast_*`` ops pick a layout at prepare time; and
``_reduce_sum_like`` sums a broadcast gradient back down to an input's
shape."""
import numpy as np
from numba import prange

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.elemwise_exprs import spec_of, kernel_name
from ._elemwise_gen import broadcast_kernel, map_kernel, prepare_map  # noqa: F401
from ._half import bits_launcher, f2h, h2f, is_half
from ._parallel import serial_and_parallel, twins as _twins, use_parallel
from ..shared.store import py_copy, py_put
from ..shared.elemwise_plan import (broadcast_scalars, gather_scalars, reduce_groups,
                                    reduce_sum_like_plan, scatter_scalars, size_of)

_put = njit(cache=True, inline="always")(py_put)

_copy = njit(cache=True, inline="always")(py_copy)


def prepare_broadcast(call):
    """Equal sizes -> the flat loop; one side of size 1 -> the flat loop with
    that side read once; otherwise the rank-6 strided loop."""
    spec = spec_of(call)
    tag = kernel_name(call)
    lhs, rhs = (tuple(s) for s in call.in_shapes)
    out = tuple(call.out_shapes[0])
    na, nb, n = size_of(lhs), size_of(rhs), size_of(out)
    par = use_parallel(n)
    half = is_half(call.out_dtypes[0])
    req = int(call.req[0])
    views = [(na,), (nb,), (n,)]
    if n == 0 or na == nb == n:
        return Launch(map_kernel(tag, spec, par, half=half), (req,), views=views)
    if na == 1 or nb == 1:
        fn = map_kernel(tag, spec, par, hoisted=("a",) if na == 1 else ("b",), half=half)
        return Launch(fn, (req,), views=views)
    scalars = broadcast_scalars(lhs, rhs, out, call.where())
    return Launch(broadcast_kernel(tag, spec, par, half=half), scalars + (req,), views=views)


# -- _reduce_sum_like(data, like): data summed over the axes where like is 1 -----------
# Every kernel takes (data, like, out, ..., req); ``like`` only lends its shape.
# ``reassoc`` lets LLVM vectorise the sums (it may reorder the additions), and
# computed indices are ``np.uintp`` so Numba does not check each for wrap-around.

_SUM = {"reassoc"}
_CHUNK = 256   # output elements per task in the parallel scatter


@njit(cache=True)
def rsl_copy(x, like, out, req):
    _copy(x, out, req)


@njit(cache=True)
def rsl_zero(x, like, out, req):
    if req != REQ_ADD and req != REQ_NULL:
        for i in range(out.size):
            out[i] = out.dtype.type(0)


def rsl_sum_all(x, like, out, req):
    acc = out.dtype.type(0)
    for i in prange(x.size):
        acc += x[i]
    if req == REQ_ADD:
        out[0] += acc
    elif req != REQ_NULL:
        out[0] = acc


rsl_sum_all, rsl_sum_all_par = serial_and_parallel(rsl_sum_all, fastmath=_SUM, suffix="_par")


@njit(cache=True, fastmath=_SUM)
def rsl_scatter(x, like, out, d0, d1, d2, d3, d4, n, so0, so1, so2, so3, so4, so5, req):
    """Serial: walk ``x`` in memory order and add into ``out`` (stride 0 along
    reduced dimensions), so both are read sequentially."""
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        out[:] = out.dtype.type(0)
    for r in range(d0 * d1 * d2 * d3 * d4):
        i4 = r % d4
        q4 = r // d4
        i3 = q4 % d3
        q3 = q4 // d3
        i2 = q3 % d2
        q2 = q3 // d2
        i1 = q2 % d1
        i0 = q2 // d1
        oo = i0 * so0 + i1 * so1 + i2 * so2 + i3 * so3 + i4 * so4
        o = r * n
        if so5 == 0:
            acc = out.dtype.type(0)
            for j in range(n):
                acc += x[np.uintp(o + j)]
            out[oo] += acc
        else:
            for j in range(n):
                out[np.uintp(oo + j)] += x[np.uintp(o + j)]


@njit(cache=True, parallel=True)
def rsl_scatter_par(x, like, out, d0, d1, d2, d3, d4, n, so0, so1, so2, so3, so4, so5, req):
    """Parallel, innermost dimension kept: each task owns a chunk of it and
    walks every row, so tasks write disjoint outputs and read rows in order."""
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        for i in prange(out.size):
            out[i] = out.dtype.type(0)
    rows = d0 * d1 * d2 * d3 * d4
    for c in prange((n + _CHUNK - 1) // _CHUNK):
        j0 = c * _CHUNK
        j1 = min(n, j0 + _CHUNK)
        for r in range(rows):
            i4 = r % d4
            q4 = r // d4
            i3 = q4 % d3
            q3 = q4 // d3
            i2 = q3 % d2
            q2 = q3 // d2
            i1 = q2 % d1
            i0 = q2 // d1
            oo = i0 * so0 + i1 * so1 + i2 * so2 + i3 * so3 + i4 * so4
            o = r * n
            for j in range(j0, j1):
                out[np.uintp(oo + j)] += x[np.uintp(o + j)]


@njit(cache=True, parallel=True, fastmath=_SUM)
def rsl_gather_par(x, like, out, k0, k1, k2, ks0, ks1, ks2, r0, r1, r2, rs0, rs1, rs2, req):
    """Parallel, innermost dimension reduced: one output element per task,
    summing its (contiguous) reduced run."""
    if req == REQ_NULL:
        return
    for o in prange(k0 * k1 * k2):
        i2 = o % k2
        q = o // k2
        i1 = q % k1
        i0 = q // k1
        base = i0 * ks0 + i1 * ks1 + i2 * ks2
        acc = out.dtype.type(0)
        for j0 in range(r0):
            for j1 in range(r1):
                off = base + j0 * rs0 + j1 * rs1
                for j2 in range(r2):
                    acc += x[np.uintp(off + j2 * rs2)]
        _put(out, o, acc, req == REQ_ADD)


@njit(cache=True)
def rsl_gather_half(x, like, out, k0, k1, k2, ks0, ks1, ks2, r0, r1, r2, rs0, rs1, rs2, req):
    """float16 (uint16 bits): each output element sums its reduced elements in
    float32 and is rounded once."""
    if req == REQ_NULL:
        return
    for o in range(k0 * k1 * k2):
        i2 = o % k2
        q = o // k2
        i1 = q % k1
        i0 = q // k1
        base = i0 * ks0 + i1 * ks1 + i2 * ks2
        acc = np.float32(0)
        for j0 in range(r0):
            for j1 in range(r1):
                off = base + j0 * rs0 + j1 * rs1
                for j2 in range(r2):
                    acc += h2f(x[np.uintp(off + j2 * rs2)])
        if req == REQ_ADD:
            acc += h2f(out[o])
        out[o] = f2h(acc)


_HALF_LAUNCHERS = {}


def _half_launcher(kernel):
    fn = _HALF_LAUNCHERS.get(kernel)
    if fn is None:
        fn = _HALF_LAUNCHERS[kernel] = bits_launcher(kernel)
    return fn


def _prepare_reduce_sum_like_half(call, data, like, nd, no, req, views):
    if no == 0 or nd == 0:
        return Launch(_half_launcher(rsl_zero), (req,), views=views)   # 0 bits are +0.0
    if nd == no:
        return Launch(_half_launcher(rsl_copy), (req,), views=views) if req != REQ_ADD else \
            Launch(_half_launcher(rsl_gather_half), gather_scalars([(no, False)]) + (req,),
                   views=views)
    groups = reduce_groups(data, like, call.where())
    return Launch(_half_launcher(rsl_gather_half), gather_scalars(groups) + (req,), views=views)


def prepare_reduce_sum_like(call):
    data, like, nd, no, req, views = reduce_sum_like_plan(call)
    if is_half(call.out_dtypes[0]):
        return _prepare_reduce_sum_like_half(call, data, like, nd, no, req, views)
    if no == 0 or nd == 0:
        return Launch(rsl_zero, (req,), views=views)
    if nd == no:   # nothing is reduced: the gradient already has the input's shape
        return Launch(rsl_copy, (req,), views=views)
    par = use_parallel(nd)
    if no == 1:
        return Launch(rsl_sum_all_par if par else rsl_sum_all, (req,), views=views)
    groups = reduce_groups(data, like, call.where())
    inner, inner_reduced = groups[-1]
    if par and inner_reduced:
        return Launch(rsl_gather_par, gather_scalars(groups) + (req,), views=views)
    scalars = scatter_scalars(groups) + (req,)
    if par and inner >= 2 * _CHUNK:
        return Launch(rsl_scatter_par, scalars, views=views)
    return Launch(rsl_scatter, scalars, views=views)


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((rsl_scatter_par, rsl_scatter))
