"""Convolution and Deconvolution (transposed convolution), 1-D/2-D/3-D by
``len(kernel)``, with their hidden backward ops (rules only; kernels in
``nbdl.kernels.*.convolution``).

MXNet's attributes: ``kernel`` (required), ``stride``/``dilate``/``pad``
(``()`` = all 1 / 1 / 0), ``num_filter`` (required), ``num_group=1``,
``no_bias`` (False for Convolution, True for Deconvolution, as in MXNet),
``layout`` (None or the channels-first layout of the kernel's rank; others
raise ``AttrError``); ``workspace``/``cudnn_tune``/``cudnn_off`` are accepted
and ignored.  ``Convolution_v1`` (MXNet's legacy operator: the same
attributes and results) is an alias of Convolution.  Deconvolution adds ``adj`` and ``target_shape`` (when given,
pad and adj are computed to reach it, with MXNet's formula).

Shapes (``G = num_group``, ``K`` the kernel, ``F = num_filter``):
Convolution data ``(N, C, *x)``, weight ``(F, C/G, *K)``, output ``(N, F,
*y)`` with ``y = floor((x + 2p - d(K-1) - 1)/s) + 1``.  Deconvolution data
``(N, C, *x)``, weight ``(C, F/G, *K)``, output ``(N, F, *y)`` with ``y =
s(x-1) + d(K-1) + 1 - 2p + adj``.

The kernels see every rank as 3-D (leading spatial axes of size 1) and the
channel axes split by group: images ``(N*G, C/G, D, H, W)``, weights ``(G,
F/G, C/G*KD*KH*KW)``; ``geometry`` computes those views.  Transposed
convolution is the same three primitives as convolution, with the roles of
the two sides exchanged (see the kernels' docstring).
"""
import math


from ..errors import AttrError
from .ir import backward_node
from .attrs import Attr
from .partial_shape import UNKNOWN, accepts_partial, is_full, merge, show
from .registry import OpDef, register, shape_error
from .rules import check_arg_shape, known_shape, same_type

_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
_ALL_LAYOUTS = ("NCW", "NCHW", "NCDHW", "NHWC", "NDHWC", "NWC")


def _conv_attrs(no_bias):
    return {
        "kernel": Attr("tuple", doc="Kernel size (1, 2 or 3 axes)."),
        "stride": Attr("tuple", (), doc="Stride per axis; () = 1."),
        "dilate": Attr("tuple", (), doc="Dilation per axis; () = 1."),
        "pad": Attr("tuple", (), doc="Zero padding per axis; () = 0."),
        "num_filter": Attr("int", doc="Number of output channels."),
        "num_group": Attr("int", 1, doc="Number of groups (C and F must divide by it)."),
        "workspace": Attr("int", 1024, doc="Ignored (MXNet's cuDNN workspace)."),
        "no_bias": Attr("bool", no_bias, doc="No bias input."),
        "cudnn_tune": Attr("str", None, optional=True, doc="Ignored."),
        "cudnn_off": Attr("bool", False, doc="Ignored."),
        "layout": Attr("str", None, optional=True, choices=_ALL_LAYOUTS,
                       doc="Only channels-first layouts are supported."),
    }


CONV_ATTRS = _conv_attrs(False)
DECONV_ATTRS = dict(_conv_attrs(True), adj=Attr("tuple", (), doc="Extra output size per axis."),
                    target_shape=Attr("tuple", (), doc="Output spatial shape; sets pad and adj."))


