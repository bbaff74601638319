"""ONNX export converters for the neural-network layers: convolution,
pooling, normalisation, activations, dense layers, embeddings, softmax and
loss heads (at inference), padding and upsampling.  The fused RNN is in
``export_rnn``.

Each converter is ``fn(ctx, node, inputs) -> [output names]``; ``inputs``
are the ONNX names of ``node.inputs``.  An attribute ONNX cannot express
raises ``OnnxError`` naming the op, node and attribute."""
import numpy as np

from ..ops.activations_nn import gamma_axes
from ._common import OnnxError, exporter


def _refuse(node, what):
    raise OnnxError(f"export_model: {node.op.name} (node {node.name!r}): {what} has no "
                    f"ONNX equivalent")


def _spatial(node, nd):
    a = node.attrs
    k = tuple(a.get("kernel") or ())
    stride = tuple(a.get("stride") or ()) or (1,) * nd
    dilate = tuple(a.get("dilate") or ()) or (1,) * nd
    pad = tuple(a.get("pad") or ()) or (0,) * nd
    return k, stride, dilate, pad


def _check_layout(node, rank):
    layout = node.attrs.get("layout")
    if layout not in (None, "NCW", "NCHW", "NCDHW"):
        _refuse(node, f"layout={layout!r} (ONNX is channels-first)")


@exporter("Convolution")
def conv(ctx, node, inputs):
    _check_layout(node, ctx.rank(node.inputs[0]))
    nd = ctx.rank(node.inputs[0]) - 2
    k, stride, dilate, pad = _spatial(node, nd)
    ins = inputs[:2] if node.attrs.get("no_bias") else inputs[:3]
    return ctx.node("Conv", ins, name=node.name, outputs=[ctx.claim(node.output(0).name)],
                    kernel_shape=list(k), strides=list(stride), dilations=list(dilate),
                    pads=list(pad) * 2, group=int(node.attrs.get("num_group", 1)))


@exporter("Deconvolution")
def deconv(ctx, node, inputs):
    _check_layout(node, ctx.rank(node.inputs[0]))
    nd = ctx.rank(node.inputs[0]) - 2
    k, stride, dilate, pad = _spatial(node, nd)
    adj = tuple(node.attrs.get("adj") or ()) or (0,) * nd
    target = tuple(node.attrs.get("target_shape") or ())
    ins = inputs[:2] if node.attrs.get("no_bias", True) else inputs[:3]
    extra = {}
    if target and any(target):
        # MXNet works the padding out from target_shape; the inferred output is it.
        extra["output_shape"] = list(ctx.shape(node.output(0))[2:])
    else:
        extra["pads"] = list(pad) * 2
        extra["output_padding"] = list(adj)
    return ctx.node("ConvTranspose", ins, name=node.name, outputs=[ctx.claim(node.output(0).name)],
                    kernel_shape=list(k), strides=list(stride), dilations=list(dilate),
                    group=int(node.attrs.get("num_group", 1)), **extra)


@exporter("Pooling")
def pooling(ctx, node, inputs):
    a = node.attrs
    _check_layout(node, ctx.rank(node.inputs[0]))
    ptype = a.get("pool_type", "max")
    out = [ctx.claim(node.output(0).name)]
    nd = ctx.rank(node.inputs[0]) - 2
    if a.get("global_pool"):
        if ptype == "max":
            return ctx.node("GlobalMaxPool", inputs[:1], name=node.name, outputs=out)
        if ptype == "avg":
            return ctx.node("GlobalAveragePool", inputs[:1], name=node.name, outputs=out)
        if ptype == "lp":
            return ctx.node("GlobalLpPool", inputs[:1], name=node.name, outputs=out,
                            p=int(a.get("p_value") or 2))
        if ptype == "sum":
            return [ctx.reduce("ReduceSum", inputs[0], list(range(2, nd + 2)), True,
                               name=node.name)]
        _refuse(node, f"pool_type={ptype!r}")
    k, stride, _, pad = _spatial(node, nd)
    conv_ = a.get("pooling_convention", "valid")
    if conv_ not in ("valid", "full"):
        _refuse(node, f"pooling_convention={conv_!r}")
    common = dict(kernel_shape=list(k), strides=list(stride), pads=list(pad) * 2,
                  ceil_mode=int(conv_ == "full"))
    if ptype == "max":
        return ctx.node("MaxPool", inputs[:1], name=node.name, outputs=out, **common)
    if ptype in ("avg", "sum"):
        cip = a.get("count_include_pad")
        cip = True if cip is None else bool(cip)
        if ptype == "sum":
            avg = ctx.node("AveragePool", inputs[:1], name=node.name, count_include_pad=1,
                           **common)[0]
            size = ctx.scalar("window", float(np.prod(k)), node.inputs[0])
            return ctx.node("Mul", [avg, size], name=node.name, outputs=out)
        return ctx.node("AveragePool", inputs[:1], name=node.name, outputs=out,
                        count_include_pad=int(cip), **common)
    if ptype == "lp":
        if conv_ == "full" and ctx.opset < 18:
            _refuse(node, "pooling_convention='full' with pool_type='lp' before opset 18")
        if ctx.opset < 18:
            common.pop("ceil_mode")
        return ctx.node("LpPool", inputs[:1], name=node.name, outputs=out,
                        p=int(a.get("p_value") or 2), **common)
    _refuse(node, f"pool_type={ptype!r}")


