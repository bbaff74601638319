"""_contrib_AdaptiveAvgPooling2D (rules only; kernels in
``nbdl.kernels.*.adaptive_pooling``, on Pooling's per-window functions).

Data (N, C, H, W) -> (N, C, OH, OW), ``output_size`` = () (1 x 1), one
integer (square) or (OH, OW).  Output (oh, ow) is the mean of rows
``floor(oh * H / OH)`` to ``ceil((oh + 1) * H / OH)`` (exclusive) and the
columns likewise.  The gradient (hidden
``_backward_contrib_AdaptiveAvgPooling2D(out_grad, data)``, data for its
shape only) spreads each output's gradient evenly over its window."""
from .attrs import Attr
from .ir import backward_node
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import known_shape, same_type

ADAPTIVE_ATTRS = {"output_size": Attr("tuple", (), doc="Output size: () for 1, an int "
                                                       "(square) or (height, width).")}


def adaptive_output_hw(opname, attrs, in_shapes=None):
    """``(OH, OW)`` from ``output_size``."""
    size = tuple(int(v) for v in attrs["output_size"])
    if len(size) == 0:
        return 1, 1
    if len(size) == 1:
        size = size * 2
    if len(size) != 2 or min(size) < 1:
        raise shape_error(opname, f"output_size={size} is invalid: it must be (), an integer "
                          f"or (height, width), each at least 1", in_shapes)
    return size


def _shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    if len(d) != 4:
        raise shape_error("_contrib_AdaptiveAvgPooling2D", f"data must be 4-D (N, C, H, W), "
                          f"got {d}", in_shapes)
    hw = adaptive_output_hw("_contrib_AdaptiveAvgPooling2D", attrs, in_shapes)
    return [d], [d[:2] + tuple(hw)]


def _backward_shape(attrs, in_shapes, out_shapes):
    og, d = in_shapes
    d = known_shape(d, out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    return [d[:2] + tuple(adaptive_output_hw("_backward_contrib_AdaptiveAvgPooling2D", attrs)),
            d], [d]



def _grad(node, out_grads):
    g = backward_node("_backward_contrib_AdaptiveAvgPooling2D", [out_grads[0], node.inputs[0]],
                      node)
    return [g.output(0)]


register(OpDef(
    name="_contrib_AdaptiveAvgPooling2D", input_names=("data",), attrs=dict(ADAPTIVE_ATTRS),
    half_mirrors=True,
    infer_shape=_shape, infer_type=same_type, gradient=_grad,
    kernels=kernel_paths("adaptive_pooling", "prepare_adaptive_avg"),
    doc="Average pooling of (N, C, H, W) data to a fixed (OH, OW), windows chosen per "
        "output."))

register(OpDef(
    name="_backward_contrib_AdaptiveAvgPooling2D", input_names=("out_grad", "data"),
    half_mirrors=True,
    attrs=dict(ADAPTIVE_ATTRS), infer_shape=_backward_shape, infer_type=same_type,
    shape_inputs=(1,),
    kernels=kernel_paths("adaptive_pooling", "prepare_adaptive_avg_backward"),
    supports_add=True, hidden=True,
    doc="Gradient of _contrib_AdaptiveAvgPooling2D: each output's gradient spread over its "
        "window."))
