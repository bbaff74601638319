"""Correlation's per-element math (``register_jitable`` functions, called
from the ``njit`` kernels of ``kernels.cpu.correlation`` and the CUDA
kernels of ``kernels.cuda.correlation``) and its prepare-time scalars.  The
inputs are read as flat (N * C * H * W,) arrays through their zero padding."""
import numpy as np
from numba.extending import register_jitable

from ...ops.correlation import corr_geometry
from ...ops.registry import REQ_NULL


def corr_scalars(call, shape):
    """(C, H, W, pad, kernel size, max displacement, radius, width, stride1,
    stride2, is_multiply, kernel_size**2 * C in the dtype, zero, one)."""
    t = np.dtype(call.in_dtypes[-1]).type
    a = call.attrs
    _, c, h, w = (int(v) for v in shape)
    _, _, _, radius, width = corr_geometry(a, shape)
    k = a["kernel_size"]
    return (c, h, w, a["pad_size"], k, a["max_displacement"], radius, width, a["stride1"],
            a["stride2"], bool(a["is_multiply"]), t(k * k * c), t(0), t(1))


@register_jitable
def py_positions(q, i, j, md, radius, width, s1, s2):
    """(y1, x1, y2, x2): the padded top-left corners of the data1 patch of
    output position (i, j) and of its data2 patch for displacement ``q``."""
    x1 = j * s1 + md
    y1 = i * s1 + md
    dx = (q % width - radius) * s2
    dy = (q // width - radius) * s2
    return y1, x1, y1 + dy, x1 + dx


@register_jitable
def py_padded(data, n, c, y, x, C, H, W, pad, zero):
    """(value, flat index or -1) of data[n, c] at padded position (y, x)."""
    yy = y - pad
    xx = x - pad
    if 0 <= yy < H and 0 <= xx < W:
        p = ((n * C + c) * H + yy) * W + xx
        return data[p], p
    return zero, -1


@register_jitable
def py_value(d1, d2, n, q, i, j, C, H, W, pad, K, md, radius, width, s1, s2, mult, se, zero):
    """Output element (n, q, i, j)."""
    y1, x1, y2, x2 = py_positions(q, i, j, md, radius, width, s1, s2)
    acc = zero
    for h in range(K):
        for w in range(K):
            for c in range(C):
                a, _ = py_padded(d1, n, c, y1 + h, x1 + w, C, H, W, pad, zero)
                b, _ = py_padded(d2, n, c, y2 + h, x2 + w, C, H, W, pad, zero)
                if mult:
                    acc += a * b
                else:
                    acc += abs(a - b)
    return acc / se


@register_jitable
def py_pair_grads(a, b, g, mult, one):
    """(d / d a, d / d b) of one product (or absolute difference) times ``g``."""
    if mult:
        return g * b, g * a
    s = one if a >= b else -one
    return g * s, -g * s


def build_backward_point(add):
    """Correlation's gradient of output (n, q, i, j), its two data gradients
    scattered through ``add(a, index, value)`` (a serial add on the CPU,
    ``cuda.atomic.add`` on CUDA): the plain function ``point(og, d1, d2, g1,
    g2, n, q, i, j, C, H, W, pad, K, md, radius, width, s1, s2, mult, se,
    zero, one, req1, req2)`` for the caller to compile.

    Parameters
    ----------
    add : compiled function
        Adds a tap's share into ``g1`` / ``g2`` (pixels of overlapping
        windows are shared by many outputs).

    Returns
    -------
    function
        ``point``, uncompiled.
    """
    def point(og, d1, d2, g1, g2, n, q, i, j, C, H, W, pad, K, md, radius, width, s1, s2, mult,
              se, zero, one, req1, req2):
        y1, x1, y2, x2 = py_positions(q, i, j, md, radius, width, s1, s2)
        g = og[n, q, i, j] / se
        for h in range(K):
            for w in range(K):
                for c in range(C):
                    a, p1 = py_padded(d1, n, c, y1 + h, x1 + w, C, H, W, pad, zero)
                    b, p2 = py_padded(d2, n, c, y2 + h, x2 + w, C, H, W, pad, zero)
                    ga, gb = py_pair_grads(a, b, g, mult, one)
                    if p1 >= 0 and req1 != REQ_NULL:
                        add(g1, p1, ga)
                    if p2 >= 0 and req2 != REQ_NULL:
                        add(g2, p2, gb)
    return point
