"""topk: the k largest (or smallest) elements along an axis (rules only;
kernels in nbdl.kernels.*.topk).

MXNet's ``topk``: attributes ``axis=-1`` (None: the flattened array),
``k=1`` (``k < 1``: every element, a full sort), ``ret_typ`` ('indices',
'value', 'both', 'mask'), ``is_ascend=False`` and ``dtype`` (of the indices,
float32 by default).  Outputs as MXNet declares them:

- 'indices': the positions, data's shape with the axis cut to k, in ``dtype``;
- 'value': the values (visible) and their positions (hidden, for backward);
- 'both': values and positions, both visible;
- 'mask': data's shape, 1 where an element is among the top k, else 0.

Order: largest first (smallest first when ``is_ascend``); equal values keep
their index order; NaN counts as larger than every number.  The gradient
of the values scatters the head gradient back to the positions they came
from (hidden ``_backward_topk(out_grad, indices, data)``, data for its
shape only); positions and masks have none.
"""
import numpy as np

from ..errors import DTypeError
from .ir import backward_node
from .attrs import Attr
from .registry import FLOAT_DTYPES, OpDef, kernel_paths, register, shape_error
from .rules import known_shape

_INT_DTYPES = tuple(np.dtype(t) for t in (np.int32, np.int64, np.uint8))
TOPK_DTYPES = FLOAT_DTYPES + _INT_DTYPES + (np.dtype(np.float16),)
# data dtypes (MXNet sorts integer data too; its test_order checks int32 and int64;
# float16 data runs the float32 kernels: OpDef.half_mirrors)
DATA_DTYPES = FLOAT_DTYPES + _INT_DTYPES[:2] + (np.dtype(np.float16),)
RET_TYPES = ("indices", "value", "both", "mask")

TOPK_ATTRS = {
    "axis": Attr("int", -1, optional=True, doc="Axis to select along; None: flattened."),
    "k": Attr("int", 1, doc="How many elements; k < 1 selects all of them."),
    "ret_typ": Attr("str", "indices", choices=RET_TYPES, doc="What to return."),
    "is_ascend": Attr("bool", False, doc="Select the smallest instead of the largest."),
    "dtype": Attr("str", "float32",
                  choices=("float16", "float32", "float64", "int32", "int64", "uint8"),
                  doc="dtype of the returned indices."),
}


def _inputs(attrs):
    return ["data"]


def num_outputs(attrs):
    return 2 if attrs["ret_typ"] in ("value", "both") else 1


def num_visible(attrs):
    return 2 if attrs["ret_typ"] == "both" else 1


def output_names(attrs):
    r = attrs["ret_typ"]
    return {"indices": ["indices"], "mask": ["mask"], "value": ["value", "indices"],
            "both": ["value", "indices"]}[r]


def topk_geometry(attrs, shape, in_shapes=None, where="topk"):
    """``(outer, n, inner, k, out_shape)``: the data viewed around the axis,
    the resolved k and the shape of the value/indices outputs."""
    shape = tuple(int(d) for d in shape)
    axis = attrs["axis"]
    if axis is None:
        outer, n, inner, a = 1, int(np.prod(shape, dtype=np.int64)), 1, None
    else:
        nd = len(shape)
        if not -nd <= axis < nd:
            raise shape_error(where, f"axis={axis} is out of range for data of {nd} "
                              f"dimension(s) {shape}", in_shapes)
        a = axis + nd if axis < 0 else axis
        outer = int(np.prod(shape[:a], dtype=np.int64))
        n = shape[a]
        inner = int(np.prod(shape[a + 1:], dtype=np.int64))
    k = attrs["k"] if attrs["k"] >= 1 else n
    if k > n:
        raise shape_error(where, f"k={attrs['k']} is larger than the {n} element(s) along "
                          f"axis={axis} of data {shape}", in_shapes)
    out = (k,) if a is None else shape[:a] + (k,) + shape[a + 1:]
    return outer, n, inner, k, out