def spatial_params(opname, attrs):
    """Validated ``(kernel, stride, dilate, pad)`` tuples of one length."""
    k = tuple(attrs["kernel"])
    nd = len(k)
    if nd not in (1, 2, 3):
        raise AttrError(f"{opname}: kernel={k} must have 1, 2 or 3 axes")
    if any(v is None or v < 1 for v in k):
        raise AttrError(f"{opname}: kernel={k} must be positive")

    def norm(name, default, low):
        v = tuple(attrs[name])
        if len(v) == 0:
            return (default,) * nd
        if len(v) != nd or any(x is None or x < low for x in v):
            raise AttrError(f"{opname}: {name}={v} must have {nd} entries (like kernel={k}), "
                            f"each >= {low}")
        return v
    out = norm("stride", 1, 1), norm("dilate", 1, 1), norm("pad", 0, 0)
    if attrs["num_filter"] < 1 or attrs["num_group"] < 1:
        raise AttrError(f"{opname}: num_filter={attrs['num_filter']} and num_group="
                        f"{attrs['num_group']} must be >= 1")
    if attrs["num_filter"] % attrs["num_group"]:
        raise AttrError(f"{opname}: num_filter={attrs['num_filter']} must be divisible by "
                        f"num_group={attrs['num_group']}")
    layout = attrs["layout"]
    if layout is not None and layout != _LAYOUTS[nd]:
        raise AttrError(f"{opname}: layout={layout!r} is not supported for a {nd}-D kernel "
                        f"(only {_LAYOUTS[nd]!r}: channels first)")
    if "adj" in attrs:
        adj, target = tuple(attrs["adj"]), tuple(attrs["target_shape"])
        if adj and (len(adj) != nd or any(a < 0 for a in adj)):
            raise AttrError(f"{opname}: adj={adj} must have {nd} entries >= 0")
        if target and len(target) != nd:
            raise AttrError(f"{opname}: target_shape={target} must have {nd} entries")
    return (k,) + out


def _input_names(opname):
    def names(attrs):
        spatial_params(opname, attrs)   # bad attributes fail when the node is made
        return ["data", "weight"] if attrs["no_bias"] else ["data", "weight", "bias"]
    return names


