"""_contrib_PSROIPooling, _contrib_DeformablePSROIPooling and
_contrib_RROIAlign (rules only; kernels in ``nbdl.kernels.*.roi_contrib``,
the per-bin math in ``nbdl.kernels.shared.roi_contrib``), with MXNet 1.9.1's
names, inputs and attributes.  ``data`` is (N, C, H, W); the outputs are
(R, channels, PH, PW) for R regions.

- ``_contrib_PSROIPooling(data, rois, spatial_scale, output_dim,
  pooled_size, group_size=0)`` (R-FCN): rois (R, 5) rows ``[batch, x1, y1,
  x2, y2]``, corners rounded half away from zero, the box
  ``[x1, x2 + 1) * spatial_scale`` (at least 0.1 wide) split into
  ``pooled_size``^2 bins; output channel ``k`` of bin (ph, pw) averages data
  channel ``(k * G + gh) * G + gw`` (G = ``group_size``, ``pooled_size``
  when 0; (gh, gw) the bin's group) over the bin's whole pixels (0 for an
  empty bin).  Needs C >= output_dim * G * G.  Gradient to data
  (``_backward_PSROIPooling``); rois get zeros.
- ``_contrib_DeformablePSROIPooling(data, rois, trans, spatial_scale,
  output_dim, group_size, pooled_size, part_size=0, sample_per_part=1,
  trans_std=0, no_trans=False)`` (Deformable ConvNets): the box is shifted
  by half a pixel; each bin is moved by ``trans`` (R, 2 * classes,
  part_size, part_size) times ``trans_std`` times the box size (class
  ``k // (output_dim / classes)``, part ``floor(ph / PH * part_size)``), then
  averages ``sample_per_part``^2 bilinear samples (samples more than half a
  pixel outside are skipped).  ``no_trans=True`` drops the ``trans`` input.
  Gradients to data and trans (``_backward_DeformablePSROIPooling``).
- ``_contrib_RROIAlign(data, rois, pooled_size, spatial_scale,
  sampling_ratio=-1)``: rotated rois (R, 6) rows ``[batch, x_centre,
  y_centre, width, height, angle in degrees]``; ROIAlign's bilinear samples
  on the rotated grid.  No gradient, as in MXNet: asking for one raises
  ``GraphError``.

A batch index outside [0, N) gives zeros (MXNet reads out of bounds).
Float16 (computed in float32), float32 and float64.
"""
import numpy as np

from ..errors import AttrError, GraphError
from .attrs import Attr
from .elemwise_unary import equal_types
from .ir import backward_node, zero_grad
from .registry import OpDef, kernel_paths, register, shape_error
from .roi import roi_inputs
from .rules import known_shape

HALF_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))

PSROI_ATTRS = {
    "spatial_scale": Attr("float", doc="Feature map size over image size."),
    "output_dim": Attr("int", doc="Output channels."),
    "pooled_size": Attr("int", doc="Bins per side."),
    "group_size": Attr("int", 0, doc="Position-sensitive groups per side (0: pooled_size)."),
}
DEFORMABLE_ATTRS = dict(PSROI_ATTRS, **{
    "group_size": Attr("int", doc="Position-sensitive groups per side."),
    "part_size": Attr("int", 0, doc="Offset parts per side (0: pooled_size)."),
    "sample_per_part": Attr("int", 1, doc="Samples per bin side."),
    "trans_std": Attr("float", 0.0, doc="Scale of the offsets."),
    "no_trans": Attr("bool", False, doc="No offsets (no trans input)."),
})
RROI_ATTRS = {
    "pooled_size": Attr("tuple", doc="Output (h, w)."),
    "spatial_scale": Attr("float", doc="Feature map size over image size."),
    "sampling_ratio": Attr("int", -1, doc="Samples per bin side (<= 0: adaptive)."),
}


def _kernels(name):
    return {"cpu": f"nbdl.kernels.cpu.roi_contrib:prepare_{name}",
            "cuda": f"nbdl.kernels.cuda.roi_contrib:prepare_{name}"}


TEMP = kernel_paths("roi_contrib", "temp_plain")


