"""CPU kernels for L2Normalization and LRN and their gradients: one loop
over the columns (L2) or elements (LRN), each the per-column function of
``nbdl.kernels.shared.nn_normalization`` compiled here."""
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.nn_normalization import (l2_scalars, l2_views, lrn_scalars, lrn_view,
                                       py_l2_column, py_l2_grad_column, py_lrn_grad_point,
                                       py_lrn_point)

_l2_column = njit(cache=True, inline="always")(py_l2_column)
_l2_grad_column = njit(cache=True, inline="always")(py_l2_grad_column)
_lrn_point = njit(cache=True, inline="always")(py_lrn_point)
_lrn_grad_point = njit(cache=True, inline="always")(py_lrn_grad_point)


@njit(cache=True)
def l2_forward(x, out, norm, eps, w_out, w_norm):
    for o in range(x.shape[0]):
        for i in range(x.shape[2]):
            _l2_column(x, out, norm, o, i, eps, w_out, w_norm)


@njit(cache=True)
def l2_backward(g, y, norm, dx, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    for o in range(g.shape[0]):
        for i in range(g.shape[2]):
            _l2_grad_column(g, y, norm, dx, o, i, add)


def prepare_l2(call):
    view, nview = l2_views(call.attrs, call.in_shapes[0])
    return Launch(l2_forward, l2_scalars(call), views=[view, view, nview])


def prepare_l2_backward(call):
    view, nview = l2_views(call.attrs, call.in_shapes[1])
    return Launch(l2_backward, (call.req[0],), views=[view, view, nview, view])


@njit(cache=True)
def lrn_forward(x, out, tmp, salpha, knorm, nbeta, nbeta1, coef, half, w_out, w_tmp):
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for p in range(x.shape[2]):
                _lrn_point(x, out, tmp, n, c, p, half, salpha, knorm, nbeta, w_out, w_tmp)


@njit(cache=True)
def lrn_backward(g, x, tmp, dx, salpha, knorm, nbeta, nbeta1, coef, half, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            for p in range(x.shape[2]):
                _lrn_grad_point(g, x, tmp, dx, n, c, p, half, nbeta, nbeta1, coef, add)


def prepare_lrn(call):
    v = lrn_view(call.in_shapes[0])
    return Launch(lrn_forward, lrn_scalars(call) + (call.req[0] != REQ_NULL,
                                                    call.req[1] != REQ_NULL), views=[v, v, v])


def prepare_lrn_backward(call):
    v = lrn_view(call.in_shapes[1])
    return Launch(lrn_backward, lrn_scalars(call) + (call.req[0],), views=[v, v, v, v])
