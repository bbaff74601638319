"""The sampling math of GridGenerator, BilinearSampler and SpatialTransformer
(plain Python: compiled by ``njit`` in ``kernels.cpu.spatial_transformer``
and by ``cuda.jit(device=True)`` in ``kernels.cuda.spatial_transformer``),
and the scalars their ``prepare`` functions pass.

Arithmetic stays in the data's dtype (``one`` carries it), as MXNet's
kernels compute in DType: a grid value ``g`` maps to the pixel coordinate
``(g + 1) * (size - 1) / 2``; its four neighbours are the floor and the next
pixel in each axis, weighted ``1 - frac`` and ``frac``, and a neighbour
outside the image counts as 0."""
import numpy as np


def sampler_scalars(call, data_shape):
    """(C, H, W, one, H - 1, W - 1) of sampling data of ``data_shape`` (in the
    data's dtype)."""
    t = np.dtype(call.in_dtypes[0]).type
    _, c, h, w = (int(v) for v in data_shape)
    return c, h, w, t(1), t(h - 1), t(w - 1)


def dst_scalars(call, hw):
    """(W, step x, step y, -1) of the destination grid of ``hw``: the step
    ``2 / (size - 1)`` computed in float64 and rounded to the dtype, as MXNet
    (a size of 1 gives an infinite step, so NaN coordinates, as there)."""
    t = np.dtype(call.in_dtypes[0]).type
    h, w = (int(v) for v in hw)
    with np.errstate(divide="ignore"):
        sx = np.float64(2.0) / np.float64(w - 1)
        sy = np.float64(2.0) / np.float64(h - 1)
    return w, t(sx), t(sy), t(-1)


def warp_scalars(call, shape):
    """((W - 1) / 2, (H - 1) / 2) of a warp of ``shape`` (N, 2, H, W)."""
    t = np.dtype(call.in_dtypes[0]).type
    h, w = int(shape[2]), int(shape[3])
    return t((w - 1.0) / 2.0), t((h - 1.0) / 2.0)


def py_dst_point(i, W, sx, sy, mone, like):
    """The normalised destination (x, y) of flat target position ``i``
    (``like``: an array of the dtype to compute in)."""
    row = i // W
    col = i - row * W
    return mone + like.dtype.type(col) * sx, mone + like.dtype.type(row) * sy


def py_affine_point(theta, n, x, y):
    """``theta[n]`` (a flat (N * 6,) array) applied to (x, y, 1)."""
    b = n * 6
    return (theta[b] * x + theta[b + 1] * y + theta[b + 2],
            theta[b + 3] * x + theta[b + 4] * y + theta[b + 5])


def py_taps(gx, gy, one, fh, fw):
    """(x0, y0, weight of x0, weight of y0) of the grid point (gx, gy)."""
    two = one + one
    x = (gx + one) * fw / two
    y = (gy + one) * fh / two
    rx = x % one
    ry = y % one
    return int(x - rx), int(y - ry), one - rx, one - ry


def py_corners(data, base, x0, y0, H, W, zero):
    """The four neighbours (top-left, top-right, bottom-left, bottom-right)
    of (x0, y0) in the image at ``base`` of the flat ``data``; 0 outside."""
    in_x0 = 0 <= x0 < W
    in_x1 = 0 <= x0 + 1 < W
    in_y0 = 0 <= y0 < H
    in_y1 = 0 <= y0 + 1 < H
    p = base + y0 * W + x0
    v00 = data[p] if in_x0 and in_y0 else zero
    v01 = data[p + 1] if in_x1 and in_y0 else zero
    v10 = data[p + W] if in_x0 and in_y1 else zero
    v11 = data[p + W + 1] if in_x1 and in_y1 else zero
    return v00, v01, v10, v11


def py_blend(v00, v01, v10, v11, wx, wy, one):
    """The bilinear value of the four neighbours."""
    return (v00 * wy * wx + v01 * wy * (one - wx) + v10 * (one - wy) * wx
            + v11 * (one - wy) * (one - wx))


def py_blend_grads(v00, v01, v10, v11, wx, wy, g, one, fh, fw):
    """(d out / d gx, d out / d gy) times the head gradient ``g``: the
    derivative of the blend through the pixel coordinates (MXNet's formula)."""
    two = one + one
    cross = v00 - v01 - v10 + v11
    dy = -g * (v01 - v11 + cross * wx)
    dx = -g * (v10 - v11 + cross * wy)
    return dx * fw / two, dy * fh / two


def py_tap_weights(wx, wy, one):
    """The weights of the four neighbours, in ``py_corners``' order."""
    return wy * wx, wy * (one - wx), (one - wy) * wx, (one - wy) * (one - wx)