@exporter("BatchNorm")
def batch_norm(ctx, node, inputs):
    a = node.attrs
    if a.get("axis", 1) != 1:
        _refuse(node, f"axis={a['axis']} (ONNX normalises axis 1)")
    if a.get("output_mean_var"):
        _refuse(node, "output_mean_var=True")
    data, gamma, beta, mean, var = inputs
    if a.get("fix_gamma", True):
        channels = ctx.shape(node.inputs[1])
        gamma = ctx.const(f"{node.name}_gamma_fixed",
                          np.ones(channels, dtype=ctx.dtype(node.inputs[1])))
    return ctx.node("BatchNormalization", [data, gamma, beta, mean, var], name=node.name,
                    outputs=[ctx.claim(node.output(0).name)], epsilon=float(a.get("eps", 1e-3)))


def _channel_view(ctx, x, entry, axis, rank, hint):
    """``x`` (a 1-D value along ``axis``) shaped to broadcast over a rank-``rank`` input."""
    if axis == rank - 1:
        return x
    return ctx.unsqueeze(x, list(range(1, rank - axis)), name=hint)


def _scale_shift(ctx, node, y, inputs, axis, rank, out):
    """``y * gamma + beta`` with the 1-D gamma, beta (inputs 1, 2) along ``axis``."""
    g = _channel_view(ctx, inputs[1], node.inputs[1], axis, rank, node.name)
    b = _channel_view(ctx, inputs[2], node.inputs[2], axis, rank, node.name)
    return ctx.node("Add", [ctx.node("Mul", [y, g], name=node.name)[0], b], name=node.name,
                    outputs=out)


def _norm_over(ctx, x, entry, axes, eps, name):
    """``(x - mean) / sqrt(var + eps)`` over ``axes`` (kept)."""
    mean = ctx.reduce("ReduceMean", x, axes, True, name=f"{name}_mean")
    d = ctx.node("Sub", [x, mean], name=name)[0]
    var = ctx.reduce("ReduceMean", ctx.node("Mul", [d, d], name=name)[0], axes, True,
                     name=f"{name}_var")
    std = ctx.node("Sqrt", [ctx.node("Add", [var, ctx.scalar("eps", eps, entry)],
                                     name=name)[0]], name=name)[0]
    return ctx.node("Div", [d, std], name=name)[0]


@exporter("LayerNorm")
def layer_norm(ctx, node, inputs):
    a = node.attrs
    if a.get("output_mean_var"):
        _refuse(node, "output_mean_var=True")
    rank = ctx.rank(node.inputs[0])
    axis = a.get("axis", -1) % rank
    eps = float(a.get("eps", 1e-5))
    out = [ctx.claim(node.output(0).name)]
    if axis == rank - 1 and ctx.opset >= 17:
        return ctx.node("LayerNormalization", inputs[:3], name=node.name, outputs=out,
                        axis=-1, epsilon=eps)
    y = _norm_over(ctx, inputs[0], node.inputs[0], [axis], eps, node.name)
    return _scale_shift(ctx, node, y, inputs, axis, rank, out)


@exporter("InstanceNorm")
def instance_norm(ctx, node, inputs):
    return ctx.node("InstanceNormalization", inputs[:3], name=node.name,
                    outputs=[ctx.claim(node.output(0).name)],
                    epsilon=float(node.attrs.get("eps", 1e-3)))


@exporter("GroupNorm")
def group_norm(ctx, node, inputs):
    a = node.attrs
    if a.get("output_mean_var"):
        _refuse(node, "output_mean_var=True")
    shape = ctx.shape(node.inputs[0])
    rank = len(shape)
    g = int(a.get("num_groups", 1))
    grouped = ctx.node("Reshape", [inputs[0], ctx.ints("shape", [0, g, -1])], name=node.name)[0]
    y = _norm_over(ctx, grouped, node.inputs[0], [2], float(a.get("eps", 1e-5)), node.name)
    y = ctx.node("Reshape", [y, ctx.node("Shape", [inputs[0]], name=node.name)[0]],
                 name=node.name)[0]
    return _scale_shift(ctx, node, y, inputs, 1, rank, [ctx.claim(node.output(0).name)])


