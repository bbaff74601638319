"""CUDA kernels for GridGenerator, BilinearSampler and SpatialTransformer and
their gradients (the math of ``nbdl.kernels.shared.spatial_transformer`` as
device functions): one thread per grid point (the sampler loops over the
channels), one per (batch, row) of an affine matrix gradient; the data
gradient is zeroed first, then added with atomics (sampling points share
pixels).  float16 runs the float32 kernels on mirrors."""
import math

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import spatial_transformer as st
from ..shared.half_mirror import with_half, with_half_prepare
from ._half import device_copy
from ._launch import launcher

_dst_point = cuda.jit(device=True)(st.py_dst_point)
_affine_point = cuda.jit(device=True)(st.py_affine_point)
_taps = cuda.jit(device=True)(st.py_taps)
_corners = cuda.jit(device=True)(st.py_corners)
_blend = cuda.jit(device=True)(st.py_blend)
_blend_grads = cuda.jit(device=True)(st.py_blend_grads)
_tap_weights = cuda.jit(device=True)(st.py_tap_weights)

temp_plain = with_half(None)


def _half(prepare):
    return with_half_prepare(prepare, None, device_copy)


def _noop(*args):
    pass


@cuda.jit
def _zero(a, zero):
    for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        a[i] = zero


@cuda.jit
def _grid_affine(theta, out, W, sx, sy, mone, req):
    m = out.shape[2]
    for t in range(cuda.grid(1), out.shape[0] * m, cuda.gridsize(1)):
        n = t // m
        i = t - n * m
        x, y = _dst_point(i, W, sx, sy, mone, theta)
        gx, gy = _affine_point(theta, n, x, y)
        if req == REQ_ADD:
            out[n, 0, i] += gx
            out[n, 1, i] += gy
        else:
            out[n, 0, i] = gx
            out[n, 1, i] = gy


@cuda.jit
def _grid_affine_backward(og, gtheta, W, sx, sy, mone, req):
    zero = mone - mone
    for t in range(cuda.grid(1), og.shape[0] * 2, cuda.gridsize(1)):
        n = t // 2
        r = t - n * 2
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


@cuda.jit
def _grid_warp(flow, out, W, dw, dh, forward, req):
    one = dw / dw
    m = out.shape[2]
    for t in range(cuda.grid(1), out.shape[0] * m, cuda.gridsize(1)):
        n = t // m
        i = t - n * m
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


def _grid_launch(call, backward):
    a = call.attrs
    n = int(call.in_shapes[0][0])
    if a["transform_type"] == "affine":
        hw = a["target_shape"]
        view = (n, 2, int(hw[0]) * int(hw[1]))
        kernel = _grid_affine_backward if backward else _grid_affine
        return kernel, st.dst_scalars(call, hw), view, (n * 6,) if not backward else (n, 6)
    shape = call.in_shapes[0]
    view = (n, 2, int(shape[2]) * int(shape[3]))
    return _grid_warp, (int(shape[3]),) + st.warp_scalars(call, shape) + (not backward,), \
        view, view


def _prepare_grid_generator(call):
    kernel, scalars, view, data_view = _grid_launch(call, False)
    views = [data_view, view]
    if call.req[0] == REQ_NULL or view[0] * view[2] == 0:
        return Launch(_noop, (), views=views)
    return Launch(launcher(kernel, view[0] * view[2]), scalars + (call.req[0],), views=views)


def _prepare_grid_generator_backward(call):
    kernel, scalars, view, out_view = _grid_launch(call, True)
    views = [view, out_view]
    if call.req[0] == REQ_NULL or view[0] * view[2] == 0:
        return Launch(_noop, (), views=views)
    work = view[0] * 2 if kernel is _grid_affine_backward else view[0] * view[2]
    return Launch(launcher(kernel, work), scalars + (call.req[0],), views=views)


@cuda.jit(device=True)
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


@cuda.jit
def _sampler_forward(data, grid, out, C, H, W, one, fh, fw, req):
    m = out.shape[2]
    for t in range(cuda.grid(1), out.shape[0] * m, cuda.gridsize(1)):
        n = t // m
        i = t - n * m
        _sample_channels(data, out, n, i, grid[n, 0, i], grid[n, 1, i], C, H, W, one, fh, fw,
                         req == REQ_ADD)


