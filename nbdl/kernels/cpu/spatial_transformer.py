"""CPU kernels for GridGenerator, BilinearSampler and SpatialTransformer and
their gradients (the math of ``nbdl.kernels.shared.spatial_transformer``
compiled here).  Grids are viewed as (N, 2, H*W), images as flat arrays;
float16 runs the float32 kernels on mirrors (``shared.half_mirror``)."""
import math

from numba import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import spatial_transformer as st
from ..shared.half_mirror import with_half, with_half_prepare
from ._half import host_copy

_dst_point = njit(cache=True, inline="always")(st.py_dst_point)
_affine_point = njit(cache=True, inline="always")(st.py_affine_point)
_taps = njit(cache=True, inline="always")(st.py_taps)
_corners = njit(cache=True, inline="always")(st.py_corners)
_blend = njit(cache=True, inline="always")(st.py_blend)
_blend_grads = njit(cache=True, inline="always")(st.py_blend_grads)
_tap_weights = njit(cache=True, inline="always")(st.py_tap_weights)

temp_plain = with_half(None)


def _half(prepare):
    return with_half_prepare(prepare, None, host_copy)


@njit(cache=True)
def grid_affine(theta, out, W, sx, sy, mone, req):
    if req == REQ_NULL:
        return
    for n in range(out.shape[0]):
        for i in range(out.shape[2]):
            x, y = _dst_point(i, W, sx, sy, mone, theta)
            gx, gy = _affine_point(theta, n, x, y)
            if req == REQ_ADD:
                out[n, 0, i] += gx
                out[n, 1, i] += gy
            else:
                out[n, 0, i] = gx
                out[n, 1, i] = gy


@njit(cache=True)
def grid_affine_backward(og, gtheta, W, sx, sy, mone, req):
    if req == REQ_NULL:
        return
    zero = mone - mone
    for n in range(og.shape[0]):
        for r in range(2):
            a = zero
            b = zero
            c = zero
            for i in range(og.shape[2]):
                x, y = _dst_point(i, W, sx, sy, mone, og)
                g = og[n, r, i]
                a += g * x
                b += g * y
                c += g
            if req == REQ_ADD:
                gtheta[n, 3 * r] += a
                gtheta[n, 3 * r + 1] += b
                gtheta[n, 3 * r + 2] += c
            else:
                gtheta[n, 3 * r] = a
                gtheta[n, 3 * r + 1] = b
                gtheta[n, 3 * r + 2] = c


@njit(cache=True)
def grid_warp(flow, out, W, dw, dh, forward, req):
    """Forward: ``(flow + (col, row)) / (dw, dh) - 1``; backward
    (``forward`` false): ``flow / (dw, dh)`` (``flow`` the head gradient)."""
    if req == REQ_NULL:
        return
    one = dw / dw
    for n in range(out.shape[0]):
        for i in range(out.shape[2]):
            row = i // W
            col = i - row * W
            if forward:
                vx = (flow[n, 0, i] + flow.dtype.type(col)) / dw - one
                vy = (flow[n, 1, i] + flow.dtype.type(row)) / dh - one
            else:
                vx = flow[n, 0, i] / dw
                vy = flow[n, 1, i] / dh
            if req == REQ_ADD:
                out[n, 0, i] += vx
                out[n, 1, i] += vy
            else:
                out[n, 0, i] = vx
                out[n, 1, i] = vy


def _grid_launch(call, shape_out, backward):
    a = call.attrs
    n = int(shape_out[0])
    if a["transform_type"] == "affine":
        hw = a["target_shape"]
        view = (n, 2, int(hw[0]) * int(hw[1]))
        fn = grid_affine_backward if backward else grid_affine
        return fn, st.dst_scalars(call, hw), view
    shape = call.in_shapes[0]
    view = (n, 2, int(shape[2]) * int(shape[3]))
    return grid_warp, (int(shape[3]),) + st.warp_scalars(call, shape) + (not backward,), view


def _prepare_grid_generator(call):
    fn, scalars, view = _grid_launch(call, call.in_shapes[0], False)
    data_view = (view[0] * 6,) if call.attrs["transform_type"] == "affine" else view
    return Launch(fn, scalars + (call.req[0],), views=[data_view, view])


def _prepare_grid_generator_backward(call):
    fn, scalars, view = _grid_launch(call, call.in_shapes[0], True)
    out_view = (view[0], 6) if call.attrs["transform_type"] == "affine" else view
    return Launch(fn, scalars + (call.req[0],), views=[view, out_view])


