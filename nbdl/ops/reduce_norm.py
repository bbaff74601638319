"""norm (L1 / L2 over axes) and moments (mean and variance over axes), with
their hidden backward ops.  Rules only; kernels in ``nbdl.kernels.*.reduce``
(norm: the reductions' own loops with two more op codes) and
``nbdl.kernels.*.reduce_norm`` (moments).

Both use ``nbdl.ops.reduce.reduce_plan``: the input in the 6-D view of
alternating kept / reduced axis groups, the result in the 3-D view of the
kept ones, so every axis set runs through one compiled loop per dtype.

- ``norm(data, ord=2, axis=None, out_dtype=None, keepdims=False)``: MXNet's
  ``norm``: ord 1 (sum of |x|) or 2 (sqrt of the sum of squares), over
  ``axis`` (an int or a tuple; None or ``()`` = every axis, shape ``(1,)``),
  accumulated in float64; ``out_dtype`` is the output's dtype (the result
  is cast once).  float16 input or output: forward only (the CPU stages
  them through float32 temps).  Gradient: ``g * x / norm`` (ord 2; NaN where the norm is 0,
  as MXNet) and ``g * sign(x)`` (ord 1; 0 at 0).
- ``moments(data, axes=None, keepdims=False) -> (mean, var)``: the mean and
  the biased variance ``mean((x - mean)**2)`` over ``axes`` (two passes in
  float64).  Gradient: ``g_mean / N + g_var * 2 (x - mean) / N``.
"""
import numpy as np

from ..errors import DTypeError
from .attrs import Attr
from .ir import backward_node
from .reduce import (_backward_infer_shape, reduce_axes, reduce_plan, reduce_temp,
                     reduced_shape)
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import known_shape, output_shape, size_of

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
NORM_INTS = tuple(np.dtype(t) for t in (np.int32, np.int64, np.int8))
HALF = np.dtype(np.float16)
NORM_DTYPES = FLOATS + NORM_INTS + (HALF,)   # float16: forward only
_OUT_DTYPES = ("float16", "float32", "float64", "int64", "int32", "int8")

NORM_ATTRS = {
    "ord": Attr("int", 2, doc="1 or 2."),
    "axis": Attr("tuple", None, optional=True,
                 doc="Axes to reduce (int or tuple); None: every axis."),
    "out_dtype": Attr("str", None, optional=True, choices=_OUT_DTYPES,
                      doc="dtype of the output (default: the input's)."),
    "keepdims": Attr("bool", False, doc="Keep reduced axes with size 1."),
}


def _norm_inputs(attrs):
    # the first rule run on parsed attributes: bad values fail at graph build
    if attrs["ord"] not in (1, 2):
        raise DTypeError(f"norm: ord={attrs['ord']} is not supported (MXNet's norm takes ord=1 "
                         "or ord=2)")
    return ["data"]


def _axes(attrs, ndim, where):
    return reduce_axes({"axis": attrs.get("axis", attrs.get("axes"))}, ndim, where)


def _reduced(attrs, shape, where):
    """``shape`` reduced over the op's axes (checked, with the kernels' plan)."""
    axes = _axes(attrs, len(shape), where)
    reduce_plan(shape, axes, where)
    return reduced_shape(shape, axes, attrs["keepdims"])


def _norm_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    if ins[0] is None:
        return ins, outs
    oshape = _reduced(attrs, ins[0], "norm")
    return ins, output_shape("norm", outs, oshape, in_shapes)


def _check_dtype(where, dt, allowed):
    if dt is not None and np.dtype(dt) not in allowed:
        raise DTypeError(f"{where}: data has dtype {np.dtype(dt)}; supported: "
                         f"{', '.join(str(t) for t in allowed)}")


def _norm_type(attrs, in_types, out_types):
    d = in_types[0]
    od = attrs["out_dtype"]
    if od is None:
        d = d if d is not None else out_types[0]
        _check_dtype("norm", d, NORM_DTYPES)
        return [d], [d]
    _check_dtype("norm", d, NORM_DTYPES)
    return [d], [np.dtype(od)]


def _norm_grad(node, out_grads):
    attrs = {k: node.attrs[k] for k in ("ord", "axis", "keepdims", "out_dtype")}
    back = backward_node("_backward_norm", [out_grads[0], node.inputs[0], node.output(0)], node,
                         attrs)
    return [back.output(0)]


def _norm_backward_type(attrs, in_types, out_types):
    g, d, y = in_types
    d = d if d is not None else out_types[0]
    if d is None:
        return in_types, out_types
    od = np.dtype(attrs["out_dtype"]) if attrs["out_dtype"] is not None else np.dtype(d)
    return [od, d, od], [d]


