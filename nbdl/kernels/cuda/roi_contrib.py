"""CUDA kernels for _contrib_PSROIPooling, _contrib_DeformablePSROIPooling
(and their gradients) and _contrib_RROIAlign, over the math of
``nbdl.kernels.shared.roi_contrib``: one thread per output element; the
gradients zero their outputs, then add with atomics (bins of different rois
overlap).  float16 runs the float32 kernels on mirrors."""
import math

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import roi_contrib as rc
from ..shared.half_mirror import with_half, with_half_prepare
from ._half import device_copy
from ._launch import atomic_add, launcher, noop, zero
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

temp_plain = with_half(None)


def _half(prepare):
    return with_half_prepare(prepare, None, device_copy)


@cuda.jit(device=True)
def _unravel(t, K2, PH, PW):
    pw = t % PW
    ph = (t // PW) % PH
    k = (t // (PW * PH)) % K2
    return t // (PW * PH * K2), k, ph, pw


@cuda.jit(device=True)
def _store(out, r, k, ph, pw, v, req):
    _put(out, (r, k, ph, pw), v, req == REQ_ADD)


@cuda.jit
def _psroi_forward(data, rois, out, N, C, H, W, P, G, output_dim, scale, req):
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        r, k, ph, pw = _unravel(t, out.shape[1], P, P)
        v = rc.psroi_value(data, rois, r, k, ph, pw, N, C, H, W, P, G, scale)
        _store(out, r, k, ph, pw, v, req)


@cuda.jit
def _psroi_backward(og, rois, gdata, N, C, H, W, P, G, output_dim, scale):
    for t in range(cuda.grid(1), og.size, cuda.gridsize(1)):
        r, k, ph, pw = _unravel(t, og.shape[1], P, P)
        base, h0, h1, w0, w1 = rc.psroi_bin(rois, r, k, ph, pw, N, C, H, W, P, G, scale, gdata)
        if base < 0:
            continue
        g = og[r, k, ph, pw] / gdata.dtype.type((h1 - h0) * (w1 - w0))
        for h in range(h0, h1):
            for w in range(w0, w1):
                cuda.atomic.add(gdata, base + h * W + w, g)


def _forward_launch(kernel, call, scalars, views):
    m = math.prod(call.out_shapes[0])
    if m == 0 or call.req[0] == REQ_NULL:
        return Launch(noop, (), views=views)
    return Launch(launcher(kernel, m), scalars + (call.req[0],), views=views)


def _prepare_psroi_pooling(call):
    return _forward_launch(_psroi_forward, call, rc.psroi_scalars(call, call.in_shapes[0]),
                           [(math.prod(call.in_shapes[0]),), None, None])


def _prepare_psroi_pooling_backward(call):
    n = math.prod(call.in_shapes[1])
    m = math.prod(call.in_shapes[0])
    views = [None, (n,), None, (n,)]
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(noop, (), views=views)
    scalars = rc.psroi_scalars(call, call.in_shapes[1])
    run = launcher(_psroi_backward, max(m, 1))
    add = call.req[0] == REQ_ADD

    def fn(og, data, rois, gdata):
        if not add:
            zero(gdata)
        if m:
            run(og, rois, gdata, *scalars)
    return Launch(fn, (), views=views)


@cuda.jit
def _deformable_forward(data, rois, trans, out, N, C, H, W, P, G, output_dim, scale, K, S,
                        classes, trans_std, no_trans, req):
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        r, k, ph, pw = _unravel(t, out.shape[1], P, P)
        v, _ = rc.deformable_value(data, rois, trans, r, k, ph, pw, N, C, H, W, P, G, output_dim,
                                   scale, K, S, classes, trans_std, no_trans)
        _store(out, r, k, ph, pw, v, req)


_deformable_point = cuda.jit(device=True)(rc.build_deformable_backward(atomic_add))


@cuda.jit
def _deformable_backward(og, data, rois, trans, gdata, gtrans, N, C, H, W, P, G, output_dim,
                         scale, K, S, classes, trans_std, no_trans, req, req_trans):
    for t in range(cuda.grid(1), og.size, cuda.gridsize(1)):
        r, k, ph, pw = _unravel(t, og.shape[1], P, P)
        _deformable_point(og, data, rois, trans, gdata, gtrans, r, k, ph, pw, N, C, H, W, P, G,
                          output_dim, scale, K, S, classes, trans_std, no_trans, req, req_trans)


def _prepare_deformable_psroi_pooling(call):
    s, n, m = rc.deformable_parts(call, 0)
    if not call.attrs["no_trans"]:
        return _forward_launch(_deformable_forward, call, s, [(n,), None, (m,), None])
    fwd = _forward_launch(_deformable_forward, call, s, [(n,), None, None])
    if fwd.fn is noop:
        return fwd

    def fn(data, rois, out, *scalars):
        fwd.fn(data, rois, rois[0], out, *scalars)
    return Launch(fn, fwd.scalars, views=fwd.views)


def _prepare_deformable_psroi_pooling_backward(call):
    s, n, m = rc.deformable_parts(call, 1)
    no_trans = call.attrs["no_trans"]
    req = call.req[0]
    req_trans = REQ_NULL if no_trans else call.req[1]
    views = [None, (n,), None] + ([] if no_trans else [(m,)]) + [(n,)] + \
        ([] if no_trans else [(m,)])
    work = math.prod(call.in_shapes[0])
    run = launcher(_deformable_backward, max(work, 1))

    def fn(og, data, rois, *rest):
        if no_trans:
            trans, gdata, gtrans = rois[0], rest[0], rest[0][:0]
        else:
            trans, gdata, gtrans = rest
        if req not in (REQ_NULL, REQ_ADD):
            zero(gdata)
        if req_trans not in (REQ_NULL, REQ_ADD):
            zero(gtrans)
        if work and n and (req != REQ_NULL or req_trans != REQ_NULL):
            run(og, data, rois, trans, gdata, gtrans, *s, req, req_trans)
    return Launch(fn, (), views=views)


@cuda.jit
def _rroi_forward(data, rois, out, N, C, H, W, PH, PW, scale, ratio, req):
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        r, c, ph, pw = _unravel(t, C, PH, PW)
        v = rc.rroi_value(data, rois, r, c, ph, pw, N, C, H, W, PH, PW, scale, ratio)
        _store(out, r, c, ph, pw, v, req)


def _prepare_rroi_align(call):
    return _forward_launch(_rroi_forward, call, rc.rroi_scalars(call, call.in_shapes[0]),
                           [(math.prod(call.in_shapes[0]),), None, None])


prepare_psroi_pooling = _half(_prepare_psroi_pooling)
prepare_psroi_pooling_backward = _half(_prepare_psroi_pooling_backward)
prepare_deformable_psroi_pooling = _half(_prepare_deformable_psroi_pooling)
prepare_deformable_psroi_pooling_backward = _half(_prepare_deformable_psroi_pooling_backward)
prepare_rroi_align = _half(_prepare_rroi_align)
