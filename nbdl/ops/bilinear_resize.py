"""_contrib_BilinearResize2D (rules only; kernels in
``nbdl.kernels.*.bilinear_resize``, per-axis source math in
``nbdl.kernels.shared.bilinear_resize``).

Data (N, C, H, W) -> (N, C, OH, OW) by bilinear interpolation, as MXNet
1.9.1: ``mode='size'`` takes ``height``/``width`` (or, when ``scale_height``
is given, ``int(scale_height * H)`` and ``int(scale_width * W)``);
``odd_scale`` scales even sizes by the factor and odd ones as
``(H - 1) * scale + 1``; ``like`` takes the height and width of a second input
``like`` (whose gradient is zero); ``to_even_down``/``to_even_up``/
``to_odd_down``/``to_odd_up`` move each size to the nearest even/odd one.
With ``align_corners`` (the default) the corner pixels map onto each other
(source = dst * (H - 1) / (OH - 1)); without, pixel centres are scaled
(source = (dst + 0.5) * H / OH - 0.5, clamped at 0).  The gradient (hidden
``_backward_contrib_BilinearResize2D(out_grad, data)``, data for its shape)
scatters each output's gradient onto its four source pixels."""
from ..errors import AttrError
from .attrs import Attr
from .ir import backward_node, zero_grad
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import data_type, known_shape

MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up")

BR_ATTRS = {
    "height": Attr("int", 1, doc="Output height (mode 'size' without scale_height)."),
    "width": Attr("int", 1, doc="Output width (mode 'size' without scale_width)."),
    "scale_height": Attr("float", None, optional=True, doc="Height scale ('size', 'odd_scale')."),
    "scale_width": Attr("float", None, optional=True, doc="Width scale ('size', 'odd_scale')."),
    "mode": Attr("str", "size", choices=MODES, doc="How the output size is chosen."),
    "align_corners": Attr("bool", True, doc="Map the corner pixels onto each other."),
}

_NAME = "_contrib_BilinearResize2D"


def _inputs(attrs):
    if attrs["height"] < 1 or attrs["width"] < 1:
        raise AttrError(f"{_NAME}: height and width must be at least 1, got "
                        f"{attrs['height']} and {attrs['width']}")
    if attrs["mode"] == "odd_scale" and (attrs["scale_height"] is None
                                         or attrs["scale_width"] is None):
        raise AttrError(f"{_NAME}: mode='odd_scale' needs scale_height and scale_width")
    if (attrs["mode"] == "size" and attrs["scale_height"] is not None
            and attrs["scale_width"] is None):
        raise AttrError(f"{_NAME}: scale_height is set but scale_width is not")
    return ["data", "like"] if attrs["mode"] == "like" else ["data"]


def _parity(n, odd, up):
    if (n % 2 == 1) == odd:
        return n
    return n + 1 if up else n - 1


def resize_hw(attrs, dshape, like_shape=None):
    """``(OH, OW)`` for data ``dshape`` (and ``like_shape`` in mode 'like')."""
    H, W = dshape[2], dshape[3]
    mode = attrs["mode"]
    if mode == "size":
        if attrs["scale_height"] is not None:
            return int(attrs["scale_height"] * H), int(attrs["scale_width"] * W)
        return attrs["height"], attrs["width"]
    if mode == "odd_scale":
        sh, sw = attrs["scale_height"], attrs["scale_width"]
        return (int(H * sh) if H % 2 == 0 else int((H - 1) * sh) + 1,
                int(W * sw) if W % 2 == 0 else int((W - 1) * sw) + 1)
    if mode == "like":
        return like_shape[2], like_shape[3]
    odd = "odd" in mode
    up = mode.endswith("up")
    return _parity(H, odd, up), _parity(W, odd, up)


def _shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    if len(d) != 4:
        raise shape_error(_NAME, f"data must be 4-D (N, C, H, W), got {d}", in_shapes)
    like = None
    if attrs["mode"] == "like":
        like = known_shape(in_shapes[1])
        if like is None:
            return in_shapes, out_shapes
        if len(like) != 4:
            raise shape_error(_NAME, f"like must be 4-D, got {like}", in_shapes)
    oh, ow = resize_hw(attrs, d, like)
    if oh < 1 or ow < 1:
        raise shape_error(_NAME, f"the output height and width {(oh, ow)} must be at least 1",
                          in_shapes)
    return [d] + list(in_shapes[1:]), [d[:2] + (oh, ow)]


def _grad(node, out_grads):
    g = backward_node("_backward_contrib_BilinearResize2D", [out_grads[0], node.inputs[0]], node,
                      {"align_corners": node.attrs["align_corners"]})
    like = [zero_grad(node, 1, "backward_like")] if len(node.inputs) > 1 else []
    return [g.output(0)] + like


def _backward_shape(attrs, in_shapes, out_shapes):
    d = in_shapes[1] if in_shapes[1] is not None else out_shapes[0]
    return [in_shapes[0], d], [d]


register(OpDef(
    name=_NAME, input_names=_inputs, attrs=dict(BR_ATTRS), infer_shape=_shape,
    half_mirrors=True,
    infer_type=data_type, gradient=_grad,
    shape_inputs=lambda attrs: (1,) if attrs["mode"] == "like" else (),
    kernels=kernel_paths("bilinear_resize", "prepare_resize"),
    supports_add=True,
    doc="Bilinear resize of (N, C, H, W) data (sizes by ``mode``)."))

register(OpDef(
    name="_backward_contrib_BilinearResize2D", input_names=("out_grad", "data"),
    half_mirrors=True,
    attrs={"align_corners": BR_ATTRS["align_corners"]}, infer_shape=_backward_shape,
    infer_type=data_type, shape_inputs=(1,),
    kernels=kernel_paths("bilinear_resize", "prepare_resize_backward"),
    supports_add=True, hidden=True,
    doc="Gradient of _contrib_BilinearResize2D: each output's gradient on its four source "
        "pixels."))
