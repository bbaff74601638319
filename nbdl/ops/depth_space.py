"""depth_to_space and space_to_depth: rules only (kernels in
nbdl.kernels.*.depth_space).

MXNet's ops on 4-D NCHW data with attribute ``block_size``.
``depth_to_space`` moves channel blocks into ``block_size x block_size``
spatial blocks, (N, C, H, W) -> (N, C/b^2, H*b, W*b), in MXNet's (and
ONNX's) DCR order: output channel c at block offset (i, j) comes from input
channel ``(i*b + j) * C/b^2 + c``.  ``space_to_depth`` is its exact inverse,
so each op's gradient is the other applied to the head gradient.

Note: Gluon's ``PixelShuffle2D`` orders channels the other way
(``c*b^2 + i*b + j``, CRD), so it is *not* ``depth_to_space``; it stays a
Reshape/transpose/Reshape."""
from ..errors import AttrError
from .ir import backward_node
from .attrs import Attr
from .registry import OpDef, register, shape_error
from .rules import same_type

_ATTRS = {"block_size": Attr("int", doc="Side of the spatial block.")}


def _inputs(opname):
    def input_names(attrs):
        if attrs["block_size"] < 1:
            raise AttrError(f"{opname}: block_size={attrs['block_size']} is invalid: it must "
                            f"be >= 1")
        return ["data"]
    return input_names


def _no_zero_dim(opname, shape, in_shapes):
    # MXNet refuses zero-size dimensions here (in either mode)
    if 0 in shape:
        raise shape_error(opname, f"every dimension of the data must be non-zero, got "
                          f"{tuple(shape)}", in_shapes)


def deep_to_shallow(opname, b, deep, in_shapes):
    if len(deep) != 4:
        raise shape_error(opname, f"expects 4-D (N, C, H, W) data, got {tuple(deep)}", in_shapes)
    _no_zero_dim(opname, deep, in_shapes)
    n, c, h, w = deep
    if c % (b * b):
        raise shape_error(opname, f"the channel count {c} of {tuple(deep)} is not divisible by "
                          f"block_size**2 = {b * b}", in_shapes)
    return (n, c // (b * b), h * b, w * b)


def shallow_to_deep(opname, b, shallow, in_shapes):
    if len(shallow) != 4:
        raise shape_error(opname, f"expects 4-D (N, C, H, W) data, got {tuple(shallow)}",
                          in_shapes)
    _no_zero_dim(opname, shallow, in_shapes)
    n, c, h, w = shallow
    if h % b or w % b:
        raise shape_error(opname, f"the height and width of {tuple(shallow)} must be divisible "
                          f"by block_size={b}", in_shapes)
    return (n, c * b * b, h // b, w // b)


def _shape_rule(opname, forward, backward):
    def rule(attrs, in_shapes, out_shapes):
        b = attrs["block_size"]
        x, y = in_shapes[0], out_shapes[0]
        if x is not None:
            want = forward(opname, b, tuple(x), in_shapes)
            if y is not None and tuple(y) != want:
                raise shape_error(opname, f"output shape {tuple(y)} does not match the "
                                  f"expected {want} for data {tuple(x)}", in_shapes)
            return [tuple(x)], [want]
        if y is not None:
            return [backward(opname, b, tuple(y), in_shapes)], [tuple(y)]
        return in_shapes, out_shapes
    return rule


def _grad(other):
    def rule(node, out_grads):
        return [backward_node(other, [out_grads[0]], node,
                              {"block_size": node.attrs["block_size"]}).output(0)]
    return rule


def _kernels(prepare):
    return {"cpu": f"nbdl.kernels.cpu.depth_space:{prepare}",
            "cuda": f"nbdl.kernels.cuda.depth_space:{prepare}"}


register(OpDef(
    name="depth_to_space", input_names=_inputs("depth_to_space"), attrs=dict(_ATTRS),
    half_mirrors=True,
    infer_shape=_shape_rule("depth_to_space", deep_to_shallow, shallow_to_deep),
    infer_type=same_type, gradient=_grad("space_to_depth"),
    kernels=_kernels("prepare_depth_to_space"), supports_add=True,
    doc="(N, C, H, W) -> (N, C/b^2, H*b, W*b), DCR order."))

register(OpDef(
    name="space_to_depth", input_names=_inputs("space_to_depth"), attrs=dict(_ATTRS),
    half_mirrors=True,
    infer_shape=_shape_rule("space_to_depth", shallow_to_deep, deep_to_shallow),
    infer_type=same_type, gradient=_grad("depth_to_space"),
    kernels=_kernels("prepare_space_to_depth"), supports_add=True,
    doc="(N, C, H, W) -> (N, C*b^2, H/b, W/b), the inverse of depth_to_space."))
