"""CPU kernels for im2col, col2im and im2col's gradient, through the im2col
table of the CPU convolution (``conv_im2col._make_table``, its ELEMENTS
layout: per kept kernel tap and block the image offset read, -1 in the
padding; taps that only read padding are left out and give zero rows here)."""
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.im2col import slide_geometry, table_temp, views
from .conv_im2col import _HEAD, _make_table
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)


@njit(cache=True)
def _table(tbl, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW):
    return _make_table(tbl, D, H, W, (OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW,
                                      DD, DH, DW), False)


@njit(cache=True)
def im2col_kernel(x, col, tbl, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW,
                  DD, DH, DW, req):
    if req == REQ_NULL:
        return
    kv = _table(tbl, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW)
    planes, kk, pp = col.shape
    add = req == REQ_ADD
    zero = x.dtype.type(0)
    for c in range(planes):
        if not add:
            col[c] = zero
        for r in range(kv):
            tap = tbl[_HEAD + r]
            for q in range(pp):
                idx = tbl[_HEAD + 3 * kv + r * pp + q]
                if idx >= 0:
                    _put(col, (c, tap, q), x[c, idx], add)


@njit(cache=True)
def col2im_kernel(col, img, tbl, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW,
                  DD, DH, DW, req):
    if req == REQ_NULL:
        return
    kv = _table(tbl, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW)
    planes, kk, pp = col.shape
    if req != REQ_ADD:
        img[:] = img.dtype.type(0)
    for c in range(planes):
        for r in range(kv):
            tap = tbl[_HEAD + r]
            for q in range(pp):
                idx = tbl[_HEAD + 3 * kv + r * pp + q]
                if idx >= 0:
                    img[c, idx] += col[c, tap, q]


@njit(cache=True)
def backward_im2col_kernel(og, data, dx, tbl, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW,
                           PD, PH, PW, DD, DH, DW, req):
    col2im_kernel(og, dx, tbl, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW,
                  DD, DH, DW, req)


def _geo(call, opname, image_shape):
    return slide_geometry(opname, call.attrs, image_shape)


def temp_im2col(call):
    return table_temp(_geo(call, "im2col", call.in_shapes[0]))


def temp_col2im(call):
    return table_temp(_geo(call, "col2im", call.out_shapes[0]))


def temp_backward_im2col(call):
    return table_temp(_geo(call, "_backward_im2col", call.in_shapes[1]))


def prepare_im2col(call):
    geo = _geo(call, "im2col", call.in_shapes[0])
    img, col = views(geo)
    return Launch(im2col_kernel, geo[3:] + (call.req[0],), views=[img, col, None])


def prepare_col2im(call):
    geo = _geo(call, "col2im", call.out_shapes[0])
    img, col = views(geo)
    return Launch(col2im_kernel, geo[3:] + (call.req[0],), views=[col, img, None])


def prepare_backward_im2col(call):
    geo = _geo(call, "_backward_im2col", call.in_shapes[1])
    img, col = views(geo)
    return Launch(backward_im2col_kernel, geo[3:] + (call.req[0],), views=[col, img, img, None])
