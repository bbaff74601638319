"""Cast: convert an array to another dtype (MXNet's ``Cast``, ``amp_cast``)."""
import numpy as np

from .attrs import Attr
from .elemwise_unary import same_shape
from .ir import make_node
from .registry import OpDef, register

CAST_DTYPES = ("float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool")
# Numba's CPU target has no float16 arrays, so float16 is a storage dtype
# only: Cast names it (MXNet graphs use it) and prepare rejects it.
ALL_DTYPES = tuple(np.dtype(d) for d in CAST_DTYPES if d != "float16")


def _cast_type(attrs, in_types, out_types):
    return [in_types[0]], [np.dtype(attrs["dtype"])]


def _cast_grad(node, out_grads):
    # The gradient goes back in the input's dtype; shapes and dtypes are not
    # known while the gradient graph is built, so cast "like" the input.
    return [make_node("_cast_like", [out_grads[0], node.inputs[0]],
                      name=f"{node.name}_backward").output(0)]


register(OpDef(
    name="Cast",
    attrs={"dtype": Attr("str", choices=CAST_DTYPES)},
    infer_shape=same_shape, infer_type=_cast_type, gradient=_cast_grad,
    kernels={"cpu": "nbdl.kernels.cpu.cast:prepare_cast",
             "cuda": "nbdl.kernels.cuda.cast:prepare_cast"},
    supports_add=True, dtypes=ALL_DTYPES,
    doc="Convert ``data`` to ``dtype`` (values are converted as numpy's "
        "``astype`` does, floats to integers by truncation)."), aliases=("cast", "amp_cast"))


def _cast_like_shape(attrs, in_shapes, out_shapes):
    s = in_shapes[0] or in_shapes[1] or out_shapes[0]
    return [s, s], [s]


def _cast_like_type(attrs, in_types, out_types):
    return [in_types[0], in_types[1]], [in_types[1]]


register(OpDef(
    name="_cast_like", input_names=("data", "like"), hidden=True, shape_inputs=(1,),
    infer_shape=_cast_like_shape, infer_type=_cast_like_type,
    gradient=lambda node, g: [make_node("_cast_like", [g[0], node.inputs[0]],
                                        name=f"{node.name}_backward").output(0), None],
    kernels={"cpu": "nbdl.kernels.cpu.cast:prepare_cast_like",
             "cuda": "nbdl.kernels.cuda.cast:prepare_cast_like"},
    supports_add=True, dtypes=ALL_DTYPES,
    doc="``data`` converted to the dtype of ``like`` (Cast's gradient)."))
