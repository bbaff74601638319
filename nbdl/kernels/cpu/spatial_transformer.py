"""CPU kernels for GridGenerator, BilinearSampler and SpatialTransformer and
their gradients: loops over the grid points of the per-point math in
``nbdl.kernels.shared.spatial_transformer``.  Grids are viewed as (N, 2,
H*W), images as flat arrays; float16 runs the float32 kernels on mirrors
(``shared.half_mirror``)."""
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import spatial_transformer as st
from ..shared.half_mirror import with_half, with_half_prepare
from ._half import host_copy
from ..shared.store import py_add_at

temp_plain = with_half(None)


def _half(prepare):
    return with_half_prepare(prepare, None, host_copy)


@njit(cache=True)
def grid_affine(theta, out, W, sx, sy, mone, req):
    if req == REQ_NULL:
        return
    for n in range(out.shape[0]):
        for i in range(out.shape[2]):
            st.affine_grid_point(theta, out, n, i, W, sx, sy, mone, req == REQ_ADD)


@njit(cache=True)
def grid_affine_backward(og, gtheta, W, sx, sy, mone, req):
    if req == REQ_NULL:
        return
    for n in range(og.shape[0]):
        for r in range(2):
            st.affine_theta_grads(og, gtheta, n, r, W, sx, sy, mone, req == REQ_ADD)


@njit(cache=True)
def grid_warp(flow, out, W, dw, dh, forward, req):
    if req == REQ_NULL:
        return
    for n in range(out.shape[0]):
        for i in range(out.shape[2]):
            st.warp_grid_point(flow, out, n, i, W, dw, dh, forward, req == REQ_ADD)


_GRID_KERNELS = {(False, True): grid_affine, (True, True): grid_affine_backward,
                 (False, False): grid_warp, (True, False): grid_warp}


def _prepare_grid(call, backward):
    kernel_key, scalars, views = st.grid_launch_args(call, backward)
    return Launch(_GRID_KERNELS[kernel_key], scalars + (call.req[0],), views=views)


@njit(cache=True)
def sampler_forward(data, grid, out, C, H, W, one, fh, fw, req):
    if req == REQ_NULL:
        return
    for n in range(out.shape[0]):
        for i in range(out.shape[2]):
            st.sample_channels(data, out, n, i, grid[n, 0, i], grid[n, 1, i], C, H, W, one, fh,
                               fw, req == REQ_ADD)


_sampler_point_backward = njit(cache=True, inline="always")(
    st.build_sampler_backward(njit(cache=True, inline="always")(py_add_at)))


@njit(cache=True)
def sampler_backward(og, data, grid, gdata, ggrid, C, H, W, one, fh, fw, req_data, req_grid):
    if req_data != REQ_NULL and req_data != REQ_ADD:
        gdata[:] = one - one
    for n in range(og.shape[0]):
        for i in range(og.shape[2]):
            _sampler_point_backward(og, data, grid, gdata, ggrid, n, i, C, H, W, one, fh, fw,
                                    req_data, req_grid)


def _prepare_bilinear_sampler(call):
    d, g = call.in_shapes
    size, gview, oview = st.sampler_views(d, g[2:])
    s = st.sampler_scalars(call, d)
    return Launch(sampler_forward, s + (call.req[0],), views=[(size,), gview, oview])


def _prepare_bilinear_sampler_backward(call):
    og, d, g = call.in_shapes
    size, gview, oview = st.sampler_views(d, g[2:])
    s = st.sampler_scalars(call, d)
    return Launch(sampler_backward, s + (call.req[0], call.req[1]),
                  views=[oview, (size,), gview, (size,), gview])


@njit(cache=True)
def st_forward(data, theta, out, grid, C, H, W, one, fh, fw, Wo, sx, sy, mone, req, req_grid):
    for n in range(out.shape[0]):
        for i in range(out.shape[2]):
            st.transformer_point(data, theta, out, grid, n, i, C, H, W, one, fh, fw, Wo, sx, sy,
                                 mone, req != REQ_NULL, req_grid != REQ_NULL)


def _prepare_spatial_transformer(call):
    d = call.in_shapes[0]
    hw = call.attrs["target_shape"]
    size, gview, oview = st.sampler_views(d, hw)
    s = st.sampler_scalars(call, d) + st.dst_scalars(call, hw)
    return Launch(st_forward, s + (call.req[0], call.req[1]),
                  views=[(size,), (int(d[0]) * 6,), oview, gview])


prepare_grid_generator = _half(lambda call: _prepare_grid(call, False))
prepare_grid_generator_backward = _half(lambda call: _prepare_grid(call, True))
prepare_bilinear_sampler = _half(_prepare_bilinear_sampler)
prepare_bilinear_sampler_backward = _half(_prepare_bilinear_sampler_backward)
prepare_spatial_transformer = _half(_prepare_spatial_transformer)
