"""MXNet 1.9.1's deterministic ``_image_*`` operators (rules only; kernels in
``nbdl.kernels.*.image``, the pixel math in ``nbdl.kernels.shared.image``):
``nd.image.X`` / ``sym.image.X`` / ``npx.image.X`` are ``_image_X`` (alias
``_npx__image_X``).  Images are HWC (a batch NHWC), tensors CHW (NCHW).

- ``to_tensor(data)``: HWC / NHWC of any dtype -> float32 CHW / NCHW divided
  by 255.  No gradient (MXNet's copies the head gradient, of another shape).
- ``normalize(data, mean=(0, 0, 0, 0), std=(1, 1, 1, 1))``: CHW / NCHW with 1
  or 3 channels, ``(x - mean[c]) / std[c]``; mean and std hold 1 or C values
  (MXNet's 4-value defaults fit neither, so they must be given, as there).
  Gradient ``_backward_image_normalize``: ``g / std[c]``.
- ``crop(data, x, y, width, height)``: the region of an HWC / NHWC image
  with 1 or 3 channels; gradient ``_backward_image_crop`` (zeros outside).
- ``flip_left_right`` / ``flip_top_bottom(data)``; ``adjust_lighting(data,
  alpha)``: adds AlexNet's PCA lighting ``eigvec @ (alpha * eigval)`` to
  each RGB pixel (1 channel: unchanged).  Their gradient is the head
  gradient (MXNet's ``_copy``).  MXNet takes one HWC image; nbdl also an
  NHWC batch.
- ``resize(data, size=(), keep_ratio=False, interp=1)``: OpenCV's
  ``cv::resize`` of an HWC / NHWC image to ``size`` (w, h) or a square (or,
  with ``keep_ratio``, the short side) with interp 0 nearest, 1 bilinear,
  2 bicubic, 3 area, 4 Lanczos-4, on both devices (MXNet's GPU kernel is
  bilinear only).  No gradient (MXNet's copies the head gradient, of
  another shape).

Values are computed in float32 and stored with MXNet's ``saturate_cast``
(clamped to [0, 255] for uint8; other integers truncated); float16 is
computed in float32 mirrors.
"""
import numpy as np

from ..errors import AttrError
from .attrs import Attr
from .ir import backward_node
from .registry import OpDef, register, shape_error
from .rules import known_shape, same_type

IMAGE_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.int8, np.int32, np.int64, np.float16,
                                           np.float32, np.float64))


def kernels(module, name):
    """The kernel paths of ``prepare_<name>`` in ``nbdl.kernels.<dev>.<module>``."""
    return {"cpu": f"nbdl.kernels.cpu.{module}:prepare_{name}",
            "cuda": f"nbdl.kernels.cuda.{module}:prepare_{name}"}


def temps(module, name="plain"):
    """The temp rule paths of ``temp_<name>`` in ``nbdl.kernels.<dev>.<module>``."""
    return {"cpu": f"nbdl.kernels.cpu.{module}:temp_{name}",
            "cuda": f"nbdl.kernels.cuda.{module}:temp_{name}"}


def register_image(name, **kw):
    """Register ``_image_<name>`` with its ``_npx__image_<name>`` alias."""
    kw.setdefault("dtypes", IMAGE_DTYPES)
    return register(OpDef(name=f"_image_{name}", **kw), aliases=(f"_npx__image_{name}",))


def hwc_image(opname, shape, in_shapes, channels=(1, 3)):
    """Check an HWC image or NHWC batch; None when ``channels`` is None."""
    if len(shape) not in (3, 4):
        raise shape_error(opname, f"expected an HWC image (H, W, C) or an NHWC batch "
                          f"(N, H, W, C), got {tuple(shape)}", in_shapes)
    if channels is not None and shape[-1] not in channels:
        raise shape_error(opname, f"the image must have {' or '.join(map(str, channels))} "
                          f"channels (last axis), got {tuple(shape)}", in_shapes)


def image_shape(opname):
    """Shape rule of an op that keeps an HWC / NHWC image's shape."""
    def rule(attrs, in_shapes, out_shapes):
        d = in_shapes[0] if in_shapes[0] is not None else out_shapes[0]
        if d is None:
            return in_shapes, out_shapes
        hwc_image(opname, d, in_shapes)
        return [tuple(d)], [tuple(d)]
    return rule


