"""CPU kernels for _contrib_BilinearResize2D and its gradient over (N*C, H, W)
planes, the per-point math of ``nbdl.kernels.shared.bilinear_resize``
compiled here."""
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.bilinear_resize import py_resize_point, py_resize_scatter, py_source, resize_plan

_source = njit(cache=True, inline="always")(py_source)
_point = njit(cache=True, inline="always")(py_resize_point)
_scatter = njit(cache=True, inline="always")(py_resize_scatter)


@njit(cache=True)
def resize_forward(x, out, P, H, W, OH, OW, sh, sw, align, half, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    for p in range(P):
        for oh in range(OH):
            for ow in range(OW):
                h1, hp, hl = _source(sh, oh, H, align, half)
                w1, wp, wl = _source(sw, ow, W, align, half)
                v = _point(x, p, h1, hp, hl, w1, wp, wl, half + half)
                if add:
                    out[p, oh, ow] += v
                else:
                    out[p, oh, ow] = v


@njit(cache=True)
def resize_forward_like(x, like, out, P, H, W, OH, OW, sh, sw, align, half, req):
    resize_forward(x, out, P, H, W, OH, OW, sh, sw, align, half, req)


@njit(cache=True)
def resize_backward(og, data, dx, P, H, W, OH, OW, sh, sw, align, half, req):
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        dx[:] = half - half
    for p in range(P):
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
    return Launch(resize_forward_like if like else resize_forward, plan + (call.req[0],),
                  views=views)


def prepare_resize_backward(call):
    plan = resize_plan(call.in_shapes[1], call.in_shapes[0], call.attrs["align_corners"],
                       call.out_dtypes[0])
    P, H, W, OH, OW = plan[:5]
    return Launch(resize_backward, plan + (call.req[0],),
                  views=[(P, OH, OW), (P, H, W), (P, H, W)])
