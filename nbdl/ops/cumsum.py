"""cumsum: the running sum along an axis (MXNet's ``_np_cumsum``, alias
``cumsum``; rules only, kernels in ``nbdl.kernels.*.cumsum``).

``axis=None`` sums the flattened array (output shape ``(size,)``);
``dtype`` is the output's dtype (default the input's; an integer input
stays integer and wraps, as MXNet), and the sum runs in it, as MXNet's
kernel does (float16: in float32, rounded once, through
``OpDef.half_mirrors``).  The data is viewed as ``(outer, n, inner)`` around the axis.
Gradient: the reversed running sum of the head gradient
(``_backward_np_cumsum(out_grad, data)``, data for its shape and dtype).
"""
import numpy as np

from ..errors import DTypeError
from .attrs import Attr
from .ir import backward_node
from .registry import OpDef, kernel_paths, register, shape_error

CUMSUM_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64,
                                            np.int8, np.uint8))
CUMSUM_ATTRS = {
    "axis": Attr("int", None, optional=True, doc="Axis to sum along; None: the flattened array."),
    "dtype": Attr("str", None, optional=True,
                  choices=("float16", "float32", "float64", "int8", "int32", "int64"),
                  doc="dtype of the output (default: the input's)."),
}


def cumsum_geometry(attrs, shape, where="cumsum", in_shapes=None):
    """``(outer, n, inner)`` of the data around ``axis``."""
    shape = tuple(int(d) for d in shape)
    axis = attrs["axis"]
    size = int(np.prod(shape, dtype=np.int64))
    if axis is None:
        return 1, size, 1
    nd = len(shape)
    if not -nd <= axis < nd:
        raise shape_error(where, f"axis={axis} is out of range for data of {nd} dimension(s) "
                          f"{shape}", in_shapes)
    a = axis + nd if axis < 0 else axis
    return (int(np.prod(shape[:a], dtype=np.int64)), shape[a],
            int(np.prod(shape[a + 1:], dtype=np.int64)))


def _out_shape(attrs, shape, in_shapes):
    cumsum_geometry(attrs, shape, "cumsum", in_shapes)
    if attrs["axis"] is None:
        return (int(np.prod(shape, dtype=np.int64)),)
    return tuple(shape)


def _inputs(attrs):
    return ["a"]


def _shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        if attrs["axis"] is not None and out_shapes[0] is not None:
            return [tuple(out_shapes[0])], out_shapes
        return in_shapes, out_shapes
    out = _out_shape(attrs, d, in_shapes)
    if out_shapes[0] is not None and tuple(out_shapes[0]) != out:
        raise shape_error("cumsum", f"output has shape {tuple(out_shapes[0])}, expected {out}",
                          in_shapes)
    return [tuple(d)], [out]


def _check(where, d):
    allowed = CUMSUM_DTYPES + (np.dtype(np.float16),)
    if d is not None and np.dtype(d) not in allowed:
        raise DTypeError(f"{where}: data has dtype {np.dtype(d)}; supported: "
                         f"{', '.join(str(t) for t in allowed)}")


def _type(attrs, in_types, out_types):
    d = in_types[0]
    if attrs["dtype"] is not None:
        _check("cumsum", d)
        return [d], [np.dtype(attrs["dtype"])]
    d = d if d is not None else out_types[0]
    _check("cumsum", d)
    return [d], [d]


def _grad(node, out_grads):
    g = backward_node("_backward_np_cumsum", [out_grads[0], node.inputs[0]], node)
    return [g.output(0)]


def _backward_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[1] if in_shapes[1] is not None else out_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    return [_out_shape(attrs, d, in_shapes), tuple(d)], [tuple(d)]


def _backward_type(attrs, in_types, out_types):
    d = in_types[1] if in_types[1] is not None else out_types[0]
    if d is None:
        return in_types, out_types
    g = in_types[0] if in_types[0] is not None else (
        np.dtype(attrs["dtype"]) if attrs["dtype"] is not None else d)
    return [g, d], [d]


_KERNELS = "nbdl.kernels.{}.cumsum:prepare_cumsum"

register(OpDef(
    name="_np_cumsum", input_names=_inputs, attrs=dict(CUMSUM_ATTRS),
    infer_shape=_shape, infer_type=_type, gradient=_grad,
    half_mirrors=True,
    kernels={"cpu": _KERNELS.format("cpu"), "cuda": _KERNELS.format("cuda")},
    dtypes=CUMSUM_DTYPES,
    doc="The running sum along ``axis`` (of the flattened array when None).\n\n"
        "Parameters\n----------\na : NDArray\n    The input.\naxis : int, optional\n"
        "    Axis to sum along.\ndtype : str, optional\n    dtype of the result."),
    aliases=("cumsum",))

register(OpDef(
    name="_backward_np_cumsum", input_names=("out_grad", "data"), attrs=dict(CUMSUM_ATTRS),
    infer_shape=_backward_shape, infer_type=_backward_type,
    half_mirrors=True,
    kernels=kernel_paths("cumsum", "prepare_cumsum_backward"),
    temp=kernel_paths("cumsum", "temp_cumsum_backward"),
    supports_add=True, hidden=True, shape_inputs=(1,), dtypes=CUMSUM_DTYPES,
    doc="cumsum's gradient: the running sum of the head gradient from the end."))
