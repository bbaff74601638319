"""ROIPooling and _contrib_ROIAlign (rules only; kernels in
``nbdl.kernels.*.roi``, per-window math in ``nbdl.kernels.shared.roi``).

Both take ``data`` (N, C, H, W) and ``rois`` (R, 5) rows
``[batch_index, x1, y1, x2, y2]`` in image coordinates (times
``spatial_scale`` on the feature map) and give (R, C, PH, PW) for
``pooled_size = (PH, PW)``.

``ROIPooling``: the box corners are rounded (half away from zero), the box is
at least 1 x 1, bin (ph, pw) covers rows ``floor(ph * h / PH)`` to
``ceil((ph + 1) * h / PH)`` of it clipped to the map, and the output is the
bin's maximum (0 for an empty bin or a batch index outside [0, N)).  The
hidden int32 output ``maxidx`` holds the flat data index of that maximum (-1
none); the gradient (``_backward_ROIPooling(out_grad, data, maxidx)``, data for
its shape) adds each head gradient there.

``_contrib_ROIAlign``: the bins are not quantised; each is the mean of
``sample_ratio`` x ``sample_ratio`` bilinear samples (``sample_ratio <= 0``:
``ceil(box size / pooled size)`` per axis).  ``aligned`` shifts the box by
half a pixel (Detectron2); ``position_sensitive`` (R-FCN) reads channel
``c * PH * PW + ph * PW + pw`` for output channel ``c``, so the output has
C / (PH * PW) channels.  A negative batch index gives zeros.  The gradient
(``_backward_ROIAlign(out_grad, data, rois)``) spreads each head gradient
over its samples' four pixels.

``rois`` get a zero gradient in both, as in MXNet."""
import numpy as np

from ..errors import AttrError, DTypeError
from .attrs import Attr
from .ir import backward_node, zero_grad
from .registry import OpDef, kernel_paths, register, shape_error

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

ROI_POOL_ATTRS = {
    "pooled_size": Attr("tuple", doc="Output height and width (h, w)."),
    "spatial_scale": Attr("float", doc="Feature map size over image size (1 / total stride)."),
}
ROI_ALIGN_ATTRS = dict(ROI_POOL_ATTRS, **{
    "sample_ratio": Attr("int", -1, doc="Samples per bin axis (<= 0: adaptive)."),
    "position_sensitive": Attr("bool", False, doc="Position-sensitive pooling (R-FCN)."),
    "aligned": Attr("bool", False, doc="Shift the box by half a pixel (Detectron2)."),
})


def roi_inputs(opname):
    """``input_names`` of the ROI ops: (data, rois), once ``pooled_size``
    and ``spatial_scale`` are checked."""
    def input_names(attrs):
        ps = tuple(attrs["pooled_size"])
        if len(ps) != 2 or min(ps) < 1:
            raise AttrError(f"{opname}: pooled_size={ps} is invalid: it must be (h, w), each "
                            f"at least 1")
        if not 0.0 <= attrs["spatial_scale"] <= 1.0:
            raise AttrError(f"{opname}: spatial_scale={attrs['spatial_scale']} must be in "
                            f"[0, 1]")
        return ["data", "rois"]
    return input_names


def _out_shape(opname, attrs, in_shapes):
    d, b = in_shapes[0], in_shapes[1]
    if d is None or b is None:
        return None
    d, b = tuple(d), tuple(b)
    if len(d) != 4:
        raise shape_error(opname, f"data must be 4-D (N, C, H, W), got {d}", in_shapes)
    if len(b) != 2 or b[1] != 5:
        raise shape_error(opname, f"rois must be (num_rois, 5) rows [batch_index, x1, y1, x2, "
                          f"y2], got {b}", in_shapes)
    ph, pw = (int(v) for v in attrs["pooled_size"])
    c = d[1]
    if attrs.get("position_sensitive"):
        if c % (ph * pw):
            raise shape_error(opname, f"data has {c} channels, not a multiple of "
                              f"pooled_size {ph} x {pw} (position_sensitive)", in_shapes)
        c //= ph * pw
    return (b[0], c, ph, pw)


def _float_type(opname, d):
    # float16 runs the float32 kernels on mirrors (OpDef.half_mirrors)
    if d is not None and np.dtype(d) not in _FLOATS + (np.dtype(np.float16),):
        raise DTypeError(f"{opname}: data must be float16, float32 or float64, got "
                         f"{np.dtype(d)}")


