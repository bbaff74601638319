"""BatchNorm, InstanceNorm and GroupNorm (rules only; kernels in
nbdl.kernels.*.batch_norm).

``BatchNorm`` (MXNet 1.x): inputs ``data``, ``gamma``, ``beta``; aux states
``moving_mean``, ``moving_var`` (all four of shape ``(data.shape[axis],)``,
inferred from the data); attributes ``eps=1e-3``, ``momentum=0.9``,
``fix_gamma=True`` (gamma taken as 1, its gradient 0), ``use_global_stats``,
``output_mean_var``, ``axis=1``, ``cudnn_off`` (ignored) and the
quantisation attributes ``min_calib_range``/``max_calib_range`` (accepted,
ignored).  Three outputs ``output``, ``mean``, ``var`` (per channel; the two
statistics hidden unless ``output_mean_var``).  As MXNet 1.9.1's CPU operator
(checked with and without MKL-DNN), ``mean`` is the mean used and ``var``
holds the inverse standard deviation used, ``1 / sqrt(variance + eps)``, not
the variance: in training the batch mean and biased batch variance, otherwise
the moving ones.

In training (``is_train`` and not ``use_global_stats``) the data is
normalised with the batch mean and the biased batch variance, and the aux
states are updated in place during the forward pass:
``moving = moving * momentum + batch * (1 - momentum)`` (the biased variance,
as MXNet 1.x's CPU operator; MXNet 1.9.1's CPU operator applies that update
in its backward pass, so there a training forward alone leaves them as they
were).  Otherwise the moving statistics are used.  The gradient is
``_backward_BatchNorm(out_grad, data, gamma, mean, invstd) -> (data_grad,
gamma_grad, beta_grad)`` (``mean``/``invstd``: the forward's hidden outputs);
it uses the batch-statistics formula when run in training mode and not
``use_global_stats``, else treats the statistics as constants.  Nothing
flows to the aux states, nor from the ``mean``/``var`` outputs.

``BatchNorm_v1`` (MXNet's legacy operator: no ``axis``, channels on axis 1,
the same other attributes) runs the same kernels; its ``var`` output is the
variance, which its gradient reads back with ``eps``.
``_contrib_BatchNormWithReLU`` (BatchNorm's attributes) is ``relu`` of
BatchNorm in one kernel, with a hidden fourth output ``workspace`` (MXNet's
MKL-DNN scratch; here a copy of the output); its gradient masks the head
gradient where the output is not positive.  float16 data (all of them): the
parameters, moving and saved statistics are float32 (MXNet's rule), the
kernels run in float32 (``OpDef.half_mirrors``).

``InstanceNorm`` (``data`` of at least 3 dimensions ``(N, C, ...)``,
``gamma``/``beta`` ``(C,)``, ``eps=1e-3``): statistics per ``(n, c)`` over the
spatial dimensions; hidden outputs ``mean`` and ``var`` of shape ``(N, C)``.

``GroupNorm`` (``num_groups=1``, ``eps=1e-5``, ``output_mean_var``; data
``(N, C, ...)``): statistics per ``(n, group)``; outputs ``output``, ``mean``,
``std`` with the statistics of shape ``(N, num_groups)`` and
``std = sqrt(var + eps)``.  ``gamma``/``beta`` are either ``(C,)``, one value
per channel as in Gluon 2.0 (inferred when neither shape is known), or
``(num_groups,)``, one value per group as MXNet 1.x's operator and Gluon 1.x
layer have them (so MXNet 1.x -symbol.json/.params files load); both must
have the same form, and their gradients have it too.
"""
import math
from functools import partial

import numpy as np

from ..errors import AttrError
from .ir import backward_node
from .attrs import Attr
from .registry import OpDef, Recompute, kernel_paths, register, shape_error
from .rules import check_arg_shape, checked_inputs, data_axis, known_shape

