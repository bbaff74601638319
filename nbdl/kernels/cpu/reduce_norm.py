"""CPU kernels for norm and moments.

norm runs the reductions' own loops (``nbdl.kernels.cpu.reduce``: op 4 sums
|x|, op 5 sums x*x and takes the square root), and its gradient their
select-backward loop.  moments has its loops here, in the same views
(``nbdl.ops.reduce.reduce_plan``): the input 6-D ``(K0, R0, K1, R1, K2, R2)``
("tail", last group reduced) or ``(R0, K0, R1, K1, R2, K2)`` ("keep"), the
results 3-D ``(K0, K1, K2)``; two passes (the mean, then the squared
deviations from it) into float64 accumulators in a planned temp.
"""
import numpy as np
from ..shared.jit import njit

from ...ops.reduce import OP_ASUM, OP_NRM2, reduce_plan
from ...ops.reduce_norm import _axes, moments_temp, norm_temp
from ...ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, Launch
from ..shared.store import py_copy, py_put
from ..shared.reduce import moments_geometry
from ._half import f2h, h2f
from .reduce import reduce_kernel

_put = njit(cache=True, inline="always")(py_put)

_copy = njit(cache=True, inline="always")(py_copy)


@njit(cache=True)
def half_to_float(bits, dst):
    for i in range(bits.size):
        dst[i] = h2f(bits[i])


@njit(cache=True)
def float_to_half(src, dst_bits, req):
    if req == REQ_NULL:
        return
    for i in range(src.size):
        v = src[i]
        if req == REQ_ADD:
            v = v + h2f(dst_bits[i])
        dst_bits[i] = f2h(v)


def prepare_norm(call):
    ishape = call.in_shapes[0]
    axes = _axes(call.attrs, len(ishape), call.where())
    tail, big, small, _ = reduce_plan(ishape, axes, call.where())
    op = OP_NRM2 if call.attrs["ord"] == 2 else OP_ASUM
    fn = reduce_kernel(tail, op)
    half_in = np.dtype(call.in_dtypes[0]) == np.float16
    half_out = np.dtype(call.out_dtypes[0]) == np.float16
    if not (half_in or half_out):
        return Launch(fn, (op, np.float64(1.0), call.req[0]), [big, small, small])
    # float16: staged through float32 temps (Numba's CPU target cannot type float16)
    req = call.req[0]
    n_in, n_out = int(np.prod(big)), int(np.prod(small))
    views = [big, small, small] + ([(n_in,)] if half_in else []) + ([(n_out,)] if half_out else [])

    def run(x, out, acc, *stage):
        if req == REQ_NULL:
            return
        if half_in:
            xs = stage[0]
            half_to_float(x.reshape(n_in).view(np.uint16), xs)
            x = xs.reshape(big)
        if half_out:
            os_ = stage[-1].reshape(small)
            fn(x, os_, acc, op, 1.0, REQ_WRITE)
            float_to_half(stage[-1], out.reshape(n_out).view(np.uint16), req)
        else:
            fn(x, out, acc, op, 1.0, req)
    return Launch(run, (), views)


def temp_norm(call):
    return norm_temp(call, accumulators=True, stage_half=True)


@njit(cache=True)
def _store(acc, out, req):
    _copy(acc.reshape(acc.size), out.reshape(out.size), req)


@njit(cache=True)
def moments_tail(x, mean, var, acc, scale, req_m, req_v):
    """x (K0, R0, K1, R1, K2, R2) -> mean, var (K0, K1, K2); acc (2, K0, K1, K2)."""
    if req_m == REQ_NULL and req_v == REQ_NULL:
        return
    acc[...] = 0.0
    n_k0, n_r0, n_k1, n_r1, n_k2, n_r2 = x.shape
    for k0 in range(n_k0):
        for r0 in range(n_r0):
            for k1 in range(n_k1):
                for r1 in range(n_r1):
                    for k2 in range(n_k2):
                        s = acc[0, k0, k1, k2]
                        for r2 in range(n_r2):
                            s += x[k0, r0, k1, r1, k2, r2]
                        acc[0, k0, k1, k2] = s
    m = acc[0].reshape(acc[0].size)
    for i in range(m.size):
        m[i] *= scale
    for k0 in range(n_k0):
        for r0 in range(n_r0):
            for k1 in range(n_k1):
                for r1 in range(n_r1):
                    for k2 in range(n_k2):
                        mu = acc[0, k0, k1, k2]
                        s = acc[1, k0, k1, k2]
                        for r2 in range(n_r2):
                            d = x[k0, r0, k1, r1, k2, r2] - mu
                            s += d * d
                        acc[1, k0, k1, k2] = s
    v = acc[1].reshape(acc[1].size)
    for i in range(v.size):
        v[i] *= scale
    if req_m != REQ_NULL:
        _store(acc[0], mean, req_m)
    if req_v != REQ_NULL:
        _store(acc[1], var, req_v)


