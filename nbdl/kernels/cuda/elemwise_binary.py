"""CUDA kernels for binary elementwise ops: same-shape and scalar ops run the
generated flat loops, ``broadcast_*`` the same layouts as on the CPU (see
``nbdl.kernels.shared.elemwise_plan``), ``_reduce_sum_like`` one thread per
output element."""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.elemwise_exprs import spec_of
from ..shared.elemwise_plan import (broadcast_scalars, gather_scalars, reduce_groups,
                                    reduce_sum_like_plan, size_of)
from ._elemwise_gen import broadcast_kernel, launch, map_kernel, prepare_map  # noqa: F401
from .elemwise_unary import copy_kernel


def prepare_broadcast(call):
    spec = spec_of(call)
    dtype = call.out_dtypes[0]
    lhs, rhs = (tuple(s) for s in call.in_shapes)
    out = tuple(call.out_shapes[0])
    na, nb, n = size_of(lhs), size_of(rhs), size_of(out)
    req = int(call.req[0])
    views = [(na,), (nb,), (n,)]
    if n == 0 or na == nb == n:
        return Launch(launch(map_kernel(spec, dtype), n), (req,), views=views)
    if na == 1 or nb == 1:
        fn = map_kernel(spec, dtype, hoisted=("a",) if na == 1 else ("b",))
        return Launch(launch(fn, n), (req,), views=views)
    scalars = broadcast_scalars(lhs, rhs, out, call.where())
    return Launch(launch(broadcast_kernel(spec, dtype), n), scalars + (req,), views=views)


@cuda.jit
def rsl_gather(x, like, out, k0, k1, k2, ks0, ks1, ks2, r0, r1, r2, rs0, rs1, rs2, zero, req):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for o in range(start, out.size, stride):
        i2 = o % k2
        q = o // k2
        i1 = q % k1
        i0 = q // k1
        base = i0 * ks0 + i1 * ks1 + i2 * ks2
        acc = zero
        for j0 in range(r0):
            for j1 in range(r1):
                for j2 in range(r2):
                    acc += x[base + j0 * rs0 + j1 * rs1 + j2 * rs2]
        if req == REQ_ADD:
            out[o] += acc
        elif req != REQ_NULL:
            out[o] = acc


@cuda.jit
def rsl_zero(x, like, out, req):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, out.size, stride):
        if req != REQ_ADD and req != REQ_NULL:
            out[i] = 0


def prepare_reduce_sum_like(call):
    data, like, nd, no, req, views = reduce_sum_like_plan(call)
    if no == 0 or nd == 0:
        return Launch(launch(rsl_zero, no), (req,), views=views)
    if nd == no:
        copy = launch(copy_kernel, no)
        return Launch(lambda x, _like, out, r: copy(x, out, r), (req,), views=views)
    groups = reduce_groups(data, like, call.where())
    dt = np.dtype(call.out_dtypes[0])
    zero = np.float32(0) if dt == np.float16 else dt.type(0)   # float16 sums in float32
    return Launch(launch(rsl_gather, no), gather_scalars(groups) + (zero, req), views=views)
