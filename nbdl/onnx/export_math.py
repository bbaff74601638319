"""ONNX export converters for elementwise math, comparisons, reductions and
shape / indexing ops (see ``export_nn`` for the converter signature)."""
import numpy as np

from ._common import OnnxError, exporter, onnx_dtype, require_onnx

INT64_MAX = np.iinfo(np.int64).max


def _out(ctx, node, i=0):
    return [ctx.claim(node.output(i).name)]


def _refuse(node, what):
    raise OnnxError(f"export_model: {node.op.name} (node {node.name!r}): {what} has no "
                    f"ONNX equivalent")


_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log",
          "sqrt": "Sqrt", "abs": "Abs", "negative": "Neg", "reciprocal": "Reciprocal",
          "sin": "Sin", "cos": "Cos", "tan": "Tan", "arcsin": "Asin", "arccos": "Acos",
          "arctan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "arcsinh": "Asinh",
          "arccosh": "Acosh", "arctanh": "Atanh", "floor": "Floor", "ceil": "Ceil",
          "sign": "Sign", "erf": "Erf", "softsign": "Softsign", "logical_not": "Not",
          "rint": "Round"}


def _unary_op(op_type):
    def conv(ctx, node, inputs):
        if op_type == "Not":
            b = ctx.node("Cast", inputs, name=node.name, to=9)[0]   # BOOL
            n = ctx.node("Not", [b], name=node.name)[0]
            return ctx.node("Cast", [n], name=node.name, outputs=_out(ctx, node),
                            to=onnx_dtype(ctx.dtype(node.output(0)), node.name))
        return ctx.node(op_type, inputs[:1], name=node.name, outputs=_out(ctx, node))
    return conv


for _name, _type in _UNARY.items():
    exporter(_name)(_unary_op(_type))


@exporter("square")
def square(ctx, node, inputs):
    return ctx.node("Mul", [inputs[0], inputs[0]], name=node.name, outputs=_out(ctx, node))


@exporter("rsqrt")
def rsqrt(ctx, node, inputs):
    s = ctx.node("Sqrt", inputs[:1], name=node.name)[0]
    return ctx.node("Reciprocal", [s], name=node.name, outputs=_out(ctx, node))


@exporter("expm1", "log1p", "log2", "log10", "trunc", "fix", "swish", "hard_sigmoid",
          "log_sigmoid", "mish", "round")
def composite_unary(ctx, node, inputs):
    x, e, n = inputs[0], node.inputs[0], node.op.name
    out = _out(ctx, node)

    def k(v):
        return ctx.scalar("c", v, e)
    if n == "expm1":
        return ctx.node("Sub", [ctx.node("Exp", [x], name=node.name)[0], k(1.0)],
                        name=node.name, outputs=out)
    if n == "log1p":
        return ctx.node("Log", [ctx.node("Add", [x, k(1.0)], name=node.name)[0]],
                        name=node.name, outputs=out)
    if n in ("log2", "log10"):
        base = 2.0 if n == "log2" else 10.0
        return ctx.node("Div", [ctx.node("Log", [x], name=node.name)[0], k(np.log(base))],
                        name=node.name, outputs=out)
    if n in ("trunc", "fix"):   # toward zero: sign(x) * floor(|x|)
        f = ctx.node("Floor", [ctx.node("Abs", [x], name=node.name)[0]], name=node.name)[0]
        return ctx.node("Mul", [ctx.node("Sign", [x], name=node.name)[0], f],
                        name=node.name, outputs=out)
    if n == "round":   # half away from zero (ONNX's Round is half to even)
        f = ctx.node("Floor", [ctx.node("Add", [ctx.node("Abs", [x], name=node.name)[0],
                                                k(0.5)], name=node.name)[0]], name=node.name)[0]
        return ctx.node("Mul", [ctx.node("Sign", [x], name=node.name)[0], f],
                        name=node.name, outputs=out)
    if n == "swish":
        return ctx.node("Mul", [x, ctx.node("Sigmoid", [x], name=node.name)[0]],
                        name=node.name, outputs=out)
    if n == "hard_sigmoid":
        return ctx.node("HardSigmoid", [x], name=node.name, outputs=out,
                        alpha=float(node.attrs.get("alpha", 0.2)),
                        beta=float(node.attrs.get("beta", 0.5)))
    if n == "log_sigmoid":
        return ctx.node("Log", [ctx.node("Sigmoid", [x], name=node.name)[0]],
                        name=node.name, outputs=out)
    t = ctx.node("Tanh", [ctx.node("Softplus", [x], name=node.name)[0]], name=node.name)[0]
    return ctx.node("Mul", [x, t], name=node.name, outputs=out)   # mish