_ACT = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
        "softsign": "Softsign"}


def activation(ctx, name, act, x, entry, out):
    """Emit activation ``act`` of ``x``; the last node writes ``out``."""
    if act in _ACT:
        return ctx.node(_ACT[act], [x], name=name, outputs=out)
    if act == "log_sigmoid":
        return ctx.node("Log", [ctx.node("Sigmoid", [x], name=name)[0]], name=name, outputs=out)
    if act == "mish":
        t = ctx.node("Tanh", [ctx.node("Softplus", [x], name=name)[0]], name=name)[0]
        return ctx.node("Mul", [x, t], name=name, outputs=out)
    raise OnnxError(f"export_model: Activation (node {name!r}): act_type={act!r} has no "
                    f"ONNX equivalent")


@exporter("Activation")
def act(ctx, node, inputs):
    return activation(ctx, node.name, node.attrs["act_type"], inputs[0], node.inputs[0],
                      [ctx.claim(node.output(0).name)])


def gelu(ctx, name, x, entry, out):
    """``0.5 x (1 + erf(x / sqrt 2))``: MXNet's exact GELU."""
    if ctx.opset >= 20:
        return ctx.node("Gelu", [x], name=name, outputs=out)
    r = ctx.node("Div", [x, ctx.scalar("sqrt2", np.sqrt(2.0), entry)], name=name)[0]
    e = ctx.node("Add", [ctx.node("Erf", [r], name=name)[0], ctx.scalar("one", 1.0, entry)],
                 name=name)[0]
    h = ctx.node("Mul", [x, ctx.scalar("half", 0.5, entry)], name=name)[0]
    return ctx.node("Mul", [h, e], name=name, outputs=out)


@exporter("LeakyReLU")
def leaky_relu(ctx, node, inputs):
    a = node.attrs
    kind = a.get("act_type", "leaky")
    out = [ctx.claim(node.output(0).name)]
    x = inputs[0]
    if kind == "leaky":
        return ctx.node("LeakyRelu", [x], name=node.name, outputs=out, alpha=float(a["slope"]))
    if kind == "elu":
        return ctx.node("Elu", [x], name=node.name, outputs=out, alpha=float(a["slope"]))
    if kind == "selu":
        return ctx.node("Selu", [x], name=node.name, outputs=out,
                        alpha=1.6732632423543772, gamma=1.0507009873554805)
    if kind == "gelu":
        return gelu(ctx, node.name, x, node.inputs[0], out)
    if kind == "rrelu":   # at inference: the mean slope
        slope = (float(a["lower_bound"]) + float(a["upper_bound"])) / 2
        return ctx.node("LeakyRelu", [x], name=node.name, outputs=out, alpha=slope)
    if kind == "prelu":
        slope = inputs[1]
        gshape = tuple(ctx.shape(node.inputs[1]))
        expanded = gamma_axes(gshape, ctx.shape(node.inputs[0]))
        trailing = expanded[next((i for i, e in enumerate(expanded) if e != 1), len(expanded)):]
        if gshape != (1,) and trailing != gshape:
            # gamma laid on the data axes MXNet broadcasts it over (0 and 1)
            slope = ctx.reshape(slope, expanded, name=node.name)
        return ctx.node("PRelu", [x, slope], name=node.name, outputs=out)
    _refuse(node, f"act_type={kind!r}")


@exporter("FullyConnected")
def fully_connected(ctx, node, inputs):
    a = node.attrs
    out = [ctx.claim(node.output(0).name)]
    x = inputs[0]
    rank = ctx.rank(node.inputs[0])
    bias = [] if a.get("no_bias") else [inputs[2]]
    if a.get("flatten", True) or rank == 2:
        if rank != 2:
            x = ctx.node("Flatten", [x], name=node.name, axis=1)[0]
        return ctx.node("Gemm", [x, inputs[1]] + bias, name=node.name, outputs=out, transB=1)
    wt = ctx.node("Transpose", [inputs[1]], name=node.name, perm=[1, 0])[0]
    if not bias:
        return ctx.node("MatMul", [x, wt], name=node.name, outputs=out)
    y = ctx.node("MatMul", [x, wt], name=node.name)[0]
    return ctx.node("Add", [y, bias[0]], name=node.name, outputs=out)


@exporter("Dropout", "BlockGrad", "_copy", "LinearRegressionOutput",
          "MAERegressionOutput", "MakeLoss")
def identity(ctx, node, inputs):
    """At inference these pass their input through."""
    return ctx.node("Identity", inputs[:1], name=node.name, outputs=[ctx.claim(node.output(0).name)])


@exporter("LogisticRegressionOutput")
def logistic_output(ctx, node, inputs):
    return ctx.node("Sigmoid", inputs[:1], name=node.name, outputs=[ctx.claim(node.output(0).name)])


