"""Pad and UpSampling: rules only (kernels in nbdl.kernels.*.pad_resize).

``Pad`` is MXNet's: 4-D or 5-D data, ``pad_width`` of 2*ndim entries
(before/after per axis) whose first four (the N and C axes) must be zero,
``mode`` constant|edge|reflect and ``constant_value``.  Reflect mirrors
without repeating the border, so each pad must be smaller than its axis.
The gradient is the hidden ``_backward_Pad(out_grad) -> data_grad``, which
sums every output position back onto the input element it was read from.

``UpSampling`` with ``sample_type='nearest'``: inputs ``arg0..arg{n-1}``
(``num_args``), all (N, C_i, H_i, W_i); the output is
(N, C, scale*H_0, scale*W_0) and every input is repeated up to that size
(each H_i and W_i must divide it), then concatenated along C
(``multi_input_mode='concat'``) or summed (``'sum'``).  Each input's
gradient is a hidden ``_backward_UpSampling_nearest`` (block sums of its
slice of the head gradient).

``sample_type='bilinear'`` is MXNet's: inputs ``data`` (N, C, H, W) and
``weight`` (C, 1, k, k) with k = 2*scale - scale % 2, computed as the
depthwise Deconvolution MXNet uses (stride ``scale``, pad
ceil((scale-1)/2)), here as its own gather kernel; the output is
(N, C, scale*H, scale*W).  The weight is an ordinary input (MXNet users
initialise it with ``init.Bilinear()`` and freeze it); its gradient is
computed.  As a variadic op, the weight must be passed explicitly with
``num_args=2``.
"""
from ..errors import AttrError
from .ir import backward_node, make_node
from .attrs import Attr
from .registry import OpDef, register, shape_error
from .rules import known_shape, same_type


def _kernels(prepare):
    return {"cpu": f"nbdl.kernels.cpu.pad_resize:{prepare}",
            "cuda": f"nbdl.kernels.cuda.pad_resize:{prepare}"}


# -- Pad ------------------------------------------------------------------------------------

PAD_ATTRS = {
    "mode": Attr("str", "constant", choices=("constant", "edge", "reflect"),
                 doc="constant, edge (repeat the border) or reflect (mirror)."),
    "pad_width": Attr("tuple", doc="(before, after) per axis; zeros for N and C."),
    "constant_value": Attr("float", 0.0, doc="The fill of mode 'constant'."),
}


def _pad_inputs(opname, names):
    def input_names(attrs):
        pw = attrs["pad_width"]
        if len(pw) % 2 or any(p is None or p < 0 for p in pw):
            raise AttrError(f"{opname}: pad_width={pw} is invalid: expected an even number "
                            f"of non-negative integers (before, after per axis)")
        return list(names)
    return input_names


def check_pad(opname, attrs, data, in_shapes):
    """Validate pad_width for data of shape ``data``; returns the pad pairs."""
    pw, nd = tuple(attrs["pad_width"]), len(data)
    if nd not in (4, 5):
        raise shape_error(opname, f"only 4-D and 5-D data can be padded, got {tuple(data)}",
                          in_shapes)
    if len(pw) != 2 * nd:
        raise shape_error(opname, f"pad_width={pw} has {len(pw)} entries; data {tuple(data)} "
                          f"needs {2 * nd}", in_shapes)
    if any(pw[:4]):
        raise shape_error(opname, f"pad_width={pw} pads the N or C axis; its first four "
                          f"entries must be 0", in_shapes)
    pairs = [(pw[2 * i], pw[2 * i + 1]) for i in range(nd)]
    mode = attrs["mode"]
    for ax, ((b, a), d) in enumerate(zip(pairs, data)):
        if mode == "reflect" and (b >= d or a >= d) and (b or a):
            raise shape_error(opname, f"mode 'reflect' needs each pad smaller than its axis: "
                              f"axis {ax} of {tuple(data)} has size {d}, pad ({b}, {a})",
                              in_shapes)
        if mode == "edge" and d == 0 and (b or a):
            raise shape_error(opname, f"mode 'edge' cannot pad the empty axis {ax} of "
                              f"{tuple(data)}", in_shapes)
    return pairs


def _pad_shape_rule(opname, data_in, data_out):
    """``data_in``/``data_out``: where the unpadded shape sits (in or out lists)."""
    def rule(attrs, in_shapes, out_shapes):
        small = (in_shapes if data_in == "in" else out_shapes)[0]
        big = (out_shapes if data_in == "in" else in_shapes)[0]
        pw = attrs["pad_width"]
        if small is None and big is not None:
            if len(pw) == 2 * len(big):
                small = tuple(d - pw[2 * i] - pw[2 * i + 1] for i, d in enumerate(big))
                if min(small, default=0) < 0:
                    raise shape_error(opname, f"padded shape {tuple(big)} is smaller than "
                                      f"pad_width={tuple(pw)}", in_shapes)
        if small is None:
            return in_shapes, out_shapes
        small = tuple(small)
        pairs = check_pad(opname, attrs, small, in_shapes)
        want = tuple(d + b + a for d, (b, a) in zip(small, pairs))
        if big is not None and tuple(big) != want:
            raise shape_error(opname, f"padded shape {tuple(big)} does not match {want} "
                              f"(data {small} with pad_width={tuple(pw)})", in_shapes)
        return ([small], [want]) if data_in == "in" else ([want], [small])
    return rule


