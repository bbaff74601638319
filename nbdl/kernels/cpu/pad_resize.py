"""CPU kernels for Pad and nearest UpSampling and their gradients.

Pad views 4-D/5-D data as (B, D, H, W) with B = N*C (4-D data has D = 1
and no D pad).  ``_source`` maps an output coordinate of one axis to the
input coordinate it reads (-1: the constant fill).  The backward pass
scatters each output gradient onto its source, so the loop over B is the
parallel one (planes never share a source).

UpSampling with several inputs is one generated driver per input count
(the executor calls ``fn(*inputs, out, *scalars)`` and numba functions
have fixed arity); each input is one call of ``_nearest_into``."""
import hashlib
import math

import numpy as np
from numba import prange

from ..shared.jit import njit

from ._parallel import serial_and_parallel, use_parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ...ops.pad_resize import bilinear_geometry, upsampling_plan
from ..shared.pad_resize import (build, pad_layout, py_bilinear_dw, py_bilinear_dx,
                                 py_nearest_sum)
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)


_s = build(njit(cache=True, inline="always"))
_source = _s.source
_pad_value = njit(cache=True, inline="always")(_s.pad_value)
_bilinear_at = njit(cache=True, inline="always")(_s.bilinear_at)
_nearest_sum = njit(cache=True, inline="always")(py_nearest_sum)
_bilinear_dx = njit(cache=True, inline="always")(py_bilinear_dx)
_bilinear_dw = njit(cache=True, inline="always")(py_bilinear_dw)


@njit(cache=True, inline="always")
def _pad_plane(x, out, b, pd, ph, pw, mode, value, add):
    for d in range(out.shape[1]):
        for h in range(out.shape[2]):
            for w in range(out.shape[3]):
                v = _pad_value(x, b, d, h, w, pd, ph, pw, mode, value)
                _put(out, (b, d, h, w), v, add)


def pad_forward(x, out, pd, ph, pw, mode, value, req):
    if req == REQ_NULL:
        return
    for b in prange(out.shape[0]):
        _pad_plane(x, out, b, pd, ph, pw, mode, value, req == REQ_ADD)


pad_forward, pad_forward_parallel = serial_and_parallel(pad_forward)


@njit(cache=True, inline="always")
def _unpad_plane(og, dx, b, pd, ph, pw, mode, add):
    if not add:
        for d in range(dx.shape[1]):
            for h in range(dx.shape[2]):
                for w in range(dx.shape[3]):
                    dx[b, d, h, w] = dx.dtype.type(0)
    for d in range(og.shape[1]):
        sd = _source(d, pd, dx.shape[1], mode)
        if sd < 0:
            continue
        for h in range(og.shape[2]):
            sh = _source(h, ph, dx.shape[2], mode)
            if sh < 0:
                continue
            for w in range(og.shape[3]):
                sw = _source(w, pw, dx.shape[3], mode)
                if sw >= 0:
                    dx[b, sd, sh, sw] += og[b, d, h, w]


def pad_backward(og, dx, pd, ph, pw, mode, req):
    if req == REQ_NULL:
        return
    for b in prange(dx.shape[0]):
        _unpad_plane(og, dx, b, pd, ph, pw, mode, req == REQ_ADD)


pad_backward, pad_backward_parallel = serial_and_parallel(pad_backward)


def _parallel(shape):
    return use_parallel(math.prod(shape))


def prepare_pad(call):
    view, pview, pads, mode = pad_layout(call.attrs, call.in_shapes[0])
    fn = pad_forward_parallel if _parallel(pview) else pad_forward
    value = np.dtype(call.out_dtypes[0]).type(call.attrs["constant_value"])
    return Launch(fn, pads + (mode, value, int(call.req[0])), views=[view, pview])


def prepare_pad_backward(call):
    view, pview, pads, mode = pad_layout(call.attrs, call.out_shapes[0])
    fn = pad_backward_parallel if _parallel(pview) else pad_backward
    return Launch(fn, pads + (mode, int(call.req[0])), views=[pview, view])


# -- UpSampling (nearest) -----------------------------------------------------------------------

