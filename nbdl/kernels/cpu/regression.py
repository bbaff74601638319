"""CPU kernels for the loss-output ops: SoftmaxOutput and the regression
outputs.  Their backward kernels ignore the head gradient (unless
SoftmaxOutput's ``out_grad``) and compute the loss gradient from the forward
output and the label."""
import numpy as np
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from .softmax import softmax_forward, softmax_forward_parallel, pick_variant
from ._parallel import twins as _twins
from ..shared.regression import (KIND_LOGISTIC, KIND_MAE, NORM_BATCH, NORM_VALID, kind_prepares,
                                 regression_scale, softmax_output_backward_plan,
                                 softmax_output_views)
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)


# -- SoftmaxOutput ---------------------------------------------------------------


@njit(cache=True)
def softmax_output_forward(x, label, out, one, req):
    softmax_forward(x, out, one, 0, req)


@njit(cache=True)
def softmax_output_forward_parallel(x, label, out, one, req):
    softmax_forward_parallel(x, out, one, 0, req)


def prepare_softmax_output(call):
    view = softmax_output_views(call.attrs, call.in_shapes[0])
    fn = pick_variant(softmax_output_forward, softmax_output_forward_parallel, int(np.prod(view)))
    one = np.dtype(call.out_dtypes[0]).type(1)
    # inputs data, label; the label is not read (None keeps its own shape)
    return Launch(fn, (one, call.req[0]), views=[view, None, view])


@njit(cache=True)
def count_valid(label, ignore):
    n = 0
    for r in range(label.shape[0]):
        for d in range(label.shape[1]):
            if int(label[r, d]) != ignore:
                n += 1
    return n


@njit(cache=True, inline="always")
def _softmax_output_grad(out, label, og, grad, scale_base, alpha, ignore, use_ignore,
                         norm, use_og, req):
    rows, c, sp = out.shape
    if norm == NORM_BATCH:
        cnt = rows
    elif norm == NORM_VALID:
        cnt = count_valid(label, ignore)
        if cnt == 0:
            cnt = 1
    else:
        cnt = 1
    scale = grad.dtype.type(scale_base / cnt)
    one = grad.dtype.type(1)
    zero = grad.dtype.type(0)
    # label smoothing: the target is 1 - alpha on the label, alpha/(c-1) elsewhere
    on_target = one - grad.dtype.type(alpha)
    off_target = grad.dtype.type(alpha / (c - 1)) if c > 1 else zero
    add = req == REQ_ADD
    for r in range(rows):
        for d in range(sp):
            k = int(label[r, d])
            skip = use_ignore and k == ignore
            for x in range(c):
                if skip:
                    v = zero
                else:
                    t = on_target if x == k else off_target
                    v = (out[r, x, d] - t) * scale
                    if use_og:
                        v *= og[r, x, d]
                _put(grad, (r, x, d), v, add)


@njit(cache=True)
def softmax_output_backward(out, label, grad, tmp, scale_base, alpha, ignore, use_ignore,
                            norm, req):
    if req == REQ_NULL:
        return
    _softmax_output_grad(out, label, out, grad, scale_base, alpha, ignore, use_ignore,
                         norm, False, req)


@njit(cache=True)
def softmax_output_backward_og(out, label, og, grad, tmp, scale_base, alpha, ignore,
                               use_ignore, norm, req):
    if req == REQ_NULL:
        return
    _softmax_output_grad(out, label, og, grad, scale_base, alpha, ignore, use_ignore,
                         norm, True, req)


@njit(cache=True, inline="always")
def _prob_label_grad(out, label, og, grad, scale, use_og, req):
    s = grad.dtype.type(scale)
    add = req == REQ_ADD
    for i in range(out.size):
        v = (out[i] - label[i]) * s
        if use_og:
            v *= og[i]
        _put(grad, i, v, add)


@njit(cache=True)
def prob_label_backward(out, label, grad, tmp, scale, req):
    if req == REQ_NULL:
        return
    _prob_label_grad(out, label, out, grad, scale, False, req)


@njit(cache=True)
def prob_label_backward_og(out, label, og, grad, tmp, scale, req):
    if req == REQ_NULL:
        return
    _prob_label_grad(out, label, og, grad, scale, True, req)


def prepare_softmax_output_backward(call):
    prob, views, scalars = softmax_output_backward_plan(call)
    og = call.attrs["out_grad"]
    if prob:
        fn = prob_label_backward_og if og else prob_label_backward
    else:
        fn = softmax_output_backward_og if og else softmax_output_backward
    return Launch(fn, scalars, views=views)


# -- LinearRegressionOutput / LogisticRegressionOutput / MAERegressionOutput -----


@njit(cache=True)
def regression_forward(x, label, out, kind, req):
    if req == REQ_NULL:
        return
    if kind == KIND_LOGISTIC:
        one = out.dtype.type(1)
        for i in range(x.size):
            out[i] = one / (one + np.exp(-x[i]))
    else:
        for i in range(x.size):
            out[i] = x[i]


@njit(cache=True)
def regression_backward(out, label, grad, scale, kind, req):
    if req == REQ_NULL:
        return
    s = grad.dtype.type(scale)
    add = req == REQ_ADD
    for i in range(out.size):
        if kind == KIND_MAE:
            # MXNet's minus_sign: ties count as negative
            v = s if out[i] - label[i] > 0 else -s
        else:
            v = (out[i] - label[i]) * s
        _put(grad, i, v, add)


def _flat(shape):
    return (int(np.prod(shape, dtype=np.int64)),)


def _prepare_forward(call, kind):
    v = _flat(call.in_shapes[0])
    return Launch(regression_forward, (kind, call.req[0]), views=[v, _flat(call.in_shapes[1]), v])


def _prepare_backward(call, kind):
    v = _flat(call.in_shapes[0])
    return Launch(regression_backward, (regression_scale(call), kind, call.req[0]),
                  views=[v, _flat(call.in_shapes[1]), v])


(prepare_linear_forward, prepare_logistic_forward, prepare_mae_forward, prepare_linear_backward,
 prepare_logistic_backward, prepare_mae_backward) = kind_prepares(_prepare_forward, _prepare_backward)


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((softmax_output_forward_parallel, softmax_output_forward))
