"""Reductions (sum, mean, prod, max, min, argmax, argmin) and broadcasts
(broadcast_to, broadcast_axis), with their hidden backward ops.  Rules only;
kernels in ``nbdl.kernels.*.reduce``.

Kernel geometry (``reduce_plan``): size-1 axes are dropped and neighbouring
axes that are both reduced (or both kept) are merged, which leaves an
alternating sequence of kept / reduced groups.  It is right-aligned into six
slots, ``(K0, R0, K1, R1, K2, R2)`` when the last group is reduced and
``(R0, K0, R1, K1, R2, K2)`` when it is kept, so one contiguous view of the
input serves any axis set (up to six alternating groups; MXNet's own limit
after the same compaction is five) and the kept slots ``(K0, K1, K2)`` are
the output.  Broadcasts use the same plan with "reduced" meaning
"broadcast".
"""
from ..dtype import INTEGERS
from ..errors import ShapeError
from .ir import backward_node
from .attrs import Attr
from .registry import FLOAT_DTYPES, OpDef, kernel_paths, register, shape_error
from .rules import output_shape, same_type, size_of
from .shape import MOVE_DTYPES

SLOTS = 6
OP_SUM, OP_PROD, OP_MAX, OP_MIN = 0, 1, 2, 3
# norm's (``nbdl.ops.reduce_norm``): sum of |x| (ord=1), sqrt of the sum of x*x (ord=2)
OP_ASUM, OP_NRM2 = 4, 5
# sum / product skipping NaN (MXNet's nansum / nanprod reducers)
OP_NANSUM, OP_NANPROD = 6, 7
OP_CODES = {"sum": OP_SUM, "mean": OP_SUM, "prod": OP_PROD, "max": OP_MAX, "min": OP_MIN,
            "nansum": OP_NANSUM, "nanprod": OP_NANPROD}
# modes of the select-style backward kernels: max/min, prod, norm ord=2, norm ord=1,
# nansum (g where x is not NaN), nanprod (g * out / x where x is not NaN)
SEL_MAXMIN, SEL_PROD, SEL_NRM2, SEL_ASUM, SEL_NANSUM, SEL_NANPROD = 0, 1, 2, 3, 4, 5



def normalize_axes(axes, ndim, where):
    """Negative axes counted from the end; out-of-range or repeated axes raise."""
    out = []
    for a in axes:
        if a is None or not -ndim <= a < ndim:
            raise ShapeError(f"{where}: axis {a} is out of range for an input with {ndim} axes")
        a = a + ndim if a < 0 else a
        if a in out:
            raise ShapeError(f"{where}: axis {a} is given more than once in {tuple(axes)}")
        out.append(a)
    return tuple(out)


def reduce_axes(attrs, ndim, where="reduce"):
    """The axes a sum/mean/.../max reduces.  MXNet: no axis (or ``()``) means
    every axis, whatever ``exclude`` says; ``exclude`` reduces the others."""
    axis = attrs.get("axis")
    if axis is None or len(axis) == 0:
        return tuple(range(ndim))
    axes = normalize_axes(axis, ndim, where)
    if attrs.get("exclude"):
        return tuple(i for i in range(ndim) if i not in axes)
    return tuple(sorted(axes))


def reduced_shape(ishape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else int(d) for i, d in enumerate(ishape))
    out = tuple(int(d) for i, d in enumerate(ishape) if i not in axes)
    return out or (1,)  # MXNet 1.x: a full reduction has shape (1,)


