"""GridGenerator, BilinearSampler and SpatialTransformer (rules only;
kernels in ``nbdl.kernels.*.spatial_transformer``, the sampling math in
``nbdl.kernels.shared.spatial_transformer``).  MXNet 1.9.1's names,
arguments and attributes (Spatial Transformer Networks, NIPS 2015).

A sampling grid is (N, 2, H, W): channel 0 the source x, channel 1 the
source y, both normalised to [-1, 1] (-1 the first pixel's centre, 1 the
last's).  The destination coordinates of an (H, W) target are
``x = -1 + col * 2 / (W - 1)``, ``y = -1 + row * 2 / (H - 1)``.

- ``GridGenerator(data, transform_type, target_shape)``: ``affine`` takes
  (N, 6) matrices ``[[a, b, c], [d, e, f]]`` and gives the grid
  ``(a x + b y + c, d x + e y + f)`` of shape (N, 2, *target_shape);
  ``warp`` takes an optical flow (N, 2, H, W) in pixels and gives
  ``(flow + (col, row)) / ((W - 1) / 2, (H - 1) / 2) - 1``.
- ``BilinearSampler(data, grid, cudnn_off)``: data (N, C, H, W) sampled at
  the grid's points (N, 2, Ho, Wo) -> (N, C, Ho, Wo); neighbours outside the
  image count as 0.  Gradients to data and grid (``_backward_BilinearSampler``).
- ``SpatialTransformer(data, loc, target_shape, transform_type='affine',
  sampler_type='bilinear', cudnn_off)``: an affine grid from ``loc`` (N, 6)
  sampled bilinearly, i.e. GridGenerator then BilinearSampler in one op; its
  hidden output ``grid_src`` (the grid) feeds the gradient, which is
  ``_backward_BilinearSampler`` then ``_backward_GridGenerator``.

``cudnn_off`` is accepted and has no effect (nbdl has no cuDNN path).
Float16, float32 and float64 (float16 computed in float32, as MXNet's half_t).
"""
import numpy as np

from ..errors import AttrError
from .attrs import Attr
from .elemwise_unary import equal_types
from .ir import backward_node, make_node
from .registry import OpDef, register, shape_error
from .rules import known_shape

HALF_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))

GRID_ATTRS = {
    "transform_type": Attr("str", choices=("affine", "warp"),
                           doc="affine: data is (N, 6) matrices; warp: data is a flow (N, 2, H, W)."),
    "target_shape": Attr("tuple", (0, 0), doc="Output (H, W); affine only."),
}
SAMPLER_ATTRS = {"cudnn_off": Attr("bool", None, optional=True, doc="Accepted; no effect.")}
ST_ATTRS = {
    "target_shape": Attr("tuple", (0, 0), doc="Output (H, W)."),
    "transform_type": Attr("str", choices=("affine",), doc="Only affine."),
    "sampler_type": Attr("str", choices=("bilinear",), doc="Only bilinear."),
    "cudnn_off": Attr("bool", None, optional=True, doc="Accepted; no effect."),
}


def _kernels(name):
    return {"cpu": f"nbdl.kernels.cpu.spatial_transformer:prepare_{name}",
            "cuda": f"nbdl.kernels.cuda.spatial_transformer:prepare_{name}"}


def _temp(name):
    return {"cpu": f"nbdl.kernels.cpu.spatial_transformer:temp_{name}",
            "cuda": f"nbdl.kernels.cuda.spatial_transformer:temp_{name}"}


def target_hw(opname, attrs):
    """The (H, W) of ``target_shape``, checked positive."""
    ts = tuple(attrs["target_shape"])
    if len(ts) != 2 or min(ts) < 1:
        raise AttrError(f"{opname}: target_shape={ts} is invalid: it must be (H, W), both "
                        f"positive")
    return ts


def _grid_inputs(attrs):
    if attrs["transform_type"] == "affine":
        target_hw("GridGenerator", attrs)
    return ["data"]


def _grid_shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    if attrs["transform_type"] == "affine":
        if len(d) != 2 or d[1] != 6:
            raise shape_error("GridGenerator", f"affine data must be (batch, 6) matrices, got "
                              f"{d}", in_shapes)
        return [d], [(d[0], 2) + target_hw("GridGenerator", attrs)]
    if len(d) != 4 or d[1] != 2:
        raise shape_error("GridGenerator", f"warp data must be an optical flow (batch, 2, H, W), "
                          f"got {d}", in_shapes)
    return [d], [d]


def _grid_grad(node, out_grads):
    g = backward_node("_backward_GridGenerator", [out_grads[0]], node)
    return [g.output(0)]


def _backward_grid_shape(attrs, in_shapes, out_shapes):
    og = known_shape(in_shapes[0])
    if og is None:
        return in_shapes, out_shapes
    if attrs["transform_type"] == "affine":
        return [og], [(og[0], 6)]
    return [og], [og]