def _pad_grad(node, out_grads):
    return [backward_node("_backward_Pad", [out_grads[0]], node).output(0)]


register(OpDef(
    name="Pad", input_names=_pad_inputs("Pad", ["data"]), attrs=dict(PAD_ATTRS),
    infer_shape=_pad_shape_rule("Pad", "in", "out"), infer_type=same_type,
    gradient=_pad_grad, kernels=_kernels("prepare_pad"), supports_add=True, half_mirrors=True,
    doc="Pad the spatial axes of 4-D/5-D data (constant, edge or reflect)."), aliases=("pad",))

register(OpDef(
    name="_backward_Pad", input_names=_pad_inputs("_backward_Pad", ["out_grad"]),
    attrs=dict(PAD_ATTRS), infer_shape=_pad_shape_rule("_backward_Pad", "out", "in"),
    infer_type=same_type, kernels=_kernels("prepare_pad_backward"), supports_add=True,
    half_mirrors=True, hidden=True, doc="Pad's data gradient: each output position summed onto its source."))


# -- UpSampling (nearest) ---------------------------------------------------------------------

UPSAMPLING_ATTRS = {
    "scale": Attr("int", doc="Up-sampling factor of the first input."),
    "num_filter": Attr("int", 0, doc="bilinear only: the channel count."),
    "sample_type": Attr("str", choices=("nearest", "bilinear")),
    "multi_input_mode": Attr("str", "concat", choices=("concat", "sum"),
                             doc="How several inputs are combined."),
    "num_args": Attr("int", 1, doc="Number of inputs (nearest)."),
    "workspace": Attr("int", 512, doc="Accepted and ignored."),
}


def _upsampling_inputs(attrs):
    if attrs["scale"] < 1:
        raise AttrError(f"UpSampling: scale={attrs['scale']} is invalid: it must be >= 1")
    if attrs["num_args"] < 1:
        raise AttrError(f"UpSampling: num_args={attrs['num_args']} is invalid: it must be >= 1")
    if attrs["sample_type"] == "bilinear":
        if attrs["num_args"] != 2:
            raise AttrError(f"UpSampling: sample_type='bilinear' takes 2 inputs (data, weight) "
                            f"and num_args=2, got num_args={attrs['num_args']}")
        return ["data", "weight"]
    return [f"arg{i}" for i in range(attrs["num_args"])]


def bilinear_geometry(scale):
    """MXNet's bilinear UpSampling as a Deconvolution: (kernel, stride, pad)."""
    return 2 * scale - scale % 2, scale, scale // 2   # pad = ceil((scale - 1) / 2)


def _bilinear_shape(opname, attrs, in_shapes, out_shapes):
    data = known_shape(in_shapes[0])
    if data is None:
        return in_shapes, out_shapes
    if len(data) != 4:
        raise shape_error(opname, f"argument 'data' must be 4-D (N, C, H, W), got {data}",
                          in_shapes)
    c = data[1]
    if attrs.get("num_filter", 0) and attrs["num_filter"] != c:
        raise shape_error(opname, f"num_filter={attrs['num_filter']} differs from the channel "
                          f"count {c} of data {data}", in_shapes)
    k = bilinear_geometry(attrs["scale"])[0]
    weight = (c, 1, k, k)
    if in_shapes[1] is not None and tuple(in_shapes[1]) != weight:
        raise shape_error(opname, f"argument 'weight' has shape {tuple(in_shapes[1])}, "
                          f"expected {weight}", in_shapes)
    s = attrs["scale"]
    out = (data[0], c, data[2] * s, data[3] * s)
    for o in out_shapes:
        if o is not None and tuple(o) != out:
            raise shape_error(opname, f"output shape {tuple(o)} does not match the expected "
                              f"{out}", in_shapes)
    return [data, weight], out


