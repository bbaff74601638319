"""CPU kernels for _contrib_PSROIPooling, _contrib_DeformablePSROIPooling
(and their gradients) and _contrib_RROIAlign, over the math of
``nbdl.kernels.shared.roi_contrib``; float16 runs the float32 kernels on
mirrors."""
import math

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import roi_contrib as rc
from ..shared.half_mirror import with_half, with_half_prepare
from ._half import host_copy
from ..shared.store import py_add_at, py_put

_put = njit(cache=True, inline="always")(py_put)

temp_plain = with_half(None)


def _half(prepare):
    return with_half_prepare(prepare, None, host_copy)


@njit(cache=True)
def psroi_forward(data, rois, out, N, C, H, W, P, G, output_dim, scale, req):
    if req == REQ_NULL:
        return
    for r in range(out.shape[0]):
        for k in range(out.shape[1]):
            for ph in range(P):
                for pw in range(P):
                    v = rc.psroi_value(data, rois, r, k, ph, pw, N, C, H, W, P, G, scale)
                    _put(out, (r, k, ph, pw), v, req == REQ_ADD)


@njit(cache=True)
def psroi_backward(og, data, rois, gdata, N, C, H, W, P, G, output_dim, scale, req):
    if req == REQ_NULL:
        return
    t = gdata.dtype.type
    if req != REQ_ADD:
        gdata[:] = t(0)
    for r in range(og.shape[0]):
        for k in range(og.shape[1]):
            for ph in range(P):
                for pw in range(P):
                    base, h0, h1, w0, w1 = rc.psroi_bin(rois, r, k, ph, pw, N, C, H, W, P, G,
                                                        scale, gdata)
                    if base < 0:
                        continue
                    g = og[r, k, ph, pw] / t((h1 - h0) * (w1 - w0))
                    for h in range(h0, h1):
                        for w in range(w0, w1):
                            gdata[base + h * W + w] += g


def _prepare_psroi_pooling(call):
    s = rc.psroi_scalars(call, call.in_shapes[0])
    return Launch(psroi_forward, s + (call.req[0],),
                  views=[(math.prod(call.in_shapes[0]),), None, None])


def _prepare_psroi_pooling_backward(call):
    n = math.prod(call.in_shapes[1])
    s = rc.psroi_scalars(call, call.in_shapes[1])
    return Launch(psroi_backward, s + (call.req[0],), views=[None, (n,), None, (n,)])


@njit(cache=True)
def deformable_forward(data, rois, trans, out, N, C, H, W, P, G, output_dim, scale, K, S,
                       classes, trans_std, no_trans, req):
    if req == REQ_NULL:
        return
    for r in range(out.shape[0]):
        for k in range(out.shape[1]):
            for ph in range(P):
                for pw in range(P):
                    v, _ = rc.deformable_value(data, rois, trans, r, k, ph, pw, N, C, H, W, P,
                                               G, output_dim, scale, K, S, classes, trans_std,
                                               no_trans)
                    _put(out, (r, k, ph, pw), v, req == REQ_ADD)


_deformable_point = njit(cache=True, inline="always")(
    rc.build_deformable_backward(njit(cache=True, inline="always")(py_add_at)))


@njit(cache=True)
def deformable_backward(og, data, rois, trans, gdata, gtrans, N, C, H, W, P, G, output_dim,
                        scale, K, S, classes, trans_std, no_trans, req, req_trans):
    t = data.dtype.type
    if req != REQ_NULL and req != REQ_ADD:
        gdata[:] = t(0)
    if req_trans != REQ_NULL and req_trans != REQ_ADD:
        gtrans[:] = t(0)
    for r in range(og.shape[0]):
        for k in range(og.shape[1]):
            for ph in range(P):
                for pw in range(P):
                    _deformable_point(og, data, rois, trans, gdata, gtrans, r, k, ph, pw, N, C, H,
                                      W, P, G, output_dim, scale, K, S, classes, trans_std,
                                      no_trans, req, req_trans)


def _prepare_deformable_psroi_pooling(call):
    s, n, m = rc.deformable_parts(call, 0)
    if call.attrs["no_trans"]:
        return Launch(deformable_forward_no_trans, s + (call.req[0],),
                      views=[(n,), None, None])
    return Launch(deformable_forward, s + (call.req[0],), views=[(n,), None, (m,), None])


@njit(cache=True)
def deformable_forward_no_trans(data, rois, out, N, C, H, W, P, G, output_dim, scale, K, S,
                                classes, trans_std, no_trans, req):
    deformable_forward(data, rois, rois[0], out, N, C, H, W, P, G, output_dim, scale, K, S,
                       classes, trans_std, no_trans, req)


@njit(cache=True)
def deformable_backward_no_trans(og, data, rois, gdata, N, C, H, W, P, G, output_dim, scale,
                                 K, S, classes, trans_std, no_trans, req):
    deformable_backward(og, data, rois, rois[0], gdata, gdata[:0], N, C, H, W, P, G,
                        output_dim, scale, K, S, classes, trans_std, no_trans, req, REQ_NULL)


def _prepare_deformable_psroi_pooling_backward(call):
    s, n, m = rc.deformable_parts(call, 1)
    if call.attrs["no_trans"]:
        return Launch(deformable_backward_no_trans, s + (call.req[0],),
                      views=[None, (n,), None, (n,)])
    return Launch(deformable_backward, s + (call.req[0], call.req[1]),
                  views=[None, (n,), None, (m,), (n,), (m,)])


@njit(cache=True)
def rroi_forward(data, rois, out, N, C, H, W, PH, PW, scale, ratio, req):
    if req == REQ_NULL:
        return
    for r in range(out.shape[0]):
        for c in range(C):
            for ph in range(PH):
                for pw in range(PW):
                    v = rc.rroi_value(data, rois, r, c, ph, pw, N, C, H, W, PH, PW, scale, ratio)
                    _put(out, (r, c, ph, pw), v, req == REQ_ADD)


def _prepare_rroi_align(call):
    s = rc.rroi_scalars(call, call.in_shapes[0])
    return Launch(rroi_forward, s + (call.req[0],),
                  views=[(math.prod(call.in_shapes[0]),), None, None])


prepare_psroi_pooling = _half(_prepare_psroi_pooling)
prepare_psroi_pooling_backward = _half(_prepare_psroi_pooling_backward)
prepare_deformable_psroi_pooling = _half(_prepare_deformable_psroi_pooling)
prepare_deformable_psroi_pooling_backward = _half(_prepare_deformable_psroi_pooling_backward)
prepare_rroi_align = _half(_prepare_rroi_align)
