"""L2Normalization's and LRN's views, scalars and per-column math (plain
Python: compiled by ``njit`` in ``kernels.cpu.nn_normalization``, by
``cuda.jit(device=True)`` in ``kernels.cuda.nn_normalization``).

L2Normalization sees its data as ``(outer, k, inner)`` and normalises over
``k``: ``(N, rest, 1)`` per instance, ``(N, C, spatial)`` across channels,
``(N*C, spatial, 1)`` over spatial positions; the norm is ``(outer, inner)``.
LRN sees ``(N, C, H*W)``."""
import math

import numpy as np

from ...ops.registry import REQ_ADD, REQ_NULL


def l2_views(attrs, shape):
    """``((outer, k, inner), (outer, inner))`` of L2Normalization's data and norm."""
    shape = tuple(int(d) for d in shape)
    size = int(np.prod(shape, dtype=np.int64))
    mode = attrs["mode"]
    n = shape[0]
    if mode == "instance":
        view = (n, size // n if n else int(np.prod(shape[1:], dtype=np.int64)), 1)
    elif mode == "channel":
        view = (n, shape[1], int(np.prod(shape[2:], dtype=np.int64)))
    else:
        view = (n * shape[1], int(np.prod(shape[2:], dtype=np.int64)), 1)
    return view, (view[0], view[2])


def l2_scalars(call):
    """(eps in the data's dtype, write output?, write norm?)."""
    eps = np.dtype(call.in_dtypes[0]).type(call.attrs["eps"])
    return eps, call.req[0] != REQ_NULL, call.req[1] != REQ_NULL


def lrn_view(shape):
    """``(N, C, H*W)`` of LRN's 4-D data."""
    n, c, h, w = (int(d) for d in shape)
    return (n, c, h * w)


def lrn_scalars(call):
    """(alpha / nsize, knorm, -beta, -beta - 1, 2 * beta * alpha / nsize) in the data's
    dtype, and nsize // 2."""
    t = np.dtype(call.in_dtypes[0]).type
    a = call.attrs
    salpha = a["alpha"] / a["nsize"]
    return (t(salpha), t(a["knorm"]), t(-a["beta"]), t(-a["beta"] - 1.0),
            t(2.0 * a["beta"] * salpha), int(a["nsize"]) // 2)


def py_l2_column(x, out, norm, o, i, eps, w_out, w_norm):
    """Normalise column ``x[o, :, i]`` into ``out``; its norm into ``norm[o, i]``."""
    s = eps - eps
    for k in range(x.shape[1]):
        v = x[o, k, i]
        s += v * v
    nrm = math.sqrt(s + eps)
    if w_norm:
        norm[o, i] = nrm
    if w_out:
        for k in range(x.shape[1]):
            out[o, k, i] = x[o, k, i] / nrm


def py_l2_grad_column(g, y, norm, dx, o, i, add):
    """``dx[o, :, i] (+)= (g - y * sum(g * y)) / norm[o, i]``."""
    nrm = norm[o, i]
    s = nrm - nrm
    for k in range(g.shape[1]):
        s += g[o, k, i] * y[o, k, i]
    for k in range(g.shape[1]):
        v = (g[o, k, i] - y[o, k, i] * s) / nrm
        if add:
            dx[o, k, i] += v
        else:
            dx[o, k, i] = v


def py_lrn_point(x, out, tmp, n, c, p, half, salpha, knorm, nbeta, w_out, w_tmp):
    """LRN of element ``x[n, c, p]`` and its bracket ``tmp[n, c, p]``."""
    lo = max(c - half, 0)                   # the window of channels around c
    hi = min(c + half + 1, x.shape[1])
    s = knorm - knorm
    for j in range(lo, hi):
        v = x[n, j, p]
        s += v * v
    t = knorm + salpha * s
    if w_tmp:
        tmp[n, c, p] = t
    if w_out:
        out[n, c, p] = x[n, c, p] * t ** nbeta


def py_lrn_grad_point(g, x, tmp, dx, n, c, p, half, nbeta, nbeta1, coef, add):
    """``dx[n, c, p]``: ``g * t**-beta - 2 beta alpha/nsize * x * sum over the window
    of g * x * t**(-beta-1)``."""
    lo = max(c - half, 0)                   # the window of channels around c
    hi = min(c + half + 1, x.shape[1])
    acc = coef - coef
    for j in range(lo, hi):
        acc += g[n, j, p] * x[n, j, p] * tmp[n, j, p] ** nbeta1
    v = g[n, c, p] * tmp[n, c, p] ** nbeta - coef * x[n, c, p] * acc
    if add:
        dx[n, c, p] += v
    else:
        dx[n, c, p] = v


__all__ = ["l2_views", "l2_scalars", "lrn_view", "lrn_scalars", "py_l2_column",
           "py_l2_grad_column", "py_lrn_point", "py_lrn_grad_point", "REQ_ADD"]