BN_ATTRS = {
    "eps": Attr("float", 1e-3, doc="Added to the variance before the square root."),
    "momentum": Attr("float", 0.9, doc="Momentum of the moving statistics."),
    "fix_gamma": Attr("bool", True, doc="Treat gamma as 1 (its gradient is 0)."),
    "use_global_stats": Attr("bool", False, doc="Normalise with the moving statistics also "
                                                "in training."),
    "output_mean_var": Attr("bool", False, doc="Also output the mean and variance."),
    "axis": Attr("int", 1, doc="The channel axis."),
    "cudnn_off": Attr("bool", False, doc="Accepted and ignored."),
    "min_calib_range": Attr("float", None, optional=True, doc="Accepted and ignored."),
    "max_calib_range": Attr("float", None, optional=True, doc="Accepted and ignored."),
}
BN_BACKWARD_ATTRS = {k: BN_ATTRS[k] for k in ("fix_gamma", "use_global_stats", "axis")}
BN_APPLY_ATTRS = {k: BN_ATTRS[k] for k in ("fix_gamma", "axis")}
IN_ATTRS = {"eps": Attr("float", 1e-3, doc="Added to the variance before the square root.")}
GN_ATTRS = {
    "num_groups": Attr("int", 1, doc="Number of channel groups."),
    "eps": Attr("float", 1e-5, doc="Added to the variance before the square root."),
    "output_mean_var": Attr("bool", False, doc="Also output the mean and std."),
}


def _check_attrs(opname, attrs):
    eps = attrs.get("eps")            # _backward_BatchNorm has none
    if eps is not None and not (math.isfinite(eps) and eps >= 0):
        raise AttrError(f"{opname}: eps={eps!r} is invalid: it must be a finite number >= 0")
    if "momentum" in attrs and not math.isfinite(attrs["momentum"]):
        raise AttrError(f"{opname}: momentum={attrs['momentum']!r} is invalid")
    if "num_groups" in attrs and attrs["num_groups"] < 1:
        raise AttrError(f"{opname}: num_groups={attrs['num_groups']!r} is invalid: "
                        f"it must be >= 1")


_inputs = partial(checked_inputs, _check_attrs)   # input names, the attributes checked first


def bn_axis(opname, attrs, shape, in_shapes):
    # BatchNorm_v1 has no axis: channels are axis 1
    return data_axis(opname, attrs.get("axis", 1), shape, in_shapes)


def same_float_type(attrs, in_types, out_types):
    known = next((t for t in list(in_types) + list(out_types) if t is not None), None)
    return [known] * len(in_types), [known] * len(out_types)


_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)


def bn_type(data_in, data_out):
    """MXNet's BatchNorm type rule: ``data_in`` / ``data_out`` index the
    inputs / outputs of the data's dtype; the others (gamma, beta, the moving
    and saved statistics) have its accumulation dtype, float32 for float16
    data (as MXNet's ``AccReal``), the data's otherwise."""
    def rule(attrs, in_types, out_types):
        known = [in_types[i] for i in data_in if in_types[i] is not None]
        known += [out_types[i] for i in data_out if out_types[i] is not None]
        if not known:
            return list(in_types), list(out_types)
        d = np.dtype(known[0])
        p = _F32 if d == _F16 else d
        return ([d if i in data_in else p for i in range(len(in_types))],
                [d if i in data_out else p for i in range(len(out_types))])
    return rule


# -- BatchNorm ------------------------------------------------------------------