def upsampling_plan(attrs, in_shapes):
    """(output shape, [(channel_begin, scale_h, scale_w)] per input) from known inputs."""
    opname = "UpSampling"
    for i, s in enumerate(in_shapes):
        if len(s) != 4:
            raise shape_error(opname, f"argument 'arg{i}' must be 4-D (N, C, H, W), got "
                              f"{tuple(s)}", in_shapes)
    n, _, h0, w0 = in_shapes[0]
    oh, ow = h0 * attrs["scale"], w0 * attrs["scale"]
    plan, c0 = [], 0
    for i, (ni, ci, hi, wi) in enumerate(in_shapes):
        if ni != n:
            raise shape_error(opname, f"argument 'arg{i}' has batch size {ni}, 'arg0' has {n}",
                              in_shapes)
        if hi == 0 or wi == 0 or oh % hi or ow % wi:
            raise shape_error(opname, f"argument 'arg{i}' of shape {(ni, ci, hi, wi)} cannot be "
                              f"up-sampled to the output size ({oh}, {ow}) by an integer "
                              f"factor", in_shapes)
        if attrs["multi_input_mode"] == "sum" and ci != in_shapes[0][1]:
            raise shape_error(opname, f"multi_input_mode 'sum' needs equal channel counts; "
                              f"'arg{i}' has {ci}, 'arg0' has {in_shapes[0][1]}", in_shapes)
        plan.append((c0 if attrs["multi_input_mode"] == "concat" else 0, oh // hi, ow // wi))
        c0 += ci
    c = c0 if attrs["multi_input_mode"] == "concat" else in_shapes[0][1]
    return (n, c, oh, ow), plan


def _upsampling_shape(attrs, in_shapes, out_shapes):
    if attrs["sample_type"] == "bilinear":
        ins, out = _bilinear_shape("UpSampling", attrs, in_shapes, out_shapes)
        return ins, out_shapes if ins is in_shapes else [out]
    if any(s is None for s in in_shapes):
        return in_shapes, out_shapes
    out, _ = upsampling_plan(attrs, [tuple(s) for s in in_shapes])
    if out_shapes[0] is not None and tuple(out_shapes[0]) != out:
        raise shape_error("UpSampling", f"output shape {tuple(out_shapes[0])} does not match "
                          f"the expected {out}", in_shapes)
    return [tuple(s) for s in in_shapes], [out]


def _upsampling_grad(node, out_grads):
    if node.attrs["sample_type"] == "bilinear":
        back = backward_node("_backward_UpSampling_bilinear", [out_grads[0]] + list(node.inputs),
                             node, {"scale": node.attrs["scale"]})
        return [back.output(0), back.output(1)]
    # the plan needs every input's shape, known only at bind time: each gradient node
    # carries its input index and finds its channel offset and factors from the shapes
    grads = []
    for i, inp in enumerate(node.inputs):
        attrs = {"scale": node.attrs["scale"], "multi_input_mode": node.attrs["multi_input_mode"],
                 "num_args": len(node.inputs), "index": i}
        grads.append(make_node("_backward_UpSampling_nearest", [out_grads[0]] + list(node.inputs),
                               attrs, name=f"{node.name}_backward{i}").output(0))
    return grads


_BACKWARD_ATTRS = {k: UPSAMPLING_ATTRS[k] for k in ("scale", "multi_input_mode", "num_args")}
_BACKWARD_ATTRS["index"] = Attr("int", doc="Which input's gradient.")


def _backward_inputs(attrs):
    return ["out_grad"] + [f"arg{i}" for i in range(attrs["num_args"])]


def _backward_shape(attrs, in_shapes, out_shapes):
    ins = in_shapes[1:]
    if any(s is None for s in ins):
        return in_shapes, out_shapes
    out, _ = upsampling_plan(dict(attrs, sample_type="nearest"), [tuple(s) for s in ins])
    if in_shapes[0] is not None and tuple(in_shapes[0]) != out:
        raise shape_error("_backward_UpSampling_nearest", f"out_grad has shape "
                          f"{tuple(in_shapes[0])}, expected {out}", in_shapes)
    return [out] + [tuple(s) for s in ins], [tuple(ins[attrs["index"]])]


register(OpDef(
    name="UpSampling", input_names=_upsampling_inputs, key_var_num_args="num_args",
    half_mirrors=True,
    attrs=dict(UPSAMPLING_ATTRS), infer_shape=_upsampling_shape, infer_type=same_type,
    gradient=_upsampling_grad, kernels=_kernels("prepare_upsampling"), supports_add=True,
    doc="Nearest-neighbour up-sampling of one or more NCHW inputs."))

register(OpDef(
    name="_backward_UpSampling_nearest", input_names=_backward_inputs,
    half_mirrors=True,
    attrs=_BACKWARD_ATTRS, infer_shape=_backward_shape, infer_type=same_type,
    shape_inputs=lambda attrs: tuple(range(1, attrs["num_args"] + 1)),
    kernels=_kernels("prepare_upsampling_backward"), supports_add=True, hidden=True,
    doc="One input's gradient of nearest UpSampling: block sums of its output slice."))


def _bilinear_backward_shape(attrs, in_shapes, out_shapes):
    ins, out = _bilinear_shape("_backward_UpSampling_bilinear", attrs, in_shapes[1:],
                               [in_shapes[0]])
    if ins is in_shapes[1:]:
        return in_shapes, out_shapes
    return [out] + ins, list(ins)


register(OpDef(
    name="_backward_UpSampling_bilinear", input_names=("out_grad", "data", "weight"),
    half_mirrors=True,
    num_outputs=2, output_names=["data_grad", "weight_grad"],
    attrs={"scale": UPSAMPLING_ATTRS["scale"]}, infer_shape=_bilinear_backward_shape,
    infer_type=same_type, kernels=_kernels("prepare_bilinear_backward"), supports_add=True,
    hidden=True, doc="Bilinear UpSampling's data and weight gradients."))
