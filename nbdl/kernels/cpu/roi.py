"""CPU kernels for ROIPooling and _contrib_ROIAlign and their gradients, the
per-bin math of ``nbdl.kernels.shared.roi`` compiled here."""
import math

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.roi import build, roi_align_scalars, roi_scalars
from ..shared.store import py_add_at, py_put

_put = njit(cache=True, inline="always")(py_put)

_s = build(njit(cache=True, inline="always"), njit(cache=True, inline="always")(py_add_at))
_pool_max = njit(cache=True, inline="always")(_s.pool_max)
_align_bin = njit(cache=True)(_s.align_value)
_align_scatter = njit(cache=True, inline="always")(_s.align_scatter)


@njit(cache=True)
def roi_pool_forward(x, rois, out, idx, N, C, H, W, PH, PW, scale, zero, w_out, w_idx):
    for r in range(out.shape[0]):
        for ph in range(PH):
            for pw in range(PW):
                for c in range(C):
                    best, arg = _pool_max(x, rois, r, c, ph, pw, N, C, H, W, PH, PW, scale, zero)
                    if w_out:
                        out[r, c, ph, pw] = best
                    if w_idx:
                        idx[r, c, ph, pw] = arg


@njit(cache=True)
def roi_pool_backward(og, data, idx, dx, req):
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        dx[:] = 0
    for i in range(og.size):
        j = idx[i]
        if j >= 0:
            dx[j] += og[i]


def prepare_roi_pooling(call):
    s = roi_scalars(call, call.in_shapes[0])
    n = s[0] * s[1] * s[2] * s[3]
    return Launch(roi_pool_forward, s + (call.req[0] != REQ_NULL, call.req[1] != REQ_NULL),
                  views=[(n,), None, None, None])


def prepare_roi_pooling_backward(call):
    n = math.prod(call.in_shapes[1])
    m = math.prod(call.in_shapes[0])
    return Launch(roi_pool_backward, (call.req[0],), views=[(m,), (n,), (m,), (n,)])


@njit(cache=True)
def roi_align_forward(x, rois, out, N, C_in, H, W, PH, PW, scale, zero, ratio, sens, offset,
                      req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    for r in range(out.shape[0]):
        for c in range(out.shape[1]):
            for ph in range(PH):
                for pw in range(PW):
                    v = _align_bin(x, rois, r, c, ph, pw, C_in, H, W, PH, PW, scale, offset,
                                   ratio, sens, zero)
                    _put(out, (r, c, ph, pw), v, add)


@njit(cache=True)
def roi_align_backward(og, data, rois, dx, N, C_in, H, W, PH, PW, scale, zero, ratio, sens,
                       offset, req):
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        dx[:] = zero
    for r in range(og.shape[0]):
        for c in range(og.shape[1]):
            for ph in range(PH):
                for pw in range(PW):
                    _align_scatter(og[r, c, ph, pw], dx, rois, r, c, ph, pw, C_in, H, W, PH,
                                   PW, scale, offset, ratio, sens)


def prepare_roi_align(call):
    s = roi_scalars(call, call.in_shapes[0])
    n = s[0] * s[1] * s[2] * s[3]
    return Launch(roi_align_forward, s + roi_align_scalars(call) + (call.req[0],),
                  views=[(n,), None, None])


def prepare_roi_align_backward(call):
    s = roi_scalars(call, call.in_shapes[1])
    n = s[0] * s[1] * s[2] * s[3]
    return Launch(roi_align_backward, s + roi_align_scalars(call) + (call.req[0],),
                  views=[None, (n,), None, (n,)])