register(OpDef(
    name="GridGenerator", input_names=_grid_inputs, attrs=dict(GRID_ATTRS),
    infer_shape=_grid_shape, infer_type=equal_types("GridGenerator", ("data",)),
    gradient=_grid_grad, kernels=_kernels("grid_generator"), temp=_temp("plain"),
    supports_add=True, dtypes=HALF_FLOATS,
    doc="A sampling grid from affine matrices or an optical flow (for BilinearSampler)."))

register(OpDef(
    name="_backward_GridGenerator", input_names=("out_grad",), attrs=dict(GRID_ATTRS),
    infer_shape=_backward_grid_shape, infer_type=equal_types("_backward_GridGenerator",
                                                              ("out_grad",)),
    kernels=_kernels("grid_generator_backward"), temp=_temp("plain"),
    supports_add=True, hidden=True, dtypes=HALF_FLOATS,
    doc="GridGenerator's gradient."))


def check_sampled(opname, d, in_shapes):
    """Check that data ``d`` is 4-D (N, C, H, W)."""
    if len(d) != 4:
        raise shape_error(opname, f"data must be 4-D (batch, channels, height, width), got {d}",
                          in_shapes)


def _sampler_shape(attrs, in_shapes, out_shapes):
    d, g = in_shapes
    if d is None or g is None:
        return in_shapes, out_shapes
    d, g = tuple(d), tuple(g)
    check_sampled("BilinearSampler", d, in_shapes)
    if len(g) != 4 or g[1] != 2 or g[0] != d[0]:
        raise shape_error("BilinearSampler", f"grid must be (batch, 2, H, W) with data's batch "
                          f"size {d[0]}, got {g}", in_shapes)
    return [d, g], [(d[0], d[1], g[2], g[3])]


def _sampler_grad(node, out_grads):
    g = backward_node("_backward_BilinearSampler", [out_grads[0], node.inputs[0], node.inputs[1]],
                      node)
    return [g.output(0), g.output(1)]


def _backward_sampler_shape(attrs, in_shapes, out_shapes):
    og, d, g = in_shapes
    d = d if d is not None else out_shapes[0]
    g = g if g is not None else out_shapes[1]
    return [og, d, g], [d, g]


register(OpDef(
    name="BilinearSampler", input_names=("data", "grid"), attrs=dict(SAMPLER_ATTRS),
    infer_shape=_sampler_shape, infer_type=equal_types("BilinearSampler", ("data", "grid")),
    gradient=_sampler_grad, kernels=_kernels("bilinear_sampler"), temp=_temp("plain"),
    supports_add=True, dtypes=HALF_FLOATS,
    doc="Bilinear sampling of data at a grid's normalised points (zeros outside)."))

register(OpDef(
    name="_backward_BilinearSampler", input_names=("out_grad", "data", "grid"),
    attrs=dict(SAMPLER_ATTRS), num_outputs=2, output_names=["data_grad", "grid_grad"],
    infer_shape=_backward_sampler_shape,
    infer_type=equal_types("_backward_BilinearSampler", ("out_grad", "data", "grid")),
    kernels=_kernels("bilinear_sampler_backward"), temp=_temp("plain"),
    supports_add=True, hidden=True, dtypes=HALF_FLOATS,
    doc="BilinearSampler's gradients to data and grid."))


def _st_inputs(attrs):
    target_hw("SpatialTransformer", attrs)
    return ["data", "loc"]


def _st_shape(attrs, in_shapes, out_shapes):
    d, loc = in_shapes
    if d is None:
        return in_shapes, out_shapes
    d = tuple(d)
    check_sampled("SpatialTransformer", d, in_shapes)
    if loc is not None and (len(loc) != 2 or tuple(loc) != (d[0], 6)):
        raise shape_error("SpatialTransformer", f"loc must be (batch, 6) affine matrices with "
                          f"data's batch size {d[0]}, got {tuple(loc)}", in_shapes)
    h, w = target_hw("SpatialTransformer", attrs)
    return [d, (d[0], 6)], [(d[0], d[1], h, w), (d[0], 2, h, w)]


def _st_grad(node, out_grads):
    a = node.attrs
    s = make_node("_backward_BilinearSampler", [out_grads[0], node.inputs[0], node.output(1)],
                  {"cudnn_off": a["cudnn_off"]}, name=f"{node.name}_backward_sampler")
    g = make_node("_backward_GridGenerator", [s.output(1)],
                  {"transform_type": "affine", "target_shape": a["target_shape"]},
                  name=f"{node.name}_backward_grid")
    return [s.output(0), g.output(0)]


register(OpDef(
    name="SpatialTransformer", input_names=_st_inputs, attrs=dict(ST_ATTRS),
    num_outputs=2, num_visible_outputs=1, output_names=["output", "grid_src"],
    infer_shape=_st_shape, infer_type=equal_types("SpatialTransformer", ("data", "loc")),
    gradient=_st_grad, kernels=_kernels("spatial_transformer"), temp=_temp("plain"),
    dtypes=HALF_FLOATS,
    doc="Affine spatial transformer: an affine grid from loc, sampled bilinearly."))
