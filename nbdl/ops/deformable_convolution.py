"""Deformable convolution (v1, ``_contrib_DeformableConvolution``) and
modulated deformable convolution (v2, ``_contrib_ModulatedDeformableConvolution``),
2-D only, with their hidden backward ops (rules only; kernels in
``nbdl.kernels.*.deformable_convolution``).

MXNet's attributes: ``kernel`` (2 axes, required), ``stride``/``dilate``/``pad``
(``()`` = 1 / 1 / 0), ``num_filter`` (required), ``num_group=1``,
``num_deformable_group=1``, ``workspace=1024`` (ignored), ``no_bias=False``,
``layout`` (None or ``NCHW``; MXNet's enum also names NCW/NCDHW, which it
rejects for these ops, as does nbdl); the modulated op adds
``im2col_step=64`` (MXNet's batch chunk for its column buffer; the batch must
be at most ``im2col_step`` or a multiple of it, as in MXNet; the result does
not depend on it).

Shapes (``G = num_group``, ``DG = num_deformable_group``, ``K = kh*kw``):
data ``(N, C, H, W)``, offset ``(N, 2*DG*K, OH, OW)``, mask ``(N, DG*K, OH,
OW)``, weight ``(F, C/G, kh, kw)``, bias ``(F,)``, output ``(N, F, OH, OW)``
with Convolution's output size.  Offset channel ``2*(d*K + i*kw + j)`` is the
y (row) shift of tap ``(i, j)`` for the channels of deformable group ``d``
(``C/DG`` consecutive input channels), the next channel its x shift; mask
channel ``d*K + i*kw + j`` scales that tap.

Tap ``(i, j)`` of output ``(oh, ow)`` samples channel ``c`` at
``y = oh*sh - ph + i*dh + offset_y``, ``x = ow*sw - pw + j*dw + offset_x``
by bilinear interpolation, with MXNet's boundary rules, which differ between
the two ops:

- v1: zero unless ``0 <= y < H`` and ``0 <= x < W``; inside, a coordinate
  past the last row/column (``y >= H-1``) is clamped to it.
- v2: zero unless ``-1 < y < H`` and ``-1 < x < W``; inside, bilinear over the
  image padded with zeros.

Gradients are those of these functions, with the floor convention at integer
coordinates (the derivative from the right) and zero where a coordinate is
clamped, as in MXNet.
"""
from ..errors import AttrError
from .ir import backward_node
from .attrs import Attr
from .convolution import conv_out_spatial, spatial_params
from .registry import REQ_NULL, OpDef, register, shape_error
from .rules import check_arg_shape, known_shape, same_type

V1 = "_contrib_DeformableConvolution"
V2 = "_contrib_ModulatedDeformableConvolution"
_BACKWARD = {V1: "_backward_DeformableConvolution", V2: "_backward_ModulatedDeformableConvolution"}

_ATTRS = {
    "kernel": Attr("tuple", doc="Kernel size (kh, kw)."),
    "stride": Attr("tuple", (), doc="Stride (sh, sw); () = 1."),
    "dilate": Attr("tuple", (), doc="Dilation (dh, dw); () = 1."),
    "pad": Attr("tuple", (), doc="Zero padding (ph, pw); () = 0."),
    "num_filter": Attr("int", doc="Number of output channels."),
    "num_group": Attr("int", 1, doc="Number of groups (C and F must divide by it)."),
    "num_deformable_group": Attr("int", 1, doc="Number of offset groups (C must divide by it)."),
    "workspace": Attr("int", 1024, doc="Ignored (MXNet's workspace limit in MB)."),
    "no_bias": Attr("bool", False, doc="No bias input."),
    "layout": Attr("str", None, optional=True, choices=("NCW", "NCHW", "NCDHW"),
                   doc="Only NCHW (the default) is supported."),
}
V1_ATTRS = dict(_ATTRS)
V2_ATTRS = dict(_ATTRS, im2col_step=Attr(
    "int", 64, doc="MXNet's images per im2col; the batch must be at most this or a multiple."))


def is_modulated(attrs):
    return "im2col_step" in attrs