def _topk_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    *_, out = topk_geometry(attrs, d, in_shapes)
    want = [tuple(d)] if attrs["ret_typ"] == "mask" else [out] * num_outputs(attrs)
    for got, w in zip(out_shapes, want):
        if got is not None and tuple(got) != w:
            raise shape_error("topk", f"output shape {tuple(got)} does not match {w} (axis="
                              f"{attrs['axis']}, k={attrs['k']}, ret_typ={attrs['ret_typ']!r})",
                              in_shapes)
    return [tuple(d)], want


def _topk_type(attrs, in_types, out_types):
    d = in_types[0]
    if d is None and attrs["ret_typ"] in ("value", "both", "mask"):
        d = out_types[0]
    if d is None:
        return in_types, out_types
    if np.dtype(d) not in DATA_DTYPES:
        raise DTypeError(f"topk: data has dtype {np.dtype(d)}; topk supports "
                         f"{', '.join(str(t) for t in DATA_DTYPES)}")
    idx = np.dtype(attrs["dtype"])
    outs = {"indices": [idx], "mask": [d], "value": [d, idx], "both": [d, idx]}
    return [d], outs[attrs["ret_typ"]]


def _topk_grad(node, out_grads):
    if node.attrs["ret_typ"] not in ("value", "both"):
        return [None]  # positions and masks are piecewise constant
    g = backward_node("_backward_topk", [out_grads[0], node.output(1), node.inputs[0]], node)
    return [g.output(0)]


def _backward_shape(attrs, in_shapes, out_shapes):
    og, idx, d = in_shapes
    d = known_shape(d, out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    *_, out = topk_geometry(attrs, d, in_shapes, "_backward_topk")
    for name, s in (("out_grad", og), ("indices", idx)):
        if s is not None and tuple(s) != out:
            raise shape_error("_backward_topk", f"{name} has shape {tuple(s)}, expected {out}",
                              in_shapes)
    return [out, out, tuple(d)], [tuple(d)]


def _backward_type(attrs, in_types, out_types):
    g = next((t for t in (in_types[0], in_types[2], out_types[0]) if t is not None), None)
    if g is None:
        return in_types, out_types
    idx = in_types[1] if in_types[1] is not None else np.dtype(attrs["dtype"])
    return [g, idx, g], [g]


def topk_temp(call, scratch=True):
    """One row's positions and a merge-sort buffer (int64) for kernels that
    sort with ``scratch`` (the CPU's); empty buffers for kernels that rank
    elements without (CUDA).  Each device's module names its rule.  (float16
    data, values or positions go through float32 mirrors: ``half_mirrors``.)"""
    if not scratch:
        return [((0,), "int64"), ((0,), "int64")]
    _, n, _, _, _ = topk_geometry(call.attrs, call.in_shapes[0])
    return [((n,), "int64"), ((n,), "int64")]


register(OpDef(
    name="topk",
    input_names=_inputs,
    num_outputs=num_outputs, num_visible_outputs=num_visible, output_names=output_names,
    attrs=dict(TOPK_ATTRS),
    infer_shape=_topk_shape, infer_type=_topk_type,
    gradient=_topk_grad,
    temp=kernel_paths("topk", "temp_topk"),
    half_mirrors=True,
    kernels=kernel_paths("topk", "prepare_topk"),
    dtypes=TOPK_DTYPES,
    doc="The k largest (is_ascend: smallest) elements along ``axis``: their positions, "
        "values, both, or a mask."))

register(OpDef(
    name="_backward_topk",
    input_names=("out_grad", "indices", "data"),
    attrs=dict(TOPK_ATTRS),
    infer_shape=_backward_shape, infer_type=_backward_type,
    half_mirrors=True,
    kernels=kernel_paths("topk", "prepare_topk_backward"),
    supports_add=True, hidden=True, dtypes=TOPK_DTYPES, int_inputs=(1,), shape_inputs=(2,),
    doc="Scatter of topk's value gradient to the positions the values came from."))
