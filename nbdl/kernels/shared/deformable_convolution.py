"""Deformable convolution's bilinear sampling, written once for both devices
(plain Python: compiled by ``njit`` in ``kernels.cpu.deformable_convolution``,
by ``cuda.jit(device=True)`` in ``kernels.cuda.deformable_convolution``; the
sampling rules are ``nbdl.ops.deformable_convolution``'s).  An image is seen
as ``(C, H, W)``; a tap at (y, x) reads its four neighbours, a neighbour
outside the image counting as 0."""
import numpy as np


def py_locate(y, x, h_n, w_n, v1):
    """(inside, y0, x0, ly, lx, clamped_y, clamped_x) of a sampling point: the
    top-left corner, the fractional parts, and whether v1 clamped a coordinate
    to the last row/column (its derivative is then zero)."""
    zero = y - y
    if v1:
        inside = y >= 0 and x >= 0 and y < h_n and x < w_n
    else:
        inside = y > -1 and x > -1 and y < h_n and x < w_n
    if not inside:
        return False, 0, 0, zero, zero, False, False
    fy = np.floor(y)
    fx = np.floor(x)
    y0 = int(fy)
    x0 = int(fx)
    ly = y - fy
    lx = x - fx
    cy = False
    cx = False
    if v1 and y0 >= h_n - 1:
        y0 = h_n - 1
        ly = zero
        cy = True
    if v1 and x0 >= w_n - 1:
        x0 = w_n - 1
        lx = zero
        cx = True
    return True, y0, x0, ly, lx, cy, cx


def py_corners(img, c, y0, x0):
    """The four neighbours img[c, y0 + a, x0 + b], zero outside the image."""
    h_n, w_n = img.shape[1], img.shape[2]
    zero = img.dtype.type(0)
    v00 = zero
    v01 = zero
    v10 = zero
    v11 = zero
    if y0 >= 0:
        if x0 >= 0:
            v00 = img[c, y0, x0]
        if x0 + 1 < w_n:
            v01 = img[c, y0, x0 + 1]
    if y0 + 1 < h_n:
        if x0 >= 0:
            v10 = img[c, y0 + 1, x0]
        if x0 + 1 < w_n:
            v11 = img[c, y0 + 1, x0 + 1]
    return v00, v01, v10, v11


def py_blend(v00, v01, v10, v11, ly, lx, one):
    """The bilinear sample of the four neighbours at fractions (ly, lx)."""
    hy = one - ly
    hx = one - lx
    return hy * hx * v00 + hy * lx * v01 + ly * hx * v10 + ly * lx * v11


def py_coord_terms(gv, v00, v01, v10, v11, ly, lx, one):
    """A column gradient ``gv``'s share of (the mask's, y's, x's) gradients at
    a tap with those neighbours and fractions."""
    hy = one - ly
    hx = one - lx
    return (gv * (hy * hx * v00 + hy * lx * v01 + ly * hx * v10 + ly * lx * v11),
            gv * (hx * (v10 - v00) + lx * (v11 - v01)),
            gv * (hy * (v01 - v00) + ly * (v11 - v10)))


def build_scatter(add):
    """``scatter(dimg, c, y0, x0, ly, lx, a, one)``: ``a`` spread onto the
    tap's neighbours inside the image (``dimg`` (C, H, W)) with the bilinear
    weights, plain, for the caller to compile.

    Parameters
    ----------
    add : compiled function
        ``add(dimg, (c, y, x), value)``: the CPU's serial add or CUDA's
        atomic one (taps of different positions share pixels).

    Returns
    -------
    function
    """
    def scatter(dimg, c, y0, x0, ly, lx, a, one):
        h_n, w_n = dimg.shape[1], dimg.shape[2]
        hy = one - ly
        hx = one - lx
        if y0 >= 0:
            if x0 >= 0:
                add(dimg, (c, y0, x0), a * hy * hx)
            if x0 + 1 < w_n:
                add(dimg, (c, y0, x0 + 1), a * hy * lx)
        if y0 + 1 < h_n:
            if x0 >= 0:
                add(dimg, (c, y0 + 1, x0), a * ly * hx)
            if x0 + 1 < w_n:
                add(dimg, (c, y0 + 1, x0 + 1), a * ly * lx)
    return scatter