def reduce_plan(ishape, axes, where="reduce"):
    """``(tail_reduced, big_view, small_view, count)``: the 6-D view of the
    full-size array, the 3-D view of the reduced one, and how many elements
    each output combines."""
    groups = []
    for i, d in enumerate(ishape):
        if d == 1:
            continue
        red = i in axes
        if groups and groups[-1][0] == red:
            groups[-1][1] *= int(d)
        else:
            groups.append([red, int(d)])
    if not groups:
        groups = [[False, 1]]
    if len(groups) > SLOTS:
        raise ShapeError(f"{where}: reducing axes {tuple(axes)} of shape {tuple(ishape)} leaves "
                         f"{len(groups)} alternating kept/reduced axis groups; at most {SLOTS} "
                         "are supported (transpose or reshape first)")
    sizes = [1] * (SLOTS - len(groups)) + [g[1] for g in groups]
    tail_reduced = groups[-1][0]
    kept = sizes[0::2] if tail_reduced else sizes[1::2]
    count = size_of(g[1] for g in groups if g[0])
    return tail_reduced, tuple(sizes), tuple(kept), count


def op_name(call):
    """``sum`` for both ``sum`` and ``_backward_sum``."""
    name = call.op.name
    return name[len("_backward_"):] if name.startswith("_backward_") else name


def select_mode(call):
    """The select-backward kernels' mode for ``call`` (a ``_backward_*`` op)."""
    name = op_name(call)
    if name == "prod":
        return SEL_PROD
    if name in ("nansum", "nanprod"):
        return SEL_NANSUM if name == "nansum" else SEL_NANPROD
    if name == "norm":
        return SEL_NRM2 if call.attrs["ord"] == 2 else SEL_ASUM
    return SEL_MAXMIN


def arg_plan(attrs, ishape, where="argmax"):
    """(outer, n, inner) view of argmax/argmin's input."""
    axis = attrs["axis"]
    if axis is None:
        return 1, size_of(ishape), 1
    a = normalize_axes((axis,), len(ishape), where)[0]
    return size_of(ishape[:a]), int(ishape[a]), size_of(ishape[a + 1:])


def broadcast_axes(ishape, oshape):
    """Axes along which ``ishape`` (same rank) is broadcast to ``oshape``."""
    return tuple(i for i, (a, b) in enumerate(zip(ishape, oshape)) if a == 1 and b != 1)


# ---------------------------------------------------------------- sum, mean, prod, max, min

# integers too, as MXNet's (accumulated in float64, cast once: integer results,
# a mean truncated toward zero)
REDUCE_DTYPES = FLOAT_DTYPES + INTEGERS

_REDUCE_ATTRS = {"axis": Attr("tuple", None, optional=True), "keepdims": Attr("bool", False),
                 "exclude": Attr("bool", False)}


def _reduce_infer_shape(name):
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        if ins[0] is None:
            return ins, outs
        axes = reduce_axes(attrs, len(ins[0]), name)
        reduce_plan(ins[0], axes, name)  # raises early for an axis set the kernels cannot view
        oshape = reduced_shape(ins[0], axes, attrs["keepdims"])
        if name in ("max", "min") and size_of(oshape) > 0 and any(ins[0][a] == 0 for a in axes):
            # as numpy's and MXNet's: no identity to start an empty max/min from
            raise shape_error(name, f"cannot take the {name}imum over a zero-size axis of "
                              f"{tuple(ins[0])} (axes {tuple(axes)})", in_shapes)
        return ins, output_shape(name, outs, oshape, in_shapes)
    return rule


def _axis_attrs(attrs):
    return {"axis": attrs["axis"], "keepdims": attrs["keepdims"], "exclude": attrs["exclude"]}


def _reduce_gradient(backward_op, needs_output):
    def gradient(node, out_grads):
        inputs = [out_grads[0], node.inputs[0]] + ([node.output(0)] if needs_output else [])
        back = backward_node(backward_op, inputs, node, _axis_attrs(node.attrs))
        return [back.output(0)]
    return gradient


def reduce_temp(call, accumulators=True):
    """float64 accumulators, one per output element, for kernels that keep
    them in memory (the CPU's); an empty buffer for kernels that accumulate
    in registers (CUDA).  Each device's module names its rule."""
    return [((size_of(call.out_shapes[0]) if accumulators else 0,), "float64")]