@njit(cache=True)
def _nearest_into(x, out, c0, sh, sw, add):
    for r in range(x.shape[0] * x.shape[1]):
        n = r // x.shape[1]
        c = r - n * x.shape[1]
        for oy in range(out.shape[2]):
            iy = oy // sh
            for ox in range(out.shape[3]):
                v = x[n, c, iy, ox // sw]
                _put(out, (n, c0 + c, oy, ox), v, add)


@njit(cache=True)
def nearest_backward(og, dx, c0, sh, sw, req):
    """dx[n, c, y, x] = the sum of og over its (sh, sw) block in channel c0 + c."""
    if req == REQ_NULL:
        return
    for r in range(dx.shape[0] * dx.shape[1]):
        n = r // dx.shape[1]
        c = r - n * dx.shape[1]
        for iy in range(dx.shape[2]):
            for ix in range(dx.shape[3]):
                s = _nearest_sum(og, n, c, c0, iy, ix, sh, sw, dx.dtype.type(0))
                _put(dx, (n, c, iy, ix), s, req == REQ_ADD)


_DRIVER = '''
def {name}({xs}, out, {params}req):
    if req == REQ_NULL:
        return
{body}'''
_BACKWARD_DRIVER = '''
def {name}(og, {xs}, dx, c0, sh, sw, req):
    nearest_backward(og, dx, c0, sh, sw, req)
'''
_drivers = {}


def _compile(tag, template, **fields):
    """An ``@njit(cache=True)`` function from generated source, compiled with
    this file's name (Numba's cache needs one) and a name carrying the hash
    of its source, so an edited template gets a fresh cache entry."""
    src = template.format(name="KERNEL", **fields)
    name = f"{tag}_" + hashlib.sha1(src.encode()).hexdigest()[:12]
    ns = {"_nearest_into": _nearest_into, "nearest_backward": nearest_backward,
          "REQ_ADD": REQ_ADD, "REQ_NULL": REQ_NULL, "__name__": __name__}
    exec(compile(template.format(name=name, **fields), __file__, "exec"), ns)
    return njit(cache=True)(ns[name])


def nearest_driver(k, mode):
    """``fn(x0..x{k-1}, out, c0, sh0, sw0, ..., req)`` for k inputs."""
    key = ("forward", k, mode)
    fn = _drivers.get(key)
    if fn is None:
        body = "".join(
            f"    _nearest_into(x{i}, out, c{i}, sh{i}, sw{i}, "
            f"{'True' if mode == 'sum' and i else 'req == REQ_ADD'})\n" for i in range(k))
        fn = _drivers[key] = _compile(
            f"upsample_{mode}_{k}", _DRIVER, xs=", ".join(f"x{i}" for i in range(k)),
            params="".join(f"c{i}, sh{i}, sw{i}, " for i in range(k)), body=body)
    return fn


def nearest_backward_driver(k):
    """``fn(og, x0..x{k-1} (shapes only), dx, c0, sh, sw, req)``."""
    key = ("backward", k)
    fn = _drivers.get(key)
    if fn is None:
        fn = _drivers[key] = _compile(f"upsample_backward_{k}", _BACKWARD_DRIVER,
                                      xs=", ".join(f"x{i}" for i in range(k)))
    return fn


def prepare_upsampling(call):
    if call.attrs["sample_type"] == "bilinear":
        return _prepare_bilinear(call)
    _, plan = upsampling_plan(call.attrs, [tuple(s) for s in call.in_shapes])
    fn = nearest_driver(len(plan), call.attrs["multi_input_mode"])
    scalars = tuple(int(v) for p in plan for v in p)
    return Launch(fn, scalars + (int(call.req[0]),))


def prepare_upsampling_backward(call):
    _, plan = upsampling_plan(dict(call.attrs, sample_type="nearest"),
                              [tuple(s) for s in call.in_shapes[1:]])
    c0, sh, sw = plan[call.attrs["index"]]
    fn = nearest_backward_driver(len(plan))
    return Launch(fn, (c0, sh, sw, int(call.req[0])))


# -- UpSampling (bilinear): a depthwise transposed convolution, as a gather --------------------

@njit(cache=True, inline="always")
def _bilinear_plane(x, w, out, r, s, p, add):
    C = x.shape[1]
    n = r // C
    c = r - n * C
    for oy in range(out.shape[2]):
        for ox in range(out.shape[3]):
            acc = _bilinear_at(x, w, n, c, oy, ox, s, p, out.dtype.type(0))
            _put(out, (n, c, oy, ox), acc, add)


def bilinear_forward(x, w, out, s, p, req):
    if req == REQ_NULL:
        return
    for r in prange(x.shape[0] * x.shape[1]):
        _bilinear_plane(x, w, out, r, s, p, req == REQ_ADD)


bilinear_forward, bilinear_forward_parallel = serial_and_parallel(bilinear_forward)


@njit(cache=True)
def bilinear_backward(og, x, w, dx, dw, s, p, r_x, r_w):
    """dx = og correlated with w (stride s); dw[c, 0, ky, kx] = sum of og * x over its taps."""
    k = w.shape[2]
    zero = x.dtype.type(0)
    if r_x != REQ_NULL:
        for n in range(x.shape[0]):
            for c in range(x.shape[1]):
                for iy in range(x.shape[2]):
                    for ix in range(x.shape[3]):
                        acc = _bilinear_dx(og, w, n, c, iy, ix, s, p, zero)
                        _put(dx, (n, c, iy, ix), acc, r_x == REQ_ADD)
    if r_w != REQ_NULL:
        for c in range(x.shape[1]):
            for ky in range(k):
                for kx in range(k):
                    acc = _bilinear_dw(og, x, c, ky, kx, s, p, zero)
                    _put(dw, (c, 0, ky, kx), acc, r_w == REQ_ADD)


def _prepare_bilinear(call):
    _, s, p = bilinear_geometry(call.attrs["scale"])
    fn = bilinear_forward_parallel if _parallel(call.out_shapes[0]) else bilinear_forward
    return Launch(fn, (s, p, int(call.req[0])))


def prepare_bilinear_backward(call):
    _, s, p = bilinear_geometry(call.attrs["scale"])
    return Launch(bilinear_backward, (s, p) + tuple(int(r) for r in call.req))
