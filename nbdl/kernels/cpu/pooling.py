"""CPU kernels for Pooling and its gradient.

Every spatial layout is handled as 3-D (missing leading dimensions have size
1, kernel 1, stride 1, pad 0).  Data and output are passed flat; a
``(n, c)`` plane starts at ``(n*C + c) * S`` with unit element stride
(channels-first) or at ``n*S*C + c`` with element stride ``C``
(channels-last), ``S`` the plane's spatial size.  Each output is one fused
pass over its window.  Parallel variants split the ``N*C`` planes.

Global pooling takes a fast path: the data is viewed as ``(A, S, B)``
(``(N*C, S, 1)`` channels-first, ``(N, S, C)`` channels-last) and each
``(a, b)`` is one reduction over ``S``.

The per-window functions below are plain Python so the CUDA module compiles
the same code as device functions."""
import numpy as np
from numba import njit, prange

from ... import config
from ...ops.pooling import channels_last, geometry
from ...ops.registry import REQ_ADD, REQ_NULL, Launch

MAX, AVG, SUM, LP = 0, 1, 2, 3
POOL_CODES = {"max": MAX, "avg": AVG, "sum": SUM, "lp": LP}


# -- shared window code (plain Python; compiled by njit here, cuda.jit there) ----

def py_bounds(o, s, p, k, x):
    """Window of output ``o``: (first, end) clipped to the data, and its size
    clipped to the padded extent (avg's divisor with count_include_pad)."""
    a = o * s - p
    b = a + k
    if b > x + p:
        b = x + p
    n = b - a
    if a < 0:
        a = 0
    if b > x:
        b = x
    return a, b, n


def py_plane(n, c, C, S, cl):
    """(offset of plane (n, c), element stride of the last spatial dim)."""
    if cl:
        return n * S * C + c, C
    return (n * C + c) * S, 1


def py_pool_window(x, base, unit, H, W, d0, d1, h0, h1, w0, w1, cnt, ptype, ip, inv_p,
                   zero):
    if d1 <= d0 or h1 <= h0 or w1 <= w0:
        return zero
    esh = W * unit
    esd = H * esh
    if ptype == 0:
        best = x[base + d0 * esd + h0 * esh + w0 * unit]
        for d in range(d0, d1):
            for h in range(h0, h1):
                row = base + d * esd + h * esh
                for w in range(w0, w1):
                    v = x[row + w * unit]
                    if v > best:
                        best = v
        return best
    acc = zero
    for d in range(d0, d1):
        for h in range(h0, h1):
            row = base + d * esd + h * esh
            for w in range(w0, w1):
                v = x[row + w * unit]
                if ptype == 3:
                    t = v
                    for _ in range(ip - 1):
                        t = t * v
                    acc += t
                else:
                    acc += v
    if ptype == 1:
        return acc / cnt
    if ptype == 3:
        if ip == 1:
            return acc
        return acc ** inv_p
    return acc


def py_scatter_window(x, yv, gv, dx, base, unit, H, W, d0, d1, h0, h1, w0, w1, cnt, ptype,
                      ip, zero):
    """Add output gradient ``gv`` (output value ``yv``) to its window in ``dx``."""
    if d1 <= d0 or h1 <= h0 or w1 <= w0:
        return
    esh = W * unit
    esd = H * esh
    if ptype == 0:
        arg = base + d0 * esd + h0 * esh + w0 * unit
        best = x[arg]
        for d in range(d0, d1):
            for h in range(h0, h1):
                row = base + d * esd + h * esh
                for w in range(w0, w1):
                    i = row + w * unit
                    if x[i] > best:
                        best = x[i]
                        arg = i
        dx[arg] += gv
        return
    if ptype == 3 and ip > 1 and yv == zero:
        return
    g = gv
    if ptype == 1:
        g = gv / cnt
    for d in range(d0, d1):
        for h in range(h0, h1):
            row = base + d * esd + h * esh
            for w in range(w0, w1):
                i = row + w * unit
                if ptype == 3 and ip > 1:
                    r = x[i] / yv
                    t = r
                    for _ in range(ip - 2):
                        t = t * r
                    dx[i] += gv * t
                else:
                    dx[i] += g


_bounds = njit(cache=True, inline="always")(py_bounds)
_plane = njit(cache=True, inline="always")(py_plane)
_pool_window = njit(cache=True, inline="always")(py_pool_window)
_scatter_window = njit(cache=True, inline="always")(py_scatter_window)


