"""CPU kernels for _contrib_BilinearResize2D and its gradient over (N*C, H, W)
planes, the per-point math of ``nbdl.kernels.shared.bilinear_resize``
compiled here."""
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.bilinear_resize import build, resize_call
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)

_s = build(njit(cache=True, inline="always"))
_value_at = njit(cache=True, inline="always")(_s.value_at)
_scatter_plane = njit(cache=True, inline="always")(_s.scatter_plane)


@njit(cache=True)
def resize_forward(x, out, P, H, W, OH, OW, sh, sw, align, half, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    for p in range(P):
        for oh in range(OH):
            for ow in range(OW):
                v = _value_at(x, p, oh, ow, H, W, sh, sw, align, half)
                _put(out, (p, oh, ow), v, add)


@njit(cache=True)
def resize_forward_like(x, like, out, P, H, W, OH, OW, sh, sw, align, half, req):
    resize_forward(x, out, P, H, W, OH, OW, sh, sw, align, half, req)


@njit(cache=True)
def resize_backward(og, data, dx, P, H, W, OH, OW, sh, sw, align, half, req):
    if req == REQ_NULL:
        return
    for p in range(P):
        _scatter_plane(og, dx, p, H, W, OH, OW, sh, sw, align, half, req == REQ_ADD)


def prepare_resize(call):
    plan, xv, ov = resize_call(call, call.in_shapes[0], call.out_shapes[0])
    like = len(call.in_shapes) == 2
    views = [xv] + ([None] if like else []) + [ov]
    return Launch(resize_forward_like if like else resize_forward, plan + (call.req[0],),
                  views=views)


def prepare_resize_backward(call):
    plan, xv, ov = resize_call(call, call.in_shapes[1], call.in_shapes[0])
    return Launch(resize_backward, plan + (call.req[0],), views=[ov, xv, xv])
