"""The sampling math of GridGenerator, BilinearSampler and SpatialTransformer
(``register_jitable`` functions called from the ``njit`` kernels of
``kernels.cpu.spatial_transformer`` and the CUDA kernels of
``kernels.cuda.spatial_transformer``: each device only loops over the
points), and the scalars their ``prepare`` functions pass.

Arithmetic stays in the data's dtype (``one`` carries it), as MXNet's
kernels compute in DType: a grid value ``g`` maps to the pixel coordinate
``(g + 1) * (size - 1) / 2``; its four neighbours are the floor and the next
pixel in each axis, weighted ``1 - frac`` and ``frac``, and a neighbour
outside the image counts as 0."""
import numpy as np
from numba.extending import register_jitable

from ...ops.registry import REQ_ADD, REQ_NULL


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


@register_jitable
def py_dst_point(i, W, sx, sy, mone, like):
    """The normalised destination (x, y) of flat target position ``i``
    (``like``: an array of the dtype to compute in)."""
    row = i // W
    col = i - row * W
    return mone + like.dtype.type(col) * sx, mone + like.dtype.type(row) * sy


@register_jitable
def py_affine_point(theta, n, x, y):
    """``theta[n]`` (a flat (N * 6,) array) applied to (x, y, 1)."""
    b = n * 6
    return (theta[b] * x + theta[b + 1] * y + theta[b + 2],
            theta[b + 3] * x + theta[b + 4] * y + theta[b + 5])


@register_jitable
def py_taps(gx, gy, one, fh, fw):
    """(x0, y0, weight of x0, weight of y0) of the grid point (gx, gy)."""
    two = one + one
    x = (gx + one) * fw / two
    y = (gy + one) * fh / two
    rx = x % one
    ry = y % one
    return int(x - rx), int(y - ry), one - rx, one - ry


@register_jitable
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


@register_jitable
def py_blend(v00, v01, v10, v11, wx, wy, one):
    """The bilinear value of the four neighbours."""
    return (v00 * wy * wx + v01 * wy * (one - wx) + v10 * (one - wy) * wx
            + v11 * (one - wy) * (one - wx))


@register_jitable
def py_blend_grads(v00, v01, v10, v11, wx, wy, g, one, fh, fw):
    """(d out / d gx, d out / d gy) times the head gradient ``g``: the
    derivative of the blend through the pixel coordinates (MXNet's formula)."""
    two = one + one
    cross = v00 - v01 - v10 + v11
    dy = -g * (v01 - v11 + cross * wx)
    dx = -g * (v10 - v11 + cross * wy)
    return dx * fw / two, dy * fh / two


@register_jitable
def py_tap_weights(wx, wy, one):
    """The weights of the four neighbours, in ``py_corners``' order."""
    return wy * wx, wy * (one - wx), (one - wy) * wx, (one - wy) * (one - wx)


@register_jitable
def store_pair(out, n, i, a, b, add):
    """``out[n, 0, i]``, ``out[n, 1, i]`` = (or +=) a, b."""
    if add:
        out[n, 0, i] += a
        out[n, 1, i] += b
    else:
        out[n, 0, i] = a
        out[n, 1, i] = b


def build_sampler_backward(add):
    """BilinearSampler's gradient at point ``i`` of image ``n``, with the
    data gradient scattered through ``add(gdata, index, value)`` (a serial
    add on the CPU, ``cuda.atomic.add`` on CUDA, where the points of an
    image run in parallel).  The caller compiles the returned plain function
    ``point(og, data, grid, gdata, ggrid, n, i, C, H, W, one, fh, fw,
    req_data, req_grid)``; the data gradient must be zeroed before (unless
    added to).

    Parameters
    ----------
    add : compiled function
        Adds a point's four tap weights times its gradient into ``gdata``.

    Returns
    -------
    function
        ``point`` (compiled by the caller).
    """
    def point(og, data, grid, gdata, ggrid, n, i, C, H, W, one, fh, fw, req_data, req_grid):
        zero = one - one
        x0, y0, wx, wy = py_taps(grid[n, 0, i], grid[n, 1, i], one, fh, fw)
        w00, w01, w10, w11 = py_tap_weights(wx, wy, one)
        gx = zero
        gy = zero
        for c in range(C):
            base = (n * C + c) * H * W
            g = og[n, c, i]
            v00, v01, v10, v11 = py_corners(data, base, x0, y0, H, W, zero)
            dx, dy = py_blend_grads(v00, v01, v10, v11, wx, wy, g, one, fh, fw)
            gx += dx
            gy += dy
            if req_data == REQ_NULL:
                continue
            p = base + y0 * W + x0           # the four taps, where inside the image
            if 0 <= y0 < H and 0 <= x0 < W:
                add(gdata, p, g * w00)
            if 0 <= y0 < H and 0 <= x0 + 1 < W:
                add(gdata, p + 1, g * w01)
            if 0 <= y0 + 1 < H and 0 <= x0 < W:
                add(gdata, p + W, g * w10)
            if 0 <= y0 + 1 < H and 0 <= x0 + 1 < W:
                add(gdata, p + W + 1, g * w11)
        if req_grid != REQ_NULL:
            store_pair(ggrid, n, i, gx, gy, req_grid == REQ_ADD)
    return point


