"""Pooling's codes, scalars and per-window functions (plain Python: compiled by
``njit`` in ``kernels.cpu.pooling``, by ``cuda.jit`` in ``kernels.cuda.pooling``)."""
import numpy as np

from ...ops.pooling import channels_last, geometry


MAX, AVG, SUM, LP = 0, 1, 2, 3
POOL_CODES = {"max": MAX, "avg": AVG, "sum": SUM, "lp": LP}


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


def py_divisor(mode, nd, nh, nw, dn, kn):
    """avg's divisor: ``kn``, the whole kernel (mode 2: Pooling_v1, whose
    zero padding covers every window), ``nd * nh * nw``, the window clipped
    to the padding (mode 1: count_include_pad), or ``dn``, its data elements
    (mode 0)."""
    if mode == 2:
        return kn
    if mode == 1:
        return nd * nh * nw
    return dn


def py_pad_zero(mode, ptype, dn, kn):
    """Whether a window's max also sees a padding zero: Pooling_v1 (mode 2)
    pads with zeros that take part in max, wherever a window leaves the data."""
    return mode == 2 and ptype == 0 and dn < kn


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
                      ip, zero, pad_zero):
    """Add output gradient ``gv`` (output value ``yv``) to its window in ``dx``
    (``pad_zero``: a padding zero took part in max, and won when every data
    element is negative: then nothing is added)."""
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
        if not (pad_zero and best < zero):
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


def pool_params(call, shape, out_shape):
    """(is_global, views, scalars) shared by the CPU and CUDA prepares."""
    attrs = call.attrs
    shape = tuple(int(d) for d in shape)
    out_shape = tuple(int(d) for d in out_shape)
    cl = channels_last(attrs)
    dt = np.dtype(call.in_dtypes[0]).type
    ptype = POOL_CODES[attrs["pool_type"]]
    ip = attrs.get("p_value") or 2
    cip = attrs.get("count_include_pad")
    # the avg divisor / padding mode of py_divisor and py_pad_zero
    mode = 2 if call.op.name.endswith("Pooling_v1") else (0 if cip is False else 1)
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
           inv_p, mode, dt(0))
    return False, (int(np.prod(shape)),), (int(np.prod(out_shape)),), geo
