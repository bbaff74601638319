"""Crop (rules only; kernels in ``nbdl.kernels.*.crop``).

MXNet's legacy ``Crop``: inputs ``arg0`` (N, C, H, W) and, with
``num_args=2``, ``arg1`` (``crop_like``, used for its shape only); the output
is (N, C, h, w) with ``(h, w) = h_w`` (``num_args=1``) or the height and width
of ``crop_like``.  The window starts at ``offset = (y, x)``, or at the centre
(``(H - h) // 2, (W - w) // 2``) with ``center_crop``.  The data's gradient
is the head gradient written into that window of zeros (hidden
``_backward_Crop``); ``crop_like`` gets a zero gradient, as in MXNet."""
from ..errors import AttrError
from .attrs import Attr
from .ir import backward_node, zero_grad
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import data_type, known_shape

CROP_ATTRS = {
    "num_args": Attr("int", doc="1: crop to h_w; 2: crop to the shape of the second input."),
    "offset": Attr("tuple", (0, 0), doc="Crop offset (y, x)."),
    "h_w": Attr("tuple", (0, 0), doc="Crop height and width (num_args=1)."),
    "center_crop": Attr("bool", False, doc="Centre the window instead of using offset."),
}


def _crop_inputs(attrs):
    n = attrs["num_args"]
    if n not in (1, 2):
        raise AttrError(f"Crop: num_args={n} is invalid: it must be 1 (crop to h_w) or 2 "
                        f"(crop to the second input's shape)")
    for name in ("offset", "h_w"):
        if len(attrs[name]) != 2:
            raise AttrError(f"Crop: {name}={attrs[name]} is invalid: it must have 2 entries")
    return [f"arg{i}" for i in range(n)]


def crop_offsets(attrs, dshape, oshape, where="Crop", in_shapes=None):
    """``(y, x)`` of the crop window of output ``oshape`` in data ``dshape``."""
    H, W = dshape[2], dshape[3]
    h, w = oshape[2], oshape[3]
    if h > H or w > W:
        raise shape_error(where, f"the crop ({h}, {w}) is larger than the data's height and "
                          f"width ({H}, {W})", in_shapes)
    if attrs["center_crop"]:
        return (H - h) // 2, (W - w) // 2
    oy, ox = (int(v) for v in attrs["offset"])
    if not (0 <= oy <= H - h and 0 <= ox <= W - w):
        raise shape_error(where, f"offset {(oy, ox)} puts the ({h}, {w}) crop outside the "
                          f"data's ({H}, {W}) height and width", in_shapes)
    return oy, ox


def _crop_shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    if len(d) != 4:
        raise shape_error("Crop", f"data must be 4-D (N, C, H, W), got {d}", in_shapes)
    if attrs["num_args"] == 1:
        h, w = (int(v) for v in attrs["h_w"])
        if not (1 <= h <= d[2] and 1 <= w <= d[3]):
            raise shape_error("Crop", f"h_w={(h, w)} must be at least 1 and at most the "
                              f"data's height and width {d[2:]}", in_shapes)
    else:
        like = known_shape(in_shapes[1])
        if like is None:
            return in_shapes, out_shapes
        if len(like) < 4:
            raise shape_error("Crop", f"crop_like must be 4-D, got {like}", in_shapes)
        h, w = like[2], like[3]
    out = d[:2] + (h, w)
    crop_offsets(attrs, d, out, "Crop", in_shapes)
    return [d] + list(in_shapes[1:]), [out]


def _crop_grad(node, out_grads):
    a = node.attrs
    g = backward_node("_backward_Crop", [out_grads[0], node.inputs[0]], node,
                      {"offset": a["offset"], "center_crop": a["center_crop"]})
    like = [zero_grad(node, 1, "backward_like")] if len(node.inputs) > 1 else []
    return [g.output(0)] + like


def _crop_backward_shape(attrs, in_shapes, out_shapes):
    og, d = in_shapes
    d = d if d is not None else out_shapes[0]
    if d is None or og is None:
        return [og, d], [d]
    crop_offsets(attrs, tuple(d), tuple(og), "_backward_Crop", in_shapes)
    return [tuple(og), tuple(d)], [tuple(d)]


register(OpDef(
    name="Crop", input_names=_crop_inputs, key_var_num_args="num_args", attrs=dict(CROP_ATTRS),
    half_mirrors=True,
    infer_shape=_crop_shape, infer_type=data_type, gradient=_crop_grad,
    shape_inputs=lambda attrs: (1,) if attrs["num_args"] == 2 else (),
    kernels=kernel_paths("crop", "prepare_crop"),
    supports_add=True,
    doc="Crop (N, C, H, W) data to h_w or to the height and width of a second input."))

register(OpDef(
    name="_backward_Crop", input_names=("out_grad", "data"),
    half_mirrors=True,
    attrs={k: CROP_ATTRS[k] for k in ("offset", "center_crop")},
    infer_shape=_crop_backward_shape, infer_type=data_type, shape_inputs=(1,),
    kernels=kernel_paths("crop", "prepare_crop_backward"),
    supports_add=True, hidden=True,
    doc="Crop's data gradient: the head gradient in its window, zeros elsewhere."))