def bn_shape_rule(opname, channel_axis):
    """The shape rule of a batch-normalisation op (inputs data, gamma, beta,
    moving_mean, moving_var; outputs output, mean, var); ``channel_axis(
    opname, attrs, data_shape, in_shapes)`` gives the channel axis."""
    def infer(attrs, in_shapes, out_shapes):
        data = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
        if data is None:
            # the channel count alone still fills in the other parameters
            c = next((s for s in list(in_shapes[1:]) + list(out_shapes[1:]) if s is not None),
                     None)
            if c is None:
                return in_shapes, out_shapes
            c = tuple(c)
            return [in_shapes[0]] + [c] * 4, [out_shapes[0], c, c]
        data = tuple(data)
        check_arg_shape(opname, "output", out_shapes[0], data, in_shapes)
        param = (int(data[channel_axis(opname, attrs, data, in_shapes)]),)
        for name, s in zip(("gamma", "beta", "moving_mean", "moving_var"), in_shapes[1:]):
            check_arg_shape(opname, name, s, param, in_shapes)
        for name, s in zip(("mean", "var"), out_shapes[1:]):
            check_arg_shape(opname, name, s, param, in_shapes)
        return [data] + [param] * 4, [data, param, param]
    return infer


def bn_gradient_rule(backward, keys, with_output=False):
    """The gradient rule of a batch-normalisation op: ``backward(out_grad,
    data, gamma, mean, var-or-invstd[, output]) -> (data_grad, gamma_grad,
    beta_grad)`` with the forward's attributes ``keys`` (``with_output``:
    BatchNormWithReLU's gradient also reads the forward output)."""
    def gradient(node, out_grads):
        inputs = [out_grads[0], node.inputs[0], node.inputs[1], node.output(1), node.output(2)]
        back = backward_node(backward, inputs + ([node.output(0)] if with_output else []), node,
                             {k: node.attrs[k] for k in keys})
        return [back.output(0), back.output(1), back.output(2)]
    return gradient


def bn_backward_shape_rule(opname, channel_axis, stat):
    """The shape rule of a batch-normalisation gradient op (inputs out_grad,
    data, gamma, mean and ``stat``)."""
    def infer(attrs, in_shapes, out_shapes):
        data = known_shape(in_shapes[1], in_shapes[0], out_shapes[0])
        if data is None:
            return in_shapes, out_shapes
        param = (int(data[channel_axis(opname, attrs, data, in_shapes)]),)
        for name, s, want in (("out_grad", in_shapes[0], data), ("data", in_shapes[1], data),
                              ("gamma", in_shapes[2], param), ("mean", in_shapes[3], param),
                              (stat, in_shapes[4], param), ("data_grad", out_shapes[0], data),
                              ("gamma_grad", out_shapes[1], param),
                              ("beta_grad", out_shapes[2], param)):
            check_arg_shape(opname, name, s, want, in_shapes)
        return [data, data, param, param, param], [data, param, param]
    return infer


_bn_shape = bn_shape_rule("BatchNorm", bn_axis)


def _data_inplace(attrs):
    """The output may take the data's buffer: every kernel finishes a channel's
    (or a row's) statistics before it writes that channel's outputs, and each
    output element reads only its own input element."""
    return [(0, 0)]


def _bn_recompute(node):
    """BatchNorm's output again during backward (a memory budget's
    recompute): normalised with the mean and inverse std the forward wrote
    to its hidden outputs, which the gradient keeps anyway, so the result is
    bitwise the forward's and the moving statistics are not updated twice."""
    return Recompute("_nbdl_BatchNorm_apply",
                     list(node.inputs[:3]) + [node.output(1), node.output(2)],
                     {k: node.attrs[k] for k in BN_APPLY_ATTRS}, [0])


def _bn_apply_shape(attrs, in_shapes, out_shapes):
    opname = "_nbdl_BatchNorm_apply"
    data = known_shape(in_shapes[0], out_shapes[0])
    if data is None:
        return in_shapes, out_shapes
    param = (int(data[bn_axis(opname, attrs, data, in_shapes)]),)
    for name, s in zip(("gamma", "beta", "mean", "invstd"), in_shapes[1:]):
        check_arg_shape(opname, name, s, param, in_shapes)
    check_arg_shape(opname, "output", out_shapes[0], data, in_shapes)
    return [data] + [param] * 4, [data]


BN_KERNELS = kernel_paths("batch_norm", "prepare_batch_norm")
BN_BACKWARD_KERNELS = kernel_paths("batch_norm", "prepare_batch_norm_backward")