def group_of(attrs):
    """The effective group size (``group_size``, or ``pooled_size`` when 0)."""
    return attrs["group_size"] if attrs["group_size"] > 0 else attrs["pooled_size"]


def part_of(attrs):
    """The effective part size (``part_size``, or ``pooled_size`` when 0)."""
    return attrs["part_size"] if attrs["part_size"] > 0 else attrs["pooled_size"]


def _check_common(opname, attrs):
    if not 0.0 <= attrs["spatial_scale"] <= 1.0:
        raise AttrError(f"{opname}: spatial_scale={attrs['spatial_scale']} must be in [0, 1]")
    for name in ("output_dim", "pooled_size"):
        if attrs[name] < 1:
            raise AttrError(f"{opname}: {name}={attrs[name]} must be positive")


def _psroi_inputs(attrs):
    _check_common("_contrib_PSROIPooling", attrs)
    return ["data", "rois"]


def _deformable_inputs(attrs):
    opname = "_contrib_DeformablePSROIPooling"
    _check_common(opname, attrs)
    for name in ("group_size", "sample_per_part"):
        if attrs[name] < 1:
            raise AttrError(f"{opname}: {name}={attrs[name]} must be positive")
    if not 0.0 <= attrs["trans_std"] <= 1.0:
        raise AttrError(f"{opname}: trans_std={attrs['trans_std']} must be in [0, 1]")
    return ["data", "rois"] if attrs["no_trans"] else ["data", "rois", "trans"]


def _data_rois(opname, in_shapes, width):
    d, b = in_shapes[0], in_shapes[1]
    if d is None or b is None:
        return None, None
    d, b = tuple(d), tuple(b)
    if len(d) != 4:
        raise shape_error(opname, f"data must be 4-D (N, C, H, W), got {d}", in_shapes)
    if len(b) != 2 or b[1] != width:
        raise shape_error(opname, f"rois must be (num_rois, {width}), got {b}", in_shapes)
    return d, b


def _check_channels(opname, attrs, d, in_shapes):
    g = group_of(attrs)
    if d[1] < attrs["output_dim"] * g * g:
        raise shape_error(opname, f"data has {d[1]} channels, fewer than output_dim "
                          f"{attrs['output_dim']} x group_size {g} x {g}", in_shapes)


def _psroi_shape(attrs, in_shapes, out_shapes):
    d, b = _data_rois("_contrib_PSROIPooling", in_shapes, 5)
    if d is None:
        return in_shapes, out_shapes
    _check_channels("_contrib_PSROIPooling", attrs, d, in_shapes)
    p = attrs["pooled_size"]
    return [d, b], [(b[0], attrs["output_dim"], p, p)]


def _psroi_grad(node, out_grads):
    g = backward_node("_backward_PSROIPooling", [out_grads[0], node.inputs[0], node.inputs[1]],
                      node)
    return [g.output(0), zero_grad(node, 1, "backward_rois")]


def _backward_shape(attrs, in_shapes, out_shapes):
    ins = list(in_shapes)
    outs = list(out_shapes)
    for k in range(len(outs)):        # data_grad like data, trans_grad like trans
        src = 1 if k == 0 else 3
        ins[src] = ins[src] if ins[src] is not None else outs[k]
        outs[k] = ins[src]
    return ins, outs


register(OpDef(
    name="_contrib_PSROIPooling", input_names=_psroi_inputs, attrs=dict(PSROI_ATTRS),
    infer_shape=_psroi_shape,
    infer_type=equal_types("_contrib_PSROIPooling", ("data", "rois")),
    gradient=_psroi_grad, kernels=_kernels("psroi_pooling"), temp=TEMP, dtypes=HALF_FLOATS,
    doc="Position-sensitive average pooling of regions of interest (R-FCN)."))

register(OpDef(
    name="_backward_PSROIPooling", input_names=("out_grad", "data", "rois"),
    attrs=dict(PSROI_ATTRS), infer_shape=_backward_shape,
    infer_type=equal_types("_backward_PSROIPooling", ("out_grad", "data", "rois")),
    shape_inputs=(1,), kernels=_kernels("psroi_pooling_backward"), temp=TEMP,
    supports_add=True, hidden=True, dtypes=HALF_FLOATS,
    doc="_contrib_PSROIPooling's data gradient."))


