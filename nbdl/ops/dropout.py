"""Dropout: rules only (kernels in nbdl.kernels.*.dropout).

Two outputs as in MXNet: ``output`` and a hidden ``mask`` (one visible
output).  The mask holds each element's scale, 0 or 1/(1-p), in the data's
dtype; its shape is the data's with the ``axes`` dimensions set to 1, so one
draw is shared along them.  Outside training (``is_train`` False) with
mode='training' the op is the identity and the mask is all ones, which keeps
``_backward_Dropout(out_grad, mask) = out_grad * mask`` right in every mode.
"""
from functools import partial

import numpy as np

from ..errors import AttrError
from .ir import backward_node
from .attrs import Attr
from .registry import REQ_NULL, OpDef, Recompute, kernel_paths, register, shape_error
from .rules import checked_inputs, known_shape

DROPOUT_ATTRS = {
    "p": Attr("float", 0.5, doc="Fraction of the input that gets dropped out."),
    "mode": Attr("str", "training", choices=("training", "always"),
                 doc="'training': only when is_train; 'always': also at inference."),
    "axes": Attr("tuple", (), doc="Axes along which the mask is shared."),
    "cudnn_off": Attr("bool", None, optional=True, doc="Accepted and ignored."),
}


def check_dropout_attrs(opname, attrs):
    p = attrs["p"]
    if not 0.0 <= p <= 1.0:
        raise AttrError(f"{opname}: p={p!r} is invalid: it must be in [0, 1]")
    axes = attrs["axes"]
    if any(a is None for a in axes) or len(set(axes)) != len(axes):
        raise AttrError(f"{opname}: axes={axes!r} is invalid: expected distinct integers")


_inputs = partial(checked_inputs, check_dropout_attrs)   # input names, the attributes checked first


def _mask_shape(opname, attrs, shape, in_shapes):
    nd = len(shape)
    out = list(shape)
    for a in attrs["axes"]:
        if not -nd <= a < nd:
            raise shape_error(opname, f"axes={attrs['axes']} is out of range for an input of "
                              f"{nd} dimension(s) {tuple(shape)}", in_shapes)
        out[a] = 1
    return tuple(out)


def _dropout_shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[0], out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    if out_shapes[0] is not None and tuple(out_shapes[0]) != d:
        raise shape_error("Dropout", f"output shape {tuple(out_shapes[0])} differs from data "
                          f"shape {d}", in_shapes)
    return [d], [d, _mask_shape("Dropout", attrs, d, in_shapes)]


def mask_temp(call):
    """Scratch for the mask when the mask output is not requested (req null):
    the kernel still needs somewhere to draw it."""
    if call.req is not None and len(call.req) > 1 and call.req[1] == REQ_NULL:
        shape = _mask_shape("Dropout", call.attrs, tuple(call.in_shapes[0]), call.in_shapes)
        return [(shape, np.dtype(call.in_dtypes[0]))]
    return []


def _dropout_type(attrs, in_types, out_types):
    t = next((x for x in list(in_types) + list(out_types) if x is not None), None)
    return ([t], [t, t]) if t is not None else (in_types, out_types)


def _dropout_grad(node, out_grads):
    g = backward_node("_backward_Dropout", [out_grads[0], node.output(1)], node)
    return [g.output(0)]


def _backward_grad(node, out_grads):
    # linear in out_grad; the mask is a constant of the forward draw
    g = backward_node("_backward_Dropout", [out_grads[0], node.inputs[1]], node,
                      dict(node.attr_str))
    return [g.output(0), None]


def _backward_shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[0], out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    m = _mask_shape("_backward_Dropout", attrs, d, in_shapes)
    if in_shapes[1] is not None and tuple(in_shapes[1]) != m:
        raise shape_error("_backward_Dropout", f"mask shape {tuple(in_shapes[1])} does not "
                          f"match {m}", in_shapes)
    return [d, m], [d]


def _backward_type(attrs, in_types, out_types):
    t = next((x for x in list(in_types) + list(out_types) if x is not None), None)
    return ([t, t], [t]) if t is not None else (in_types, out_types)


def _dropout_recompute(node):
    """Dropout's output again during backward (a memory budget's recompute):
    ``data * mask`` with the mask the forward drew, which the gradient keeps
    anyway; ``_backward_Dropout`` runs the forward's very loop, so the result
    is bitwise the forward's, and no new random numbers are drawn."""
    return Recompute("_backward_Dropout", [node.inputs[0], node.output(1)], dict(node.attrs), [0])


register(OpDef(
    name="Dropout",
    half_mirrors=True,
    input_names=_inputs("Dropout", ["data"]),
    num_outputs=2, num_visible_outputs=1, output_names=["output", "mask"],
    attrs=dict(DROPOUT_ATTRS),
    infer_shape=_dropout_shape, infer_type=_dropout_type,
    gradient=_dropout_grad,
    # each output element reads only its own input element
    inplace=lambda attrs: [(0, 0)],
    temp=mask_temp,
    kernels=kernel_paths("dropout", "prepare_dropout"),
    train_aware=True, recompute=_dropout_recompute,
    doc="In training (or mode='always') zero each element with probability p and "
        "scale the rest by 1/(1-p); otherwise the identity."))

register(OpDef(
    name="_backward_Dropout",
    half_mirrors=True,
    input_names=_inputs("_backward_Dropout", ["out_grad", "mask"]),
    attrs=dict(DROPOUT_ATTRS),
    infer_shape=_backward_shape, infer_type=_backward_type, gradient=_backward_grad,
    inplace=lambda attrs: [(0, 0)],
    kernels=kernel_paths("dropout", "prepare_dropout_backward"),
    supports_add=True, hidden=True,
    doc="out_grad * mask (the mask broadcast along Dropout's axes)."))
