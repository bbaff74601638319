"""Parametric and smooth activations: rules only (kernels in
nbdl.kernels.*.activations_nn).

``LeakyReLU`` is MXNet's op: ``act_type`` leaky (``x`` or ``slope * x``),
prelu (a learnt slope ``gamma`` per channel, axis 1, of shape ``(C,)`` --
or ``(1,)``, one slope for all channels, as Gluon's ``nn.PReLU()`` makes
it; any gamma that MXNet's ``expand_shape`` broadcasts over axes 0 and 1,
such as ``(N, C)``, its gradient summed over the broadcast axes), elu
(``slope * (e**x - 1)`` below zero), selu, gelu (the exact erf form, as
MXNet computes it) and gelu_tanh (the tanh approximation, MXNet
2's ``act_type='gelu_tanh'``).  ``rrelu`` (a random slope in training) is
rejected with ``AttrError``: nbdl does not implement it.  The gradient is
one hidden op, ``_backward_LeakyReLU(out_grad, data[, gamma]) ->
data_grad[, gamma_grad]``, reading the forward *input*.

``swish`` (``x * sigmoid(beta * x)``; ``silu`` is swish with beta=1),
``log_sigmoid`` and ``mish`` (``x * tanh(softplus(x))``) are standalone
ops (MXNet 2 has log_sigmoid and mish as ``Activation`` act_types and Gluon
builds Swish from sigmoid; these are nbdl's fused forms)."""
from ..errors import AttrError
from .ir import backward_node
from .attrs import Attr
from .elemwise_unary import equal_shapes, elementwise, via
from .registry import OpDef, register, shape_error
from .rules import check_arg_shape, known_shape, same_type

ACT_TYPES = ("elu", "gelu", "gelu_tanh", "leaky", "prelu", "rrelu", "selu")

LEAKY_ATTRS = {
    "act_type": Attr("str", "leaky", choices=ACT_TYPES, doc="The activation."),
    "slope": Attr("float", 0.25, doc="Slope of leaky below zero; elu's scale."),
    "lower_bound": Attr("float", 0.125, doc="rrelu only (not implemented)."),
    "upper_bound": Attr("float", 0.334, doc="rrelu only (not implemented)."),
}


def _check_attrs(opname, attrs):
    if attrs["act_type"] == "rrelu":
        raise AttrError(f"{opname}: act_type='rrelu' (a random slope in training) is not "
                        f"implemented by nbdl; use 'leaky' with slope="
                        f"{(attrs['lower_bound'] + attrs['upper_bound']) / 2!r} (rrelu's "
                        f"inference slope) or 'prelu'")


def _leaky_inputs(attrs):
    _check_attrs("LeakyReLU", attrs)
    return ["data", "gamma"] if attrs["act_type"] == "prelu" else ["data"]


def _backward_inputs(attrs):
    _check_attrs("_backward_LeakyReLU", attrs)
    return ["out_grad", "data", "gamma"] if attrs["act_type"] == "prelu" else ["out_grad", "data"]


def _is_prelu(attrs):
    return attrs["act_type"] == "prelu"


def gamma_axes(gamma, data):
    """MXNet's ``expand_shape``: gamma's shape broadcast against the data's.

    Gamma's axes are matched from its last one against the data's axes 1 and 0
    only (the later axes get 1): an axis takes gamma's extent when that equals
    the data's or is 1, else the data axis gets 1 and the same gamma axis is
    tried on the axis before.  Returns the expanded shape (the data's ndim), or
    ``None`` when gamma's axes are not all used (MXNet's "Cannot broadcast gamma
    to data").

    Parameters
    ----------
    gamma : tuple of int
        Gamma's shape.
    data : tuple of int
        The data's shape.
    """
    gamma, data = tuple(int(g) for g in gamma), tuple(int(d) for d in data)
    out = [1] * len(data)
    s = len(gamma) - 1
    for i in range(min(len(data), 2) - 1, -1, -1):
        if s >= 0 and (data[i] == gamma[s] or gamma[s] == 1):
            out[i] = gamma[s]
            s -= 1
    return tuple(out) if s == -1 else None


def gamma_shape(opname, data, gamma, in_shapes):
    """PReLU's gamma: ``(C,)`` (C = data.shape[1], 1 for 1-D data) when unknown;
    a given gamma must broadcast against the data as MXNet's ``expand_shape``
    does (``(C,)``, ``(1,)``, ``(N, C)``, ``(N, 1)``, ``(N,)`` on axis 0 when
    N differs from C, ...).

    Parameters
    ----------
    opname : str
        For messages.
    data : tuple of int
        The data's shape.
    gamma : tuple of int or None
        Gamma's shape, None when unknown.
    in_shapes : list
        The op's input shapes, for messages.
    """
    c = int(data[1]) if len(data) >= 2 else 1
    if gamma is None:
        return (c,)
    gamma = tuple(gamma)
    if gamma_axes(gamma, data) is None:
        raise shape_error(opname, f"argument 'gamma' has shape {gamma}, which does not "
                          f"broadcast over axes 0 and 1 of data {tuple(data)} (expected "
                          f"({c},), one slope per channel, (1,), or a shape such as "
                          f"{tuple(data[:2])})", in_shapes)
    return gamma


