"""im2col and col2im (rules only; kernels in ``nbdl.kernels.*.im2col``).

``im2col(data, kernel, stride, dilate, pad)``: data (N, C, *spatial) with 1 to
3 spatial axes -> (N, C * prod(kernel), L), L the number of sliding blocks
(the spatial size of the matching Convolution's output); row ``c * K + tap``,
column ``block`` holds the data under that kernel tap of that block (0 in the
padding).  ``col2im(data, output_size, kernel, ...)`` sums such columns back
into (N, C, *output_size) (overlapping blocks add up).  Each is the other's
gradient: im2col's is the hidden ``_backward_im2col(out_grad, data)`` (the
col2im kernel, data for its shape), col2im's is ``im2col``.  Attributes are
checked and the block counts computed by Convolution's own rules."""
from ..errors import AttrError
from .attrs import Attr
from .convolution import conv_out_spatial, spatial_params
from .ir import backward_node
from .registry import OpDef, kernel_paths, register, shape_error
from .rules import known_shape, same_type

SLIDE_ATTRS = {
    "kernel": Attr("tuple", doc="Sliding kernel size: (w,), (h, w) or (d, h, w)."),
    "stride": Attr("tuple", (), doc="Stride between blocks (default 1 per axis)."),
    "dilate": Attr("tuple", (), doc="Spacing between kernel points (default 1 per axis)."),
    "pad": Attr("tuple", (), doc="Zero padding on both sides (default 0 per axis)."),
}
# output_size first: MXNet's col2im(data, output_size, kernel, ...) takes it by position
COL2IM_ATTRS = dict(output_size=Attr(
    "tuple", doc="The spatial shape of the image: (w,), (h, w) or (d, h, w)."), **SLIDE_ATTRS)


def _conv_attrs(attrs):
    return dict(attrs, num_filter=1, num_group=1, layout=None)


def slide_params(opname, attrs):
    """Validated ``(kernel, stride, dilate, pad)`` (Convolution's rule)."""
    return spatial_params(opname, _conv_attrs(attrs))


def blocks(opname, attrs, spatial, in_shapes=None):
    """The number of blocks per axis over an image of shape ``spatial``."""
    return conv_out_spatial(opname, _conv_attrs(attrs), tuple(spatial), in_shapes)


def check_slide_attrs(opname, attrs):
    """Validate kernel/stride/dilate/pad (and col2im's output_size); the kernel."""
    k = slide_params(opname, attrs)[0]
    if "output_size" in attrs and len(tuple(attrs["output_size"])) != len(k):
        raise AttrError(f"{opname}: output_size={tuple(attrs['output_size'])} must have "
                        f"{len(k)} entries (like kernel={k})")
    return k



def _im2col_out(opname, attrs, d, in_shapes):
    k = check_slide_attrs(opname, attrs)
    if len(d) != len(k) + 2:
        raise shape_error(opname, f"data must have {len(k) + 2} dimensions (N, C and one per "
                          f"kernel axis {k}), got {d}", in_shapes)
    n_blocks = 1
    for b in blocks(opname, attrs, d[2:], in_shapes):
        n_blocks *= b
    kk = 1
    for v in k:
        kk *= v
    return (d[0], d[1] * kk, n_blocks)


def _im2col_shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    return [d], [_im2col_out("im2col", attrs, d, in_shapes)]


def _col2im_shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    k = check_slide_attrs("col2im", attrs)
    size = tuple(int(v) for v in attrs["output_size"])
    kk = 1
    for v in k:
        kk *= v
    if len(d) != 3 or d[1] % kk:
        raise shape_error("col2im", f"data must be (N, C * {kk}, L) for kernel {k}, got {d}",
                          in_shapes)
    out = (d[0], d[1] // kk) + size
    want = _im2col_out("col2im", attrs, out, in_shapes)
    if want[2] != d[2]:
        raise shape_error("col2im", f"data has {d[2]} blocks but output_size {size} with "
                          f"these kernel parameters gives {want[2]}", in_shapes)
    return [d], [out]


def _im2col_grad(node, out_grads):
    g = backward_node("_backward_im2col", [out_grads[0], node.inputs[0]], node,
                      {k: node.attrs[k] for k in SLIDE_ATTRS})
    return [g.output(0)]


def _col2im_grad(node, out_grads):
    g = backward_node("im2col", [out_grads[0]], node, {k: node.attrs[k] for k in SLIDE_ATTRS})
    return [g.output(0)]


def _backward_im2col_shape(attrs, in_shapes, out_shapes):
    d = known_shape(in_shapes[1], out_shapes[0])
    if d is None:
        return in_shapes, out_shapes
    return [_im2col_out("_backward_im2col", attrs, d, in_shapes), d], [d]


def _temp(which):
    # the CPU kernels work through Convolution's im2col table; CUDA needs none
    return {"cpu": f"nbdl.kernels.cpu.im2col:temp_{which}",
            "cuda": f"nbdl.kernels.cuda.im2col:temp_{which}"}


register(OpDef(
    name="im2col", input_names=("data",), attrs=dict(SLIDE_ATTRS),
    half_mirrors=True,
    infer_shape=_im2col_shape, infer_type=same_type, gradient=_im2col_grad,
    temp=_temp("im2col"),
    kernels=kernel_paths("im2col", "prepare_im2col"),
    supports_add=True,
    doc="Sliding blocks of (N, C, *spatial) data as columns (N, C * prod(kernel), L)."))

register(OpDef(
    name="col2im", input_names=("data",), attrs=dict(COL2IM_ATTRS),
    half_mirrors=True,
    infer_shape=_col2im_shape, infer_type=same_type, gradient=_col2im_grad,
    temp=_temp("col2im"),
    kernels=kernel_paths("im2col", "prepare_col2im"),
    supports_add=True,
    doc="Sum columns (N, C * prod(kernel), L) back into (N, C, *output_size) "
        "(im2col's adjoint)."))

register(OpDef(
    name="_backward_im2col", input_names=("out_grad", "data"), attrs=dict(SLIDE_ATTRS),
    half_mirrors=True,
    infer_shape=_backward_im2col_shape, infer_type=same_type, shape_inputs=(1,),
    temp=_temp("backward_im2col"),
    kernels=kernel_paths("im2col", "prepare_backward_im2col"),
    supports_add=True, hidden=True, doc="Gradient of im2col: col2im of the head gradient."))