@njit(cache=True, inline="always")
def _pool_plane(x, out, q, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, cl,
                ptype, ip, inv_p, cip, zero, req):
    n = q // C
    c = q - n * C
    xb, xu = _plane(n, c, C, D * H * W, cl)
    ob, ou = _plane(n, c, C, OD * OH * OW, cl)
    for od in range(OD):
        d0, d1, nd = _bounds(od, SD, PD, KD, D)
        for oh in range(OH):
            h0, h1, nh = _bounds(oh, SH, PH, KH, H)
            for ow in range(OW):
                w0, w1, nw = _bounds(ow, SW, PW, KW, W)
                cnt = nd * nh * nw if cip else (d1 - d0) * (h1 - h0) * (w1 - w0)
                v = _pool_window(x, xb, xu, H, W, d0, d1, h0, h1, w0, w1, cnt, ptype, ip,
                                 inv_p, zero)
                i = ob + ((od * OH + oh) * OW + ow) * ou
                if req == REQ_ADD:
                    out[i] += v
                else:
                    out[i] = v


@njit(cache=True)
def pool_forward(x, out, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, cl,
                 ptype, ip, inv_p, cip, zero, req):
    if req == REQ_NULL:
        return
    for q in range(N * C):
        _pool_plane(x, out, q, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW,
                    cl, ptype, ip, inv_p, cip, zero, req)


@njit(cache=True, parallel=True)
def pool_forward_parallel(x, out, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH,
                          PW, cl, ptype, ip, inv_p, cip, zero, req):
    if req == REQ_NULL:
        return
    for q in prange(N * C):
        _pool_plane(x, out, q, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW,
                    cl, ptype, ip, inv_p, cip, zero, req)


@njit(cache=True, inline="always")
def _scatter_plane(og, x, y, dx, q, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH,
                   PW, cl, ptype, ip, cip, zero, req):
    n = q // C
    c = q - n * C
    xb, xu = _plane(n, c, C, D * H * W, cl)
    ob, ou = _plane(n, c, C, OD * OH * OW, cl)
    if req != REQ_ADD:
        for k in range(D * H * W):
            dx[xb + k * xu] = zero
    for od in range(OD):
        d0, d1, nd = _bounds(od, SD, PD, KD, D)
        for oh in range(OH):
            h0, h1, nh = _bounds(oh, SH, PH, KH, H)
            for ow in range(OW):
                w0, w1, nw = _bounds(ow, SW, PW, KW, W)
                cnt = nd * nh * nw if cip else (d1 - d0) * (h1 - h0) * (w1 - w0)
                i = ob + ((od * OH + oh) * OW + ow) * ou
                _scatter_window(x, y[i], og[i], dx, xb, xu, H, W, d0, d1, h0, h1, w0, w1, cnt,
                                ptype, ip, zero)


@njit(cache=True)
def pool_backward(og, x, y, dx, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW,
                  cl, ptype, ip, inv_p, cip, zero, req):
    if req == REQ_NULL:
        return
    for q in range(N * C):
        _scatter_plane(og, x, y, dx, q, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD,
                       PH, PW, cl, ptype, ip, cip, zero, req)


@njit(cache=True, parallel=True)
def pool_backward_parallel(og, x, y, dx, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD,
                           PH, PW, cl, ptype, ip, inv_p, cip, zero, req):
    if req == REQ_NULL:
        return
    for q in prange(N * C):
        _scatter_plane(og, x, y, dx, q, N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD,
                       PH, PW, cl, ptype, ip, cip, zero, req)


# -- global pooling: x as (A, S, B), out as (A, B) ------------------------------

@njit(cache=True, inline="always")
def _global_one(x, out, a, b, ptype, ip, inv_p, zero, req):
    S = x.shape[1]
    if S == 0:
        v = zero
    elif ptype == MAX:
        v = x[a, 0, b]
        for s in range(1, S):
            if x[a, s, b] > v:
                v = x[a, s, b]
    else:
        v = zero
        if ptype == LP:
            for s in range(S):
                t = x[a, s, b]
                u = t
                for _ in range(ip - 1):
                    u = u * t
                v += u
            if ip > 1:
                v = v ** inv_p
        else:
            for s in range(S):
                v += x[a, s, b]
            if ptype == AVG:
                v = v / x.dtype.type(S)
    if req == REQ_ADD:
        out[a, b] += v
    else:
        out[a, b] = v


@njit(cache=True)
def global_forward(x, out, ptype, ip, inv_p, zero, req):
    if req == REQ_NULL:
        return
    B = x.shape[2]
    for r in range(x.shape[0] * B):
        a = r // B
        _global_one(x, out, a, r - a * B, ptype, ip, inv_p, zero, req)


