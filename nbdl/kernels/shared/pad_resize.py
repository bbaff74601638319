"""Pad's mode codes and layout, and the per-element math of Pad and
UpSampling both devices' kernels run (plain Python: compiled by ``njit`` in
``kernels.cpu.pad_resize``, by ``cuda.jit(device=True)`` in
``kernels.cuda.pad_resize``; ``build(jit)`` for those that call others)."""
from types import SimpleNamespace

from ...ops.pad_resize import check_pad


MODES = {"constant": 0, "edge": 1, "reflect": 2}


def pad_layout(attrs, data_shape):
    """(data view, padded view, (pd, ph, pw), mode code)."""
    data_shape = tuple(data_shape)
    pairs = check_pad("Pad", attrs, data_shape, None)
    if len(data_shape) == 4:
        data_shape = data_shape[:2] + (1,) + data_shape[2:]
        pairs = pairs[:2] + [(0, 0)] + pairs[2:]
    padded = tuple(d + b + a for d, (b, a) in zip(data_shape, pairs))
    view = (data_shape[0] * data_shape[1],) + data_shape[2:]
    pview = (padded[0] * padded[1],) + padded[2:]
    return view, pview, tuple(p[0] for p in pairs[2:]), MODES[attrs["mode"]]


def py_source(o, before, n, mode):
    """The input coordinate output coordinate ``o`` of an axis padded by
    ``before`` (input size ``n``) reads; -1: the constant fill."""
    i = o - before
    if 0 <= i < n:
        return i
    if mode == 0:
        return -1
    if mode == 1:
        return 0 if i < 0 else n - 1
    return -i if i < 0 else 2 * (n - 1) - i


def py_nearest_sum(og, n, c, c0, iy, ix, sh, sw, zero):
    """Nearest UpSampling's data gradient at (n, c, iy, ix): the sum of
    ``og`` over its (sh, sw) block in channel c0 + c."""
    s = zero
    for a in range(sh):
        for b in range(sw):
            s += og[n, c0 + c, iy * sh + a, ix * sw + b]
    return s


def py_first_tap(o, s, p, k):
    """The smallest input index i with o + p - i*s < k (clipped at 0)."""
    t = o + p - k + 1
    i = (t + s - 1) // s if t > 0 else 0
    return i


def py_bilinear_dx(og, w, n, c, iy, ix, s, p, zero):
    """Bilinear UpSampling's data gradient at (n, c, iy, ix): ``og``
    correlated with the channel's kernel (stride s, pad p)."""
    k = w.shape[2]
    acc = zero
    for ky in range(k):
        oy = iy * s - p + ky
        if 0 <= oy < og.shape[2]:
            for kx in range(k):
                ox = ix * s - p + kx
                if 0 <= ox < og.shape[3]:
                    acc += og[n, c, oy, ox] * w[c, 0, ky, kx]
    return acc


def py_bilinear_dw(og, x, c, ky, kx, s, p, zero):
    """Bilinear UpSampling's weight gradient at (c, 0, ky, kx): the sum of
    ``og * x`` over the taps it joins."""
    acc = zero
    for n in range(x.shape[0]):
        for iy in range(x.shape[2]):
            oy = iy * s - p + ky
            if 0 <= oy < og.shape[2]:
                for ix in range(x.shape[3]):
                    ox = ix * s - p + kx
                    if 0 <= ox < og.shape[3]:
                        acc += og[n, c, oy, ox] * x[n, c, iy, ix]
    return acc


def build(jit):
    """Compile ``py_source`` and ``py_first_tap`` with ``jit`` and return
    them with the plain functions built on them (the caller compiles those).

    Parameters
    ----------
    jit : callable
        The decorator applied to the leaf functions.

    Returns
    -------
    SimpleNamespace
        ``source``, ``first_tap`` (compiled); ``pad_value(x, b, d, h, w,
        pd, ph, pw, mode, value)``, Pad's output at (b, d, h, w), and
        ``bilinear_at(x, w, n, c, oy, ox, s, p, zero)``, bilinear
        UpSampling's output at (n, c, oy, ox) (a depthwise transposed
        convolution as a gather), plain.
    """
    source = jit(py_source)
    first_tap = jit(py_first_tap)

    def pad_value(x, b, d, h, w, pd, ph, pw, mode, value):
        sd = source(d, pd, x.shape[1], mode)
        sh = source(h, ph, x.shape[2], mode)
        sw = source(w, pw, x.shape[3], mode)
        return value if sd < 0 or sh < 0 or sw < 0 else x[b, sd, sh, sw]

    def bilinear_at(x, w, n, c, oy, ox, s, p, zero):
        # out[n, c, oy, ox] = sum of x[n, c, iy, ix] * w[c, 0, ky, kx] over
        # oy = iy*s - p + ky (likewise for x); the iy reaching oy are those
        # with 0 <= oy + p - iy*s < k
        k = w.shape[2]
        y0 = first_tap(oy, s, p, k)
        y1 = min((oy + p) // s, x.shape[2] - 1)
        x0 = first_tap(ox, s, p, k)
        x1 = min((ox + p) // s, x.shape[3] - 1)
        acc = zero
        for iy in range(y0, y1 + 1):
            ky = oy + p - iy * s
            for ix in range(x0, x1 + 1):
                acc += x[n, c, iy, ix] * w[c, 0, ky, ox + p - ix * s]
        return acc

    return SimpleNamespace(source=source, first_tap=first_tap, pad_value=pad_value,
                           bilinear_at=bilinear_at)