_REDUCE_TEMP = kernel_paths("reduce", "temp_reduce")


def _backward_infer_shape(attrs, in_shapes, out_shapes):
    """``(out_grad, data[, out]) -> data_grad``: the gradient has data's shape."""
    ins, outs = list(in_shapes), list(out_shapes)
    ins[1] = ins[1] if ins[1] is not None else outs[0]
    outs[0] = ins[1]
    if ins[1] is not None and "axis" in attrs:
        small = reduced_shape(ins[1], reduce_axes(attrs, len(ins[1])), attrs["keepdims"])
        for i in range(0, len(ins), 2):  # out_grad and out have the reduced shape
            ins[i] = ins[i] if ins[i] is not None else small
    return ins, outs


_REDUCE_DOCS = {
    "sum": "Sum over ``axis`` (all axes when not given).",
    "mean": "Mean over ``axis``.",
    "prod": "Product over ``axis``.",
    "max": "Maximum over ``axis`` (NaN propagates).",
    "min": "Minimum over ``axis`` (NaN propagates).",
    "nansum": "Sum over ``axis`` treating NaN as 0.",
    "nanprod": "Product over ``axis`` treating NaN as 1.",
}
_REDUCE_ALIASES = {"sum": ("sum_axis",), "max": ("max_axis",), "min": ("min_axis",)}

for _name, _needs_out in (("sum", False), ("mean", False), ("prod", True), ("max", True),
                          ("min", True), ("nansum", True), ("nanprod", True)):
    _cpu = "nbdl.kernels.cpu.reduce:"
    _gpu = "nbdl.kernels.cuda.reduce:"
    register(OpDef(
        name=_name, attrs=dict(_REDUCE_ATTRS),
        infer_shape=_reduce_infer_shape(_name), infer_type=same_type,
        gradient=_reduce_gradient(f"_backward_{_name}", _needs_out),
        temp=_REDUCE_TEMP,
        half_mirrors=True,
        kernels={"cpu": _cpu + "prepare_reduce", "cuda": _gpu + "prepare_reduce"},
        supports_add=True, dtypes=REDUCE_DTYPES, doc=_REDUCE_DOCS[_name]),
        aliases=_REDUCE_ALIASES.get(_name, ()))
    register(OpDef(
        name=f"_backward_{_name}",
        input_names=("out_grad", "data") + (("output",) if _needs_out else ()),
        attrs=dict(_REDUCE_ATTRS),
        infer_shape=_backward_infer_shape, infer_type=same_type,
        # The kernel reads data[i] (if at all) before writing data_grad[i].
        inplace=lambda attrs: [(1, 0)],
        half_mirrors=True,
        kernels={"cpu": _cpu + ("prepare_select_backward" if _needs_out else "prepare_bcast_backward"),
                 "cuda": _gpu + ("prepare_select_backward" if _needs_out else "prepare_bcast_backward")},
        supports_add=True, hidden=True, dtypes=REDUCE_DTYPES))


# ---------------------------------------------------------------- argmax, argmin

def _arg_infer_shape(name):
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        shape = ins[0]
        if shape is None:
            return ins, outs
        axis = attrs["axis"]
        if axis is None or len(shape) <= 1:
            axes = normalize_axes((axis,), len(shape), name) if axis is not None else None
            oshape = (1,) * len(shape) if attrs["keepdims"] else (1,)
            n = size_of(shape) if axes is None else shape[axes[0]]
        else:
            a = normalize_axes((axis,), len(shape), name)[0]
            oshape = reduced_shape(shape, (a,), attrs["keepdims"])
            n = shape[a]
        if n == 0:
            raise shape_error(name, f"cannot take {name} over an empty axis of shape {tuple(shape)}")
        outs[0] = oshape
        return ins, outs
    return rule