@cuda.jit
def _sampler_backward(og, data, grid, gdata, ggrid, C, H, W, one, fh, fw, req_data, req_grid):
    zero = one - one
    m = og.shape[2]
    for t in range(cuda.grid(1), og.shape[0] * m, cuda.gridsize(1)):
        n = t // m
        i = t - n * m
        x0, y0, wx, wy = _taps(grid[n, 0, i], grid[n, 1, i], one, fh, fw)
        w00, w01, w10, w11 = _tap_weights(wx, wy, one)
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
                p = base + y0 * W + x0
                in_x0 = 0 <= x0 < W
                in_x1 = 0 <= x0 + 1 < W
                if 0 <= y0 < H:
                    if in_x0:
                        cuda.atomic.add(gdata, p, g * w00)
                    if in_x1:
                        cuda.atomic.add(gdata, p + 1, g * w01)
                if 0 <= y0 + 1 < H:
                    if in_x0:
                        cuda.atomic.add(gdata, p + W, g * w10)
                    if in_x1:
                        cuda.atomic.add(gdata, p + W + 1, g * w11)
        if req_grid == REQ_ADD:
            ggrid[n, 0, i] += gx
            ggrid[n, 1, i] += gy
        elif req_grid != REQ_NULL:
            ggrid[n, 0, i] = gx
            ggrid[n, 1, i] = gy


def _sampler_views(data_shape, out_hw):
    n, c = int(data_shape[0]), int(data_shape[1])
    m = int(out_hw[0]) * int(out_hw[1])
    return math.prod(data_shape), (n, 2, m), (n, c, m)


def _prepare_bilinear_sampler(call):
    d, g = call.in_shapes
    size, gview, oview = _sampler_views(d, g[2:])
    views = [(size,), gview, oview]
    work = gview[0] * gview[2]
    if call.req[0] == REQ_NULL or work == 0:
        return Launch(_noop, (), views=views)
    return Launch(launcher(_sampler_forward, work),
                  st.sampler_scalars(call, d) + (call.req[0],), views=views)


def _prepare_bilinear_sampler_backward(call):
    og, d, g = call.in_shapes
    size, gview, oview = _sampler_views(d, g[2:])
    views = [oview, (size,), gview, (size,), gview]
    req_data, req_grid = call.req
    scalars = st.sampler_scalars(call, d) + (req_data, req_grid)
    work = gview[0] * gview[2]
    zero_run = launcher(_zero, max(size, 1))
    run = launcher(_sampler_backward, max(work, 1))
    zero = scalars[3] - scalars[3]
    clear = req_data not in (REQ_NULL, REQ_ADD) and size > 0

    def fn(og_, data, grid, gdata, ggrid):
        if clear:
            zero_run(gdata, zero)
        if work:
            run(og_, data, grid, gdata, ggrid, *scalars)
    return Launch(fn, (), views=views)


@cuda.jit
def _st_forward(data, theta, out, grid, C, H, W, one, fh, fw, Wo, sx, sy, mone, req, req_grid):
    m = out.shape[2]
    for t in range(cuda.grid(1), out.shape[0] * m, cuda.gridsize(1)):
        n = t // m
        i = t - n * m
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
    views = [(size,), (int(d[0]) * 6,), oview, gview]
    work = gview[0] * gview[2]
    if work == 0 or (call.req[0] == REQ_NULL and call.req[1] == REQ_NULL):
        return Launch(_noop, (), views=views)
    s = st.sampler_scalars(call, d) + st.dst_scalars(call, hw)
    return Launch(launcher(_st_forward, work), s + (call.req[0], call.req[1]), views=views)


prepare_grid_generator = _half(_prepare_grid_generator)
prepare_grid_generator_backward = _half(_prepare_grid_generator_backward)
prepare_bilinear_sampler = _half(_prepare_bilinear_sampler)
prepare_bilinear_sampler_backward = _half(_prepare_bilinear_sampler_backward)
prepare_spatial_transformer = _half(_prepare_spatial_transformer)