def _bn_relu_shape(attrs, in_shapes, out_shapes):
    ins, outs = _bn_shape(attrs, in_shapes, list(out_shapes[:3]))
    data = outs[0] if outs[0] is not None else out_shapes[3]
    return ins, list(outs) + [data]


def _register_bn(name, attrs, backward_keys, stat_name, doc, backward_doc, relu=False,
                 recompute=None):
    """A BatchNorm-like op (the BatchNorm kernels) and its hidden backward op
    (``_backward_BatchNorm``, ``_backward_contrib_BatchNormWithReLU``): data,
    gamma, beta; aux moving_mean, moving_var; outputs output, mean, var (and
    ``workspace`` with ``relu``); the backward takes the saved ``stat_name``
    (and the output with ``relu``)."""
    backward = f"_backward_{name.lstrip('_')}"      # MXNet's _backward_contrib_X
    outputs = ["output", "mean", "var"] + (["workspace"] if relu else [])
    back_shape = bn_backward_shape_rule(backward, bn_axis, stat_name)
    register(OpDef(
        name=name, input_names=_inputs(name, ["data", "gamma", "beta"]),
        aux_names=("moving_mean", "moving_var"),
        num_outputs=len(outputs), output_names=outputs,
        num_visible_outputs=lambda a: 3 if a["output_mean_var"] else 1,
        attrs=dict(attrs),
        infer_shape=_bn_relu_shape if relu else bn_shape_rule(name, bn_axis),
        infer_type=bn_type((0,), (0, 3) if relu else (0,)),
        gradient=bn_gradient_rule(backward, backward_keys, relu),
        kernels=BN_KERNELS, temp=kernel_paths("batch_norm", "temp_batch_norm"),
        inplace=_data_inplace,
        supports_add=True, train_aware=True, mutates_aux=True, half_mirrors=True,
        recompute=recompute,
        input_var_init={"moving_mean": '["zero", {}]', "moving_var": '["one", {}]'}, doc=doc))

    def relu_back_shape(a, in_shapes, out_shapes):
        ins, outs = back_shape(a, in_shapes[:5], out_shapes)
        return list(ins) + [ins[0]], outs
    register(OpDef(
        name=backward,
        input_names=_inputs(backward, ["out_grad", "data", "gamma", "mean", stat_name]
                            + (["output"] if relu else [])),
        num_outputs=3, output_names=["data_grad", "gamma_grad", "beta_grad"],
        attrs={k: attrs[k] for k in backward_keys},
        infer_shape=relu_back_shape if relu else back_shape,
        infer_type=bn_type((0, 1, 5) if relu else (0, 1), (0,)),
        kernels=BN_BACKWARD_KERNELS,
        temp=kernel_paths("batch_norm", "temp_batch_norm_backward"),
        supports_add=True, train_aware=True, hidden=True, half_mirrors=True, doc=backward_doc))


_register_bn("BatchNorm", BN_ATTRS, tuple(BN_BACKWARD_ATTRS), "invstd",
             "Batch normalisation over every axis but ``axis``; updates the moving "
             "statistics in place in training.",
             "BatchNorm's data, gamma and beta gradients.", recompute=_bn_recompute)

# MXNet's legacy operator, on the same kernels: no axis (channels on axis 1), its var
# output the variance (read back by the gradient with eps)
BN_V1_ATTRS = {k: BN_ATTRS[k] for k in ("eps", "momentum", "fix_gamma", "use_global_stats",
                                        "output_mean_var")}
_register_bn("BatchNorm_v1", BN_V1_ATTRS, ("fix_gamma", "use_global_stats", "eps"), "var",
             "MXNet's legacy BatchNorm (channels on axis 1): BatchNorm whose ``var`` output "
             "is the variance used, not the inverse std.",
             "BatchNorm_v1's data, gamma and beta gradients (from the saved variance).")

