"""CUDA kernels for Convolution and Deconvolution, with the CPU kernels'
views (``img (N*G, Cg, D, H, W)``, ``cols (N*G, Fg, OD, OH, OW)``,
``w (G, Fg, Cg*KD*KH*KW)``; see ``nbdl.kernels.cpu.convolution``).  Two
roads (``_gemm_road``): im2col + GEMM (``conv_gemm.py``, two planned
scratch matrices) where the GEMMs go to cuBLAS, or direct convolution, one
thread per element, no scratch:

- ``_forward``: one thread per cols element, sums over the taps it reads;
- ``_data``: one thread per img element, gathers the taps that write it;
- ``_weight``: one thread per weight element, sums over batch and positions;
- ``_bias_grad``: one thread per channel.
"""
from functools import partial

import numpy as np
from numba import cuda

from ... import config
from ...ops.convolution import geometry
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.conv_epilogue import EP_RESIDUAL, epilogue_args, py_channel_affine, py_finish
from . import _cublas, conv_gemm
from ._launch import launcher
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

_affine = cuda.jit(device=True)(py_channel_affine)
_finish = cuda.jit(device=True)(py_finish)


@cuda.jit
def _forward(img, w, b, gamma, beta, mm, mv, res, cols, has_bias, has_bn, fix_gamma, eps, ep, req,
             one, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """cols (=|+=) the convolution, through the epilogue ``ep`` (bias, folded
    BatchNorm, residual ``res``, ReLU: ``shared/conv_epilogue``)."""
    n_items, fg, od_, oh_, ow_ = cols.shape
    cg, d_n, h_n, w_n = img.shape[1], img.shape[2], img.shape[3], img.shape[4]
    g_n = w.shape[0]
    zero = one - one
    total = n_items * fg * od_ * oh_ * ow_
    for idx in range(cuda.grid(1), total, cuda.gridsize(1)):
        r = idx
        ox = r % ow_
        r //= ow_
        oy = r % oh_
        r //= oh_
        oz = r % od_
        r //= od_
        f = r % fg
        i = r // fg
        g = i % g_n
        # a zero of the output's type, read from no array: a NaN in w[0, 0, 0]
        # (or in an output another thread is writing) must not reach every sum;
        # the bias is the epilogue's
        acc = zero
        for c in range(cg):
            for a in range(kd):
                z = oz * sd - pd + a * dd
                if z < 0 or z >= d_n:
                    continue
                for bb in range(kh):
                    y = oy * sh - ph + bb * dh
                    if y < 0 or y >= h_n:
                        continue
                    for e in range(kw):
                        x = ox * sw - pw + e * dw
                        if x < 0 or x >= w_n:
                            continue
                        acc += img[i, c, z, y, x] * w[g, f, ((c * kd + a) * kh + bb) * kw + e]
        if ep:
            s, t = _affine(g * fg + f, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps,
                           one)
            rv = res[i, f, oz, oy, ox] if ep & EP_RESIDUAL else zero
            acc = _finish(acc, s, t, rv, ep, zero)
        _put(cols, (i, f, oz, oy, ox), acc, req == REQ_ADD)


@cuda.jit
def _data(cols, w, b, img, has_bias, req, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    n_items, cg, d_n, h_n, w_n = img.shape
    fg, od_, oh_, ow_ = cols.shape[1], cols.shape[2], cols.shape[3], cols.shape[4]
    g_n = w.shape[0]
    total = n_items * cg * d_n * h_n * w_n
    for idx in range(cuda.grid(1), total, cuda.gridsize(1)):
        r = idx
        x = r % w_n
        r //= w_n
        y = r % h_n
        r //= h_n
        z = r % d_n
        r //= d_n
        c = r % cg
        i = r // cg
        g = i % g_n
        acc = img.dtype.type(0)
        if has_bias:
            acc = b[g * cg + c]
        for a in range(kd):
            tz = z + pd - a * dd
            if tz < 0 or tz % sd != 0 or tz // sd >= od_:
                continue
            oz = tz // sd
            for bb in range(kh):
                ty = y + ph - bb * dh
                if ty < 0 or ty % sh != 0 or ty // sh >= oh_:
                    continue
                oy = ty // sh
                for e in range(kw):
                    tx = x + pw - e * dw
                    if tx < 0 or tx % sw != 0 or tx // sw >= ow_:
                        continue
                    ox = tx // sw
                    k = ((c * kd + a) * kh + bb) * kw + e
                    for f in range(fg):
                        acc += cols[i, f, oz, oy, ox] * w[g, f, k]
        _put(img, (i, c, z, y, x), acc, req == REQ_ADD)


@cuda.jit
def _weight(img, cols, dwt, req, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    g_n, fg, ck = dwt.shape
    n_items, od_, oh_, ow_ = cols.shape[0], cols.shape[2], cols.shape[3], cols.shape[4]
    d_n, h_n, w_n = img.shape[2], img.shape[3], img.shape[4]
    kk = kd * kh * kw
    for idx in range(cuda.grid(1), g_n * fg * ck, cuda.gridsize(1)):
        k = idx % ck
        r = idx // ck
        f = r % fg
        g = r // fg
        c = k // kk
        t = k % kk
        a = t // (kh * kw)
        bb = (t // kw) % kh
        e = t % kw
        acc = dwt.dtype.type(0)
        for i in range(g, n_items, g_n):
            for oz in range(od_):
                z = oz * sd - pd + a * dd
                if z < 0 or z >= d_n:
                    continue
                for oy in range(oh_):
                    y = oy * sh - ph + bb * dh
                    if y < 0 or y >= h_n:
                        continue
                    for ox in range(ow_):
                        x = ox * sw - pw + e * dw
                        if x < 0 or x >= w_n:
                            continue
                        acc += cols[i, f, oz, oy, ox] * img[i, c, z, y, x]
        _put(dwt, (g, f, k), acc, req == REQ_ADD)


@cuda.jit
def _bias_grad(a, db, g_n, req):
    n_items, fg = a.shape[0], a.shape[1]
    for ch in range(cuda.grid(1), db.shape[0], cuda.gridsize(1)):
        g = ch // fg
        f = ch % fg
        acc = db.dtype.type(0)
        for i in range(g, n_items, g_n):
            for z in range(a.shape[2]):
                for y in range(a.shape[3]):
                    for x in range(a.shape[4]):
                        acc += a[i, f, z, y, x]
        _put(db, ch, acc, req == REQ_ADD)


def _size(shape):
    return int(np.prod(shape))


def _geom(call, backward, transposed):
    geom = geometry(call.attrs, call.in_shapes[1] if backward else call.in_shapes[0], transposed)
    scal = tuple(int(v) for v in geom["k3"] + geom["s3"] + geom["p3"] + geom["d3"])
    return geom, scal


def _gemm_road(geom, dtype):
    """Whether this convolution runs as im2col + GEMM (``conv_gemm``) rather
    than the direct kernels (``NBDL_CUDA_CONV``, ``nbdl.config.cuda_conv``)."""
    mode = config.cuda_conv()
    if mode == "direct" or conv_gemm.zero_sized(geom) or np.dtype(dtype).char not in "fd":
        return False
    if mode == "gemm":
        return True
    return (_cublas.cupy_for_gemm() is not None and geom["G"] <= 32
            and geom["cols"][1] * geom["ck"] >= 256)


def _temps(call, backward, transposed):
    geom, _ = _geom(call, backward, transposed)
    dt = call.out_dtypes[0]
    return conv_gemm.scratch(geom, dt) if _road_for(call, geom, dt) else []


def _road_for(call, geom, dtype):
    """``_gemm_road``, except for ``_nbdl_fused_conv``: its BatchNorm,
    residual and ReLU are applied in the direct kernel's output loop only."""
    return call.op.name != "_nbdl_fused_conv" and _gemm_road(geom, dtype)


def _prepare_forward(call, transposed):
    geom, scal = _geom(call, False, transposed)
    if not transposed:
        return _conv_forward(call, geom, scal)
    has_bias = not call.attrs["no_bias"]
    req = call.req[0]
    img, cols, w = geom["img"], geom["cols"], geom["w"]
    road = conv_gemm.Road(geom, call.out_dtypes[0]) if _gemm_road(geom, call.out_dtypes[0]) else None
    run = launcher(_data, _size(img)) if _size(img) else None

    def fn(x, wt, *rest):
        b, y = (rest[0], rest[1]) if has_bias else (wt[0, 0, :1], rest[0])
        if run is None or req == REQ_NULL:
            return
        if road is None:
            run(x, wt, b, y, has_bias, req, *scal)
        else:
            road.to_img(x, wt, b, y, has_bias, req, *rest[-2:])
    views = [cols, w] + ([None] if has_bias else []) + [img] + [None] * (2 if road else 0)
    return Launch(fn, (), views=views)


def _conv_forward(call, geom, scal):
    """Convolution's forward and ``_nbdl_fused_conv``'s: one kernel, absent
    inputs as empty stand-ins (``epilogue_args``)."""
    n_in, names, pick, flags = epilogue_args(call, 5)
    req = call.req[0]
    cols = geom["cols"]
    dt = call.out_dtypes[0]
    road = conv_gemm.Road(geom, dt) if _road_for(call, geom, dt) else None
    run = launcher(_forward, _size(cols)) if _size(cols) else None
    one = np.dtype(dt).type(1)
    has_bias = bool(flags[0])

    def fn(x, wt, b, gamma, beta, mm, mv, res, y, *temps):
        if run is None or req == REQ_NULL:
            return
        if road is None:
            run(x, wt, b, gamma, beta, mm, mv, res, y, *flags, req, one, *scal)
        else:
            road.to_cols(x, wt, b if has_bias else wt[0, 0, :1], y, has_bias, req, *temps)
    shapes = {"data": geom["img"], "weight": geom["w"], "sum": cols}
    views = [shapes.get(n) for n in names] + [cols] + [None] * (2 if road else 0)
    return Launch(fn, (), views=views, args=tuple(pick) + tuple(range(n_in, len(views))))


def _prepare_backward(call, transposed):
    geom, scal = _geom(call, True, transposed)
    has_bias = not call.attrs["no_bias"]
    reqs = list(call.req) + [REQ_NULL] * (3 - len(call.req))
    r_x, r_w, r_b = reqs
    img, cols, w = geom["img"], geom["cols"], geom["w"]
    x_view, og_view = (cols, img) if transposed else (img, cols)
    g_n = w[0]
    road = conv_gemm.Road(geom, call.out_dtypes[0]) if _gemm_road(geom, call.out_dtypes[0]) else None
    run_x = launcher(_forward if transposed else _data, _size(x_view)) if _size(x_view) else None
    run_w = launcher(_weight, _size(w)) if _size(w) else None
    run_b = launcher(_bias_grad, w[0] * (img[1] if transposed else cols[1]))
    one = np.dtype(call.out_dtypes[0]).type(1)

    def fn(og, x, wt, dx, dwt, *rest):
        db = rest[0] if has_bias else None
        nob = wt[0, 0, :1]
        scratch = rest[-2:] if road is not None else ()
        if r_x != REQ_NULL and run_x is not None:
            if road is None and transposed:   # a convolution of out_grad, no epilogue
                run_x(og, wt, nob, nob, nob, nob, nob, dx, dx, 0, 0, 0, one - one, 0, r_x, one,
                      *scal)
            elif road is None:
                run_x(og, wt, nob, dx, False, r_x, *scal)
            elif transposed:        # the data gradient of a deconvolution runs towards cols
                road.to_cols(og, wt, nob, dx, False, r_x, *scratch)
            else:
                road.to_img(og, wt, nob, dx, False, r_x, *scratch)
        if r_w != REQ_NULL and run_w is not None:
            img_side, cols_side = (og, x) if transposed else (x, og)
            if road is None:
                run_w(img_side, cols_side, dwt, r_w, *scal)
            else:
                road.weight_grad(img_side, cols_side, dwt, r_w, *scratch)
        if has_bias and r_b != REQ_NULL:
            run_b(og, db, g_n, r_b)
    views = ([og_view, x_view, w, x_view, w] + ([None] if has_bias else [])
             + [None] * (2 if road else 0))
    return Launch(fn, (), views=views)


temp_convolution = partial(_temps, backward=False, transposed=False)
temp_deconvolution = partial(_temps, backward=False, transposed=True)
temp_convolution_backward = partial(_temps, backward=True, transposed=False)
temp_deconvolution_backward = partial(_temps, backward=True, transposed=True)


prepare_convolution = partial(_prepare_forward, transposed=False)
prepare_deconvolution = partial(_prepare_forward, transposed=True)
prepare_fused_convolution = partial(_prepare_forward, transposed=False)
prepare_convolution_backward = partial(_prepare_backward, transposed=False)
prepare_deconvolution_backward = partial(_prepare_backward, transposed=True)
