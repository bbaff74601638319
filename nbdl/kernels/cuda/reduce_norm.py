"""CUDA kernels for norm and moments (views as in ``nbdl.kernels.cpu.reduce_norm``).

norm runs the reductions' kernel (``nbdl.kernels.cuda.reduce``, op codes 4
and 5) and their select-backward kernel.  moments runs one thread per output
element with its float64 accumulators in registers (two passes over its
slice: the mean, then the squared deviations); its gradient one thread per
input element.
"""
import numpy as np
from numba import cuda

from ...ops.reduce import OP_ASUM, OP_NRM2, reduce_plan
from ...ops.reduce_norm import _axes, moments_temp, norm_temp
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ._launch import launcher
from .reduce import _at, _extents, _size, _skip_null, _unravel4, _unravel6, reduce_kernel
from ..shared.reduce import moments_geometry
from ..shared.store import py_put, py_store_req

_put = cuda.jit(device=True)(py_put)
_store_req = cuda.jit(device=True)(py_store_req)


def prepare_norm(call):
    ishape = call.in_shapes[0]
    axes = _axes(call.attrs, len(ishape), call.where())
    tail, big, small, _ = reduce_plan(ishape, axes, call.where())
    op = OP_NRM2 if call.attrs["ord"] == 2 else OP_ASUM
    run = launcher(reduce_kernel, _size(small))

    def fn(x, out, acc, op, scale, req):
        run(x, out, tail, op, scale, req)
    return Launch(_skip_null(fn, call.req[0], _size(small)), (op, 1.0, call.req[0]),
                  [big, small, None])


@cuda.jit
def moments_kernel(x, mean, var, tail, scale, req_m, req_v):
    n_r0, n_r1, n_r2 = _extents(x, tail)
    for o in range(cuda.grid(1), mean.size, cuda.gridsize(1)):
        _, k0, k1, k2 = _unravel4(o, mean.shape[0], mean.shape[1], mean.shape[2])
        s = 0.0
        for r0 in range(n_r0):
            for r1 in range(n_r1):
                for r2 in range(n_r2):
                    s += _at(x, tail, k0, k1, k2, r0, r1, r2)
        mu = s * scale
        q = 0.0
        for r0 in range(n_r0):
            for r1 in range(n_r1):
                for r2 in range(n_r2):
                    d = _at(x, tail, k0, k1, k2, r0, r1, r2) - mu
                    q += d * d
        q *= scale
        _store_req(mean, (k0, k1, k2), mu, req_m)
        _store_req(var, (k0, k1, k2), q, req_v)


@cuda.jit
def moments_backward_kernel(gm, gv, x, mean, dx, tail, scale, req):
    for i in range(cuda.grid(1), dx.size, cuda.gridsize(1)):
        i0, i1, i2, i3, i4, i5 = _unravel6(i, dx.shape)
        if tail:
            a, b, mu = gm[i0, i2, i4], gv[i0, i2, i4], mean[i0, i2, i4]
        else:
            a, b, mu = gm[i1, i3, i5], gv[i1, i3, i5], mean[i1, i3, i5]
        d = (a + (b + b) * (x[i0, i1, i2, i3, i4, i5] - mu)) * scale
        _put(dx, (i0, i1, i2, i3, i4, i5), d, req == REQ_ADD)


def prepare_moments(call):
    tail, big, small, scale = moments_geometry(call, call.in_shapes[0])
    n = _size(small)
    run = launcher(moments_kernel, n)
    req_m, req_v = call.req

    def fn(x, mean, var, acc):
        if n > 0 and (req_m != REQ_NULL or req_v != REQ_NULL):
            run(x, mean, var, tail, scale, req_m, req_v)
    return Launch(fn, (), [big, small, small, None])


def prepare_moments_backward(call):
    tail, big, small, scale = moments_geometry(call, call.in_shapes[2])
    run = launcher(moments_backward_kernel, _size(big))
    dt = np.dtype(call.out_dtypes[0]).type

    def fn(gm, gv, x, mean, dx, scale, req):
        run(gm, gv, x, mean, dx, tail, scale, req)
    return Launch(_skip_null(fn, call.req[0], _size(big)), (dt(scale), call.req[0]),
                  [small, small, big, small, big])


def temp_norm(call):
    return norm_temp(call, accumulators=False, stage_half=False)   # float16 loaded directly


def temp_moments(call):
    return moments_temp(call, accumulators=False)   # accumulates in registers