def copy_grad(node, out_grads):
    """MXNet's ``ElemwiseGradUseNone{"_copy"}``: the head gradient itself."""
    return [backward_node("_copy", [out_grads[0]], node, {}).output(0)]


# -- to_tensor ---------------------------------------------------------------------------------

def _to_tensor_shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    hwc_image("_image_to_tensor", d, in_shapes, channels=None)
    out = (d[2], d[0], d[1]) if len(d) == 3 else (d[0], d[3], d[1], d[2])
    return [d], [out]


def _to_tensor_type(attrs, in_types, out_types):
    return in_types, [np.dtype(np.float32)]


register_image("to_tensor", infer_shape=_to_tensor_shape, infer_type=_to_tensor_type,
               kernels=kernels("image", "to_tensor"), temp=temps("image"),
               doc="HWC (NHWC) in [0, 255] -> float32 CHW (NCHW) in [0, 1].")


# -- normalize ---------------------------------------------------------------------------------

NORMALIZE_ATTRS = {
    "mean": Attr("floats", (0.0, 0.0, 0.0, 0.0), doc="Per-channel means (1 or C values)."),
    "std": Attr("floats", (1.0, 1.0, 1.0, 1.0), doc="Per-channel standard deviations."),
}


def _normalize_shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[0], out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    if len(d) not in (3, 4) or d[-3] not in (1, 3):
        raise shape_error("_image_normalize", f"expected a tensor (C, H, W) or a batch "
                          f"(N, C, H, W) with 1 or 3 channels, got {d}", in_shapes)
    for name in ("mean", "std"):
        if len(attrs[name]) not in (1, d[-3]):
            raise AttrError(f"_image_normalize: {name}={tuple(attrs[name])} must hold 1 or "
                            f"{d[-3]} values for an input of shape {d}")
    return [d], [d]


def _normalize_grad(node, out_grads):
    g = backward_node("_backward_image_normalize", [out_grads[0], node.inputs[0]], node)
    return [g.output(0)]


register_image("normalize", attrs=dict(NORMALIZE_ATTRS), infer_shape=_normalize_shape,
               infer_type=same_type, gradient=_normalize_grad, inplace=lambda attrs: [(0, 0)],
               kernels=kernels("image", "normalize"), temp=temps("image"), supports_add=True,
               doc="(x - mean[c]) / std[c] of a CHW tensor or NCHW batch.")

register(OpDef(
    name="_backward_image_normalize", input_names=("out_grad", "data"),
    attrs=dict(NORMALIZE_ATTRS),
    infer_shape=lambda attrs, ins, outs: ([ins[0], ins[0]], [ins[0]]) if ins[0] is not None
    else (ins, outs),
    infer_type=same_type, shape_inputs=(1,), kernels=kernels("image", "normalize_backward"),
    temp=temps("image"), supports_add=True, hidden=True, dtypes=IMAGE_DTYPES,
    doc="_image_normalize's gradient: g / std[c]."))


# -- crop --------------------------------------------------------------------------------------

CROP_ATTRS = {
    "x": Attr("int", doc="Left edge."), "y": Attr("int", doc="Top edge."),
    "width": Attr("int", doc="Width of the region."), "height": Attr("int", doc="Height."),
}


def crop_region(attrs, shape, in_shapes):
    """Check the crop region against an image of ``shape``; the output shape."""
    a = attrs
    if a["width"] <= 0 or a["height"] <= 0:
        raise AttrError(f"_image_crop: width={a['width']} and height={a['height']} must be "
                        f"positive")
    h, w = shape[-3], shape[-2]
    if a["x"] < 0 or a["y"] < 0 or a["x"] + a["width"] > w or a["y"] + a["height"] > h:
        raise shape_error("_image_crop", f"the region x={a['x']}, y={a['y']}, width="
                          f"{a['width']}, height={a['height']} does not fit in the image",
                          in_shapes)
    return tuple(shape[:-3]) + (a["height"], a["width"], shape[-1])


def _crop_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[0]
    if d is None:
        return in_shapes, out_shapes
    hwc_image("_image_crop", d, in_shapes)
    return [tuple(d)], [crop_region(attrs, tuple(d), in_shapes)]