@njit(cache=True, inline="always")
def _sample_channels(data, out, n, i, gx, gy, C, H, W, one, fh, fw, add):
    zero = one - one
    x0, y0, wx, wy = _taps(gx, gy, one, fh, fw)
    for c in range(C):
        v00, v01, v10, v11 = _corners(data, (n * C + c) * H * W, x0, y0, H, W, zero)
        v = _blend(v00, v01, v10, v11, wx, wy, one)
        if add:
            out[n, c, i] += v
        else:
            out[n, c, i] = v


@njit(cache=True)
def sampler_forward(data, grid, out, C, H, W, one, fh, fw, req):
    if req == REQ_NULL:
        return
    for n in range(out.shape[0]):
        for i in range(out.shape[2]):
            _sample_channels(data, out, n, i, grid[n, 0, i], grid[n, 1, i], C, H, W, one, fh,
                             fw, req == REQ_ADD)


@njit(cache=True)
def sampler_backward(og, data, grid, gdata, ggrid, C, H, W, one, fh, fw, req_data, req_grid):
    zero = one - one
    if req_data != REQ_NULL and req_data != REQ_ADD:
        gdata[:] = zero
    for n in range(og.shape[0]):
        for i in range(og.shape[2]):
            x0, y0, wx, wy = _taps(grid[n, 0, i], grid[n, 1, i], one, fh, fw)
            gx = zero
            gy = zero
            for c in range(C):
                base = (n * C + c) * H * W
                g = og[n, c, i]
                v00, v01, v10, v11 = _corners(data, base, x0, y0, H, W, zero)
                dx, dy = _blend_grads(v00, v01, v10, v11, wx, wy, g, one, fh, fw)
                gx += dx
                gy += dy
                if req_data != REQ_NULL:
                    _scatter(gdata, base, x0, y0, H, W, wx, wy, g, one)
            if req_grid == REQ_ADD:
                ggrid[n, 0, i] += gx
                ggrid[n, 1, i] += gy
            elif req_grid != REQ_NULL:
                ggrid[n, 0, i] = gx
                ggrid[n, 1, i] = gy


@njit(cache=True, inline="always")
def _scatter(gdata, base, x0, y0, H, W, wx, wy, g, one):
    w00, w01, w10, w11 = _tap_weights(wx, wy, one)
    p = base + y0 * W + x0
    in_x0 = 0 <= x0 < W
    in_x1 = 0 <= x0 + 1 < W
    if 0 <= y0 < H:
        if in_x0:
            gdata[p] += g * w00
        if in_x1:
            gdata[p + 1] += g * w01
    if 0 <= y0 + 1 < H:
        if in_x0:
            gdata[p + W] += g * w10
        if in_x1:
            gdata[p + W + 1] += g * w11


def _sampler_views(data_shape, out_hw):
    n, c = int(data_shape[0]), int(data_shape[1])
    m = int(out_hw[0]) * int(out_hw[1])
    return math.prod(data_shape), (n, 2, m), (n, c, m)


def _prepare_bilinear_sampler(call):
    d, g = call.in_shapes
    size, gview, oview = _sampler_views(d, g[2:])
    s = st.sampler_scalars(call, d)
    return Launch(sampler_forward, s + (call.req[0],), views=[(size,), gview, oview])


def _prepare_bilinear_sampler_backward(call):
    og, d, g = call.in_shapes
    size, gview, oview = _sampler_views(d, g[2:])
    s = st.sampler_scalars(call, d)
    return Launch(sampler_backward, s + (call.req[0], call.req[1]),
                  views=[oview, (size,), gview, (size,), gview])


@njit(cache=True)
def st_forward(data, theta, out, grid, C, H, W, one, fh, fw, Wo, sx, sy, mone, req, req_grid):
    for n in range(out.shape[0]):
        for i in range(out.shape[2]):
            x, y = _dst_point(i, Wo, sx, sy, mone, theta)
            gx, gy = _affine_point(theta, n, x, y)
            if req_grid != REQ_NULL:
                grid[n, 0, i] = gx
                grid[n, 1, i] = gy
            if req != REQ_NULL:
                _sample_channels(data, out, n, i, gx, gy, C, H, W, one, fh, fw, False)


def _prepare_spatial_transformer(call):
    d = call.in_shapes[0]
    hw = call.attrs["target_shape"]
    size, gview, oview = _sampler_views(d, hw)
    s = st.sampler_scalars(call, d) + st.dst_scalars(call, hw)
    return Launch(st_forward, s + (call.req[0], call.req[1]),
                  views=[(size,), (int(d[0]) * 6,), oview, gview])


prepare_grid_generator = _half(_prepare_grid_generator)
prepare_grid_generator_backward = _half(_prepare_grid_generator_backward)
prepare_bilinear_sampler = _half(_prepare_bilinear_sampler)
prepare_bilinear_sampler_backward = _half(_prepare_bilinear_sampler_backward)
prepare_spatial_transformer = _half(_prepare_spatial_transformer)
