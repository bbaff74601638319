"""ONNX import converters: ``fn(ctx, node, attrs) -> [outputs]``, one entry
per ONNX output (a Symbol, a numpy array for a folded constant, or None for
an output nbdl does not produce).  ``ctx.sym(name)`` gives an input as a
Symbol, ``ctx.const(name, what)`` as a constant."""
import numpy as np

from .. import symbol as S
from ._common import OnnxError, importer, numpy_dtype, require_onnx

_FLOAT_MAX = float(np.finfo(np.float32).max)


def _name(ctx, node):
    return ctx.node_name


def _refuse(ctx, node, what):
    raise OnnxError(f"import_model: {node.op_type} (node {ctx.node_name!r}): {what} is not "
                    f"supported")


def _opt(node, i):
    """Input ``i`` of ``node`` if present and not empty."""
    return node.input[i] if len(node.input) > i and node.input[i] else None


# -- constants -----------------------------------------------------------

@importer("Constant")
def constant(ctx, node, attrs):
    onnx = require_onnx()
    if "value" in attrs:
        return [onnx.numpy_helper.to_array(attrs["value"])]
    for key, dt in (("value_float", np.float32), ("value_floats", np.float32),
                    ("value_int", np.int64), ("value_ints", np.int64)):
        if key in attrs:
            return [np.asarray(attrs[key], dtype=dt)]
    _refuse(ctx, node, f"a Constant with attributes {sorted(attrs)}")


@importer("ConstantOfShape")
def constant_of_shape(ctx, node, attrs):
    onnx = require_onnx()
    shape = ctx.const(node.input[0], "ConstantOfShape's shape")
    value = onnx.numpy_helper.to_array(attrs["value"]) if "value" in attrs \
        else np.zeros(1, np.float32)
    return [np.full(tuple(int(d) for d in shape), value.reshape(-1)[0], dtype=value.dtype)]


@importer("Shape")
def shape_op(ctx, node, attrs):
    s = ctx.shape(node.input[0])
    if s is None:
        _refuse(ctx, node, "Shape of a value whose shape is not static")
    s = np.asarray(s, np.int64)
    return [s[attrs.get("start", 0):attrs.get("end", len(s))]]


def _all_const(ctx, node):
    return all(ctx.is_const(n) for n in node.input if n)


# -- elementwise ---------------------------------------------------------

_UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Exp": "exp", "Log": "log",
          "Sqrt": "sqrt", "Abs": "abs", "Neg": "negative", "Reciprocal": "reciprocal",
          "Floor": "floor", "Ceil": "ceil", "Sin": "sin", "Cos": "cos", "Tan": "tan",
          "Asin": "arcsin", "Acos": "arccos", "Atan": "arctan", "Sinh": "sinh", "Cosh": "cosh",
          "Asinh": "arcsinh", "Acosh": "arccosh", "Atanh": "arctanh", "Sign": "sign",
          "Erf": "erf", "Softsign": "softsign", "Round": "rint", "Not": "logical_not"}


def _unary(op_name):
    def conv(ctx, node, attrs):
        return [getattr(S, op_name)(ctx.sym(node.input[0]), name=_name(ctx, node))]
    return conv


for _t, _n in _UNARY.items():
    importer(_t)(_unary(_n))

_NP_BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}
_BINARY = {"Add": "broadcast_add", "Sub": "broadcast_sub", "Mul": "broadcast_mul",
           "Div": "broadcast_div", "Pow": "broadcast_power", "Equal": "broadcast_equal",
           "Greater": "broadcast_greater", "Less": "broadcast_lesser",
           "GreaterOrEqual": "broadcast_greater_equal", "LessOrEqual": "broadcast_lesser_equal",
           "And": "broadcast_logical_and", "Or": "broadcast_logical_or",
           "Xor": "broadcast_logical_xor"}


def _binary(onnx_type, op_name):
    def conv(ctx, node, attrs):
        a, b = node.input[:2]
        if onnx_type in _NP_BINARY and _all_const(ctx, node):
            x, y = ctx.consts[a], ctx.consts[b]
            return [_NP_BINARY[onnx_type](x, y).astype(np.result_type(x, y))]
        return [getattr(S, op_name)(ctx.sym(a), ctx.sym(b), name=_name(ctx, node))]
    return conv


for _t, _n in _BINARY.items():
    importer(_t)(_binary(_t, _n))