def _leaky_shape(attrs, in_shapes, out_shapes):
    if not _is_prelu(attrs):
        return equal_shapes("LeakyReLU", ["data"])(attrs, in_shapes, out_shapes)
    data = known_shape(in_shapes[0], out_shapes[0])
    if data is None:
        return in_shapes, out_shapes
    check_arg_shape("LeakyReLU", "data", in_shapes[0], data, in_shapes)
    check_arg_shape("LeakyReLU", "output", out_shapes[0], data, in_shapes)
    return [data, gamma_shape("LeakyReLU", data, in_shapes[1], in_shapes)], [data]


def _backward_shape(attrs, in_shapes, out_shapes):
    opname = "_backward_LeakyReLU"
    names = ["out_grad", "data"]
    if not _is_prelu(attrs):
        return equal_shapes(opname, names)(attrs, in_shapes, out_shapes)
    data = known_shape(in_shapes[1], in_shapes[0], out_shapes[0])
    if data is None:
        return in_shapes, out_shapes
    for n, s in (("out_grad", in_shapes[0]), ("data", in_shapes[1]), ("data_grad", out_shapes[0])):
        check_arg_shape(opname, n, s, data, in_shapes)
    gamma = gamma_shape(opname, data, in_shapes[2] if in_shapes[2] is not None else out_shapes[1],
                        in_shapes)
    check_arg_shape(opname, "gamma_grad", out_shapes[1], gamma, in_shapes)
    return [data, data, gamma], [data, gamma]


def _leaky_grad(node, out_grads):
    attrs = {k: node.attrs[k] for k in ("act_type", "slope")}
    back = backward_node("_backward_LeakyReLU", [out_grads[0]] + list(node.inputs), node, attrs)
    if _is_prelu(node.attrs):
        return [back.output(0), back.output(1)]
    return [back.output(0)]


def _leaky_inplace(attrs):
    return [(0, 0)]


def _backward_inplace(attrs):
    # prelu's gamma gradient reads out_grad and data after data_grad is written
    return [] if _is_prelu(attrs) else [(0, 0), (1, 0)]


def _n_out(attrs):
    return 2 if _is_prelu(attrs) else 1


def _kernels(prepare):
    return {"cpu": f"nbdl.kernels.cpu.activations_nn:{prepare}",
            "cuda": f"nbdl.kernels.cuda.activations_nn:{prepare}"}


register(OpDef(
    name="LeakyReLU", input_names=_leaky_inputs, attrs=dict(LEAKY_ATTRS),
    infer_shape=_leaky_shape, infer_type=same_type, gradient=_leaky_grad,
    inplace=_leaky_inplace, kernels=_kernels("prepare_leaky_relu"), supports_add=True,
    half_mirrors=True, input_var_init={"gamma": '["Constant", {"value": 0.25}]'},
    doc="leaky / prelu / elu / selu / gelu (erf) / gelu_tanh activations."),
    aliases=("_npx_leaky_relu",))

register(OpDef(
    name="_backward_LeakyReLU", input_names=_backward_inputs, attrs=dict(LEAKY_ATTRS),
    num_outputs=_n_out,
    output_names=lambda attrs: ["data_grad", "gamma_grad"] if _is_prelu(attrs) else ["data_grad"],
    infer_shape=_backward_shape, infer_type=same_type, inplace=_backward_inplace,
    kernels=_kernels("prepare_leaky_relu_backward"), supports_add=True, hidden=True,
    half_mirrors=True,
    doc="LeakyReLU's data (and prelu's gamma) gradient from the forward input."))

# -- swish, log_sigmoid, mish --------------------------------------------------------------

_SWISH_ATTRS = {"beta": Attr("float", 1.0, doc="x * sigmoid(beta * x)")}

elementwise("swish", attrs=_SWISH_ATTRS, family="activations_nn", prepare="prepare_act",
            half_mirrors=True,
            gradient=via("_backward_swish", "data", ("beta",)), aliases=("silu",),
            doc="x * sigmoid(beta * x) (Gluon's Swish; silu: beta=1).")
elementwise("log_sigmoid", family="activations_nn", prepare="prepare_act", half_mirrors=True,
            gradient=via("_backward_log_sigmoid", "data"), doc="log(sigmoid(x))")
elementwise("mish", family="activations_nn", prepare="prepare_act", half_mirrors=True,
            gradient=via("_backward_mish", "data"), doc="x * tanh(log(1 + e**x))")

elementwise("_backward_swish", input_names=("ograd", "data"), attrs=_SWISH_ATTRS,
            family="activations_nn", prepare="prepare_act", half_mirrors=True, hidden=True)
for _name in ("log_sigmoid", "mish"):
    elementwise(f"_backward_{_name}", input_names=("ograd", "data"), family="activations_nn",
                prepare="prepare_act", hidden=True, half_mirrors=True)
