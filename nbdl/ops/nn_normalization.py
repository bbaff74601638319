"""L2Normalization and LRN (rules only; kernels in
``nbdl.kernels.*.nn_normalization``, per-column math in
``nbdl.kernels.shared.nn_normalization``).

``L2Normalization(data, eps=1e-10, mode='instance')`` divides by
``sqrt(sum(x**2) + eps)`` over every axis but the first (``instance``),
over axis 1 (``channel``, at least 3-D) or over the axes after the second
(``spatial``, at least 3-D).  Its hidden second output ``norm`` (shape
``(N,)``, the data's with axis 1 set to 1, or ``(N, C)``) is what the
gradient reads, as MXNet's: ``dx = (g - y * sum(g * y)) / norm`` over the
same axes, from the head gradient, the output and the norm.

``LRN(data, alpha=1e-4, beta=0.75, knorm=2, nsize)`` on (N, C, H, W):
``out = x * (knorm + alpha / nsize * sum of x**2 over the nsize channels
centred on c) ** -beta`` (the window clipped at the edges; ``nsize`` odd).
The hidden output ``tmp_norm`` holds the bracket; the gradient reads the
data and it (``_backward_LRN``)."""

from ..errors import AttrError
from .attrs import Attr
from .ir import backward_node
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import known_shape, same_type



# -- L2Normalization ------------------------------------------------------------------

L2_ATTRS = {
    "eps": Attr("float", 1e-10, doc="Added to the sum of squares before the square root."),
    "mode": Attr("str", "instance", choices=("instance", "channel", "spatial"),
                 doc="Normalise each instance, across channels, or over each channel's "
                     "spatial positions."),
}


def l2_norm_shape(attrs, dshape):
    """The shape of L2Normalization's ``norm`` output for data ``dshape``."""
    mode = attrs["mode"]
    if mode == "instance":
        return (dshape[0],)
    if mode == "channel":
        return (dshape[0], 1) + tuple(dshape[2:])
    return (dshape[0], dshape[1])


def _l2_shape(opname):
    def infer_shape(attrs, in_shapes, out_shapes):
        d = known_shape(in_shapes[0], out_shapes[0])
        if d is None:
            return in_shapes, out_shapes
        if len(d) < 1 or (attrs["mode"] != "instance" and len(d) < 3):
            need = 1 if attrs["mode"] == "instance" else 3
            raise shape_error(opname, f"data must have at least {need} dimension(s) in mode "
                              f"{attrs['mode']!r}, got {d}", in_shapes)
        return [d] * len(in_shapes), [d, l2_norm_shape(attrs, d)][:len(out_shapes)]
    return infer_shape


def _l2_grad(node, out_grads):
    g = backward_node("_backward_L2Normalization", [out_grads[0], node.output(0), node.output(1)],
                      node)
    return [g.output(0)]


def _l2_backward_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[1] if in_shapes[1] is not None else (in_shapes[0] or out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    d = tuple(d)
    return [d, d, l2_norm_shape(attrs, d)], [d]


register(OpDef(
    name="L2Normalization", input_names=("data",), attrs=dict(L2_ATTRS),
    half_mirrors=True,
    num_outputs=2, num_visible_outputs=1, output_names=["output", "norm"],
    infer_shape=_l2_shape("L2Normalization"), infer_type=same_type, gradient=_l2_grad,
    kernels=kernel_paths("nn_normalization", "prepare_l2"),
    doc="x / sqrt(sum(x**2) + eps) per instance, across channels or over spatial "
        "positions (``mode``)."))

register(OpDef(
    name="_backward_L2Normalization", input_names=("out_grad", "output", "norm"),
    half_mirrors=True,
    attrs=dict(L2_ATTRS), infer_shape=_l2_backward_shape, infer_type=same_type,
    # each column reads its head gradient fully before writing the gradient
    inplace=lambda attrs: [(0, 0)],
    kernels=kernel_paths("nn_normalization", "prepare_l2_backward"),
    supports_add=True, hidden=True,
    doc="Gradient of L2Normalization from the head gradient, its output and its norm."))


# -- LRN --------------------------------------------------------------------------------

LRN_ATTRS = {
    "alpha": Attr("float", 1e-4, doc="The variance scaling parameter."),
    "beta": Attr("float", 0.75, doc="The power parameter."),
    "knorm": Attr("float", 2.0, doc="The constant k added to the scaled sum."),
    "nsize": Attr("int", doc="The window width in channels (odd)."),
}


def _lrn_inputs(attrs):
    if attrs["nsize"] < 1 or attrs["nsize"] % 2 != 1:
        raise AttrError(f"LRN: nsize={attrs['nsize']} is invalid: LRN supports only odd, "
                        f"positive window widths")
    return ["data"]


def _lrn_shape(opname, n_in):
    def infer_shape(attrs, in_shapes, out_shapes):
        known = next((s for s in list(in_shapes) + list(out_shapes) if s is not None), None)
        if known is None:
            return in_shapes, out_shapes
        known = tuple(known)
        if len(known) != 4:
            raise shape_error(opname, f"data must be 4-D (N, C, H, W), got {known}", in_shapes)
        for s in list(in_shapes) + list(out_shapes):
            if s is not None and tuple(s) != known:
                raise shape_error(opname, f"shapes must agree, got {tuple(s)} and {known}",
                                  in_shapes)
        return [known] * n_in, [known] * len(out_shapes)
    return infer_shape


def _lrn_grad(node, out_grads):
    g = backward_node("_backward_LRN", [out_grads[0], node.inputs[0], node.output(1)], node)
    return [g.output(0)]


register(OpDef(
    name="LRN", input_names=_lrn_inputs, attrs=dict(LRN_ATTRS),
    half_mirrors=True,
    num_outputs=2, num_visible_outputs=1, output_names=["output", "tmp_norm"],
    infer_shape=_lrn_shape("LRN", 1), infer_type=same_type, gradient=_lrn_grad,
    kernels=kernel_paths("nn_normalization", "prepare_lrn"),
    doc="Local response normalisation across channels: "
        "x * (knorm + alpha / nsize * sum of x**2 over nsize channels) ** -beta."))

register(OpDef(
    name="_backward_LRN", input_names=("out_grad", "data", "tmp_norm"), attrs=dict(LRN_ATTRS),
    half_mirrors=True,
    infer_shape=_lrn_shape("_backward_LRN", 3), infer_type=same_type,
    kernels=kernel_paths("nn_normalization", "prepare_lrn_backward"),
    supports_add=True, hidden=True,
    doc="Gradient of LRN from the head gradient, the data and tmp_norm."))


__all__ = ["l2_norm_shape"]