@importer("Max", "Min", "Sum", "Mean")
def variadic(ctx, node, attrs):
    xs = [ctx.sym(n) for n in node.input]
    name = _name(ctx, node)
    if node.op_type in ("Sum", "Mean"):
        y = xs[0]
        for i, x in enumerate(xs[1:]):
            y = S.broadcast_add(y, x, name=f"{name}_add{i}")
        if node.op_type == "Mean":
            y = S._div_scalar(y, scalar=float(len(xs)), name=name)
        return [y]
    op = S.broadcast_maximum if node.op_type == "Max" else S.broadcast_minimum
    y = xs[0]
    for i, x in enumerate(xs[1:]):
        y = op(y, x, name=f"{name}_{i}")
    return [y]


@importer("Identity", "Dropout")
def identity(ctx, node, attrs):
    if node.op_type == "Dropout" and _opt(node, 2) and ctx.is_const(node.input[2]) \
            and bool(ctx.consts[node.input[2]]):
        _refuse(ctx, node, "Dropout in training mode")
    x = node.input[0]
    if ctx.is_const(x):
        return [ctx.consts[x]]
    return [S._copy(ctx.sym(x), name=_name(ctx, node))] + [None] * (len(node.output) - 1)


@importer("Cast")
def cast(ctx, node, attrs):
    dt = numpy_dtype(attrs["to"], f"Cast (node {ctx.node_name!r})")
    if ctx.is_const(node.input[0]):
        return [ctx.consts[node.input[0]].astype(dt)]
    return [S.Cast(ctx.sym(node.input[0]), dtype=dt.name, name=_name(ctx, node))]


@importer("Clip")
def clip(ctx, node, attrs):
    lo = float(ctx.const(node.input[1], "Clip's min")) if _opt(node, 1) else -_FLOAT_MAX
    hi = float(ctx.const(node.input[2], "Clip's max")) if _opt(node, 2) else _FLOAT_MAX
    return [S.clip(ctx.sym(node.input[0]), a_min=lo, a_max=hi, name=_name(ctx, node))]


@importer("Where")
def where(ctx, node, attrs):
    c, x, y = (ctx.sym(n) for n in node.input[:3])
    return [S.where(c, x, y, name=_name(ctx, node))]


# -- activations ---------------------------------------------------------

@importer("LeakyRelu")
def leaky_relu(ctx, node, attrs):
    return [S.LeakyReLU(ctx.sym(node.input[0]), act_type="leaky",
                        slope=float(attrs.get("alpha", 0.01)), name=_name(ctx, node))]


@importer("Elu")
def elu(ctx, node, attrs):
    return [S.LeakyReLU(ctx.sym(node.input[0]), act_type="elu",
                        slope=float(attrs.get("alpha", 1.0)), name=_name(ctx, node))]


@importer("Selu")
def selu(ctx, node, attrs):
    if abs(attrs.get("alpha", 1.67326319217681884765625) - 1.6732632423543772) > 1e-6 or \
            abs(attrs.get("gamma", 1.05070102214813232421875) - 1.0507009873554805) > 1e-6:
        _refuse(ctx, node, "Selu with non-default alpha/gamma")
    return [S.LeakyReLU(ctx.sym(node.input[0]), act_type="selu", name=_name(ctx, node))]


@importer("Softplus")
def softplus(ctx, node, attrs):
    return [S.Activation(ctx.sym(node.input[0]), act_type="softrelu", name=_name(ctx, node))]


@importer("HardSigmoid")
def hard_sigmoid(ctx, node, attrs):
    return [S.hard_sigmoid(ctx.sym(node.input[0]), alpha=float(attrs.get("alpha", 0.2)),
                           beta=float(attrs.get("beta", 0.5)), name=_name(ctx, node))]


@importer("Gelu")
def gelu(ctx, node, attrs):
    if attrs.get("approximate", b"none") not in (b"none", "none"):
        _refuse(ctx, node, "approximate='tanh'")
    return [S.LeakyReLU(ctx.sym(node.input[0]), act_type="gelu", name=_name(ctx, node))]


@importer("PRelu")
def prelu(ctx, node, attrs):
    slope = node.input[1]
    if ctx.is_const(slope):
        value = ctx.consts[slope]
        g = ctx.param(slope, value.reshape(-1))
    else:
        g = S.reshape(ctx.sym(slope), shape=(-1,))
    return [S.LeakyReLU(ctx.sym(node.input[0]), g, act_type="prelu", name=_name(ctx, node))]


@importer("Softmax", "LogSoftmax")
def softmax(ctx, node, attrs):
    op = S.softmax if node.op_type == "Softmax" else S.log_softmax
    return [op(ctx.sym(node.input[0]), axis=int(attrs.get("axis", -1)), name=_name(ctx, node))]


# -- shape -----------------------------------------------------------------

