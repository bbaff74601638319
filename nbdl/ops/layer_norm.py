"""LayerNorm: normalise over one axis, then scale and shift (rules only;
kernels in nbdl.kernels.*.layer_norm).

MXNet's ``LayerNorm``: inputs ``data``, ``gamma``, ``beta`` (both of shape
``(data.shape[axis],)``, inferred from the data); attributes ``axis=-1``,
``eps=1e-5``, ``output_mean_var=False``.  Three outputs as in MXNet:
``output``, ``mean`` and ``std`` (the data's shape with the axis set to 1;
``std = sqrt(var + eps)``); mean and std are hidden unless
``output_mean_var``.  The gradient is one hidden op,
``_backward_LayerNorm(out_grad, data, gamma, mean, std) -> (data_grad,
gamma_grad, beta_grad)``, computed in one pass over the data.  As in MXNet,
head gradients arriving at the mean and std outputs are ignored.
"""
import math
from functools import partial

from ..errors import AttrError
from .ir import backward_node
from .attrs import Attr
from .registry import OpDef, kernel_paths, register
from .rules import check_arg_shape, checked_inputs, data_axis, known_shape

LAYER_NORM_ATTRS = {
    "axis": Attr("int", -1, doc="The axis to normalise over."),
    "eps": Attr("float", 1e-5, doc="Added to the variance before the square root."),
    "output_mean_var": Attr("bool", False, doc="Also output the mean and std."),
}


def check_layer_norm_attrs(opname, attrs):
    eps = attrs["eps"]
    if not (math.isfinite(eps) and eps >= 0):
        raise AttrError(f"{opname}: eps={eps!r} is invalid: it must be a finite number >= 0")


_inputs = partial(checked_inputs, check_layer_norm_attrs)   # input names, the attributes checked first


def stat_shape(opname, attrs, shape, in_shapes):
    """(normalised axis, shape of mean/std, shape of gamma/beta)."""
    a = data_axis(opname, attrs["axis"], shape, in_shapes)
    stat = tuple(1 if i == a else int(d) for i, d in enumerate(shape))
    return a, stat, (int(shape[a]),)


def _forward_shape(attrs, in_shapes, out_shapes):
    opname = "LayerNorm"
    data = known_shape(in_shapes[0], out_shapes[0])
    if data is None:
        return in_shapes, out_shapes
    check_arg_shape(opname, "output", out_shapes[0], data, in_shapes)
    _, stat, param = stat_shape(opname, attrs, data, in_shapes)
    check_arg_shape(opname, "gamma", in_shapes[1], param, in_shapes)
    check_arg_shape(opname, "beta", in_shapes[2], param, in_shapes)
    for name, s in zip(("mean", "std"), out_shapes[1:]):
        check_arg_shape(opname, name, s, stat, in_shapes)
    return [data, param, param], [data, stat, stat]


def same_float_type(attrs, in_types, out_types):
    known = next((t for t in list(in_types) + list(out_types) if t is not None), None)
    return [known] * len(in_types), [known] * len(out_types)


def _gradient(node, out_grads):
    back = backward_node("_backward_LayerNorm", [out_grads[0], node.inputs[0], node.inputs[1],
                                                 node.output(1), node.output(2)],
                         node, {"axis": node.attrs["axis"], "eps": node.attrs["eps"]})
    return [back.output(0), back.output(1), back.output(2)]


def _backward_shape(attrs, in_shapes, out_shapes):
    opname = "_backward_LayerNorm"
    data = known_shape(in_shapes[1], in_shapes[0], out_shapes[0])
    if data is None:
        return in_shapes, out_shapes
    for name, s in (("out_grad", in_shapes[0]), ("data", in_shapes[1]),
                    ("data_grad", out_shapes[0])):
        check_arg_shape(opname, name, s, data, in_shapes)
    _, stat, param = stat_shape(opname, attrs, data, in_shapes)
    for name, s, want in (("gamma", in_shapes[2], param), ("mean", in_shapes[3], stat),
                          ("std", in_shapes[4], stat), ("gamma_grad", out_shapes[1], param),
                          ("beta_grad", out_shapes[2], param)):
        check_arg_shape(opname, name, s, want, in_shapes)
    return [data, data, param, stat, stat], [data, param, param]


register(OpDef(
    name="LayerNorm",
    input_names=_inputs("LayerNorm", ["data", "gamma", "beta"]),
    num_outputs=3, output_names=["output", "mean", "std"],
    num_visible_outputs=lambda attrs: 3 if attrs["output_mean_var"] else 1,
    attrs=dict(LAYER_NORM_ATTRS),
    infer_shape=_forward_shape, infer_type=same_float_type,
    gradient=_gradient,
    half_mirrors=True,
    kernels=kernel_paths("layer_norm", "prepare_layer_norm"),
    supports_add=True,
    doc="(data - mean) / sqrt(var + eps) * gamma + beta, with mean and var over ``axis``."))

register(OpDef(
    name="_backward_LayerNorm",
    input_names=_inputs("_backward_LayerNorm", ["out_grad", "data", "gamma", "mean", "std"]),
    num_outputs=3, output_names=["data_grad", "gamma_grad", "beta_grad"],
    attrs={"axis": LAYER_NORM_ATTRS["axis"], "eps": LAYER_NORM_ATTRS["eps"]},
    infer_shape=_backward_shape, infer_type=same_float_type,
    half_mirrors=True,
    kernels=kernel_paths("layer_norm", "prepare_layer_norm_backward"),
    supports_add=True, hidden=True,
    doc="LayerNorm's data, gamma and beta gradients from the saved mean and std."))