_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "power": "Pow",
           "maximum": "Max", "minimum": "Min"}
_COMPARE = {"equal": "Equal", "greater": "Greater", "lesser": "Less",
            "greater_equal": "GreaterOrEqual", "lesser_equal": "LessOrEqual"}


def _binary_op(op_type):
    def conv(ctx, node, inputs):
        return ctx.node(op_type, inputs[:2], name=node.name, outputs=_out(ctx, node))
    return conv


for _stem, _type in _BINARY.items():
    _names = [f"broadcast_{_stem}"] + ([f"elemwise_{_stem}"] if _type in ("Add", "Sub", "Mul", "Div")
                                       else [f"_{_stem}"])
    exporter(*_names)(_binary_op(_type))


def _compare(op_type, negate=False):
    def conv(ctx, node, inputs):
        b = ctx.node(op_type, inputs[:2], name=node.name)[0]
        if negate:
            b = ctx.node("Not", [b], name=node.name)[0]
        return ctx.node("Cast", [b], name=node.name, outputs=_out(ctx, node),
                        to=onnx_dtype(ctx.dtype(node.output(0)), node.name))
    return conv


for _stem, _type in _COMPARE.items():
    exporter(f"broadcast_{_stem}", f"_{_stem}")(_compare(_type))
exporter("broadcast_not_equal", "_not_equal")(_compare("Equal", negate=True))

_SCALAR = {"_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False),
           "_rminus_scalar": ("Sub", True), "_mul_scalar": ("Mul", False),
           "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True),
           "_power_scalar": ("Pow", False), "_rpower_scalar": ("Pow", True),
           "_maximum_scalar": ("Max", False), "_minimum_scalar": ("Min", False)}


def _scalar_op(op_type, reverse):
    def conv(ctx, node, inputs):
        s = ctx.scalar("scalar", float(node.attrs["scalar"]), node.inputs[0])
        ins = [s, inputs[0]] if reverse else [inputs[0], s]
        return ctx.node(op_type, ins, name=node.name, outputs=_out(ctx, node))
    return conv


for _name, (_type, _rev) in _SCALAR.items():
    exporter(_name)(_scalar_op(_type, _rev))

_SCALAR_COMPARE = {"_equal_scalar": ("Equal", False), "_greater_scalar": ("Greater", False),
                   "_lesser_scalar": ("Less", False),
                   "_greater_equal_scalar": ("GreaterOrEqual", False),
                   "_lesser_equal_scalar": ("LessOrEqual", False),
                   "_not_equal_scalar": ("Equal", True)}


def _scalar_compare(op_type, negate):
    def conv(ctx, node, inputs):
        s = ctx.scalar("scalar", float(node.attrs["scalar"]), node.inputs[0])
        b = ctx.node(op_type, [inputs[0], s], name=node.name)[0]
        if negate:
            b = ctx.node("Not", [b], name=node.name)[0]
        return ctx.node("Cast", [b], name=node.name, outputs=_out(ctx, node),
                        to=onnx_dtype(ctx.dtype(node.output(0)), node.name))
    return conv


for _name, (_type, _neg) in _SCALAR_COMPARE.items():
    exporter(_name)(_scalar_compare(_type, _neg))


@exporter("clip")
def clip(ctx, node, inputs):
    lo = ctx.scalar("min", float(node.attrs["a_min"]), node.inputs[0])
    hi = ctx.scalar("max", float(node.attrs["a_max"]), node.inputs[0])
    return ctx.node("Clip", [inputs[0], lo, hi], name=node.name, outputs=_out(ctx, node))


@exporter("ElementWiseSum")
def add_n(ctx, node, inputs):
    if len(inputs) == 1:
        return ctx.node("Identity", inputs, name=node.name, outputs=_out(ctx, node))
    return ctx.node("Sum", inputs, name=node.name, outputs=_out(ctx, node))


@exporter("Cast")
def cast(ctx, node, inputs):
    return ctx.node("Cast", inputs[:1], name=node.name, outputs=_out(ctx, node),
                    to=onnx_dtype(ctx.dtype(node.output(0)), node.name))


@exporter("where")
def where(ctx, node, inputs):
    c = ctx.node("Cast", inputs[:1], name=node.name, to=9)[0]
    return ctx.node("Where", [c, inputs[1], inputs[2]], name=node.name, outputs=_out(ctx, node))


