"""CPU kernels of _contrib_count_sketch and its data gradient over (rows,
d) data and (1, d) hashes."""
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.count_sketch import sketch_views
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)


@njit(cache=True)
def count_sketch(x, h, s, out, req):
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        out[:] = 0
    k = out.shape[1]
    for i in range(x.shape[1]):
        j = int(h[0, i])
        if 0 <= j < k:
            for n in range(x.shape[0]):
                out[n, j] += s[0, i] * x[n, i]


@njit(cache=True)
def count_sketch_backward(og, x, h, s, dx, req):
    if req == REQ_NULL:
        return
    k = og.shape[1]
    for i in range(dx.shape[1]):
        j = int(h[0, i])
        for n in range(dx.shape[0]):
            v = og[n, j] * s[0, i] if 0 <= j < k else og[n, 0] * 0
            _put(dx, (n, i), v, req == REQ_ADD)


def prepare_count_sketch(call):
    dv, ov = sketch_views(call.in_shapes[0], call.attrs["out_dim"])
    return Launch(count_sketch, (call.req[0],), views=[dv, None, None, ov])


def prepare_count_sketch_backward(call):
    dv, ov = sketch_views(call.in_shapes[1], call.attrs["out_dim"])
    return Launch(count_sketch_backward, (call.req[0],), views=[ov, dv, None, None, dv])