def conv_out_spatial(opname, attrs, xs, in_shapes):
    k, s, d, p = spatial_params(opname, attrs)
    out = []
    for i in range(len(k)):
        dk = d[i] * (k[i] - 1) + 1
        if xs[i] + 2 * p[i] < dk:
            raise shape_error(opname, f"argument 'data' spatial shape {tuple(xs)} (+ 2*pad "
                              f"{p}) is smaller than the dilated kernel {k} (dilate {d})",
                              in_shapes)
        out.append((xs[i] + 2 * p[i] - dk) // s[i] + 1)
    return tuple(out)


def deconv_pad_adj(opname, attrs, xs):
    """``(pad, adj)`` per axis; MXNet's rule when ``target_shape`` is set:
    total = s(x-1) + dilated kernel - target, adj = total % 2,
    pad = (total + 1) // 2."""
    k, s, d, p = spatial_params(opname, attrs)
    nd = len(k)
    adj = tuple(attrs["adj"]) or (0,) * nd
    target = tuple(attrs["target_shape"])
    if target and any(t for t in target):
        pad, adj = [], []
        for i in range(nd):
            total = s[i] * (xs[i] - 1) + d[i] * (k[i] - 1) + 1 - target[i]
            if total < 0:
                raise AttrError(f"{opname}: target_shape={target} is too large for data "
                                f"spatial shape {tuple(xs)} with kernel {k} and stride {s}")
            adj.append(total % 2)
            pad.append((total + 1) // 2)
        p, adj = tuple(pad), tuple(adj)
    for i in range(nd):
        if adj[i] >= max(s[i], d[i]):
            raise AttrError(f"{opname}: adj={adj} must be smaller than stride {s} or dilate {d}")
    return p, adj


def deconv_out_spatial(opname, attrs, xs, in_shapes):
    k, s, d, _ = spatial_params(opname, attrs)
    p, adj = deconv_pad_adj(opname, attrs, xs)
    out = tuple(s[i] * (xs[i] - 1) + d[i] * (k[i] - 1) + 1 - 2 * p[i] + adj[i]
                for i in range(len(k)))
    if any(o < 1 for o in out):
        raise shape_error(opname, f"output spatial shape {out} is empty (pad {p} too large "
                          f"for data spatial shape {tuple(xs)})", in_shapes)
    return out


def _conv_partial(where, attrs, ins, outs, in_shapes):
    """Convolution on partial shapes, as MXNet's ConvolutionShape: the weight
    from the data's channels, each output dim from its data dim where known;
    back from the output, the batch and (stride 1) the spatial dims."""
    k, s, d, p = spatial_params(where, attrs)
    f, g = attrs["num_filter"], attrs["num_group"]
    data = tuple(ins[0])
    if len(data) != len(k) + 2:
        raise shape_error(where, f"argument 'data' has shape {show(data)}, expected "
                          f"{len(k) + 2} axes (N, C, *spatial)", in_shapes)
    c = data[1]
    if c >= 0 and c % g:
        raise shape_error(where, f"argument 'data' has {c} channels, not divisible by "
                          f"num_group={g}", in_shapes)
    ins[1] = merge((f, c // g if c >= 0 else UNKNOWN) + k, ins[1], where, "argument 'weight'")
    # an unknown spatial dim stands in as the dilated kernel (always valid), then unknown
    xs = tuple(x if x >= 0 else d[i] * (k[i] - 1) + 1 for i, x in enumerate(data[2:]))
    ys = tuple(y if x >= 0 else UNKNOWN
               for x, y in zip(data[2:], conv_out_spatial(where, attrs, xs, in_shapes)))
    outs[0] = merge((data[0], f) + ys, outs[0], where, "the output")
    back = [outs[0][0], c] + [o + d[i] * (k[i] - 1) - 2 * p[i] if o >= 0 and s[i] == 1
                              else UNKNOWN for i, o in enumerate(outs[0][2:])]
    ins[0] = merge(data, tuple(back), where, "argument 'data'")
    return ins, outs


def _infer(opname, transposed):
    @accepts_partial
    def rule(attrs, in_shapes, out_shapes):
        k = spatial_params(opname, attrs)[0]
        nd = len(k)
        ins, outs = list(in_shapes), list(out_shapes)
        f, g = attrs["num_filter"], attrs["num_group"]
        where = f"{opname} (kernel={k}, num_filter={f}, num_group={g})"
        if any(v is not None and not is_full(v) for v in ins + outs):
            if not transposed and ins[0] is not None:
                if not attrs["no_bias"]:
                    ins[2] = merge((f,), ins[2], where, "argument 'bias'")
                return _conv_partial(where, attrs, ins, outs, in_shapes)
            ins = [v if v is None or is_full(v) else None for v in ins]
            outs = [v if v is None or is_full(v) else None for v in outs]
        if not attrs["no_bias"]:
            check_arg_shape(where, "bias", ins[2], (f,), in_shapes)
            ins[2] = (f,)
        data = known_shape(ins[0])
        if data is None:
            return ins, outs
        if len(data) != nd + 2:
            raise shape_error(where, f"argument 'data' has shape {data}, expected {nd + 2} axes "
                              f"(N, C, *spatial) for a {nd}-D kernel", in_shapes)
        c = data[1]
        if c % g:
            raise shape_error(where, f"argument 'data' has {c} channels, not divisible by "
                              f"num_group={g}", in_shapes)
        if transposed:
            w = (c, f // g) + k
            ys = deconv_out_spatial(where, attrs, data[2:], in_shapes)
        else:
            w = (f, c // g) + k
            ys = conv_out_spatial(where, attrs, data[2:], in_shapes)
        check_arg_shape(where, "weight", ins[1], w, in_shapes)
        ins[1] = w
        y = (data[0], f) + ys
        check_arg_shape(where, "output", outs[0], y, in_shapes)
        outs[0] = y
        return ins, outs
    return rule



def _grad_attrs(attrs):
    return {k: v for k, v in attrs.items() if k in DECONV_ATTRS}


def _gradient(backward_op):
    def gradient(node, out_grads):
        back = backward_node(backward_op, [out_grads[0], node.inputs[0], node.inputs[1]], node,
                             _grad_attrs(node.attrs))
        return [back.output(i) for i in range(back.num_outputs)]
    return gradient


def _backward_infer(forward_rule, opname):
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        for i_in, i_out in ((1, 0), (2, 1)):   # data <-> data_grad, weight <-> weight_grad
            ins[i_in] = ins[i_in] if ins[i_in] is not None else outs[i_out]
        fwd_in = [ins[1], ins[2]] + ([] if attrs["no_bias"] else [None])
        fwd_in, fwd_out = forward_rule(attrs, fwd_in, [ins[0]])
        ins[0], ins[1], ins[2] = fwd_out[0], fwd_in[0], fwd_in[1]
        for name, i_in, i_out in (("data_grad", 1, 0), ("weight_grad", 2, 1)):
            check_arg_shape(opname, name, outs[i_out], ins[i_in] or outs[i_out], in_shapes)
            outs[i_out] = ins[i_in]
        if not attrs["no_bias"]:
            outs[2] = (attrs["num_filter"],)
        return ins, outs
    return rule


def geometry(attrs, data_shape, transposed):
    """Everything the kernels need, as plain ints, for data of ``data_shape``.

    ``img`` is the im2col side viewed ``(N*G, Cimg/G, D, H, W)`` (the data for
    Convolution, the output for Deconvolution); ``cols`` the other side
    ``(N*G, Ccol/G, OD, OH, OW)``; ``w`` the weight ``(G, Ccol/G, Cimg/G*KD*KH*KW)``;
    ``k3, s3, d3, p3`` the padded 3-D kernel, stride, dilation and pad."""
    opname = "Deconvolution" if transposed else "Convolution"
    k, s, d, p = spatial_params(opname, attrs)
    nd = len(k)
    n, c = int(data_shape[0]), int(data_shape[1])
    f, g = attrs["num_filter"], attrs["num_group"]
    xs = tuple(int(v) for v in data_shape[2:])
    if transposed:
        p, _ = deconv_pad_adj(opname, attrs, xs)
        img_sp, col_sp, c_img, c_col = deconv_out_spatial(opname, attrs, xs, None), xs, f, c
    else:
        img_sp, col_sp, c_img, c_col = xs, conv_out_spatial(opname, attrs, xs, None), c, f
    pad3 = (1,) * (3 - nd)
    k3 = pad3 + k
    return {
        "N": n, "G": g, "nd": nd,
        "img": (n * g, c_img // g) + pad3 + img_sp,
        "cols": (n * g, c_col // g) + pad3 + col_sp,
        "w": (g, c_col // g, c_img // g * math.prod(k3)),
        "ck": c_img // g * math.prod(k3), "P": math.prod(col_sp),
        "k3": k3, "s3": (1,) * (3 - nd) + s, "d3": (1,) * (3 - nd) + d,
        "p3": (0,) * (3 - nd) + p,
        "bias_cols": (n, c_col if not transposed else c_img,
                      math.prod(col_sp if not transposed else img_sp)),
    }


def _temps(which):
    # The scratch depends on the device's kernels (the CPU plan: serial, batch
    # chunks or split GEMMs; CUDA: none), so each device's module gives it.
    return {"cpu": f"nbdl.kernels.cpu.conv_plan:temp_{which}",
            "cuda": f"nbdl.kernels.cuda.convolution:temp_{which}"}


for _name, _attrs, _transposed, _doc in (
        ("Convolution", CONV_ATTRS, False,
         "N-D convolution (cross-correlation) with stride, dilation, padding and groups."),
        ("Deconvolution", DECONV_ATTRS, True,
         "Transposed convolution: the gradient of Convolution with respect to its data.")):
    _rule = _infer(_name, _transposed)
    register(OpDef(
        name=_name, input_names=_input_names(_name), attrs=dict(_attrs),
        infer_shape=_rule, infer_type=same_type,
        gradient=_gradient(f"_backward_{_name}"), temp=_temps(f"{_name.lower()}"),
        half_mirrors=True,
        # multiply-adds: each output (Convolution) or input (Deconvolution)
        # element meets one weight row
        flops=(lambda a, ins, outs, _t=_transposed:
               2 * math.prod(ins[0] if _t else outs[0]) * math.prod(ins[1][1:])),
        kernels={"cpu": f"nbdl.kernels.cpu.convolution:prepare_{_name.lower()}",
                 "cuda": f"nbdl.kernels.cuda.convolution:prepare_{_name.lower()}"},
        supports_add=True, doc=_doc),
        # MXNet's legacy Convolution_v1 has Convolution's attributes and results
        aliases=("Convolution_v1",) if _name == "Convolution" else ())
    register(OpDef(
        name=f"_backward_{_name}", input_names=("out_grad", "data", "weight"),
        num_outputs=lambda a: 2 if a["no_bias"] else 3,
        output_names=lambda a: ["data_grad", "weight_grad"] + ([] if a["no_bias"] else ["bias_grad"]),
        attrs=dict(_attrs), infer_shape=_backward_infer(_rule, f"_backward_{_name}"),
        infer_type=same_type, temp=_temps(f"{_name.lower()}_backward"),
        half_mirrors=True,
        kernels={"cpu": f"nbdl.kernels.cpu.convolution:prepare_{_name.lower()}_backward",
                 "cuda": f"nbdl.kernels.cuda.convolution:prepare_{_name.lower()}_backward"},
        supports_add=True, hidden=True,
        doc=f"Gradients of {_name} with respect to data, weight and bias."))