@exporter("zeros_like", "ones_like")
def fill_like(ctx, node, inputs):
    onnx = require_onnx()
    value = 1 if node.op.name == "ones_like" else 0
    dt = ctx.dtype(node.output(0))
    shape = ctx.node("Shape", inputs[:1], name=node.name)[0]
    return ctx.node("ConstantOfShape", [shape], name=node.name, outputs=_out(ctx, node),
                    value=onnx.numpy_helper.from_array(np.array([value], dtype=dt)))


_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin",
           "prod": "ReduceProd"}


def _reduce_axes(node, rank):
    axis = node.attrs.get("axis")
    if axis is None or axis == ():
        axes = None if not node.attrs.get("exclude") else []
    else:
        axes = [a % rank for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    if node.attrs.get("exclude"):
        axes = [a for a in range(rank) if a not in (axes or [])]
    return axes


def _reduce_op(op_type):
    def conv(ctx, node, inputs):
        axes = _reduce_axes(node, ctx.rank(node.inputs[0]))
        keep = bool(node.attrs.get("keepdims"))
        if axes == []:
            return ctx.node("Identity", inputs[:1], name=node.name, outputs=_out(ctx, node))
        rank = ctx.rank(node.inputs[0])
        y = ctx.reduce(op_type, inputs[0], axes, True, name=node.name)
        if keep:
            return ctx.node("Identity", [y], name=node.name, outputs=_out(ctx, node))
        if axes is None or len(axes) == rank:   # MXNet 1.x has no 0-d arrays: shape (1,)
            return ctx.node("Reshape", [y, ctx.ints("shape", [1])], name=node.name,
                            outputs=_out(ctx, node))
        return ctx.node("Squeeze", [y, ctx.ints("axes", axes)], name=node.name,
                        outputs=_out(ctx, node))
    return conv


for _name, _type in _REDUCE.items():
    exporter(_name)(_reduce_op(_type))


@exporter("argmax", "argmin")
def arg_reduce(ctx, node, inputs):
    axis = node.attrs.get("axis")
    keep = int(bool(node.attrs.get("keepdims")))
    x = inputs[0]
    if axis is None:   # over the flattened array; shape (1,) as MXNet 1.x
        x = ctx.node("Reshape", [x, ctx.ints("shape", [-1])], name=node.name)[0]
        axis, keep = 0, 1
    kind = "ArgMax" if node.op.name == "argmax" else "ArgMin"
    i = ctx.node(kind, [x], name=node.name, axis=int(axis), keepdims=keep)[0]
    return ctx.node("Cast", [i], name=node.name, outputs=_out(ctx, node),
                    to=onnx_dtype(ctx.dtype(node.output(0)), node.name))


@exporter("Flatten")
def flatten(ctx, node, inputs):
    return ctx.node("Flatten", inputs[:1], name=node.name, outputs=_out(ctx, node), axis=1)


def _reshape_to(ctx, node, x, keep_batch):
    """Reshape ``x`` to the node's inferred output shape."""
    shape = list(ctx.shape(node.output(0)))
    if ctx.dynamic_batch and shape:
        shape[0] = 0 if keep_batch else -1
    return ctx.node("Reshape", [x, ctx.ints("shape", shape)], name=node.name,
                    outputs=_out(ctx, node))


@exporter("Reshape", "_npx_reshape", "reshape_like")
def reshape(ctx, node, inputs):
    # MXNet's codes (0, -1, -2, -3, -4) are resolved by nbdl's shape rule;
    # with a dynamic batch the leading axis is copied when the rule copies it.
    spec = tuple(node.attrs.get("shape") or node.attrs.get("newshape") or ())
    keep = bool(spec) and spec[0] in (0, -2) and not node.attrs.get("reverse")
    return _reshape_to(ctx, node, inputs[0], keep)


@exporter("expand_dims")
def expand_dims(ctx, node, inputs):
    axis = int(node.attrs["axis"]) % (ctx.rank(node.inputs[0]) + 1)
    return ctx.node("Unsqueeze", [inputs[0], ctx.ints("axes", [axis])], name=node.name,
                    outputs=_out(ctx, node))


@exporter("squeeze")
def squeeze(ctx, node, inputs):
    shape = ctx.shape(node.inputs[0])
    axis = node.attrs.get("axis")
    if axis is None:
        axes = [i for i, d in enumerate(shape) if d == 1 and not (ctx.dynamic_batch and i == 0)]
    else:
        axes = [a % len(shape) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    return ctx.node("Squeeze", [inputs[0], ctx.ints("axes", axes)], name=node.name,
                    outputs=_out(ctx, node))


@exporter("transpose")
def transpose(ctx, node, inputs):
    axes = tuple(node.attrs.get("axes") or ())
    perm = list(axes) if axes else list(reversed(range(ctx.rank(node.inputs[0]))))
    return ctx.node("Transpose", inputs[:1], name=node.name, outputs=_out(ctx, node), perm=perm)


@exporter("SwapAxis")
def swap_axis(ctx, node, inputs):
    rank = ctx.rank(node.inputs[0])
    perm = list(range(rank))
    a, b = int(node.attrs.get("dim1", 0)) % rank, int(node.attrs.get("dim2", 0)) % rank
    perm[a], perm[b] = perm[b], perm[a]
    return ctx.node("Transpose", inputs[:1], name=node.name, outputs=_out(ctx, node), perm=perm)


@exporter("Concat")
def concat(ctx, node, inputs):
    return ctx.node("Concat", inputs, name=node.name, outputs=_out(ctx, node),
                    axis=int(node.attrs.get("dim", 1)))


@exporter("stack")
def stack(ctx, node, inputs):
    axis = int(node.attrs.get("axis", 0)) % (ctx.rank(node.inputs[0]) + 1)
    parts = [ctx.unsqueeze(x, [axis], name=node.name) for x in inputs]
    return ctx.node("Concat", parts, name=node.name, outputs=_out(ctx, node), axis=axis)


@exporter("SliceChannel")
def split(ctx, node, inputs):
    a = node.attrs
    rank = ctx.rank(node.inputs[0])
    axis = int(a.get("axis", 1)) % rank
    n = int(a["num_outputs"])
    size = ctx.shape(node.inputs[0])[axis] // n
    outs = [ctx.claim(node.output(i).name) for i in range(n)]
    if not a.get("squeeze_axis"):
        return ctx.node("Split", [inputs[0], ctx.ints("split", [size] * n)], name=node.name,
                        outputs=outs, axis=axis)
    parts = ctx.node("Split", [inputs[0], ctx.ints("split", [size] * n)], n_out=n,
                     name=node.name, axis=axis)
    return [ctx.node("Squeeze", [p, ctx.ints("axes", [axis])], name=node.name, outputs=[o])[0]
            for p, o in zip(parts, outs)]


def _slice(ctx, node, x, starts, ends, axes, steps):
    return ctx.node("Slice", [x, ctx.ints("starts", starts), ctx.ints("ends", ends),
                              ctx.ints("axes", axes), ctx.ints("steps", steps)],
                    name=node.name, outputs=_out(ctx, node))


@exporter("slice")
def slice_(ctx, node, inputs):
    a = node.attrs
    begin, end = tuple(a["begin"]), tuple(a["end"])
    step = tuple(a.get("step") or ()) or (None,) * len(begin)
    starts, ends, steps = [], [], []
    for b, e, s in zip(begin, end, step):
        s = 1 if s is None else int(s)
        starts.append((0 if s > 0 else -1) if b is None else int(b))
        ends.append((INT64_MAX if s > 0 else -INT64_MAX) if e is None else int(e))
        steps.append(s)
    return _slice(ctx, node, inputs[0], starts, ends, list(range(len(begin))), steps)


@exporter("slice_axis")
def slice_axis(ctx, node, inputs):
    a = node.attrs
    end = a.get("end")
    return _slice(ctx, node, inputs[0], [int(a["begin"])],
                  [INT64_MAX if end is None else int(end)], [int(a["axis"])], [1])


@exporter("dot")
def dot(ctx, node, inputs):
    a, b = inputs[:2]
    ra, rb = ctx.rank(node.inputs[0]), ctx.rank(node.inputs[1])
    if node.attrs.get("transpose_a"):
        a = ctx.node("Transpose", [a], name=node.name, perm=list(range(1, ra)) + [0] if ra > 2
                     else [1, 0])[0] if ra > 1 else a
    if node.attrs.get("transpose_b"):
        b = ctx.node("Transpose", [b], name=node.name,
                     perm=[rb - 1] + list(range(rb - 1)) if rb > 2 else [1, 0])[0] \
            if rb > 1 else b
    if ra <= 2 and rb <= 2:
        return ctx.node("MatMul", [a, b], name=node.name, outputs=_out(ctx, node))
    k = ctx.shape(node.inputs[0])[0 if node.attrs.get("transpose_a") else -1]
    a2 = ctx.node("Reshape", [a, ctx.ints("shape", [-1, k])], name=node.name)[0]
    b2 = ctx.node("Reshape", [b, ctx.ints("shape", [k, -1])], name=node.name)[0]
    y = ctx.node("MatMul", [a2, b2], name=node.name)[0]
    return _reshape_to(ctx, node, y, False)


@exporter("batch_dot")
def batch_dot(ctx, node, inputs):
    a, b = inputs[:2]
    if node.attrs.get("transpose_a"):
        r = ctx.rank(node.inputs[0])
        a = ctx.node("Transpose", [a], name=node.name, perm=list(range(r - 2)) + [r - 1, r - 2])[0]
    if node.attrs.get("transpose_b"):
        r = ctx.rank(node.inputs[1])
        b = ctx.node("Transpose", [b], name=node.name, perm=list(range(r - 2)) + [r - 1, r - 2])[0]
    return ctx.node("MatMul", [a, b], name=node.name, outputs=_out(ctx, node))


@exporter("broadcast_to", "broadcast_axis", "broadcast_like")
def broadcast_to(ctx, node, inputs):
    # Expand broadcasts like numpy: a 1 in the target keeps the input's size,
    # so axes the op does not grow are written 1 (a dynamic batch stays free).
    ins, outs = ctx.shape(node.inputs[0]), ctx.shape(node.output(0))
    target = [1 if i == o else o for i, o in zip(ins, outs)]
    return ctx.node("Expand", [inputs[0], ctx.ints("shape", target)], name=node.name,
                    outputs=_out(ctx, node))


@exporter("tile")
def tile(ctx, node, inputs):
    reps = [int(r) for r in node.attrs["reps"]]
    rank = ctx.rank(node.inputs[0])
    x = inputs[0]
    if len(reps) > rank:
        x = ctx.unsqueeze(x, list(range(len(reps) - rank)), name=node.name)
    reps = [1] * (rank - len(reps)) + reps
    return ctx.node("Tile", [x, ctx.ints("repeats", reps)], name=node.name,
                    outputs=_out(ctx, node))


@exporter("take")
def take(ctx, node, inputs):
    a = node.attrs
    axis = int(a.get("axis", 0)) % ctx.rank(node.inputs[0])
    n = ctx.shape(node.inputs[0])[axis]
    idx = ctx.node("Cast", [inputs[1]], name=node.name, to=7)[0]
    mode = a.get("mode", "clip")
    if mode == "clip":
        idx = ctx.node("Clip", [idx, ctx.const("lo", np.array(0, np.int64)),
                                ctx.const("hi", np.array(n - 1, np.int64))], name=node.name)[0]
    elif mode == "wrap":
        idx = ctx.node("Mod", [idx, ctx.const("n", np.array(n, np.int64))], name=node.name)[0]
    return ctx.node("Gather", [inputs[0], idx], name=node.name, outputs=_out(ctx, node),
                    axis=axis)


@exporter("one_hot")
def one_hot(ctx, node, inputs):
    a = node.attrs
    dt = ctx.dtype(node.output(0))
    values = ctx.const("values", np.array([a.get("off_value", 0.0), a.get("on_value", 1.0)], dt))
    depth = ctx.const("depth", np.array(int(a["depth"]), np.int64))
    idx = ctx.node("Cast", inputs[:1], name=node.name, to=7)[0]
    return ctx.node("OneHot", [idx, depth, values], name=node.name, outputs=_out(ctx, node),
                    axis=-1)


@exporter("norm")
def norm(ctx, node, inputs):
    a = node.attrs
    rank = ctx.rank(node.inputs[0])
    axis = a.get("axis")
    axes = None if axis is None or axis == () else \
        [x % rank for x in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    kind = "ReduceL1" if int(a.get("ord", 2)) == 1 else "ReduceL2"
    x = inputs[0]
    if a.get("out_dtype") is not None:
        x = ctx.node("Cast", [x], name=node.name,
                     to=onnx_dtype(ctx.dtype(node.output(0)), node.name))[0]
    y = ctx.reduce(kind, x, axes, True, name=node.name)
    if a.get("keepdims"):
        return ctx.node("Identity", [y], name=node.name, outputs=_out(ctx, node))
    if axes is None or len(axes) == rank:
        return ctx.node("Reshape", [y, ctx.ints("shape", [1])], name=node.name,
                        outputs=_out(ctx, node))
    return ctx.node("Squeeze", [y, ctx.ints("axes", axes)], name=node.name,
                    outputs=_out(ctx, node))