@exporter("SoftmaxOutput")
def softmax_output(ctx, node, inputs):
    a = node.attrs
    out = [ctx.claim(node.output(0).name)]
    rank = ctx.rank(node.inputs[0])
    if a.get("multi_output"):
        return ctx.node("Softmax", inputs[:1], name=node.name, outputs=out, axis=1)
    if rank <= 2 or a.get("preserve_shape"):
        return ctx.node("Softmax", inputs[:1], name=node.name, outputs=out, axis=-1)
    flat = ctx.node("Flatten", inputs[:1], name=node.name, axis=1)[0]
    sm = ctx.node("Softmax", [flat], name=node.name, axis=-1)[0]
    return ctx.node("Reshape", [sm, ctx.node("Shape", inputs[:1], name=node.name)[0]],
                    name=node.name, outputs=out)


@exporter("softmax", "log_softmax", "softmin")
def softmax(ctx, node, inputs):
    a = node.attrs
    if a.get("use_length"):
        _refuse(node, "use_length=True")
    x = inputs[0]
    t = a.get("temperature")
    if node.op.name == "softmin":
        x = ctx.node("Neg", [x], name=node.name)[0]
    if t is not None and float(t) != 1.0:
        x = ctx.node("Div", [x, ctx.scalar("temperature", float(t), node.inputs[0])],
                     name=node.name)[0]
    kind = "LogSoftmax" if node.op.name == "log_softmax" else "Softmax"
    out = [ctx.claim(node.output(0).name)]
    dt = a.get("dtype")
    if dt is not None and np.dtype(dt) != ctx.dtype(node.inputs[0]):
        from ._common import onnx_dtype
        y = ctx.node(kind, [x], name=node.name, axis=int(a.get("axis", -1)))[0]
        return ctx.node("Cast", [y], name=node.name, outputs=out, to=onnx_dtype(dt, node.name))
    return ctx.node(kind, [x], name=node.name, outputs=out, axis=int(a.get("axis", -1)))


@exporter("LRN")
def lrn(ctx, node, inputs):
    a = node.attrs   # MXNet's and ONNX's formulas agree: x / (k + alpha/n * sum x^2)^beta
    return ctx.node("LRN", inputs[:1], name=node.name, outputs=[ctx.claim(node.output(0).name)],
                    size=int(a["nsize"]), alpha=float(a.get("alpha", 1e-4)),
                    beta=float(a.get("beta", 0.75)), bias=float(a.get("knorm", 2.0)))


@exporter("Embedding")
def embedding(ctx, node, inputs):
    idx = ctx.node("Cast", inputs[:1], name=node.name, to=7)[0]   # INT64
    n = ctx.shape(node.inputs[1])[0]   # out-of-range indices are clipped, as MXNet's
    idx = ctx.node("Clip", [idx, ctx.const("lo", np.array(0, np.int64)),
                            ctx.const("hi", np.array(n - 1, np.int64))], name=node.name)[0]
    return ctx.node("Gather", [inputs[1], idx], name=node.name,
                    outputs=[ctx.claim(node.output(0).name)], axis=0)


@exporter("Pad")
def pad(ctx, node, inputs):
    a = node.attrs
    mode = a.get("mode", "constant")
    if mode not in ("constant", "edge", "reflect"):
        _refuse(node, f"mode={mode!r}")
    pw = list(a["pad_width"])
    begins, ends = pw[0::2], pw[1::2]
    ins = [inputs[0], ctx.ints("pads", begins + ends)]
    if mode == "constant":
        ins.append(ctx.scalar("value", float(a.get("constant_value", 0.0)), node.inputs[0]))
    return ctx.node("Pad", ins, name=node.name, outputs=[ctx.claim(node.output(0).name)],
                    mode=mode)


@exporter("UpSampling")
def upsampling(ctx, node, inputs):
    a = node.attrs
    s = int(a["scale"])
    out = [ctx.claim(node.output(0).name)]
    if a["sample_type"] == "nearest":
        if len(inputs) != 1:
            _refuse(node, "several inputs")
        scales = ctx.const("scales", np.array([1, 1, s, s], dtype=np.float32))
        return ctx.node("Resize", [inputs[0], "", scales], name=node.name, outputs=out,
                        mode="nearest", coordinate_transformation_mode="asymmetric",
                        nearest_mode="floor")
    # bilinear: MXNet's is a depthwise transposed convolution with the given weight
    k = 2 * s - s % 2
    p = int(np.ceil((s - 1) / 2.0))
    groups = ctx.shape(node.inputs[0])[1]
    return ctx.node("ConvTranspose", inputs[:2], name=node.name, outputs=out,
                    kernel_shape=[k, k], strides=[s, s], pads=[p, p, p, p], group=int(groups))
