"""CUDA kernels for im2col, col2im and im2col's gradient (geometry of
``nbdl.kernels.shared.im2col``): like the CUDA convolution, they compute each
tap's image position directly, one thread per column element (im2col) or per
image element gathering its taps (col2im: no atomics)."""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.im2col import slide_geometry, views
from ._launch import launcher, launcher_without
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)


def _noop(*args):
    pass


@cuda.jit
def _im2col(x, col, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW,
            zero, req):
    planes = col.shape[0]
    kk = col.shape[1]
    pp = col.shape[2]
    for t in range(cuda.grid(1), planes * kk * pp, cuda.gridsize(1)):
        q = t % pp
        r = t // pp
        tap = r % kk
        c = r // kk
        e = tap % KW
        b = (tap // KW) % KH
        a = tap // (KW * KH)
        ow = q % OW
        oh = (q // OW) % OH
        od = q // (OW * OH)
        z = od * SD - PD + a * DD
        y = oh * SH - PH + b * DH
        xx = ow * SW - PW + e * DW
        v = zero
        if 0 <= z < D and 0 <= y < H and 0 <= xx < W:
            v = x[c, (z * H + y) * W + xx]
        _put(col, (c, tap, q), v, req == REQ_ADD)


@cuda.jit(device=True)
def taps_sum(rows, row0, z, y, xx, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW,
             acc):
    """``acc`` plus, over the taps (a, b, e) that image element (z, y, xx) feeds,
    ``rows[row0 + tap, q]`` with ``q`` the output position the tap reads it
    for (col2im's gather; also ``conv_gemm``'s)."""
    for a in range(KD):
        nz = z + PD - a * DD
        if nz < 0 or nz % SD != 0 or nz // SD >= OD:
            continue
        for b in range(KH):
            ny = y + PH - b * DH
            if ny < 0 or ny % SH != 0 or ny // SH >= OH:
                continue
            for e in range(KW):
                nx = xx + PW - e * DW
                if nx < 0 or nx % SW != 0 or nx // SW >= OW:
                    continue
                acc += rows[row0 + (a * KH + b) * KW + e, ((nz // SD) * OH + ny // SH) * OW + nx // SW]
    return acc


@cuda.jit
def _col2im(col, img, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW,
            zero, req):
    planes = img.shape[0]
    size = D * H * W
    for t in range(cuda.grid(1), planes * size, cuda.gridsize(1)):
        i = t % size
        c = t // size
        xx = i % W
        y = (i // W) % H
        z = i // (W * H)
        acc = taps_sum(col[c], 0, z, y, xx, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW,
                       DD, DH, DW, zero)
        _put(img, (c, i), acc, req == REQ_ADD)


def temp_im2col(call):
    return []


temp_col2im = temp_backward_im2col = temp_im2col


def _launch(kernel, n, geo, call, skip_second=False):
    zero = np.dtype(call.out_dtypes[0]).type(0)
    scalars = geo[3:] + (zero, call.req[0])
    if n == 0 or call.req[0] == REQ_NULL:
        return _noop, scalars
    return (launcher_without(kernel, n) if skip_second else launcher(kernel, n)), scalars


def prepare_im2col(call):
    geo = slide_geometry("im2col", call.attrs, call.in_shapes[0])
    img, col = views(geo)
    fn, scalars = _launch(_im2col, col[0] * col[1] * col[2], geo, call)
    return Launch(fn, scalars, views=[img, col])


def prepare_col2im(call):
    geo = slide_geometry("col2im", call.attrs, call.out_shapes[0])
    img, col = views(geo)
    fn, scalars = _launch(_col2im, img[0] * img[1], geo, call)
    return Launch(fn, scalars, views=[col, img])


def prepare_backward_im2col(call):
    geo = slide_geometry("_backward_im2col", call.attrs, call.in_shapes[1])
    img, col = views(geo)
    fn, scalars = _launch(_col2im, img[0] * img[1], geo, call, skip_second=True)
    return Launch(fn, scalars, views=[col, img, img])
