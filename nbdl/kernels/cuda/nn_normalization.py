"""CUDA kernels for L2Normalization and LRN (views and per-column math as in
``nbdl.kernels.shared.nn_normalization``, compiled here as device
functions): one thread per column (L2) or element (LRN)."""
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.nn_normalization import (l2_scalars, l2_views, lrn_scalars, lrn_view,
                                       py_l2_column, py_l2_grad_column, py_lrn_grad_point,
                                       py_lrn_point)
from ._launch import launcher

_l2_column = cuda.jit(device=True)(py_l2_column)
_l2_grad_column = cuda.jit(device=True)(py_l2_grad_column)
_lrn_point = cuda.jit(device=True)(py_lrn_point)
_lrn_grad_point = cuda.jit(device=True)(py_lrn_grad_point)


def _noop(*args):
    pass


@cuda.jit
def _l2_forward(x, out, norm, eps, w_out, w_norm):
    inner = x.shape[2]
    for t in range(cuda.grid(1), x.shape[0] * inner, cuda.gridsize(1)):
        _l2_column(x, out, norm, t // inner, t % inner, eps, w_out, w_norm)


@cuda.jit
def _l2_backward(g, y, norm, dx, req):
    inner = g.shape[2]
    for t in range(cuda.grid(1), g.shape[0] * inner, cuda.gridsize(1)):
        _l2_grad_column(g, y, norm, dx, t // inner, t % inner, req == REQ_ADD)


def prepare_l2(call):
    view, nview = l2_views(call.attrs, call.in_shapes[0])
    cols = view[0] * view[2]
    fn = launcher(_l2_forward, cols) if cols else _noop
    return Launch(fn, l2_scalars(call), views=[view, view, nview])


def prepare_l2_backward(call):
    view, nview = l2_views(call.attrs, call.in_shapes[1])
    cols = view[0] * view[2]
    fn = launcher(_l2_backward, cols) if cols and call.req[0] != REQ_NULL else _noop
    return Launch(fn, (call.req[0],), views=[view, view, nview, view])


@cuda.jit
def _lrn_forward(x, out, tmp, salpha, knorm, nbeta, nbeta1, coef, half, w_out, w_tmp):
    C = x.shape[1]
    P = x.shape[2]
    for t in range(cuda.grid(1), x.shape[0] * C * P, cuda.gridsize(1)):
        p = t % P
        r = t // P
        _lrn_point(x, out, tmp, r // C, r % C, p, half, salpha, knorm, nbeta, w_out, w_tmp)


@cuda.jit
def _lrn_backward(g, x, tmp, dx, salpha, knorm, nbeta, nbeta1, coef, half, req):
    C = x.shape[1]
    P = x.shape[2]
    for t in range(cuda.grid(1), x.shape[0] * C * P, cuda.gridsize(1)):
        p = t % P
        r = t // P
        _lrn_grad_point(g, x, tmp, dx, r // C, r % C, p, half, nbeta, nbeta1, coef,
                        req == REQ_ADD)


def prepare_lrn(call):
    v = lrn_view(call.in_shapes[0])
    n = v[0] * v[1] * v[2]
    fn = launcher(_lrn_forward, n) if n else _noop
    return Launch(fn, lrn_scalars(call) + (call.req[0] != REQ_NULL, call.req[1] != REQ_NULL),
                  views=[v, v, v])


def prepare_lrn_backward(call):
    v = lrn_view(call.in_shapes[1])
    n = v[0] * v[1] * v[2]
    fn = launcher(_lrn_backward, n) if n and call.req[0] != REQ_NULL else _noop
    return Launch(fn, lrn_scalars(call) + (call.req[0],), views=[v, v, v, v])
