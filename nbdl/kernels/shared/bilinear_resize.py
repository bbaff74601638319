"""_contrib_BilinearResize2D's scales and per-axis source position (plain
Python: compiled by ``njit`` in ``kernels.cpu.bilinear_resize``, by
``cuda.jit(device=True)`` in ``kernels.cuda.bilinear_resize``; ``build(jit)``
for the per-output and per-plane functions on them)."""
from types import SimpleNamespace

import numpy as np


def _scale(size, osize, align):
    if osize > 1:
        return (size - 1) / (osize - 1) if align else size / osize
    return 0.0


def resize_plan(in_shape, out_shape, align, dtype):
    """(planes, H, W, OH, OW, height scale, width scale, align, 0.5) with the
    floats in ``dtype``."""
    n, c, h, w = (int(d) for d in in_shape)
    oh, ow = int(out_shape[2]), int(out_shape[3])
    t = np.dtype(dtype).type
    return (n * c, h, w, oh, ow, t(_scale(h, oh, align)), t(_scale(w, ow, align)), bool(align),
            t(0.5))


def resize_call(call, data_shape, out_shape):
    """(plan of ``resize_plan`` for the call, (P, H, W), (P, OH, OW))."""
    plan = resize_plan(data_shape, out_shape, call.attrs["align_corners"], call.out_dtypes[0])
    P, H, W, OH, OW = plan[:5]
    return plan, (P, H, W), (P, OH, OW)


def py_source(scale, dst, size, align, half):
    """(first source index, step to the second (0 at the edge), weight of the
    second) of output index ``dst`` along an axis of ``size`` inputs."""
    if align:
        r = scale * dst
    else:
        r = scale * (dst + half) - half
        if r < 0:
            r = half - half
    i = int(r)
    step = 1 if i < size - 1 else 0
    return i, step, r - i


def py_resize_point(x, p, h1, hp, hl, w1, wp, wl, one):
    """The bilinear value of plane ``p`` of ``x`` (P, H, W) at the source
    position given per axis by ``py_source``."""
    return ((one - hl) * ((one - wl) * x[p, h1, w1] + wl * x[p, h1, w1 + wp])
            + hl * ((one - wl) * x[p, h1 + hp, w1] + wl * x[p, h1 + hp, w1 + wp]))


def py_resize_scatter(g, dx, p, h1, hp, hl, w1, wp, wl, one):
    """Add gradient ``g`` to the four source pixels of that position in ``dx``."""
    dx[p, h1, w1] += (one - hl) * (one - wl) * g
    dx[p, h1, w1 + wp] += (one - hl) * wl * g
    dx[p, h1 + hp, w1] += hl * (one - wl) * g
    dx[p, h1 + hp, w1 + wp] += hl * wl * g


def build(jit):
    """Compile the per-axis and per-point functions above with ``jit`` and
    return the plain functions on them (the caller compiles those).

    Parameters
    ----------
    jit : callable
        Compiles ``py_source``, ``py_resize_point`` and
        ``py_resize_scatter`` for the device.

    Returns
    -------
    SimpleNamespace
        ``value_at(x, p, oh, ow, H, W, sh, sw, align, half)``: output
        (p, oh, ow); ``scatter_plane(og, dx, p, H, W, OH, OW, sh, sw, align,
        half, add)``: plane ``p`` of the data gradient (zeroed first unless
        ``add``).
    """
    source = jit(py_source)
    point = jit(py_resize_point)
    scatter = jit(py_resize_scatter)

    def value_at(x, p, oh, ow, H, W, sh, sw, align, half):
        h1, hp, hl = source(sh, oh, H, align, half)
        w1, wp, wl = source(sw, ow, W, align, half)
        return point(x, p, h1, hp, hl, w1, wp, wl, half + half)

    def scatter_plane(og, dx, p, H, W, OH, OW, sh, sw, align, half, add):
        if not add:
            for i in range(H):
                for j in range(W):
                    dx[p, i, j] = half - half
        for oh in range(OH):
            for ow in range(OW):
                h1, hp, hl = source(sh, oh, H, align, half)
                w1, wp, wl = source(sw, ow, W, align, half)
                scatter(og[p, oh, ow], dx, p, h1, hp, hl, w1, wp, wl, half + half)

    return SimpleNamespace(value_at=value_at, scatter_plane=scatter_plane)