_register_bn("_contrib_BatchNormWithReLU", BN_ATTRS, tuple(BN_BACKWARD_ATTRS), "invstd",
             "``relu(BatchNorm(data))`` in one kernel (MXNet's MKL-DNN fusion); the hidden "
             "``workspace`` output holds a copy of the output.",
             "BatchNormWithReLU's gradients: BatchNorm's of the head gradient where the "
             "output is positive.", relu=True)


register(OpDef(
    name="_nbdl_BatchNorm_apply",
    input_names=_inputs("_nbdl_BatchNorm_apply", ["data", "gamma", "beta", "mean", "invstd"]),
    attrs=dict(BN_APPLY_ATTRS),
    infer_shape=_bn_apply_shape, infer_type=bn_type((0,), (0,)), half_mirrors=True,
    kernels=kernel_paths("batch_norm", "prepare_batch_norm_apply"),
    temp=kernel_paths("batch_norm", "temp_batch_norm"),
    inplace=_data_inplace, supports_add=True, hidden=True,
    doc="``(data - mean) * invstd * gamma + beta`` per channel, computed as BatchNorm's "
        "forward computes it (bitwise its output for the statistics it saved); what a "
        "memory budget recomputes BatchNorm's output with."))


# -- InstanceNorm / GroupNorm -----------------------------------------------------

def group_dims(opname, attrs, shape, in_shapes):
    """(N, C, G, spatial size) of a data shape, validated."""
    shape = tuple(int(d) for d in shape)
    min_nd = 3 if opname.endswith("InstanceNorm") else 2
    if len(shape) < min_nd:
        raise shape_error(opname, f"data must have at least {min_nd} dimensions (N, C, ...), "
                          f"got {shape}", in_shapes)
    N, C = shape[:2]
    G = attrs.get("num_groups", C)
    if "num_groups" in attrs and C % G:
        raise shape_error(opname, f"num_groups={G} does not divide the {C} channels of data "
                          f"{shape}", in_shapes)
    return N, C, G, math.prod(shape[2:])


def group_param_shape(opname, C, G, named_shapes, in_shapes):
    """The shape of gamma/beta (and their gradients) given the known ones in
    ``named_shapes`` ((name, shape or None) pairs): ``(C,)``, or for GroupNorm
    also ``(G,)`` (MXNet 1.x's per-group form); ``(C,)`` when none is known."""
    allowed = [(C,)] if opname.endswith("InstanceNorm") or G == C else [(C,), (G,)]
    known = [(name, tuple(int(d) for d in s)) for name, s in named_shapes if s is not None]
    for name, s in known:
        if s not in allowed:
            want = " or ".join(str(a) for a in allowed)
            how = "" if len(allowed) == 1 else " (per channel, or per group as in MXNet 1.x)"
            raise shape_error(opname, f"argument {name!r} has shape {s}, expected {want}{how}",
                              in_shapes)
    if len({s for _, s in known}) > 1:
        got = ", ".join(f"{name} {s}" for name, s in known)
        raise shape_error(opname, f"gamma and beta must both be per channel {(C,)} or both "
                          f"per group {(G,)}, got {got}", in_shapes)
    return known[0][1] if known else (C,)


def _group_shape(opname):
    def infer(attrs, in_shapes, out_shapes):
        data = known_shape(in_shapes[0], out_shapes[0])
        if data is None:
            return in_shapes, out_shapes
        check_arg_shape(opname, "output", out_shapes[0], data, in_shapes)
        N, C, G, _ = group_dims(opname, attrs, data, in_shapes)
        param = group_param_shape(opname, C, G, zip(("gamma", "beta"), in_shapes[1:]),
                                  in_shapes)
        stat = (N, G)
        for name, s in zip(("mean", "var/std"), out_shapes[1:]):
            check_arg_shape(opname, name, s, stat, in_shapes)
        return [data, param, param], [data, stat, stat]
    return infer