def _deformable_shape(attrs, in_shapes, out_shapes):
    opname = "_contrib_DeformablePSROIPooling"
    d, b = _data_rois(opname, in_shapes, 5)
    if d is None:
        return in_shapes, out_shapes
    _check_channels(opname, attrs, d, in_shapes)
    p, k = attrs["pooled_size"], part_of(attrs)
    ins = [d, b]
    if not attrs["no_trans"]:
        t = known_shape(in_shapes[2])
        if t is None:
            return in_shapes, out_shapes
        if (len(t) != 4 or t[0] != b[0] or t[1] < 2 or t[1] % 2 or t[2:] != (k, k)
                or attrs["output_dim"] % (t[1] // 2)):
            raise shape_error(opname, f"trans must be (num_rois {b[0]}, 2 * classes, part_size "
                              f"{k}, {k}) with classes dividing output_dim "
                              f"{attrs['output_dim']}, got {t}", in_shapes)
        ins.append(t)
    return ins, [(b[0], attrs["output_dim"], p, p)]


def _deformable_grad(node, out_grads):
    g = backward_node("_backward_DeformablePSROIPooling", [out_grads[0]] + list(node.inputs), node)
    grads = [g.output(0), zero_grad(node, 1, "backward_rois")]
    if not node.attrs["no_trans"]:
        grads.append(g.output(1))
    return grads


def _backward_deformable_inputs(attrs):
    return ["out_grad"] + _deformable_inputs(attrs)


register(OpDef(
    name="_contrib_DeformablePSROIPooling", input_names=_deformable_inputs,
    attrs=dict(DEFORMABLE_ATTRS), infer_shape=_deformable_shape,
    infer_type=equal_types("_contrib_DeformablePSROIPooling", ("data", "rois", "trans")),
    gradient=_deformable_grad, kernels=_kernels("deformable_psroi_pooling"), temp=TEMP,
    dtypes=HALF_FLOATS,
    doc="Deformable position-sensitive pooling of regions of interest."))

register(OpDef(
    name="_backward_DeformablePSROIPooling", input_names=_backward_deformable_inputs,
    attrs=dict(DEFORMABLE_ATTRS),
    num_outputs=lambda attrs: 1 if attrs["no_trans"] else 2,
    output_names=lambda attrs: ["data_grad"] + ([] if attrs["no_trans"] else ["trans_grad"]),
    infer_shape=_backward_shape,
    infer_type=equal_types("_backward_DeformablePSROIPooling",
                           ("out_grad", "data", "rois", "trans")),
    kernels=_kernels("deformable_psroi_pooling_backward"), temp=TEMP,
    supports_add=True, hidden=True, dtypes=HALF_FLOATS,
    doc="_contrib_DeformablePSROIPooling's gradients to data and trans."))


def _rroi_shape(attrs, in_shapes, out_shapes):
    d, b = _data_rois("_contrib_RROIAlign", in_shapes, 6)
    if d is None:
        return in_shapes, out_shapes
    ph, pw = attrs["pooled_size"]
    return [d, b], [(b[0], d[1], ph, pw)]


def _rroi_grad(node, out_grads):
    raise GraphError(f"_contrib_RROIAlign (node {node.name!r}) has no gradient (MXNet 1.9.1 has "
                     f"none either); stop gradients before it (BlockGrad) or set grad_req='null' "
                     f"for what feeds it")


register(OpDef(
    name="_contrib_RROIAlign", input_names=roi_inputs("_contrib_RROIAlign"), attrs=dict(RROI_ATTRS),
    infer_shape=_rroi_shape, infer_type=equal_types("_contrib_RROIAlign", ("data", "rois")),
    gradient=_rroi_grad, kernels=_kernels("rroi_align"), temp=TEMP, supports_add=True, dtypes=HALF_FLOATS,
    doc="ROIAlign over rotated regions of interest (no gradient, as in MXNet)."))
