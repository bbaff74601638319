"""Correlation (FlowNet's correlation layer; rules only, kernels in
``nbdl.kernels.*.correlation``, the per-element math in
``nbdl.kernels.shared.correlation``).  MXNet 1.9.1's name, inputs
(``data1``, ``data2``) and attributes.

Both inputs (N, C, H, W) are zero-padded by ``pad_size``; output position
(i, j) compares the ``kernel_size`` x ``kernel_size`` patch of data1 whose
top-left corner is ``(i, j) * stride1 + max_displacement`` (padded
coordinates) with the patch of data2 displaced by ``(dy, dx) * stride2`` for
each of the ``(2 * (max_displacement // stride2) + 1) ** 2`` displacements
(the output channels, dx fastest).  ``is_multiply``: the sum of products,
else the sum of absolute differences; both divided by
``kernel_size ** 2 * C``.  Output (N, D * D, ceil((H + 2 pad - 2 border) /
stride1), ...) with ``border = max_displacement + (kernel_size - 1) / 2``.
The gradient flows to both inputs (``_backward_Correlation``; in the
absolute-difference mode with MXNet's sign convention, +1 to data1 where
the values are equal).  Float16 (computed in float32), float32, float64.
"""
import math

import numpy as np

from ..errors import AttrError
from .attrs import Attr
from .elemwise_unary import equal_types
from .ir import backward_node
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import known_shape

HALF_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))

CORR_ATTRS = {
    "kernel_size": Attr("int", 1, doc="Patch size (odd)."),
    "max_displacement": Attr("int", 1, doc="Largest displacement compared."),
    "stride1": Attr("int", 1, doc="Stride over data1's positions."),
    "stride2": Attr("int", 1, doc="Stride over the displacements."),
    "pad_size": Attr("int", 0, doc="Zero padding of both inputs."),
    "is_multiply": Attr("bool", True, doc="Products (True) or absolute differences (False)."),
}


def corr_geometry(attrs, shape):
    """(top channels, top height, top width, neighbourhood radius, width) of
    a correlation of inputs of ``shape``, as MXNet computes them."""
    a = attrs
    ph = int(shape[2]) + 2 * a["pad_size"]
    pw = int(shape[3]) + 2 * a["pad_size"]
    border = a["max_displacement"] + (a["kernel_size"] - 1) // 2
    top_w = math.ceil(np.float32(pw - 2 * border) / np.float32(a["stride1"]))
    top_h = math.ceil(np.float32(ph - 2 * border) / np.float32(a["stride1"]))
    radius = a["max_displacement"] // a["stride2"]
    width = 2 * radius + 1
    return width * width, top_h, top_w, radius, width


def _inputs(attrs):
    a = attrs
    if a["kernel_size"] < 1 or a["kernel_size"] % 2 == 0:
        raise AttrError(f"Correlation: kernel_size={a['kernel_size']} must be a positive odd "
                        f"number")
    for name in ("stride1", "stride2"):
        if a[name] < 1:
            raise AttrError(f"Correlation: {name}={a[name]} must be positive")
    for name in ("max_displacement", "pad_size"):
        if a[name] < 0:
            raise AttrError(f"Correlation: {name}={a[name]} must be non-negative")
    return ["data1", "data2"]


def _shape(attrs, in_shapes, out_shapes):
    d1, d2 = in_shapes
    d = known_shape(d1, d2)
    if d is None:
        return in_shapes, out_shapes
    for name, s in (("data1", d1), ("data2", d2)):
        if s is not None and (len(s) != 4 or tuple(s) != d):
            raise shape_error("Correlation", f"data1 and data2 must be 4-D (N, C, H, W) of one "
                              f"shape, got {name} {tuple(s)}", in_shapes)
    if len(d) != 4:
        raise shape_error("Correlation", f"data must be 4-D (N, C, H, W), got {d}", in_shapes)
    top_c, top_h, top_w, _, _ = corr_geometry(attrs, d)
    if top_h < 1 or top_w < 1:
        raise shape_error("Correlation", f"the neighbourhood (max_displacement="
                          f"{attrs['max_displacement']}) and kernel (kernel_size="
                          f"{attrs['kernel_size']}) do not fit in the padded input", in_shapes)
    return [d, d], [(d[0], top_c, top_h, top_w)]


def _grad(node, out_grads):
    g = backward_node("_backward_Correlation", [out_grads[0], node.inputs[0], node.inputs[1]],
                      node)
    return [g.output(0), g.output(1)]


def _backward_shape(attrs, in_shapes, out_shapes):
    og, d1, d2 = in_shapes
    d = next((tuple(s) for s in (d1, d2, out_shapes[0], out_shapes[1]) if s is not None), None)
    return [og, d, d], [d, d]


register(OpDef(
    name="Correlation", input_names=_inputs, attrs=dict(CORR_ATTRS),
    infer_shape=_shape, infer_type=equal_types("Correlation", ("data1", "data2")),
    gradient=_grad,
    kernels=kernel_paths("correlation", "prepare_correlation"),
    temp=kernel_paths("correlation", "temp_plain"),
    supports_add=True, dtypes=HALF_FLOATS,
    doc="FlowNet's correlation of two feature maps over a neighbourhood of displacements."))

register(OpDef(
    name="_backward_Correlation", input_names=("out_grad", "data1", "data2"),
    attrs=dict(CORR_ATTRS), num_outputs=2, output_names=["data1_grad", "data2_grad"],
    infer_shape=_backward_shape,
    infer_type=equal_types("_backward_Correlation", ("out_grad", "data1", "data2")),
    kernels=kernel_paths("correlation", "prepare_correlation_backward"),
    temp=kernel_paths("correlation", "temp_plain"),
    supports_add=True, hidden=True, dtypes=HALF_FLOATS,
    doc="Correlation's gradients to data1 and data2."))