@njit(cache=True)
def moments_keep(x, mean, var, acc, scale, req_m, req_v):
    """x (R0, K0, R1, K1, R2, K2) -> mean, var (K0, K1, K2); acc (2, K0, K1, K2)."""
    if req_m == REQ_NULL and req_v == REQ_NULL:
        return
    acc[...] = 0.0
    n_r0, n_k0, n_r1, n_k1, n_r2, n_k2 = x.shape
    for r0 in range(n_r0):
        for k0 in range(n_k0):
            for r1 in range(n_r1):
                for k1 in range(n_k1):
                    for r2 in range(n_r2):
                        for k2 in range(n_k2):
                            acc[0, k0, k1, k2] += x[r0, k0, r1, k1, r2, k2]
    m = acc[0].reshape(acc[0].size)
    for i in range(m.size):
        m[i] *= scale
    for r0 in range(n_r0):
        for k0 in range(n_k0):
            for r1 in range(n_r1):
                for k1 in range(n_k1):
                    for r2 in range(n_r2):
                        for k2 in range(n_k2):
                            d = x[r0, k0, r1, k1, r2, k2] - acc[0, k0, k1, k2]
                            acc[1, k0, k1, k2] += d * d
    v = acc[1].reshape(acc[1].size)
    for i in range(v.size):
        v[i] *= scale
    if req_m != REQ_NULL:
        _store(acc[0], mean, req_m)
    if req_v != REQ_NULL:
        _store(acc[1], var, req_v)


@njit(cache=True)
def moments_backward_tail(gm, gv, x, mean, dx, scale, req):
    """dx (K0, R0, K1, R1, K2, R2) = (gm + 2 gv (x - mean)) * scale."""
    if req == REQ_NULL:
        return
    two = x.dtype.type(2)
    n_k0, n_r0, n_k1, n_r1, n_k2, n_r2 = x.shape
    for k0 in range(n_k0):
        for r0 in range(n_r0):
            for k1 in range(n_k1):
                for r1 in range(n_r1):
                    for k2 in range(n_k2):
                        a = gm[k0, k1, k2]
                        b = two * gv[k0, k1, k2]
                        mu = mean[k0, k1, k2]
                        for r2 in range(n_r2):
                            d = (a + b * (x[k0, r0, k1, r1, k2, r2] - mu)) * scale
                            _put(dx, (k0, r0, k1, r1, k2, r2), d, req == REQ_ADD)


@njit(cache=True)
def moments_backward_keep(gm, gv, x, mean, dx, scale, req):
    """dx (R0, K0, R1, K1, R2, K2) = (gm + 2 gv (x - mean)) * scale."""
    if req == REQ_NULL:
        return
    two = x.dtype.type(2)
    n_r0, n_k0, n_r1, n_k1, n_r2, n_k2 = x.shape
    for r0 in range(n_r0):
        for k0 in range(n_k0):
            for r1 in range(n_r1):
                for k1 in range(n_k1):
                    for r2 in range(n_r2):
                        for k2 in range(n_k2):
                            d = (gm[k0, k1, k2] + two * gv[k0, k1, k2]
                                 * (x[r0, k0, r1, k1, r2, k2] - mean[k0, k1, k2])) * scale
                            _put(dx, (r0, k0, r1, k1, r2, k2), d, req == REQ_ADD)


def prepare_moments(call):
    tail, big, small, scale = moments_geometry(call, call.in_shapes[0])
    fn = moments_tail if tail else moments_keep
    return Launch(fn, (np.float64(scale), call.req[0], call.req[1]),
                  [big, small, small, (2,) + small])


def prepare_moments_backward(call):
    tail, big, small, scale = moments_geometry(call, call.in_shapes[2])
    fn = moments_backward_tail if tail else moments_backward_keep
    dt = np.dtype(call.out_dtypes[0]).type
    return Launch(fn, (dt(scale), call.req[0]), [small, small, big, small, big])


def temp_moments(call):
    return moments_temp(call, accumulators=True)
