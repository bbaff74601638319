"""CUDA kernels for SoftmaxOutput and the regression outputs (layouts as in
``nbdl.kernels.cpu.regression``)."""
import math

import numpy as np

from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.regression import (KIND_LOGISTIC, KIND_MAE, NORM_BATCH, NORM_VALID, kind_prepares,
                                 regression_scale, softmax_output_backward_plan,
                                 softmax_output_views)
from ._launch import launcher
from .softmax import softmax_forward
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)


def _noop(*args):
    pass


def prepare_softmax_output(call):
    view = softmax_output_views(call.attrs, call.in_shapes[0])
    rows = view[0] * view[2]
    if call.req[0] == REQ_NULL or rows == 0:
        return Launch(_noop, (), views=[view, None, view])
    run = launcher(softmax_forward, rows)

    def fn(x, label, out):
        run(x, out, np.dtype(call.out_dtypes[0]).type(1), 0, 1)
    return Launch(fn, (), views=[view, None, view])


@cuda.jit
def _zero_counter(tmp):
    if cuda.grid(1) == 0:
        tmp[0] = 0


@cuda.jit
def _count_valid(label, ignore, tmp):
    sp = label.shape[1]
    for idx in range(cuda.grid(1), label.shape[0] * sp, cuda.gridsize(1)):
        r = idx // sp
        if int(label[r, idx - r * sp]) != ignore:
            cuda.atomic.add(tmp, 0, 1)


@cuda.jit
def _softmax_output_grad(out, label, og, grad, tmp, scale_base, alpha, ignore, use_ignore,
                         norm, use_og, req):
    rows = out.shape[0]
    c = out.shape[1]
    sp = out.shape[2]
    cnt = 1
    if norm == NORM_BATCH:
        cnt = rows
    elif norm == NORM_VALID:
        cnt = tmp[0]
        if cnt == 0:
            cnt = 1
    scale = scale_base / cnt
    on_target = 1.0 - alpha
    off_target = 0.0
    if c > 1:
        off_target = alpha / (c - 1)
    for idx in range(cuda.grid(1), rows * sp, cuda.gridsize(1)):
        r = idx // sp
        d = idx - r * sp
        k = int(label[r, d])
        skip = use_ignore != 0 and k == ignore
        for x in range(c):
            v = 0.0
            if not skip:
                t = off_target
                if x == k:
                    t = on_target
                v = (out[r, x, d] - t) * scale
                if use_og:
                    v *= og[r, x, d]
            _put(grad, (r, x, d), v, req == REQ_ADD)


@cuda.jit
def _prob_label_grad(out, label, og, grad, scale, use_og, req):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        v = (out[i] - label[i]) * scale
        if use_og:
            v *= og[i]
        _put(grad, i, v, req == REQ_ADD)


def prepare_softmax_output_backward(call):
    prob, views, scalars = softmax_output_backward_plan(call)
    use_og = bool(call.attrs["out_grad"])
    n = 1
    for s in call.in_shapes[0]:
        n *= s
    if call.req[0] == REQ_NULL or n == 0:
        return Launch(_noop, (), views=views)
    if prob:
        run = launcher(_prob_label_grad, n)
        scale, req = scalars

        def launch(out, label, og, grad):
            run(out, label, og, grad, scale, use_og, req)
    else:
        rows, c, sp = views[0]
        scale_base, alpha, ignore, use_ignore, norm, req = scalars
        run = launcher(_softmax_output_grad, rows * sp)
        count = launcher(_count_valid, rows * sp)

        def launch(out, label, og, grad, tmp):
            if norm == NORM_VALID:
                _zero_counter[1, 1](tmp)
                count(label, ignore, tmp)
            run(out, label, og, grad, tmp, scale_base, alpha, ignore, use_ignore, norm,
                use_og, req)

    if use_og:
        def fn(out, label, og, grad, tmp):
            args = (out, label, og, grad) if prob else (out, label, og, grad, tmp)
            launch(*args)
    else:
        def fn(out, label, grad, tmp):
            args = (out, label, out, grad) if prob else (out, label, out, grad, tmp)
            launch(*args)
    return Launch(fn, (), views=views)


# -- regression outputs ------------------------------------------------------------

@cuda.jit
def _regression_forward(x, out, kind):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        if kind == KIND_LOGISTIC:
            out[i] = 1.0 / (1.0 + math.exp(-x[i]))
        else:
            out[i] = x[i]


@cuda.jit
def _regression_backward(out, label, grad, scale, kind, req):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        if kind == KIND_MAE:
            v = -scale
            if out[i] - label[i] > 0:
                v = scale
        else:
            v = (out[i] - label[i]) * scale
        _put(grad, i, v, req == REQ_ADD)


def _flat(shape):
    n = 1
    for s in shape:
        n *= s
    return (n,)


def _prepare_forward(call, kind):
    v = _flat(call.in_shapes[0])
    views = [v, _flat(call.in_shapes[1]), v]
    if call.req[0] == REQ_NULL or v[0] == 0:
        return Launch(_noop, (), views=views)
    run = launcher(_regression_forward, v[0])

    def fn(x, label, out):
        run(x, out, kind)
    return Launch(fn, (), views=views)


def _prepare_backward(call, kind):
    v = _flat(call.in_shapes[0])
    views = [v, _flat(call.in_shapes[1]), v]
    if call.req[0] == REQ_NULL or v[0] == 0:
        return Launch(_noop, (), views=views)
    return Launch(launcher(_regression_backward, v[0]),
                  (np.dtype(call.out_dtypes[0]).type(regression_scale(call)), kind, call.req[0]),
                  views=views)


(prepare_linear_forward, prepare_logistic_forward, prepare_mae_forward, prepare_linear_backward,
 prepare_logistic_backward, prepare_mae_backward) = kind_prepares(_prepare_forward, _prepare_backward)