@njit(cache=True, parallel=True)
def global_forward_parallel(x, out, ptype, ip, inv_p, zero, req):
    if req == REQ_NULL:
        return
    B = x.shape[2]
    for r in prange(x.shape[0] * B):
        a = r // B
        _global_one(x, out, a, r - a * B, ptype, ip, inv_p, zero, req)


@njit(cache=True, inline="always")
def _global_back_one(og, x, y, dx, a, b, ptype, ip, zero, add):
    S = x.shape[1]
    g = og[a, b]
    if ptype == MAX:
        arg = 0
        for s in range(1, S):
            if x[a, s, b] > x[a, arg, b]:
                arg = s
        for s in range(S):
            v = g if s == arg else zero
            if add:
                dx[a, s, b] += v
            else:
                dx[a, s, b] = v
        return
    if ptype == AVG:
        g = g / x.dtype.type(max(S, 1))
    yv = y[a, b]
    for s in range(S):
        v = g
        if ptype == LP and ip > 1:
            if yv == zero:
                v = zero
            else:
                r = x[a, s, b] / yv
                t = r
                for _ in range(ip - 2):
                    t = t * r
                v = g * t
        if add:
            dx[a, s, b] += v
        else:
            dx[a, s, b] = v


@njit(cache=True)
def global_backward(og, x, y, dx, ptype, ip, inv_p, zero, req):
    if req == REQ_NULL:
        return
    B = x.shape[2]
    for r in range(x.shape[0] * B):
        a = r // B
        _global_back_one(og, x, y, dx, a, r - a * B, ptype, ip, zero, req == REQ_ADD)


@njit(cache=True, parallel=True)
def global_backward_parallel(og, x, y, dx, ptype, ip, inv_p, zero, req):
    if req == REQ_NULL:
        return
    B = x.shape[2]
    for r in prange(x.shape[0] * B):
        a = r // B
        _global_back_one(og, x, y, dx, a, r - a * B, ptype, ip, zero, req == REQ_ADD)


# -- prepare -------------------------------------------------------------------

def pool_params(call, shape, out_shape):
    """(is_global, views, scalars) shared by the CPU and CUDA prepares."""
    attrs = call.attrs
    shape = tuple(int(d) for d in shape)
    out_shape = tuple(int(d) for d in out_shape)
    cl = channels_last(attrs)
    dt = np.dtype(call.in_dtypes[0]).type
    ptype = POOL_CODES[attrs["pool_type"]]
    ip = attrs["p_value"] if attrs["p_value"] is not None else 2
    cip = attrs["count_include_pad"] if attrs["count_include_pad"] is not None else True
    inv_p = dt(1.0 / ip)
    N = shape[0]
    C = shape[-1] if cl else shape[1]
    spatial = shape[1:-1] if cl else shape[2:]
    S = int(np.prod(spatial)) if spatial else 1
    if attrs["global_pool"]:
        view = (N, S, C) if cl else (N * C, S, 1)
        oview = (N, C) if cl else (N * C, 1)
        return True, view, oview, (ptype, ip, inv_p, dt(0))
    dims = geometry(call.op.name, attrs, shape, call.in_shapes)
    dims = [(1, 1, 1, 0, 1)] * (3 - len(dims)) + list(dims)
    D, H, W = (d[0] for d in dims)
    OD, OH, OW = (d[4] for d in dims)
    KD, KH, KW = (d[1] for d in dims)
    SD, SH, SW = (d[2] for d in dims)
    PD, PH, PW = (d[3] for d in dims)
    geo = (N, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, bool(cl), ptype, ip,
           inv_p, bool(cip), dt(0))
    return False, (int(np.prod(shape)),), (int(np.prod(out_shape)),), geo


def _parallel(size):
    return size >= config.parallel_threshold()


def prepare_pooling(call):
    is_global, view, oview, scalars = pool_params(call, call.in_shapes[0], call.out_shapes[0])
    big = _parallel(int(np.prod(call.in_shapes[0])))
    if is_global:
        fn = global_forward_parallel if big else global_forward
    else:
        fn = pool_forward_parallel if big else pool_forward
    return Launch(fn, scalars + (int(call.req[0]),), views=[view, oview])


def prepare_pooling_backward(call):
    is_global, view, oview, scalars = pool_params(call, call.in_shapes[1], call.in_shapes[0])
    big = _parallel(int(np.prod(call.in_shapes[1])))
    if is_global:
        fn = global_backward_parallel if big else global_backward
    else:
        fn = pool_backward_parallel if big else pool_backward
    return Launch(fn, scalars + (int(call.req[0]),), views=[oview, view, oview, view])
