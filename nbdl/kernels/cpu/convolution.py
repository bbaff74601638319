"""CPU kernels for Convolution and Deconvolution (views from
``nbdl.ops.convolution.geometry``: every rank is 3-D, channels split by group;
item ``i = n*G + g`` is sample ``n``'s group ``g``; ``P = OD*OH*OW`` columns
an image, ``CK = Cg*KD*KH*KW`` rows).

Three primitives, all through BLAS (``_gemm.gemm``), each on a *block* of
``nb`` samples at a time (one group ``g`` per GEMM):

- forward:  ``cols[blk] = w_g . im2col(img[blk])``       (Fg, nb*P) = (Fg, CK) (CK, nb*P)
- data:     ``img[blk] += col2im(w_g^T . cols[blk])``
- weight:   ``dw_g += cols[blk] . im2col(img[blk])^T``   one GEMM with K = nb*P

A block's columns lie side by side in one buffer (sample ``j`` of the block
at columns ``[j*P, (j+1)*P)``), so small images (an 8x8 output is 64
columns) still make GEMMs of hundreds of columns, and a block's weight
gradient is one GEMM accumulating into ``dw`` (``beta = 1``), not a GEMM and
a sum per image.  The cols side of a block is gathered into (or the GEMM
result scattered from) a second buffer of ``Fg x nb*P``, fused with the bias
and ``REQ_ADD``.  A block of one sample uses the arrays themselves (``beta``
honours ``REQ_ADD``), and a 1x1 kernel with stride 1 and no pad skips im2col
(the image *is* the columns).  A large image is cut into *tiles* of output
positions instead (a block of one sample, positions ``[qa, qb)``), so that a
block's columns stay in cache until its GEMM reads them.

im2col and col2im go through a table, built once a call, of the source
offset of every (kernel tap, output position) in an image channel (-1 in
the padding): one gather/scatter loop a channel, with no per-row bounds
arithmetic (several times faster on small images).  Kernel taps that read
only padding for every output (all but the centre of a padded 3x3 kernel on
a 1x1 image: ResNet's last stage on 32x32 inputs) are left out of the
table, and the weights are compacted to the kept taps at the start of the
call (their gradient spread back, zero for the others), so the GEMMs skip
the multiplications by padding.

Convolution is forward (img = data); its gradient is weight then data (one
gathered block of out_grad serves both).  Deconvolution's forward is the
data primitive (cols = data, img = output); its backward takes the im2col of
out_grad once per block for its data gradient (the forward primitive) and
its weight gradient (cols = data).

The variant (``mode``) and the scratch are chosen by ``conv_plan``; the
column-side loops live in ``conv_im2col`` and the GEMM blocks in
``conv_blocks``.
"""
from functools import partial

from numba import prange

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, Launch
from ...ops.convolution import geometry
from ._parallel import twins as _twins
from ._blas_threads import blas_get_threads, blas_set_threads, hold_blas, hold_for, release_blas
from .conv_blocks import (_conv_backward_range, _conv_backward_split, _data_range, _data_split,
                          _deconv_backward_range, _deconv_backward_split, _forward_range,
                          _forward_split, _forward_tiles, _slice)
from .conv_im2col import (_add_bias, _add_bias_par, _bias_grad, _bias_grad_par, _finish_weight,
                          _finish_weight_par, _flat3, _setup)
from ..shared.conv_epilogue import epilogue_args
from .conv_depthwise import dw_forward, dw_forward_parallel
from .conv_epilogue import fold
from .conv_plan import (SERIAL, SPLIT, TILES, _geom_scalars, cpu_plan, depthwise_threads,
                        is_depthwise, is_direct, winograd_plan)
from .conv_winograd import wino_forward, wino_forward_parallel