@register_jitable
def affine_grid_point(theta, out, n, i, W, sx, sy, mone, add):
    """GridGenerator (affine): grid point ``i`` of image ``n``."""
    x, y = py_dst_point(i, W, sx, sy, mone, theta)
    gx, gy = py_affine_point(theta, n, x, y)
    store_pair(out, n, i, gx, gy, add)


@register_jitable
def affine_theta_grads(og, gtheta, n, r, W, sx, sy, mone, add):
    """GridGenerator (affine)'s gradient: row ``r`` of image ``n``'s matrix,
    the head gradient's sum against (x, y, 1) of the destination grid."""
    zero = mone - mone
    a = zero
    b = zero
    c = zero
    for i in range(og.shape[2]):
        x, y = py_dst_point(i, W, sx, sy, mone, og)
        g = og[n, r, i]
        a += g * x
        b += g * y
        c += g
    if add:
        gtheta[n, 3 * r] += a
        gtheta[n, 3 * r + 1] += b
        gtheta[n, 3 * r + 2] += c
    else:
        gtheta[n, 3 * r] = a
        gtheta[n, 3 * r + 1] = b
        gtheta[n, 3 * r + 2] = c


@register_jitable
def warp_grid_point(flow, out, n, i, W, dw, dh, forward, add):
    """GridGenerator (warp) at point ``i``: ``(flow + (col, row)) / (dw, dh) -
    1``; backward (``forward`` false): ``flow / (dw, dh)`` (``flow`` the head
    gradient)."""
    row = i // W
    col = i - row * W
    if forward:
        one = dw / dw
        vx = (flow[n, 0, i] + flow.dtype.type(col)) / dw - one
        vy = (flow[n, 1, i] + flow.dtype.type(row)) / dh - one
    else:
        vx = flow[n, 0, i] / dw
        vy = flow[n, 1, i] / dh
    store_pair(out, n, i, vx, vy, add)


@register_jitable
def sample_channels(data, out, n, i, gx, gy, C, H, W, one, fh, fw, add):
    """Every channel of image ``n`` sampled at grid point (gx, gy) into
    ``out[n, :, i]``."""
    zero = one - one
    x0, y0, wx, wy = py_taps(gx, gy, one, fh, fw)
    for c in range(C):
        v00, v01, v10, v11 = py_corners(data, (n * C + c) * H * W, x0, y0, H, W, zero)
        v = py_blend(v00, v01, v10, v11, wx, wy, one)
        if add:
            out[n, c, i] += v
        else:
            out[n, c, i] = v


@register_jitable
def transformer_point(data, theta, out, grid, n, i, C, H, W, one, fh, fw, Wo, sx, sy, mone,
                      want_out, want_grid):
    """SpatialTransformer at point ``i`` of image ``n``: the affine grid
    point (into the hidden ``grid`` when wanted), then the sampled channels."""
    x, y = py_dst_point(i, Wo, sx, sy, mone, theta)
    gx, gy = py_affine_point(theta, n, x, y)
    if want_grid:
        store_pair(grid, n, i, gx, gy, False)
    if want_out:
        sample_channels(data, out, n, i, gx, gy, C, H, W, one, fh, fw, False)


def sampler_views(data_shape, out_hw):
    """(data size, grid view (N, 2, Ho*Wo), output view (N, C, Ho*Wo))."""
    n, c = int(data_shape[0]), int(data_shape[1])
    m = int(out_hw[0]) * int(out_hw[1])
    size = 1
    for v in data_shape:
        size *= int(v)
    return size, (n, 2, m), (n, c, m)


def grid_launch_args(call, backward):
    """((backward, affine), scalars, views) of a GridGenerator call or its
    gradient's: the kernel to pick, its scalars before ``req``, and the views
    (matrices (N * 6,) forward, (N, 6) as the gradient; grids (N, 2, H*W))."""
    a = call.attrs
    n = int(call.in_shapes[0][0])
    if a["transform_type"] == "affine":
        hw = a["target_shape"]
        view = (n, 2, int(hw[0]) * int(hw[1]))
        views = [view, (n, 6)] if backward else [(n * 6,), view]
        return (backward, True), dst_scalars(call, hw), views
    shape = call.in_shapes[0]
    view = (n, 2, int(shape[2]) * int(shape[3]))
    return (backward, False), (int(shape[3]),) + warp_scalars(call, shape) + (not backward,), \
        [view, view]