@importer("Reshape")
def reshape(ctx, node, attrs):
    shape = tuple(int(d) for d in ctx.const(node.input[1], "Reshape's shape"))
    if attrs.get("allowzero", 0) and 0 in shape:
        _refuse(ctx, node, "allowzero=1 with a 0 in the shape")
    x = node.input[0]
    if ctx.is_const(x):
        v = ctx.consts[x]
        return [v.reshape([v.shape[i] if d == 0 else d for i, d in enumerate(shape)])]
    return [S.Reshape(ctx.sym(x), shape=shape, name=_name(ctx, node))]


@importer("Flatten")
def flatten(ctx, node, attrs):
    axis = int(attrs.get("axis", 1))
    x = node.input[0]
    if axis == 1:
        return [S.Flatten(ctx.sym(x), name=_name(ctx, node))]
    rank = ctx.rank(x)
    if rank is None:
        _refuse(ctx, node, f"axis={axis} on a value of unknown rank")
    axis %= rank
    if axis == 0:
        return [S.Reshape(ctx.sym(x), shape=(1, -1), name=_name(ctx, node))]
    # keep the first axis (a dynamic batch) by copying it: (0, ..., -1) then merge
    s = ctx.shape(x)
    if s is None:
        _refuse(ctx, node, f"axis={axis} on a value of unknown shape")
    return [S.Reshape(ctx.sym(x), shape=(int(np.prod(s[:axis])), -1), name=_name(ctx, node))]


@importer("Transpose")
def transpose(ctx, node, attrs):
    perm = attrs.get("perm")
    x = node.input[0]
    if ctx.is_const(x):
        return [np.transpose(ctx.consts[x], perm)]
    return [S.transpose(ctx.sym(x), axes=tuple(perm) if perm else (), name=_name(ctx, node))]


@importer("Concat")
def concat(ctx, node, attrs):
    axis = int(attrs["axis"])
    if _all_const(ctx, node):
        return [np.concatenate([ctx.consts[n] for n in node.input], axis=axis)]
    return [S.Concat(*[ctx.sym(n) for n in node.input], dim=axis, name=_name(ctx, node))]


def _axes(ctx, node, attrs, what):
    if "axes" in attrs:
        return [int(a) for a in attrs["axes"]]
    if _opt(node, 1):
        return [int(a) for a in ctx.const(node.input[1], what)]
    return None


@importer("Unsqueeze")
def unsqueeze(ctx, node, attrs):
    axes = _axes(ctx, node, attrs, "Unsqueeze's axes")
    x = node.input[0]
    rank = ctx.rank(x)
    if any(a < 0 for a in axes):
        if rank is None:
            _refuse(ctx, node, "negative axes on a value of unknown rank")
        axes = [a % (rank + len(axes)) for a in axes]
    if ctx.is_const(x):
        return [np.expand_dims(ctx.consts[x], tuple(axes))]
    y = ctx.sym(x)
    for i, a in enumerate(sorted(axes)):
        y = S.expand_dims(y, axis=a, name=f"{_name(ctx, node)}_{i}" if i < len(axes) - 1
                          else _name(ctx, node))
    return [y]


@importer("Squeeze")
def squeeze(ctx, node, attrs):
    axes = _axes(ctx, node, attrs, "Squeeze's axes")
    x = node.input[0]
    if ctx.is_const(x):
        return [np.squeeze(ctx.consts[x], axis=None if axes is None else tuple(axes))]
    return [S.squeeze(ctx.sym(x), axis=None if axes is None else tuple(axes),
                      name=_name(ctx, node))]


@importer("Gather")
def gather(ctx, node, attrs):
    axis = int(attrs.get("axis", 0))
    data, idx = node.input[:2]
    if _all_const(ctx, node):
        return [np.take(ctx.consts[data], ctx.consts[idx].astype(np.int64), axis=axis)]
    return [S.take(ctx.sym(data), ctx.sym(idx), axis=axis, mode="wrap", name=_name(ctx, node))]


@importer("Slice")
def slice_(ctx, node, attrs):
    starts = [int(v) for v in ctx.const(node.input[1], "Slice's starts")]
    ends = [int(v) for v in ctx.const(node.input[2], "Slice's ends")]
    x = node.input[0]
    rank = ctx.rank(x)
    axes = [int(v) for v in ctx.const(node.input[3], "Slice's axes")] if _opt(node, 3) \
        else list(range(len(starts)))
    steps = [int(v) for v in ctx.const(node.input[4], "Slice's steps")] if _opt(node, 4) \
        else [1] * len(starts)
    if any(a < 0 for a in axes):
        if rank is None:
            _refuse(ctx, node, "negative axes on a value of unknown rank")
        axes = [a % rank for a in axes]
    big = np.iinfo(np.int64).max // 2
    if ctx.is_const(x):
        sl = [slice(None)] * ctx.consts[x].ndim
        for a, b, e, s in zip(axes, starts, ends, steps):
            sl[a] = slice(b, e, s)
        return [ctx.consts[x][tuple(sl)]]
    n = max(axes) + 1
    begin, end, step = [None] * n, [None] * n, [None] * n
    for a, b, e, s in zip(axes, starts, ends, steps):
        begin[a] = None if (s > 0 and b == 0) else b
        end[a] = None if abs(e) >= big else e
        step[a] = s
    return [S.slice(ctx.sym(x), begin=tuple(begin), end=tuple(end), step=tuple(step),
                    name=_name(ctx, node))]