def _roi_pool_shape(attrs, in_shapes, out_shapes):
    out = _out_shape("ROIPooling", attrs, in_shapes)
    if out is None:
        return in_shapes, out_shapes
    return [tuple(s) for s in in_shapes], [out, out]


def _roi_pool_type(attrs, in_types, out_types):
    d = in_types[0] if in_types[0] is not None else in_types[1]
    _float_type("ROIPooling", d)
    if d is None:
        return in_types, out_types
    return [d, d], [d, np.dtype(np.int32)]


def _roi_pool_grad(node, out_grads):
    g = backward_node("_backward_ROIPooling", [out_grads[0], node.inputs[0], node.output(1)], node)
    return [g.output(0), zero_grad(node, 1, "backward_rois")]


def _backward_pool_shape(attrs, in_shapes, out_shapes):
    og, d, idx = in_shapes
    d = d if d is not None else out_shapes[0]
    og = og if og is not None else idx
    return [og, d, og], [d]


def _backward_pool_type(attrs, in_types, out_types):
    d = in_types[0] if in_types[0] is not None else in_types[1]
    if d is None:
        return in_types, out_types
    return [d, d, np.dtype(np.int32)], [d]


register(OpDef(
    name="ROIPooling", input_names=roi_inputs("ROIPooling"), attrs=dict(ROI_POOL_ATTRS),
    half_mirrors=True,
    num_outputs=2, num_visible_outputs=1, output_names=["output", "maxidx"],
    infer_shape=_roi_pool_shape, infer_type=_roi_pool_type, gradient=_roi_pool_grad,
    kernels=kernel_paths("roi", "prepare_roi_pooling"),
    dtypes=_FLOATS + (np.dtype(np.int32),),
    doc="Max pooling of each region of interest to a fixed (PH, PW) (Fast R-CNN)."))

register(OpDef(
    name="_backward_ROIPooling", input_names=("out_grad", "data", "maxidx"),
    half_mirrors=True,
    attrs=dict(ROI_POOL_ATTRS), infer_shape=_backward_pool_shape,
    infer_type=_backward_pool_type, shape_inputs=(1,),
    kernels=kernel_paths("roi", "prepare_roi_pooling_backward"),
    supports_add=True, hidden=True, int_inputs=(2,),
    doc="ROIPooling's data gradient: each head gradient added at its maximum."))


def _roi_align_shape(attrs, in_shapes, out_shapes):
    out = _out_shape("_contrib_ROIAlign", attrs, in_shapes)
    if out is None:
        return in_shapes, out_shapes
    return [tuple(s) for s in in_shapes], [out]


def _roi_align_type(attrs, in_types, out_types):
    d = in_types[0] if in_types[0] is not None else in_types[1]
    _float_type("_contrib_ROIAlign", d)
    if d is None:
        return in_types, out_types
    return [d, d], [d]


def _roi_align_grad(node, out_grads):
    g = backward_node("_backward_ROIAlign", [out_grads[0], node.inputs[0], node.inputs[1]], node)
    return [g.output(0), zero_grad(node, 1, "backward_rois")]


def _backward_align_shape(attrs, in_shapes, out_shapes):
    og, d, b = in_shapes
    d = d if d is not None else out_shapes[0]
    return [og, d, b], [d]


def _backward_align_type(attrs, in_types, out_types):
    d = next((t for t in in_types if t is not None), None)
    if d is None:
        return in_types, out_types
    return [d, d, d], [d]


register(OpDef(
    name="_contrib_ROIAlign", input_names=roi_inputs("_contrib_ROIAlign"),
    half_mirrors=True,
    attrs=dict(ROI_ALIGN_ATTRS), infer_shape=_roi_align_shape, infer_type=_roi_align_type,
    gradient=_roi_align_grad,
    kernels=kernel_paths("roi", "prepare_roi_align"),
    supports_add=True,
    doc="Bilinear-sampled average pooling of each region of interest (Mask R-CNN)."))

register(OpDef(
    name="_backward_ROIAlign", input_names=("out_grad", "data", "rois"),
    half_mirrors=True,
    attrs=dict(ROI_ALIGN_ATTRS), infer_shape=_backward_align_shape,
    infer_type=_backward_align_type, shape_inputs=(1,),
    kernels=kernel_paths("roi", "prepare_roi_align_backward"),
    supports_add=True, hidden=True,
    doc="_contrib_ROIAlign's data gradient: each head gradient spread over its samples."))