def _group_backward_shape(opname):
    def infer(attrs, in_shapes, out_shapes):
        data = known_shape(in_shapes[1], in_shapes[0], out_shapes[0])
        if data is None:
            return in_shapes, out_shapes
        N, C, G, _ = group_dims(opname, attrs, data, in_shapes)
        param = group_param_shape(opname, C, G, (("gamma", in_shapes[2]),
                                                 ("gamma_grad", out_shapes[1]),
                                                 ("beta_grad", out_shapes[2])), in_shapes)
        stat = (N, G)
        for name, s, want in (("out_grad", in_shapes[0], data), ("data", in_shapes[1], data),
                              ("mean", in_shapes[3], stat), ("var/std", in_shapes[4], stat),
                              ("data_grad", out_shapes[0], data)):
            check_arg_shape(opname, name, s, want, in_shapes)
        return [data, data, param, stat, stat], [data, param, param]
    return infer


def _group_gradient(back_name, keys):
    def gradient(node, out_grads):
        back = backward_node(back_name, [out_grads[0], node.inputs[0], node.inputs[1],
                                         node.output(1), node.output(2)],
                             node, {k: node.attrs[k] for k in keys})
        return [back.output(0), back.output(1), back.output(2)]
    return gradient


register(OpDef(
    name="InstanceNorm",
    half_mirrors=True,
    input_names=_inputs("InstanceNorm", ["data", "gamma", "beta"]),
    num_outputs=3, num_visible_outputs=1, output_names=["output", "mean", "var"],
    attrs=dict(IN_ATTRS),
    infer_shape=_group_shape("InstanceNorm"), infer_type=same_float_type,
    gradient=_group_gradient("_backward_InstanceNorm", ("eps",)),
    kernels=kernel_paths("batch_norm", "prepare_instance_norm"),
    inplace=_data_inplace,
    supports_add=True,
    doc="Normalise each (sample, channel) over its spatial dimensions, then scale and shift."))

register(OpDef(
    name="_backward_InstanceNorm",
    half_mirrors=True,
    input_names=_inputs("_backward_InstanceNorm", ["out_grad", "data", "gamma", "mean", "var"]),
    num_outputs=3, output_names=["data_grad", "gamma_grad", "beta_grad"],
    attrs=dict(IN_ATTRS),
    infer_shape=_group_backward_shape("_backward_InstanceNorm"), infer_type=same_float_type,
    kernels=kernel_paths("batch_norm", "prepare_instance_norm_backward"),
    supports_add=True, hidden=True,
    doc="InstanceNorm's data, gamma and beta gradients."))

register(OpDef(
    name="GroupNorm",
    input_names=_inputs("GroupNorm", ["data", "gamma", "beta"]),
    num_outputs=3, output_names=["output", "mean", "std"],
    num_visible_outputs=lambda attrs: 3 if attrs["output_mean_var"] else 1,
    attrs=dict(GN_ATTRS),
    infer_shape=_group_shape("GroupNorm"), infer_type=same_float_type,
    gradient=_group_gradient("_backward_GroupNorm", ("num_groups", "eps")),
    kernels=kernel_paths("batch_norm", "prepare_group_norm"),
    inplace=_data_inplace,
    supports_add=True, half_mirrors=True,
    doc="Normalise each (sample, channel group), then scale and shift per channel "
        "((C,) gamma/beta) or per group ((num_groups,), MXNet 1.x)."))

register(OpDef(
    name="_backward_GroupNorm",
    input_names=_inputs("_backward_GroupNorm", ["out_grad", "data", "gamma", "mean", "std"]),
    num_outputs=3, output_names=["data_grad", "gamma_grad", "beta_grad"],
    attrs={k: GN_ATTRS[k] for k in ("num_groups", "eps")},
    infer_shape=_group_backward_shape("_backward_GroupNorm"), infer_type=same_float_type,
    kernels=kernel_paths("batch_norm", "prepare_group_norm_backward"),
    supports_add=True, hidden=True, half_mirrors=True,
    doc="GroupNorm's data, gamma and beta gradients."))