@importer("Split")
def split(ctx, node, attrs):
    x = node.input[0]
    axis = int(attrs.get("axis", 0))
    n = len(node.output)
    sizes = None
    if _opt(node, 1):
        sizes = [int(v) for v in ctx.const(node.input[1], "Split's sizes")]
    elif "split" in attrs:
        sizes = [int(v) for v in attrs["split"]]
    if sizes is None or len(set(sizes)) == 1:
        out = S.SliceChannel(ctx.sym(x), num_outputs=n, axis=axis, name=_name(ctx, node))
        return [out[i] for i in range(n)]
    outs, at = [], 0
    for i, sz in enumerate(sizes):
        outs.append(S.slice_axis(ctx.sym(x), axis=axis, begin=at, end=at + sz,
                                 name=f"{_name(ctx, node)}_{i}"))
        at += sz
    return outs


@importer("Expand")
def expand(ctx, node, attrs):
    shape = [int(d) for d in ctx.const(node.input[1], "Expand's shape")]
    x = node.input[0]
    rank = ctx.rank(x)
    if rank is None:
        _refuse(ctx, node, "an input of unknown rank")
    y = ctx.sym(x)
    if len(shape) > rank:
        y = S.Reshape(y, shape=(1,) * (len(shape) - rank) + (-2,), name=f"{_name(ctx, node)}_r")
        rank = len(shape)
    target = [0] * (rank - len(shape)) + [0 if d == 1 else d for d in shape]
    return [S.broadcast_to(y, shape=tuple(target), name=_name(ctx, node))]


@importer("Tile")
def tile(ctx, node, attrs):
    reps = tuple(int(r) for r in ctx.const(node.input[1], "Tile's repeats"))
    return [S.tile(ctx.sym(node.input[0]), reps=reps, name=_name(ctx, node))]


# -- reductions -------------------------------------------------------------

_REDUCE = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min",
           "ReduceProd": "prod"}


def _reduce(op_name):
    def conv(ctx, node, attrs):
        axes = _axes(ctx, node, attrs, f"{node.op_type}'s axes")
        keep = bool(attrs.get("keepdims", 1))
        x = ctx.sym(node.input[0])
        if not axes:
            if attrs.get("noop_with_empty_axes", 0):
                return [S._copy(x, name=_name(ctx, node))]
            axes = None
        return [getattr(S, op_name)(x, axis=None if axes is None else tuple(axes),
                                    keepdims=keep, name=_name(ctx, node))]
    return conv


for _t, _n in _REDUCE.items():
    importer(_t)(_reduce(_n))


@importer("ReduceL1", "ReduceL2")
def reduce_norm(ctx, node, attrs):
    axes = _axes(ctx, node, attrs, f"{node.op_type}'s axes")
    keep = bool(attrs.get("keepdims", 1))
    x = ctx.sym(node.input[0])
    if not axes and attrs.get("noop_with_empty_axes", 0):
        return [S._copy(x, name=_name(ctx, node))]
    return [S.norm(x, ord=1 if node.op_type == "ReduceL1" else 2,
                   axis=None if not axes else tuple(axes), keepdims=keep, name=_name(ctx, node))]


@importer("LRN")
def lrn(ctx, node, attrs):
    return [S.LRN(ctx.sym(node.input[0]), nsize=int(attrs["size"]),
                  alpha=float(attrs.get("alpha", 1e-4)), beta=float(attrs.get("beta", 0.75)),
                  knorm=float(attrs.get("bias", 1.0)), name=_name(ctx, node))]


@importer("ArgMax", "ArgMin")
def arg_reduce(ctx, node, attrs):
    if attrs.get("select_last_index", 0):
        _refuse(ctx, node, "select_last_index=1")
    op = S.argmax if node.op_type == "ArgMax" else S.argmin
    y = op(ctx.sym(node.input[0]), axis=int(attrs.get("axis", 0)),
           keepdims=bool(attrs.get("keepdims", 1)), name=f"{_name(ctx, node)}_f")
    return [S.Cast(y, dtype="int64", name=_name(ctx, node))]
