"""Pooling's codes, scalars and per-window functions (plain Python: compiled by
``njit`` in ``kernels.cpu.pooling``, by ``cuda.jit`` in ``kernels.cuda.pooling``),
and, through ``build(jit)``, the per-output, per-plane and global-pooling
functions both devices' kernels loop over."""
from types import SimpleNamespace

import numpy as np

from ...ops.pooling import channels_last, geometry
from ...ops.registry import REQ_ADD


MAX, AVG, SUM, LP = 0, 1, 2, 3
POOL_CODES = {"max": MAX, "avg": AVG, "sum": SUM, "lp": LP}

# Max pooling as MXNet 1.9.1 computes it (checked on it): a window's maximum
# starts at the dtype's lowest finite value (``x.dtype.type(np.finfo(
# x.dtype).min)`` in the kernels) and takes each element strictly greater,
# so NaN never wins and a window of NaN or -inf gives that value; the
# gradient goes to the first element that raised the maximum, or to the
# window's first element when none did (MXNet's float32 kernels; its
# float64 ones drop that gradient).


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


def py_ipow(v, k):
    """``v ** k`` for an integer ``k >= 1``, by repeated multiplication (lp
    pooling's terms: ``v ** p`` forward, ``(x / y) ** (p - 1)`` backward)."""
    t = v
    for _ in range(k - 1):
        t = t * v
    return t


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
        best = x.dtype.type(np.finfo(x.dtype).min)
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
        best = x.dtype.type(np.finfo(x.dtype).min)
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


def build(jit):  # noqa: C901  (one closure per function)
    """Compile the per-window functions above with ``jit`` and return them
    with the plain (uncompiled) functions built on them, which the caller
    compiles (``njit`` on the CPU, ``cuda.jit(device=True)`` on CUDA): the
    loops around them (a plane per (p)range iteration, an output per
    thread) are the device modules' own.

    Parameters
    ----------
    jit : callable
        The decorator applied to ``py_bounds``, ``py_plane``,
        ``py_pool_window``, ``py_scatter_window``, ``py_divisor``,
        ``py_pad_zero`` and ``py_ipow``.

    Returns
    -------
    SimpleNamespace
        ``bounds``, ``plane``, ``pool_window``, ``scatter_window``,
        ``divisor``, ``pad_zero``, ``ipow`` (compiled); ``pool_at`` (one output of
        the flat 3-D layout, honouring ``req``), ``scatter_plane`` (one
        ``(n, c)`` plane's data gradient), ``global_one`` and
        ``global_back_one`` (one ``(a, b)`` reduction of global pooling and
        its gradient), plain.
    """
    bounds = jit(py_bounds)
    plane = jit(py_plane)
    pool_window = jit(py_pool_window)
    scatter_window = jit(py_scatter_window)
    divisor = jit(py_divisor)
    pad_zero = jit(py_pad_zero)
    ipow = jit(py_ipow)

    def pool_at(x, out, q, od, oh, ow, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH,
                PW, cl, ptype, ip, inv_p, cip, zero, req):
        """Output (od, oh, ow) of plane ``q = n * C + c``."""
        n = q // C
        c = q - n * C
        xb, xu = plane(n, c, C, D * H * W, cl)
        ob, ou = plane(n, c, C, OD * OH * OW, cl)
        d0, d1, nd = bounds(od, SD, PD, KD, D)
        h0, h1, nh = bounds(oh, SH, PH, KH, H)
        w0, w1, nw = bounds(ow, SW, PW, KW, W)
        dn = (d1 - d0) * (h1 - h0) * (w1 - w0)
        cnt = divisor(cip, nd, nh, nw, dn, KD * KH * KW)
        v = pool_window(x, xb, xu, H, W, d0, d1, h0, h1, w0, w1, cnt, ptype, ip, inv_p, zero)
        if pad_zero(cip, ptype, dn, KD * KH * KW) and v < zero:
            v = zero
        i = ob + ((od * OH + oh) * OW + ow) * ou
        if req == REQ_ADD:
            out[i] += v
        else:
            out[i] = v

    def scatter_plane(og, x, y, dx, q, C, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH,
                      PW, cl, ptype, ip, cip, zero, req):
        """Plane ``q``'s data gradient: zeroed (unless ``req`` adds), then
        every output's gradient scattered onto its window."""
        n = q // C
        c = q - n * C
        xb, xu = plane(n, c, C, D * H * W, cl)
        ob, ou = plane(n, c, C, OD * OH * OW, cl)
        if req != REQ_ADD:
            for k in range(D * H * W):
                dx[xb + k * xu] = zero
        for od in range(OD):
            d0, d1, nd = bounds(od, SD, PD, KD, D)
            for oh in range(OH):
                h0, h1, nh = bounds(oh, SH, PH, KH, H)
                for ow in range(OW):
                    w0, w1, nw = bounds(ow, SW, PW, KW, W)
                    dn = (d1 - d0) * (h1 - h0) * (w1 - w0)
                    cnt = divisor(cip, nd, nh, nw, dn, KD * KH * KW)
                    i = ob + ((od * OH + oh) * OW + ow) * ou
                    scatter_window(x, y[i], og[i], dx, xb, xu, H, W, d0, d1, h0, h1, w0, w1,
                                   cnt, ptype, ip, zero, pad_zero(cip, ptype, dn, KD * KH * KW))

    def global_one(x, out, a, b, ptype, ip, inv_p, zero, req):
        """out[a, b]: the pooling of x[a, :, b]."""
        S = x.shape[1]
        if S == 0:
            v = zero
        elif ptype == MAX:
            v = x.dtype.type(np.finfo(x.dtype).min)
            for s in range(S):
                if x[a, s, b] > v:
                    v = x[a, s, b]
        else:
            v = zero
            if ptype == LP:
                for s in range(S):
                    v += ipow(x[a, s, b], ip)
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

    def global_back_one(og, x, y, dx, a, b, ptype, ip, zero, add):
        """dx[a, :, b] from og[a, b] (added when ``add``)."""
        S = x.shape[1]
        g = og[a, b]
        if ptype == MAX:
            arg = 0
            best = x.dtype.type(np.finfo(x.dtype).min)
            for s in range(S):
                if x[a, s, b] > best:
                    best = x[a, s, b]
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
                    v = g * ipow(x[a, s, b] / yv, ip - 1)
            if add:
                dx[a, s, b] += v
            else:
                dx[a, s, b] = v

    return SimpleNamespace(bounds=bounds, plane=plane, pool_window=pool_window,
                           scatter_window=scatter_window, divisor=divisor, pad_zero=pad_zero,
                           ipow=ipow, pool_at=pool_at, scatter_plane=scatter_plane, global_one=global_one,
                           global_back_one=global_back_one)


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