for _name in ("argmax", "argmin"):
    register(OpDef(
        name=_name, attrs={"axis": Attr("int", None, optional=True), "keepdims": Attr("bool", False)},
        infer_shape=_arg_infer_shape(_name), infer_type=same_type,
        gradient=lambda node, out_grads: [None],  # an index has no gradient
        half_mirrors=True,
        kernels=kernel_paths("reduce", "prepare_arg"),
        doc=f"Index of the {'largest' if _name == 'argmax' else 'smallest'} element along "
            "``axis`` (flattened when not given), as a float of the input's dtype; ties "
            "and NaNs give the first position."))


# ---------------------------------------------------------------- broadcast_to, broadcast_axis

def _broadcast_to_shape(attrs, ishape):
    target = attrs["shape"]
    if len(target) != len(ishape):
        raise shape_error("broadcast_to", f"cannot broadcast shape {tuple(ishape)} to {tuple(target)}: "
                          "the ranks differ")
    out = []
    for d, t in zip(ishape, target):
        if t == 0 or t is None:
            out.append(int(d))
        elif d == t or d == 1:
            out.append(int(t))
        else:
            raise shape_error("broadcast_to", f"cannot broadcast shape {tuple(ishape)} to "
                              f"{tuple(target)}: axis of size {d} is not 1")
    return tuple(out)


def _broadcast_axis_shape(attrs, ishape):
    axes = normalize_axes(attrs["axis"], len(ishape), "broadcast_axis")
    sizes = attrs["size"]
    if len(axes) != len(sizes):
        raise shape_error("broadcast_axis", f"axis {attrs['axis']} and size {sizes} must have the "
                          "same length")
    out = list(ishape)
    for a, s in zip(axes, sizes):
        if ishape[a] != 1:
            raise shape_error("broadcast_axis", f"axis {a} of shape {tuple(ishape)} has size "
                              f"{ishape[a]}; only size-1 axes can be broadcast")
        out[a] = int(s)
    return tuple(out)


def _broadcast_infer_shape(fn, name):
    def rule(attrs, in_shapes, out_shapes):
        ins, outs = list(in_shapes), list(out_shapes)
        if ins[0] is None:
            return ins, outs
        oshape = fn(attrs, ins[0])
        return ins, output_shape(name, outs, oshape, in_shapes)
    return rule


def _broadcast_gradient(node, out_grads):
    back = backward_node("_broadcast_backward", [out_grads[0], node.inputs[0]], node, {})
    return [back.output(0)]


register(OpDef(
    name="broadcast_to", attrs={"shape": Attr("tuple", ())},
    infer_shape=_broadcast_infer_shape(_broadcast_to_shape, "broadcast_to"), infer_type=same_type,
    gradient=_broadcast_gradient,
    half_mirrors=True,
    kernels=kernel_paths("reduce", "prepare_broadcast"),
    supports_add=True, dtypes=MOVE_DTYPES,
    doc="Broadcast size-1 axes to ``shape`` (0 keeps an axis)."))

register(OpDef(
    name="broadcast_axis", attrs={"axis": Attr("tuple", ()), "size": Attr("tuple", ())},
    infer_shape=_broadcast_infer_shape(_broadcast_axis_shape, "broadcast_axis"), infer_type=same_type,
    gradient=_broadcast_gradient,
    half_mirrors=True,
    kernels=kernel_paths("reduce", "prepare_broadcast"),
    supports_add=True, dtypes=MOVE_DTYPES,
    doc="Broadcast the size-1 axes ``axis`` to ``size``."), aliases=("broadcast_axes",))


register(OpDef(
    name="_broadcast_backward", input_names=("out_grad", "data"),
    infer_shape=_backward_infer_shape, infer_type=same_type,
    temp=_REDUCE_TEMP,
    half_mirrors=True,
    kernels=kernel_paths("reduce", "prepare_broadcast_backward"),
    supports_add=True, hidden=True,
    doc="Sum ``out_grad`` over the axes along which ``data`` was broadcast."))