@njit(cache=True)
def conv_forward(img, w, b, gamma, beta, mm, mv, res, cols, col, buf, tbl, wsc, st, has_bias,
                 has_bn, fix_gamma, eps, ep, req, direct, mode, nt, bs, tile, hold,
                 kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """cols (=|+=) w . im2col(img), through the epilogue ``ep`` (``conv_epilogue``:
    bias, a folded inference BatchNorm, the residual ``res``, ReLU);
    ``mode``/``nt``/``bs`` from ``plan``."""
    if req == REQ_NULL:
        return
    wk, k, kv, p = _setup(img, cols, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    fold(st, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps, ep)
    n = img.shape[0] // w.shape[0]
    prev = hold_blas(hold)
    _forward_range(0, n, bs, tile, _flat3(img), wk, st, _flat3(res), _flat3(cols), col[0],
                   buf[0], ep, req == REQ_ADD, direct, tbl, kv, p)
    release_blas(prev)


@njit(cache=True, parallel=True)
def conv_forward_parallel(img, w, b, gamma, beta, mm, mv, res, cols, col, buf, tbl, wsc, st,
                          has_bias, has_bn, fix_gamma, eps, ep, req, direct, mode, nt, bs, tile,
                          hold, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    if req == REQ_NULL:
        return
    wk, k, kv, p = _setup(img, cols, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    fold(st, b, gamma, beta, mm, mv, has_bias, has_bn, fix_gamma, eps, ep)
    n = img.shape[0] // w.shape[0]
    img3, out3, r3, add = _flat3(img), _flat3(cols), _flat3(res), req == REQ_ADD
    saved = blas_get_threads()
    blas_set_threads(1)
    if mode == SPLIT:
        _forward_split(nt, bs, img3, wk, st, r3, out3, col[0], buf[0], ep, add, direct, tbl,
                       kv, p)
    elif mode == TILES:
        items = n * (-(-p // tile))
        for t in prange(nt):
            lo, hi = _slice(items, t, nt)
            _forward_tiles(lo, hi, tile, img3, wk, st, r3, out3, col[t], ep, add, direct, tbl,
                           kv, p)
    else:
        for t in prange(nt):
            lo, hi = _slice(n, t, nt)
            _forward_range(lo, hi, bs, tile, img3, wk, st, r3, out3, col[t], buf[t], ep, add,
                           direct, tbl, kv, p)
    blas_set_threads(saved)


@njit(cache=True)
def conv_backward(og, img, w, dimg, dw_, db, col, part, buf, tbl, wsc, r_img, r_w, r_b,
                  has_bias, direct, mode, nt, bs, tile, hold,
                  kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """Convolution's gradients: og is the cols side, img the data."""
    wk, k, kv, p = _setup(img, og, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = img.shape[0] // w.shape[0]
    og3 = _flat3(og)
    compact = kv < k
    if r_w == REQ_WRITE and n == 0:
        dw_[:] = 0
    if r_w != REQ_NULL or r_img != REQ_NULL:
        prev = hold_blas(hold)
        _conv_backward_range(0, n, bs, tile, og3, _flat3(img), wk, _flat3(dimg),
                             wsc[1] if compact else dw_, col[0], buf[0], r_img, r_w,
                             r_w == REQ_ADD and not compact, direct, tbl, kv, p)
        release_blas(prev)
        if compact and r_w != REQ_NULL and n > 0:
            _finish_weight(wsc[1:2], dw_, tbl, k, kv, p, r_w == REQ_ADD)
    if has_bias and r_b != REQ_NULL:
        _bias_grad(og3, db, w.shape[0], r_b)


@njit(cache=True, parallel=True)
def conv_backward_parallel(og, img, w, dimg, dw_, db, col, part, buf, tbl, wsc, r_img, r_w, r_b,
                           has_bias, direct, mode, nt, bs, tile, hold,
                           kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    wk, k, kv, p = _setup(img, og, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = img.shape[0] // w.shape[0]
    og3, img3, dimg3 = _flat3(og), _flat3(img), _flat3(dimg)
    compact = kv < k
    if r_w == REQ_WRITE and n == 0:
        dw_[:] = 0
    if r_w != REQ_NULL or r_img != REQ_NULL:
        saved = blas_get_threads()
        blas_set_threads(1)
        if mode == SPLIT:
            _conv_backward_split(nt, bs, og3, img3, wk, dimg3, wsc[1] if compact else dw_,
                                 col[0], buf[0], r_img, r_w, r_w == REQ_ADD and not compact,
                                 direct, tbl, kv, p)
        else:
            for t in prange(nt):
                lo, hi = _slice(n, t, nt)
                if r_w != REQ_NULL and hi == lo:
                    part[t] = 0
                _conv_backward_range(lo, hi, bs, tile, og3, img3, wk, dimg3,
                                     part[t] if r_w != REQ_NULL else dw_, col[t], buf[t],
                                     r_img, r_w, False, direct, tbl, kv, p)
        blas_set_threads(saved)
        if r_w != REQ_NULL and n > 0:
            if mode != SPLIT:
                _finish_weight_par(part, dw_, tbl, k, kv, p, r_w == REQ_ADD)
            elif compact:
                _finish_weight_par(wsc[1:2], dw_, tbl, k, kv, p, r_w == REQ_ADD)
    if has_bias and r_b != REQ_NULL:
        _bias_grad_par(og3, db, w.shape[0], r_b)


@njit(cache=True)
def deconv_forward(x, w, b, out, col, buf, tbl, wsc, has_bias, req, direct, mode, nt, bs, tile, hold,
                   kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """Deconvolution: x is the cols side, out the img side."""
    if req == REQ_NULL:
        return
    wk, k, kv, p = _setup(out, x, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = out.shape[0] // w.shape[0]
    out3 = _flat3(out)
    prev = hold_blas(hold)
    _data_range(0, n, bs, tile, _flat3(x), wk, out3, col[0], buf[0], req == REQ_ADD, direct, tbl, kv,
                p)
    release_blas(prev)
    if has_bias:
        _add_bias(out3, b, w.shape[0])


@njit(cache=True, parallel=True)
def deconv_forward_parallel(x, w, b, out, col, buf, tbl, wsc, has_bias, req, direct, mode, nt,
                            bs, tile, hold, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    if req == REQ_NULL:
        return
    wk, k, kv, p = _setup(out, x, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = out.shape[0] // w.shape[0]
    x3, out3, add = _flat3(x), _flat3(out), req == REQ_ADD
    saved = blas_get_threads()
    blas_set_threads(1)
    if mode == SPLIT:
        _data_split(nt, bs, x3, wk, out3, col[0], buf[0], add, direct, tbl, kv, p)
    else:
        for t in prange(nt):
            lo, hi = _slice(n, t, nt)
            _data_range(lo, hi, bs, tile, x3, wk, out3, col[t], buf[t], add, direct, tbl, kv, p)
    blas_set_threads(saved)
    if has_bias:
        _add_bias_par(out3, b, w.shape[0])


@njit(cache=True)
def deconv_backward(og, x, w, dx, dw_, db, col, part, buf, tbl, wsc, r_x, r_w, r_b, has_bias,
                    direct, mode, nt, bs, tile, hold, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """Deconvolution's gradients: og is the img side, x (the data) the cols side."""
    wk, k, kv, p = _setup(og, x, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = x.shape[0] // w.shape[0]
    og3 = _flat3(og)
    compact = kv < k
    if r_w == REQ_WRITE and n == 0:
        dw_[:] = 0
    if r_x != REQ_NULL or r_w != REQ_NULL:
        prev = hold_blas(hold)
        _deconv_backward_range(0, n, bs, tile, og3, _flat3(x), wk, _flat3(dx),
                               wsc[1] if compact else dw_, col[0], buf[0], r_x, r_w,
                               r_w == REQ_ADD and not compact, direct, tbl, kv, p)
        release_blas(prev)
        if compact and r_w != REQ_NULL and n > 0:
            _finish_weight(wsc[1:2], dw_, tbl, k, kv, p, r_w == REQ_ADD)
    if has_bias and r_b != REQ_NULL:
        _bias_grad(og3, db, w.shape[0], r_b)


@njit(cache=True, parallel=True)
def deconv_backward_parallel(og, x, w, dx, dw_, db, col, part, buf, tbl, wsc, r_x, r_w, r_b,
                             has_bias, direct, mode, nt, bs, tile, hold,
                             kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    wk, k, kv, p = _setup(og, x, w, tbl, wsc, direct, kd, kh, kw, sd, sh, sw, pd, ph, pw,
                          dd, dh, dw)
    n = x.shape[0] // w.shape[0]
    og3, x3, dx3 = _flat3(og), _flat3(x), _flat3(dx)
    compact = kv < k
    if r_w == REQ_WRITE and n == 0:
        dw_[:] = 0
    if r_x != REQ_NULL or r_w != REQ_NULL:
        saved = blas_get_threads()
        blas_set_threads(1)
        if mode == SPLIT:
            _deconv_backward_split(nt, bs, og3, x3, wk, dx3, wsc[1] if compact else dw_,
                                   col[0], buf[0], r_x, r_w, r_w == REQ_ADD and not compact,
                                   direct, tbl, kv, p)
        else:
            for t in prange(nt):
                lo, hi = _slice(n, t, nt)
                if r_w != REQ_NULL and hi == lo:
                    part[t] = 0
                _deconv_backward_range(lo, hi, bs, tile, og3, x3, wk, dx3,
                                       part[t] if r_w != REQ_NULL else dw_, col[t], buf[t],
                                       r_x, r_w, False, direct, tbl, kv, p)
        blas_set_threads(saved)
        if r_w != REQ_NULL and n > 0:
            if mode != SPLIT:
                _finish_weight_par(part, dw_, tbl, k, kv, p, r_w == REQ_ADD)
            elif compact:
                _finish_weight_par(wsc[1:2], dw_, tbl, k, kv, p, r_w == REQ_ADD)
    if has_bias and r_b != REQ_NULL:
        _bias_grad_par(og3, db, w.shape[0], r_b)


# (transposed, parallel) -> entry point; without a bias the kernel gets an
# empty bias array (Launch.args) and has_bias = 0: one compiled kernel each.
# Convolution's forward is ``_conv_forward``'s.
_FORWARD = {(True, False): deconv_forward, (True, True): deconv_forward_parallel}
_BACKWARD = {(False, False): conv_backward, (False, True): conv_backward_parallel,
             (True, False): deconv_backward, (True, True): deconv_backward_parallel}


def _prepare(call, transposed, backward):
    data = call.in_shapes[1] if backward else call.in_shapes[0]
    geom = geometry(call.attrs, data, transposed)
    if not transposed and not backward:
        return _conv_forward(call, geom)
    mode, nt, bs, tile = cpu_plan(call, geom)
    has_bias = not call.attrs["no_bias"]
    fn = (_BACKWARD if backward else _FORWARD)[(transposed, mode != SERIAL)]
    img, cols, w = geom["img"], geom["cols"], geom["w"]
    bias = [None] if has_bias else []
    common = (is_direct(geom), mode, nt, bs, tile, _hold(geom, mode, bs, tile)) + \
        _geom_scalars(geom)
    if not backward:
        scal = (int(has_bias), call.req[0]) + common
        # arrays: x, w, [b], y, 4 temps; the kernel takes (x, w, b, y, temps)
        pick = None if has_bias else (0, 1, (1, (0,)), 2, 3, 4, 5, 6)
        return Launch(fn, scal, views=[cols, w] + bias + [img] + [None] * 4, args=pick)
    x, og = (cols, img) if transposed else (img, cols)
    scal = tuple(call.req[:2]) + ((call.req[2], 1) if has_bias else (REQ_NULL, 0)) + common
    # arrays: og, x, w, dx, dw, [db], 5 temps; the kernel takes (og, x, w, dx, dw, db, temps)
    pick = None if has_bias else (0, 1, 2, 3, 4, (2, (0,)), 5, 6, 7, 8, 9)
    return Launch(fn, scal, views=[og, x, w, x, w] + bias + [None] * 5, args=pick)


def _hold(geom, mode, bs, tile):
    """SERIAL: BLAS's own threads only for GEMMs big enough (one block's)."""
    w = geom["w"]
    gemm_flops = 2 * w[1] * w[2] * (bs * geom["P"] if tile == geom["P"] else tile)
    return hold_for(gemm_flops) if mode == SERIAL else 0


def _conv_forward(call, geom):
    """Convolution's forward, and ``_nbdl_fused_conv``'s (a folded BatchNorm,
    a residual and ReLU in its output loop; ``ops/conv_fused.py``): one kernel
    for both, absent inputs as empty stand-ins.  Depthwise convolutions run
    ``conv_depthwise``'s direct loops, the fused op's 3x3 "same"
    convolutions of 32-256 channels ``conv_winograd``'s
    (``conv_plan.winograd_plan``; with im2col's launch as the fallback), the
    others im2col + GEMM blocks."""
    img, cols, w = geom["img"], geom["cols"], geom["w"]
    depthwise = is_depthwise(geom)
    if depthwise:
        img = (img[0],) + img[2:]
        cols = (cols[0] * cols[1],) + cols[2:]
        w = (w[0] * w[1], w[2])
    n_in, names, pick, flags = epilogue_args(call, len(cols))
    shapes = {"data": img, "weight": w, "sum": cols}
    wino = None if depthwise else winograd_plan(call, geom)
    n_temps = 2 if depthwise else (9 if wino is not None else 5)
    views = [shapes.get(n) for n in names] + [cols] + [None] * n_temps
    head = flags + (call.req[0],)
    if depthwise:
        fn = dw_forward_parallel if depthwise_threads(call) > 1 else dw_forward
        scal = head + (geom["cols"][1], geom["G"]) + _geom_scalars(geom)
        return Launch(fn, scal, views=views, args=tuple(pick) + tuple(range(n_in, len(views))))
    # the output, then the temps: im2col's [col, buf, table, wsc, st], then
    # with Winograd its [u, v, m, rb] (it takes st last, as conv_forward)
    im2col_pick = tuple(pick) + tuple(range(n_in, n_in + 6))
    mode, nt, bs, tile = cpu_plan(call, geom, True)
    fn = conv_forward if mode == SERIAL else conv_forward_parallel
    scal = head + (is_direct(geom), mode, nt, bs, tile, _hold(geom, mode, bs, tile)) + \
        _geom_scalars(geom)
    im2col = Launch(fn, scal, views=views, args=im2col_pick)
    if wino is None:
        return im2col
    # Winograd's kernels take seconds to compile: a bound graph's first runs
    # use im2col's (which its other layers need anyway) until they are
    # compiled in the background (``Launch.fallback``)
    fn = wino_forward_parallel if wino[0] > 1 else wino_forward
    wino_pick = tuple(pick) + (n_in,) + tuple(range(n_in + 6, n_in + 10)) + (n_in + 5,)
    return Launch(fn, head + wino, views=views, args=wino_pick, fallback=im2col)


prepare_convolution = partial(_prepare, transposed=False, backward=False)
prepare_deconvolution = partial(_prepare, transposed=True, backward=False)
# _nbdl_fused_conv (nbdl.graph.fuse's inference fusion) runs the convolution kernels
prepare_fused_convolution = partial(_prepare, transposed=False, backward=False)
prepare_convolution_backward = partial(_prepare, transposed=False, backward=True)
prepare_deconvolution_backward = partial(_prepare, transposed=True, backward=True)


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((conv_forward_parallel, conv_forward),
       (conv_backward_parallel, conv_backward),
       (deconv_forward_parallel, deconv_forward),
       (deconv_backward_parallel, deconv_backward))


__all__ = ["prepare_convolution", "prepare_deconvolution", "prepare_convolution_backward",
           "prepare_deconvolution_backward", "prepare_fused_convolution"]
