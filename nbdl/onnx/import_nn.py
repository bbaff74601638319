"""ONNX import converters for the neural-network operators: convolution,
pooling, normalisation, dense products, padding and resizing (signature as
in ``import_ops``)."""
from .. import symbol as S
from ._common import importer
from .import_ops import _name, _opt, _refuse


def _pads(ctx, node, attrs, nd, x):
    """``(symmetric pads, x)``: asymmetric ONNX pads become a Pad op in front."""
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    pads = [int(p) for p in attrs.get("pads", [0] * (2 * nd))]
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        shape = ctx.shape(node.input[0])
        if shape is None:
            _refuse(ctx, node, f"auto_pad={auto} on an input of unknown shape")
        k = attrs.get("kernel_shape") or ctx.shape(node.input[1])[2:]
        strides = attrs.get("strides", [1] * nd)
        dil = attrs.get("dilations", [1] * nd)
        pads = [0] * (2 * nd)
        for i in range(nd):
            size = shape[2 + i]
            out = -(-size // strides[i])
            total = max(0, (out - 1) * strides[i] + (k[i] - 1) * dil[i] + 1 - size)
            lo = total // 2 if auto == "SAME_UPPER" else total - total // 2
            pads[i], pads[nd + i] = lo, total - lo
    elif auto not in ("NOTSET", "VALID"):
        _refuse(ctx, node, f"auto_pad={auto}")
    begin, end = pads[:nd], pads[nd:]
    if begin == end:
        return tuple(begin), x
    if nd != 2:
        _refuse(ctx, node, "asymmetric padding outside 2-D")
    width = (0, 0, 0, 0) + tuple(v for pair in zip(begin, end) for v in pair)
    x = S.Pad(x, mode="constant", pad_width=width, constant_value=0.0,
              name=f"{_name(ctx, node)}_pad")
    return (0,) * nd, x


def _weight_shape(ctx, node, i):
    s = ctx.shape(node.input[i])
    if s is None:
        _refuse(ctx, node, "a weight of unknown shape")
    return s


@importer("Conv")
def conv(ctx, node, attrs):
    w_shape = _weight_shape(ctx, node, 1)
    nd = len(w_shape) - 2
    x = ctx.sym(node.input[0])
    pad, x = _pads(ctx, node, attrs, nd, x)
    kernel = tuple(attrs.get("kernel_shape", w_shape[2:]))
    bias = _opt(node, 2)
    kw = dict(kernel=kernel, stride=tuple(attrs.get("strides", [1] * nd)),
              dilate=tuple(attrs.get("dilations", [1] * nd)), pad=pad,
              num_filter=int(w_shape[0]), num_group=int(attrs.get("group", 1)),
              no_bias=bias is None, name=_name(ctx, node))
    ins = [x, ctx.sym(node.input[1])] + ([ctx.sym(bias)] if bias else [])
    return [S.Convolution(*ins, **kw)]


@importer("ConvTranspose")
def conv_transpose(ctx, node, attrs):
    w_shape = _weight_shape(ctx, node, 1)
    nd = len(w_shape) - 2
    group = int(attrs.get("group", 1))
    x = ctx.sym(node.input[0])
    if "output_shape" in attrs:
        extra = dict(target_shape=tuple(attrs["output_shape"][-nd:]))
    else:
        pads = [int(p) for p in attrs.get("pads", [0] * (2 * nd))]
        if pads[:nd] != pads[nd:]:
            _refuse(ctx, node, "asymmetric pads")
        extra = dict(pad=tuple(pads[:nd]), adj=tuple(attrs.get("output_padding", [0] * nd)))
    bias = _opt(node, 2)
    ins = [x, ctx.sym(node.input[1])] + ([ctx.sym(bias)] if bias else [])
    return [S.Deconvolution(*ins, kernel=tuple(attrs.get("kernel_shape", w_shape[2:])),
                            stride=tuple(attrs.get("strides", [1] * nd)),
                            dilate=tuple(attrs.get("dilations", [1] * nd)),
                            num_filter=int(w_shape[1]) * group, num_group=group,
                            no_bias=bias is None, name=_name(ctx, node), **extra)]


@importer("MaxPool", "AveragePool", "LpPool")
def pool(ctx, node, attrs):
    if len(node.output) > 1 and node.output[1]:
        _refuse(ctx, node, "the Indices output")
    k = tuple(attrs["kernel_shape"])
    nd = len(k)
    if any(d != 1 for d in attrs.get("dilations", [1] * nd)):
        _refuse(ctx, node, "dilations")
    x = ctx.sym(node.input[0])
    pad, x = _pads(ctx, node, attrs, nd, x)
    kind = {"MaxPool": "max", "AveragePool": "avg", "LpPool": "lp"}[node.op_type]
    kw = dict(kernel=k, stride=tuple(attrs.get("strides", [1] * nd)), pad=pad, pool_type=kind,
              pooling_convention="full" if attrs.get("ceil_mode", 0) else "valid",
              name=_name(ctx, node))
    if kind == "avg":
        kw["count_include_pad"] = bool(attrs.get("count_include_pad", 0))
    if kind == "lp":
        kw["p_value"] = int(attrs.get("p", 2))
    return [S.Pooling(x, **kw)]


@importer("GlobalAveragePool", "GlobalMaxPool")
def global_pool(ctx, node, attrs):
    kind = "avg" if node.op_type == "GlobalAveragePool" else "max"
    rank = ctx.rank(node.input[0]) or 4
    return [S.Pooling(ctx.sym(node.input[0]), kernel=(1,) * (rank - 2), global_pool=True,
                      pool_type=kind, name=_name(ctx, node))]


@importer("BatchNormalization")
def batch_norm(ctx, node, attrs):
    if attrs.get("training_mode", 0):
        _refuse(ctx, node, "training_mode=1")
    data, gamma, beta, mean, var = node.input[:5]
    return [S.BatchNorm(ctx.sym(data), ctx.sym(gamma), ctx.sym(beta), ctx.sym(mean, aux=True),
                        ctx.sym(var, aux=True), eps=float(attrs.get("epsilon", 1e-5)),
                        fix_gamma=False, use_global_stats=True, name=_name(ctx, node))] + \
        [None] * (len(node.output) - 1)


@importer("InstanceNormalization")
def instance_norm(ctx, node, attrs):
    ins = [ctx.sym(n) for n in node.input[:3]]
    return [S.InstanceNorm(*ins, eps=float(attrs.get("epsilon", 1e-5)), name=_name(ctx, node))]


@importer("LayerNormalization")
def layer_norm(ctx, node, attrs):
    axis = int(attrs.get("axis", -1))
    rank = ctx.rank(node.input[0])
    if axis != -1 and (rank is None or axis % rank != rank - 1):
        _refuse(ctx, node, f"axis={axis} (nbdl's LayerNorm normalises one axis, the last)")
    if any(o for o in node.output[1:]):
        _refuse(ctx, node, "the Mean / InvStdDev outputs")
    if not _opt(node, 2):
        _refuse(ctx, node, "a LayerNormalization without bias")
    ins = [ctx.sym(n) for n in node.input[:3]]
    return [S.LayerNorm(*ins, axis=-1, eps=float(attrs.get("epsilon", 1e-5)),
                        name=_name(ctx, node))]


@importer("Gemm")
def gemm(ctx, node, attrs):
    alpha, beta = float(attrs.get("alpha", 1.0)), float(attrs.get("beta", 1.0))
    ta, tb = int(attrs.get("transA", 0)), int(attrs.get("transB", 0))
    a, b = node.input[:2]
    c = _opt(node, 2)
    name = _name(ctx, node)
    x = ctx.sym(a)
    if ta:
        x = S.transpose(x, name=f"{name}_ta")
    if ctx.is_const(b):
        w = ctx.consts[b]
        weight = ctx.sym(b) if tb else ctx.param(f"{b}_T", w.T)
        if alpha != 1.0:
            x = S._mul_scalar(x, scalar=alpha, name=f"{name}_alpha")
        n = w.shape[0] if tb else w.shape[1]
        bias = None
        if c is not None:
            cv = ctx.consts.get(c)
            if cv is not None and cv.size == n:
                bias = ctx.param(f"{c}_scaled", (cv * beta).reshape(n).astype(cv.dtype)) \
                    if beta != 1.0 else ctx.param(f"{c}_flat", cv.reshape(n)) \
                    if cv.shape != (n,) else ctx.sym(c)
        y = S.FullyConnected(x, weight, *([bias] if bias is not None else []), num_hidden=int(n),
                             no_bias=bias is None, flatten=False,
                             name=name if (c is None or bias is not None) else f"{name}_fc")
        if c is None or bias is not None:
            return [y]
    else:
        y = S.dot(x, ctx.sym(b), transpose_b=bool(tb), name=f"{name}_dot")
        if alpha != 1.0:
            y = S._mul_scalar(y, scalar=alpha, name=f"{name}_alpha")
        if c is None:
            return [y]
    cs = ctx.sym(c)
    if beta != 1.0:
        cs = S._mul_scalar(cs, scalar=beta, name=f"{name}_beta")
    return [S.broadcast_add(y, cs, name=name)]


@importer("MatMul")
def matmul(ctx, node, attrs):
    a, b = node.input[:2]
    ra, rb = ctx.rank(a), ctx.rank(b)
    name = _name(ctx, node)
    if ra is None or rb is None:
        _refuse(ctx, node, "operands of unknown rank")
    if ra == 2 and rb == 2:
        return [S.dot(ctx.sym(a), ctx.sym(b), name=name)]
    if rb == 2 and ctx.is_const(b):   # x @ W: a dense layer over the last axis
        w = ctx.consts[b]
        return [S.FullyConnected(ctx.sym(a), ctx.param(f"{b}_T", w.T), num_hidden=int(w.shape[1]),
                                 no_bias=True, flatten=False, name=name)]
    if ra == rb == 3:
        return [S.batch_dot(ctx.sym(a), ctx.sym(b), name=name)]
    if ra == rb and ra > 3:
        sa, sb = ctx.shape(a), ctx.shape(b)
        if sa is None or sb is None or sa[:-2] != sb[:-2]:
            _refuse(ctx, node, f"a batched MatMul of shapes {sa} and {sb}")
        x = S.Reshape(ctx.sym(a), shape=(-1,) + tuple(sa[-2:]), name=f"{name}_a")
        y = S.Reshape(ctx.sym(b), shape=(-1,) + tuple(sb[-2:]), name=f"{name}_b")
        z = S.batch_dot(x, y, name=f"{name}_bd")
        return [S.Reshape(z, shape=tuple(sa[:-1]) + (sb[-1],), name=name)]
    _refuse(ctx, node, f"MatMul of ranks {ra} and {rb}")


@importer("Pad")
def pad(ctx, node, attrs):
    mode = attrs.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in ("constant", "edge", "reflect"):
        _refuse(ctx, node, f"mode={mode!r}")
    pads = [int(p) for p in ctx.const(node.input[1], "Pad's pads")]
    if _opt(node, 3):
        _refuse(ctx, node, "the axes input")
    value = float(ctx.const(node.input[2], "Pad's value")) if _opt(node, 2) else 0.0
    n = len(pads) // 2
    width = tuple(v for pair in zip(pads[:n], pads[n:]) for v in pair)
    return [S.Pad(ctx.sym(node.input[0]), mode=mode, pad_width=width, constant_value=value,
                  name=_name(ctx, node))]


@importer("Resize", "Upsample")
def resize(ctx, node, attrs):
    mode = attrs.get("mode", b"nearest")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode != "nearest":
        _refuse(ctx, node, f"mode={mode!r} (nearest with an integer scale only)")
    ctm = attrs.get("coordinate_transformation_mode", b"half_pixel")
    ctm = ctm.decode() if isinstance(ctm, bytes) else ctm
    nm = attrs.get("nearest_mode", b"round_prefer_floor")
    nm = nm.decode() if isinstance(nm, bytes) else nm
    if ctm not in ("half_pixel", "pytorch_half_pixel", "asymmetric") or \
            (ctm == "asymmetric" and nm not in ("floor", "round_prefer_floor")):
        _refuse(ctx, node, f"coordinate_transformation_mode={ctm!r} with nearest_mode={nm!r}")
    scales = None
    idx = 1 if node.op_type == "Upsample" else 2
    if _opt(node, idx):
        scales = [float(s) for s in ctx.const(node.input[idx], "Resize's scales")]
    elif _opt(node, 3):
        sizes = [int(s) for s in ctx.const(node.input[3], "Resize's sizes")]
        shape = ctx.shape(node.input[0])
        if shape is None:
            _refuse(ctx, node, "sizes on an input of unknown shape")
        scales = [o / i for o, i in zip(sizes, shape)]
    if scales is None or len(scales) != 4 or scales[:2] != [1.0, 1.0] or \
            scales[2] != scales[3] or scales[2] != int(scales[2]):
        _refuse(ctx, node, f"scales {scales} (only equal integer scales of H and W)")
    return [S.UpSampling(ctx.sym(node.input[0]), scale=int(scales[2]), sample_type="nearest",
                         num_args=1, name=_name(ctx, node))]