def norm_temp(call, accumulators=True, stage_half=True):
    """The reductions' accumulators (``reduce_temp``) and, for kernels that
    cannot load or store float16 (``stage_half``: the CPU's), float32
    copies of a float16 input and of a float16 output."""
    temps = reduce_temp(call, accumulators)
    if stage_half and np.dtype(call.in_dtypes[0]) == HALF:
        temps.append(((size_of(call.in_shapes[0]),), "float32"))
    if stage_half and np.dtype(call.out_dtypes[0]) == HALF:
        temps.append(((size_of(call.out_shapes[0]),), "float32"))
    return temps


register(OpDef(
    name="norm", input_names=_norm_inputs, attrs=dict(NORM_ATTRS),
    infer_shape=_norm_shape, infer_type=_norm_type, gradient=_norm_grad,
    temp=kernel_paths("reduce_norm", "temp_norm"),
    kernels=kernel_paths("reduce_norm", "prepare_norm"),
    supports_add=True, dtypes=NORM_DTYPES,
    doc="L1 (``ord=1``) or L2 (``ord=2``) norm over ``axis`` (every axis when not given), "
        "accumulated in float64.\n\nParameters\n----------\ndata : NDArray\n    The input.\n"
        "ord : int\n    1 or 2.\naxis : int or tuple, optional\n    Axes to reduce.\n"
        "out_dtype : str, optional\n    dtype of the result.\nkeepdims : bool\n"
        "    Keep the reduced axes with size 1."))

register(OpDef(
    name="_backward_norm", input_names=("out_grad", "data", "output"), attrs=dict(NORM_ATTRS),
    infer_shape=_backward_infer_shape, infer_type=_norm_backward_type,
    inplace=lambda attrs: [(1, 0)],   # the kernel reads data[i] before writing data_grad[i]
    kernels=kernel_paths("reduce", "prepare_select_backward"),
    supports_add=True, hidden=True, dtypes=FLOATS,
    doc="norm's gradient: ``g * x / norm`` (ord 2) or ``g * sign(x)`` (ord 1)."))


# ---------------------------------------------------------------- moments

MOMENTS_ATTRS = {
    "axes": Attr("tuple", None, optional=True, doc="Axes to reduce; None: every axis."),
    "keepdims": Attr("bool", False, doc="Keep reduced axes with size 1."),
}


def _moments_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    if ins[0] is None:
        return ins, outs
    oshape = _reduced(attrs, ins[0], "moments")
    for name, s in zip(("mean", "var"), outs):
        if s is not None and tuple(s) != oshape:
            raise shape_error("moments", f"output {name} has shape {tuple(s)}, expected {oshape}",
                              in_shapes)
    return ins, [oshape, oshape]


def _same_type(where):
    def rule(attrs, in_types, out_types):
        known = next((t for t in list(in_types) + list(out_types) if t is not None), None)
        _check_dtype(where, known, FLOATS + (HALF,))   # float16 through half_mirrors
        return [known] * len(in_types), [known] * len(out_types)
    return rule


def _moments_grad(node, out_grads):
    back = backward_node("_backward_moments",
                         [out_grads[0], out_grads[1], node.inputs[0], node.output(0)], node)
    return [back.output(0)]


def _moments_backward_shape(attrs, in_shapes, out_shapes):
    ins, outs = list(in_shapes), list(out_shapes)
    d = known_shape(ins[2], outs[0])
    if d is None:
        return ins, outs
    small = reduced_shape(d, _axes(attrs, len(d), "_backward_moments"), attrs["keepdims"])
    return [small, small, tuple(d), small], [tuple(d)]


def moments_temp(call, accumulators=True):
    """Two float64 accumulators per output element (mean, then the squared
    deviations) for kernels that keep them in memory (the CPU's); an empty
    buffer for kernels that accumulate in registers (CUDA)."""
    return [((2 * size_of(call.out_shapes[0]) if accumulators else 0,), "float64")]


register(OpDef(
    name="moments", attrs=dict(MOMENTS_ATTRS), num_outputs=2, output_names=("mean", "var"),
    half_mirrors=True,
    infer_shape=_moments_shape, infer_type=_same_type("moments"), gradient=_moments_grad,
    temp=kernel_paths("reduce_norm", "temp_moments"),
    kernels=kernel_paths("reduce_norm", "prepare_moments"),
    doc="Mean and (biased) variance over ``axes`` (every axis when not given).\n\n"
        "Parameters\n----------\ndata : NDArray\n    The input.\naxes : tuple, optional\n"
        "    Axes to reduce.\nkeepdims : bool\n    Keep the reduced axes with size 1."))

register(OpDef(
    name="_backward_moments", input_names=("out_grad_mean", "out_grad_var", "data", "mean"),
    half_mirrors=True,
    attrs=dict(MOMENTS_ATTRS),
    infer_shape=_moments_backward_shape, infer_type=_same_type("_backward_moments"),
    inplace=lambda attrs: [(2, 0)],   # data[i] is read before data_grad[i] is written
    kernels=kernel_paths("reduce_norm", "prepare_moments_backward"),
    supports_add=True, hidden=True,
    doc="moments' gradient: ``g_mean / N + g_var * 2 (x - mean) / N``."))