def deform_params(opname, attrs):
    """Validated ``(kernel, stride, dilate, pad)`` 2-tuples."""
    k = tuple(attrs["kernel"])
    if len(k) != 2:
        raise AttrError(f"{opname}: kernel={k} must have 2 axes (only 2-D deformable "
                        f"convolution over NCHW data exists)")
    if attrs["layout"] not in (None, "NCHW"):
        raise AttrError(f"{opname}: layout={attrs['layout']!r} is not supported (only 'NCHW')")
    if attrs["num_deformable_group"] < 1:
        raise AttrError(f"{opname}: num_deformable_group={attrs['num_deformable_group']} "
                        f"must be >= 1")
    if is_modulated(attrs) and attrs["im2col_step"] < 1:
        raise AttrError(f"{opname}: im2col_step={attrs['im2col_step']} must be >= 1")
    return spatial_params(opname, attrs)


def _input_names(opname, modulated):
    def names(attrs):
        deform_params(opname, attrs)   # bad attributes fail when the node is made
        base = ["data", "offset", "mask", "weight"] if modulated else ["data", "offset", "weight"]
        return base if attrs["no_bias"] else base + ["bias"]
    return names


def _infer(opname, modulated):
    def rule(attrs, in_shapes, out_shapes):
        k = deform_params(opname, attrs)[0]
        ins, outs = list(in_shapes), list(out_shapes)
        f, g, dg = attrs["num_filter"], attrs["num_group"], attrs["num_deformable_group"]
        where = (f"{opname} (kernel={k}, num_filter={f}, num_group={g}, "
                 f"num_deformable_group={dg})")
        i_w = 3 if modulated else 2
        if not attrs["no_bias"]:
            check_arg_shape(where, "bias", ins[i_w + 1], (f,), in_shapes)
            ins[i_w + 1] = (f,)
        data = known_shape(ins[0])
        if data is None:
            return ins, outs
        if len(data) != 4:
            raise shape_error(where, f"argument 'data' has shape {data}, expected 4 axes "
                              f"(N, C, H, W)", in_shapes)
        n, c = data[0], data[1]
        if c % g:
            raise shape_error(where, f"argument 'data' has {c} channels, not divisible by "
                              f"num_group={g}", in_shapes)
        if c % dg:
            raise shape_error(where, f"argument 'data' has {c} channels, not divisible by "
                              f"num_deformable_group={dg}", in_shapes)
        if f % dg:   # MXNet checks this too (output channels per deformable group)
            raise shape_error(where, f"num_filter={f} is not divisible by "
                              f"num_deformable_group={dg}", in_shapes)
        if modulated and n > attrs["im2col_step"] and n % attrs["im2col_step"]:
            raise shape_error(where, f"batch size {n} must be at most im2col_step="
                              f"{attrs['im2col_step']} or a multiple of it (MXNet's rule)",
                              in_shapes)
        oh, ow = conv_out_spatial(where, attrs, data[2:], in_shapes)
        taps = dg * k[0] * k[1]
        want = [("weight", i_w, (f, c // g) + k), ("offset", 1, (n, 2 * taps, oh, ow))]
        if modulated:
            want.append(("mask", 2, (n, taps, oh, ow)))
        for name, i, shape in want:
            check_arg_shape(where, name, ins[i], shape, in_shapes)
            ins[i] = shape
        y = (n, f, oh, ow)
        check_arg_shape(where, "output", outs[0], y, in_shapes)
        outs[0] = y
        return ins, outs
    return rule


def _gradient(node, out_grads):
    # the backward op reads data, offset, (mask) and weight: every input but the bias
    fwd = list(node.inputs) if node.attrs["no_bias"] else list(node.inputs[:-1])
    back = backward_node(_BACKWARD[V2 if is_modulated(node.attrs) else V1], [out_grads[0]] + fwd,
                         node)
    return [back.output(i) for i in range(back.num_outputs)]


def _backward_names(modulated):
    def names(attrs):
        base = ["data_grad", "offset_grad"] + (["mask_grad"] if modulated else []) + ["weight_grad"]
        return base if attrs["no_bias"] else base + ["bias_grad"]
    return names


def _backward_infer(forward_rule, modulated):
    n_fwd = 4 if modulated else 3   # data, offset, (mask), weight: the backward's inputs 1..

    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        for i in range(n_fwd):     # forward input i <-> gradient output i
            if ins[1 + i] is None:
                ins[1 + i] = outs[i]
        fwd_in = ins[1:] + ([] if attrs["no_bias"] else [None])
        fwd_in, fwd_out = forward_rule(attrs, fwd_in, [ins[0]])
        ins[0] = fwd_out[0]
        ins[1:] = fwd_in[:n_fwd]
        for i, name in enumerate(_backward_names(modulated)(attrs)):
            want = ins[1 + i] if i < n_fwd else (attrs["num_filter"],)
            check_arg_shape(_BACKWARD[V2 if modulated else V1], name, outs[i], want or outs[i], in_shapes)
            outs[i] = want
        return ins, outs
    return rule


def geometry(attrs, data_shape):
    """Everything the kernels need, as plain ints, for data of ``data_shape``."""
    opname = V2 if is_modulated(attrs) else V1
    k, s, d, p = deform_params(opname, attrs)
    n, c, h, w = (int(v) for v in data_shape)
    f, g, dg = attrs["num_filter"], attrs["num_group"], attrs["num_deformable_group"]
    oh, ow = conv_out_spatial(opname, attrs, (h, w), None)
    return {"N": n, "C": c, "H": h, "W": w, "F": f, "G": g, "DG": dg, "Fg": f // g,
            "CgK": c // g * k[0] * k[1], "OH": oh, "OW": ow, "P": oh * ow,
            "scalars": tuple(int(v) for v in k + s + p + d) + (dg,)}


def forward_temps(call, t):
    """The forward's scratch for kernels running ``t`` images at once (0: a
    GPU, which needs none): the deformable im2col columns of one image per
    thread.  Each device's kernel module names its rule (``temp`` below)."""
    geom = geometry(call.attrs, call.in_shapes[0])
    return [((t, geom["G"], geom["CgK"], geom["P"]), call.out_dtypes[0])]


def backward_temps(call, t):
    """The backward's scratch for kernels running ``t`` images at once."""
    geom = geometry(call.attrs, call.in_shapes[1])
    dt = call.out_dtypes[0]
    g, fg, ck, p = geom["G"], geom["Fg"], geom["CgK"], geom["P"]
    n_in = 3 if is_modulated(call.attrs) else 2     # data, offset, (mask) gradients
    need_cols = any(r != REQ_NULL for r in call.req[:n_in])
    need_w = call.req[n_in] != REQ_NULL
    # column gradients (w^T . out_grad), sampled columns, per-thread weight
    # gradient partial sums and one GEMM result per thread.
    return [((t, g, ck, p) if need_cols else (t, 0, 0, 0), dt),
            ((t, g, ck, p) if need_w else (t, 0, 0, 0), dt),
            ((t, g, fg, ck) if need_w else (t, 0, 0, 0), dt),
            ((t, fg, ck) if need_w else (t, 0, 0), dt)]


def _temps(which):
    return {"cpu": f"nbdl.kernels.cpu.deformable_convolution:temp_{which}",
            "cuda": f"nbdl.kernels.cuda.deformable_convolution:temp_{which}"}


for _name, _attrs, _modulated, _aliases, _doc in (
        (V1, V1_ATTRS, False, ("DeformableConvolution", "_npx_deformable_convolution"),
         "2-D deformable convolution (v1): each kernel tap samples the data at a learned "
         "offset, bilinearly."),
        (V2, V2_ATTRS, True,
         ("ModulatedDeformableConvolution", "_npx_modulated_deformable_convolution"),
         "2-D modulated deformable convolution (v2): deformable convolution whose samples "
         "are scaled by a mask.")):
    _rule = _infer(_name, _modulated)
    _short = _BACKWARD[_name][len("_backward_"):].lower()
    register(OpDef(
        name=_name, input_names=_input_names(_name, _modulated), attrs=dict(_attrs),
        infer_shape=_rule, infer_type=same_type, gradient=_gradient, temp=_temps("forward"),
        kernels={"cpu": f"nbdl.kernels.cpu.deformable_convolution:prepare_{_short}",
                 "cuda": f"nbdl.kernels.cuda.deformable_convolution:prepare_{_short}"},
        doc=_doc), aliases=_aliases)
    register(OpDef(
        name=_BACKWARD[_name],
        input_names=("out_grad", "data", "offset") + (("mask",) if _modulated else ()) + ("weight",),
        num_outputs=(lambda a, m=_modulated: (4 if m else 3) + (0 if a["no_bias"] else 1)),
        output_names=_backward_names(_modulated),
        attrs=dict(_attrs), infer_shape=_backward_infer(_rule, _modulated),
        infer_type=same_type, temp=_temps("backward"),
        kernels={"cpu": f"nbdl.kernels.cpu.deformable_convolution:prepare_{_short}_backward",
                 "cuda": f"nbdl.kernels.cuda.deformable_convolution:prepare_{_short}_backward"},
        hidden=True,
        doc=f"Gradients of {_name} with respect to data, offset, "
            f"{'mask, ' if _modulated else ''}weight and bias."))

__all__ = ["V1", "V2", "geometry", "deform_params", "is_modulated", "forward_temps",
           "backward_temps"]
