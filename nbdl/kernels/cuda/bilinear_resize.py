"""CUDA kernels for _contrib_BilinearResize2D (per-point math of
``nbdl.kernels.shared.bilinear_resize`` as device functions): one thread per
output forward, one per (n, c) plane for the scattering gradient."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.bilinear_resize import py_resize_point, py_resize_scatter, py_source, resize_plan
from ._launch import launcher

_source = cuda.jit(device=True)(py_source)
_point = cuda.jit(device=True)(py_resize_point)
_scatter = cuda.jit(device=True)(py_resize_scatter)


def _noop(*args):
    pass


@cuda.jit
def _forward(x, out, P, H, W, OH, OW, sh, sw, align, half, req):
    for t in range(cuda.grid(1), P * OH * OW, cuda.gridsize(1)):
        ow = t % OW
        r = t // OW
        oh = r % OH
        p = r // OH
        h1, hp, hl = _source(sh, oh, H, align, half)
        w1, wp, wl = _source(sw, ow, W, align, half)
        v = _point(x, p, h1, hp, hl, w1, wp, wl, half + half)
        if req == REQ_ADD:
            out[p, oh, ow] += v
        else:
            out[p, oh, ow] = v


@cuda.jit
def _backward(og, dx, P, H, W, OH, OW, sh, sw, align, half, req):
    for p in range(cuda.grid(1), P, cuda.gridsize(1)):
        if req != REQ_ADD:
            for i in range(H):
                for j in range(W):
                    dx[p, i, j] = half - half
        for oh in range(OH):
            for ow in range(OW):
                h1, hp, hl = _source(sh, oh, H, align, half)
                w1, wp, wl = _source(sw, ow, W, align, half)
                _scatter(og[p, oh, ow], dx, p, h1, hp, hl, w1, wp, wl, half + half)


def prepare_resize(call):
    plan = resize_plan(call.in_shapes[0], call.out_shapes[0], call.attrs["align_corners"],
                       call.out_dtypes[0])
    P, H, W, OH, OW = plan[:5]
    like = len(call.in_shapes) == 2
    views = [(P, H, W)] + ([None] if like else []) + [(P, OH, OW)]
    n = P * OH * OW
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    run = launcher(_forward, n)
    if not like:
        return Launch(run, plan + (call.req[0],), views=views)

    def fn(x, like_arr, out, *scalars):
        run(x, out, *scalars)
    return Launch(fn, plan + (call.req[0],), views=views)


def prepare_resize_backward(call):
    plan = resize_plan(call.in_shapes[1], call.in_shapes[0], call.attrs["align_corners"],
                       call.out_dtypes[0])
    P, H, W, OH, OW = plan[:5]
    views = [(P, OH, OW), (P, H, W), (P, H, W)]
    if P * H * W == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=views)
    run = launcher(_backward, P)

    def fn(og, data, dx, *scalars):
        run(og, dx, *scalars)
    return Launch(fn, plan + (call.req[0],), views=views)
