"""Embedding: rows of a weight matrix picked by integer ids (rules only;
kernels in nbdl.kernels.*.embedding).

MXNet's ``Embedding``: inputs ``data`` (ids, any shape, float or integer)
and ``weight`` ``(input_dim, output_dim)``; the output is ``data.shape +
(output_dim,)``.  Ids are truncated toward zero and clipped to
``[0, input_dim)``, as MXNet does.  The gradient goes to the weight only,
through the hidden scatter-add ``_backward_Embedding(out_grad, data,
weight)`` (the weight is passed for its shape only); ids get none.
"""
from functools import partial

import numpy as np

from ..errors import AttrError
from .ir import backward_node
from .attrs import Attr
from .partial_shape import UNKNOWN, accepts_partial, compatible, is_full, merge, show
from .registry import FLOAT_DTYPES, OpDef, kernel_paths, register, shape_error
from .rules import checked_inputs

EMBEDDING_ATTRS = {
    "input_dim": Attr("int", doc="Number of rows of the weight (the vocabulary size)."),
    "output_dim": Attr("int", doc="Length of each embedding vector."),
    # MXNet's choices are accepted (graphs name them); the kernels compute in
    # float32/float64 only, which prepare enforces.
    "dtype": Attr("str", "float32",
                  choices=("float16", "float32", "float64", "uint8", "int8", "int32", "int64"),
                  doc="dtype of the weight and output when no input says otherwise."),
    "sparse_grad": Attr("bool", False, doc="Row-sparse gradients: not supported."),
}


def check_embedding_attrs(opname, attrs):
    if attrs["sparse_grad"]:
        raise AttrError(f"{opname}: sparse_grad=True (a row_sparse weight gradient) is not "
                        f"supported by nbdl: dense storage only; use sparse_grad=False")
    for k in ("input_dim", "output_dim"):
        if attrs[k] < 1:
            raise AttrError(f"{opname}: {k}={attrs[k]} is invalid: it must be >= 1")


_inputs = partial(checked_inputs, check_embedding_attrs)   # input names, the attributes checked first


def _weight_shape(attrs):
    return (attrs["input_dim"], attrs["output_dim"])


def _check_weight(opname, attrs, w, in_shapes):
    want = _weight_shape(attrs)
    if w is not None and tuple(w) != want:
        raise shape_error(f"{opname} (input_dim={attrs['input_dim']}, "
                          f"output_dim={attrs['output_dim']})",
                          f"argument 'weight' has shape {tuple(w)}, expected {want}", in_shapes)
    return want


@accepts_partial
def _embedding_shape(attrs, in_shapes, out_shapes):
    # partial shapes: data's dims, known or not, lead the output's (MXNet's
    # EmbeddingOpShape), and come back from a known output
    d, w = in_shapes
    o = out_shapes[0]
    w = merge(w, _check_weight("Embedding", attrs, w if w is None or is_full(w) else None,
                               in_shapes), "Embedding", "argument 'weight'")
    if d is not None:
        want = tuple(d) + (attrs["output_dim"],)
        if o is not None and not compatible(o, want):
            raise shape_error("Embedding", f"output shape {show(o)} does not match "
                              f"data.shape + (output_dim,) = {show(want)}", in_shapes)
        want = merge(want, o)
        return [want[:-1], w], [want]
    if o is not None:
        if len(o) == 0 or o[-1] not in (attrs["output_dim"], UNKNOWN):
            raise shape_error("Embedding", f"output shape {show(o)} must end in "
                              f"output_dim={attrs['output_dim']}", in_shapes)
        return [tuple(o[:-1]), w], [tuple(o[:-1]) + (attrs["output_dim"],)]
    return [d, w], out_shapes


def _embedding_type(attrs, in_types, out_types):
    """The weight decides the output dtype (the ``dtype`` attribute only when
    neither the weight nor the output is known); unknown ids take it too."""
    w = in_types[1] if in_types[1] is not None else out_types[0]
    if w is None:
        w = np.dtype(attrs["dtype"])
    d = in_types[0] if in_types[0] is not None else w
    return [d, w], [w]


def _embedding_grad(node, out_grads):
    g = backward_node("_backward_Embedding", [out_grads[0], node.inputs[0], node.inputs[1]], node)
    return [None, g.output(0)]


def _backward_shape(attrs, in_shapes, out_shapes):
    og, d, w = in_shapes
    w = _check_weight("_backward_Embedding", attrs, w if w is not None else out_shapes[0],
                      in_shapes)
    if d is not None:
        want = tuple(d) + (attrs["output_dim"],)
        if og is not None and tuple(og) != want:
            raise shape_error("_backward_Embedding", f"out_grad shape {tuple(og)} does not "
                              f"match data.shape + (output_dim,) = {want}", in_shapes)
        og = want
    return [og, d, w], [w]


def _backward_type(attrs, in_types, out_types):
    g = next((t for t in (in_types[0], in_types[2], out_types[0]) if t is not None), None)
    if g is None:
        return in_types, out_types
    return [g, in_types[1] if in_types[1] is not None else g, g], [g]


register(OpDef(
    name="Embedding",
    input_names=_inputs("Embedding", ["data", "weight"]),
    attrs=dict(EMBEDDING_ATTRS),
    infer_shape=_embedding_shape, infer_type=_embedding_type,
    gradient=_embedding_grad,
    half_mirrors=True,
    kernels=kernel_paths("embedding", "prepare_embedding"),
    supports_add=True, dtypes=FLOAT_DTYPES, int_inputs=(0,),
    doc="weight[data]: one row of the (input_dim, output_dim) weight per id; ids are "
        "truncated to integers and clipped to [0, input_dim)."))

register(OpDef(
    name="_backward_Embedding",
    input_names=_inputs("_backward_Embedding", ["out_grad", "data", "weight"]),
    attrs=dict(EMBEDDING_ATTRS),
    infer_shape=_backward_shape, infer_type=_backward_type,
    half_mirrors=True,
    kernels=kernel_paths("embedding", "prepare_embedding_backward"),
    supports_add=True, hidden=True, dtypes=FLOAT_DTYPES, int_inputs=(1,), shape_inputs=(2,),
    doc="Scatter-add of Embedding's head gradient into the weight's gradient "
        "(repeated ids accumulate)."))
