"""CUDA kernels for GridGenerator, BilinearSampler and SpatialTransformer and
their gradients (the per-point math of ``nbdl.kernels.shared.spatial_transformer``):
one thread per grid point (the sampler loops over the channels), one per
(batch, row) of an affine matrix gradient; the data gradient is zeroed
first, then added with atomics (sampling points share pixels).  float16 runs
the float32 kernels on mirrors."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import spatial_transformer as st
from ..shared.half_mirror import with_half, with_half_prepare
from ._half import device_copy
from ._launch import atomic_add, launcher, noop, zero

temp_plain = with_half(None)


def _half(prepare):
    return with_half_prepare(prepare, None, device_copy)


@cuda.jit
def _grid_affine(theta, out, W, sx, sy, mone, req):
    m = out.shape[2]
    for t in range(cuda.grid(1), out.shape[0] * m, cuda.gridsize(1)):
        st.affine_grid_point(theta, out, t // m, t % m, W, sx, sy, mone, req == REQ_ADD)


@cuda.jit
def _grid_affine_backward(og, gtheta, W, sx, sy, mone, req):
    for t in range(cuda.grid(1), og.shape[0] * 2, cuda.gridsize(1)):
        st.affine_theta_grads(og, gtheta, t // 2, t % 2, W, sx, sy, mone, req == REQ_ADD)


@cuda.jit
def _grid_warp(flow, out, W, dw, dh, forward, req):
    m = out.shape[2]
    for t in range(cuda.grid(1), out.shape[0] * m, cuda.gridsize(1)):
        st.warp_grid_point(flow, out, t // m, t % m, W, dw, dh, forward, req == REQ_ADD)


_GRID_KERNELS = {(False, True): _grid_affine, (True, True): _grid_affine_backward,
                 (False, False): _grid_warp, (True, False): _grid_warp}


def _prepare_grid(call, backward):
    kernel_key, scalars, views = st.grid_launch_args(call, backward)
    grid = views[0] if backward else views[1]
    work = grid[0] * 2 if kernel_key == (True, True) else grid[0] * grid[2]
    if call.req[0] == REQ_NULL or work == 0:
        return Launch(noop, (), views=views)
    return Launch(launcher(_GRID_KERNELS[kernel_key], work), scalars + (call.req[0],),
                  views=views)


@cuda.jit
def _sampler_forward(data, grid, out, C, H, W, one, fh, fw, req):
    m = out.shape[2]
    for t in range(cuda.grid(1), out.shape[0] * m, cuda.gridsize(1)):
        n = t // m
        i = t - n * m
        st.sample_channels(data, out, n, i, grid[n, 0, i], grid[n, 1, i], C, H, W, one, fh, fw,
                           req == REQ_ADD)


_sampler_point_backward = cuda.jit(device=True)(st.build_sampler_backward(atomic_add))


@cuda.jit
def _sampler_backward(og, data, grid, gdata, ggrid, C, H, W, one, fh, fw, req_data, req_grid):
    m = og.shape[2]
    for t in range(cuda.grid(1), og.shape[0] * m, cuda.gridsize(1)):
        n = t // m
        _sampler_point_backward(og, data, grid, gdata, ggrid, n, t - n * m, C, H, W, one, fh, fw,
                                req_data, req_grid)


def _prepare_bilinear_sampler(call):
    d, g = call.in_shapes
    size, gview, oview = st.sampler_views(d, g[2:])
    views = [(size,), gview, oview]
    work = gview[0] * gview[2]
    if call.req[0] == REQ_NULL or work == 0:
        return Launch(noop, (), views=views)
    return Launch(launcher(_sampler_forward, work),
                  st.sampler_scalars(call, d) + (call.req[0],), views=views)


def _prepare_bilinear_sampler_backward(call):
    og, d, g = call.in_shapes
    size, gview, oview = st.sampler_views(d, g[2:])
    views = [oview, (size,), gview, (size,), gview]
    req_data, req_grid = call.req
    scalars = st.sampler_scalars(call, d) + (req_data, req_grid)
    work = gview[0] * gview[2]
    run = launcher(_sampler_backward, max(work, 1))
    clear = req_data not in (REQ_NULL, REQ_ADD)

    def fn(og_, data, grid, gdata, ggrid):
        if clear:
            zero(gdata)
        if work:
            run(og_, data, grid, gdata, ggrid, *scalars)
    return Launch(fn, (), views=views)


@cuda.jit
def _st_forward(data, theta, out, grid, C, H, W, one, fh, fw, Wo, sx, sy, mone, req, req_grid):
    m = out.shape[2]
    for t in range(cuda.grid(1), out.shape[0] * m, cuda.gridsize(1)):
        st.transformer_point(data, theta, out, grid, t // m, t % m, C, H, W, one, fh, fw, Wo, sx,
                             sy, mone, req != REQ_NULL, req_grid != REQ_NULL)


def _prepare_spatial_transformer(call):
    d = call.in_shapes[0]
    hw = call.attrs["target_shape"]
    size, gview, oview = st.sampler_views(d, hw)
    views = [(size,), (int(d[0]) * 6,), oview, gview]
    work = gview[0] * gview[2]
    if work == 0 or (call.req[0] == REQ_NULL and call.req[1] == REQ_NULL):
        return Launch(noop, (), views=views)
    s = st.sampler_scalars(call, d) + st.dst_scalars(call, hw)
    return Launch(launcher(_st_forward, work), s + (call.req[0], call.req[1]), views=views)


prepare_grid_generator = _half(lambda call: _prepare_grid(call, False))
prepare_grid_generator_backward = _half(lambda call: _prepare_grid(call, True))
prepare_bilinear_sampler = _half(_prepare_bilinear_sampler)
prepare_bilinear_sampler_backward = _half(_prepare_bilinear_sampler_backward)
prepare_spatial_transformer = _half(_prepare_spatial_transformer)