def _crop_grad(node, out_grads):
    g = backward_node("_backward_image_crop", [out_grads[0], node.inputs[0]], node)
    return [g.output(0)]


register_image("crop", attrs=dict(CROP_ATTRS), infer_shape=_crop_shape, infer_type=same_type,
               gradient=_crop_grad, kernels=kernels("image", "crop"), temp=temps("image"),
               supports_add=True, doc="The (x, y, width, height) region of an HWC/NHWC image.")

register(OpDef(
    name="_backward_image_crop", input_names=("out_grad", "data"), attrs=dict(CROP_ATTRS),
    infer_shape=lambda attrs, ins, outs: (ins, [ins[1] if ins[1] is not None else outs[0]]),
    infer_type=same_type, shape_inputs=(1,), kernels=kernels("image", "crop_backward"),
    temp=temps("image"), supports_add=True, hidden=True, dtypes=IMAGE_DTYPES,
    doc="_image_crop's gradient: the head gradient in the region, zeros elsewhere."))


# -- flips, lighting ---------------------------------------------------------------------------

for _name, _doc in (("flip_left_right", "Mirror an HWC/NHWC image horizontally."),
                    ("flip_top_bottom", "Mirror an HWC/NHWC image vertically.")):
    register_image(_name, infer_shape=image_shape(f"_image_{_name}"), infer_type=same_type,
                   gradient=copy_grad, kernels=kernels("image", "flip"), temp=temps("image"),
                   doc=_doc)


def _lighting_inputs(attrs):
    if len(attrs["alpha"]) != 3:
        raise AttrError(f"_image_adjust_lighting: alpha={tuple(attrs['alpha'])} must hold 3 "
                        f"values (R, G, B)")
    return ["data"]


register_image("adjust_lighting", input_names=_lighting_inputs,
               attrs={"alpha": Attr("floats", doc="The lighting alphas of R, G, B.")},
               infer_shape=image_shape("_image_adjust_lighting"), infer_type=same_type,
               gradient=copy_grad, inplace=lambda attrs: [(0, 0)],
               kernels=kernels("image", "adjust_lighting"), temp=temps("image"),
               doc="Add AlexNet's PCA lighting for the given alphas to each RGB pixel.")


# -- resize ------------------------------------------------------------------------------------

RESIZE_ATTRS = {
    "size": Attr("tuple", (), doc="(width, height), or one size."),
    "keep_ratio": Attr("bool", False, doc="With one size: resize the short side to it."),
    "interp": Attr("int", 1, doc="0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos-4."),
}


def resized_hw(attrs, h, w):
    """(height, width) after resizing an h x w image (MXNet's rule)."""
    size = tuple(attrs["size"])
    if len(size) not in (1, 2):
        raise AttrError(f"_image_resize: size={size} must hold 1 or 2 values")
    if min(size) <= 0:
        raise AttrError(f"_image_resize: size={size} must be positive")
    if len(size) == 2:
        return size[1], size[0]
    s = size[0]
    if not attrs["keep_ratio"]:
        return s, s
    return (h * s // w, s) if h > w else (s, w * s // h)


def _resize_inputs(attrs):
    if attrs["interp"] not in (0, 1, 2, 3, 4):
        raise AttrError(f"_image_resize: interp={attrs['interp']} must be 0 (nearest), 1 "
                        f"(bilinear), 2 (bicubic), 3 (area) or 4 (Lanczos-4)")
    resized_hw(attrs, 1, 1)
    return ["data"]


def _resize_shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    hwc_image("_image_resize", d, in_shapes, channels=None)
    if d[-3] == 0 or d[-2] == 0:
        raise shape_error("_image_resize", f"cannot resize an empty image {d}", in_shapes)
    h, w = resized_hw(attrs, d[-3], d[-2])
    return [d], [tuple(d[:-3]) + (h, w, d[-1])]


register_image("resize", input_names=_resize_inputs, attrs=dict(RESIZE_ATTRS),
               infer_shape=_resize_shape, infer_type=same_type,
               kernels=kernels("image", "resize"), temp=temps("image"),
               dtypes=tuple(np.dtype(t) for t in (np.uint8, np.float32, np.float64)),
               doc="OpenCV's resize of an HWC/NHWC image.")
