"""Unary elementwise ops: rules only (kernels in nbdl.kernels.*.elemwise_unary).

``negative``, ``abs``, ``exp``... ``clip``, ``Activation``, the copies
(``_copy``/``identity``, ``BlockGrad``, ``zeros_like``, ``ones_like``),
``ElementWiseSum``/``add_n`` and ``where``, with the hidden ``_backward_*``
ops their gradients are made of.  Each activation's backward reads the
forward *output* where it can (relu, sigmoid, tanh, softrelu, sqrt, rsqrt,
exp), so the planner may free the input after the forward step.  The rest
of MXNet's unary math (trigonometric, rounding, erf, gamma...) is in
``elemwise_math``; dtypes and NaN rules are in ``docs/ops.md``."""
import numpy as np

from ..dtype import COMPUTE, FLOATING, HALF, NUMERIC
from ..errors import DTypeError
from .elemwise_grad2 import DERIVATIVES, second_order
from .ir import backward_node, make_node
from .partial_shape import accepts_partial, compatible, is_full, merge_all, show
from .registry import REQ_ADD, Attr, OpDef, register, shape_error, shapes_str
from .rules import same_type  # noqa: F401  (the family's type rule; docs/ops.md imports it here)


@accepts_partial
def same_shape(attrs, in_shapes, out_shapes):
    """Elementwise shape rule: every input and output has one shape (partial
    shapes merged dim by dim, ``nbdl.ops.partial_shape``)."""
    given = [s for s in list(in_shapes) + list(out_shapes) if s is not None]
    known = given[0] if given else None
    if known is not None and not all(map(is_full, given)):
        known = merge_all(given)
    return [known] * len(in_shapes), [known] * len(out_shapes)



def equal_shapes(opname, names):
    """Shape rule of an op whose inputs (named ``names``) and outputs must all
    have one shape; a disagreement names the op and both shapes."""
    @accepts_partial
    def rule(attrs, in_shapes, out_shapes):
        known = [(n, s) for n, s in zip(list(names) + ["output"] * len(out_shapes),
                                        list(in_shapes) + list(out_shapes)) if s is not None]
        for n, s in known[1:]:
            if tuple(s) != tuple(known[0][1]) and not compatible(s, known[0][1]):
                raise shape_error(opname, f"shape of {known[0][0]} {show(known[0][1])} and of "
                                  f"{n} {show(s)} must be equal", in_shapes)
        return same_shape(attrs, in_shapes, out_shapes)
    return rule


def equal_types(opname, names, skip=()):
    """Type rule: all inputs (except positions in ``skip``) and outputs share a dtype."""
    def rule(attrs, in_types, out_types):
        slots = [(n, t) for i, (n, t) in enumerate(zip(names, in_types)) if i not in skip]
        slots += [("output", t) for t in out_types]
        known = [(n, np.dtype(t)) for n, t in slots if t is not None]
        for n, t in known[1:]:
            if t != known[0][1]:
                raise DTypeError(f"{opname}: dtype of {known[0][0]} ({known[0][1]}) and of {n} "
                                 f"({t}) must be equal")
        t = known[0][1] if known else None
        ins = [in_types[i] if i in skip else t for i in range(len(in_types))]
        return ins, [t] * len(out_types)
    return rule


def kernels(prepare, family="elemwise_unary"):
    return {"cpu": f"nbdl.kernels.cpu.{family}:{prepare}",
            "cuda": f"nbdl.kernels.cuda.{family}:{prepare}"}


def grad_node(op, inputs, node, suffix="backward", attrs=None):
    """One gradient node named after the forward node, as MXNet names them."""
    return make_node(op, inputs, attrs, name=f"{node.name}_{suffix}").output(0)


def _inplace_first(attrs):
    return [(0, 0)]


def _inplace_both(attrs):
    return [(0, 0), (1, 0)]


def elementwise(name, input_names=("data",), gradient=None, attrs=None, prepare="prepare_map",
                family="elemwise_unary", inplace=None, aliases=(), doc="", **kw):
    """Register an op whose output and inputs share one shape and dtype; one
    with the generated kernels (``prepare_map``) takes float16 too."""
    if prepare == "prepare_map":
        kw.setdefault("dtypes", FLOATING)
    if inplace is None:
        inplace = _inplace_first if len(input_names) == 1 else _inplace_both
    return register(OpDef(
        name=name, input_names=tuple(input_names), attrs=dict(attrs or {}),
        infer_shape=equal_shapes(name, input_names), infer_type=equal_types(name, input_names),
        gradient=gradient, inplace=inplace, kernels=kernels(prepare, family), supports_add=True,
        doc=doc, **kw), aliases=aliases)


# -- gradient rules ------------------------------------------------------------------

def _identity_grad(node, out_grads):
    return [out_grads[0]]


def _no_grad(node, out_grads):
    return [None] * len(node.inputs)


def attrs_of(node, names):
    """``node``'s attributes ``names``, in the form the user gave them."""
    return {k: node.attr_str.get(k, node.attrs[k]) for k in names}


def via(backward_op, use="output", attr_names=()):
    """Gradient ``backward_op(head_grad, forward output | forward input)``
    (a hidden ``_backward_*`` op or an ordinary binary one)."""
    def rule(node, out_grads):
        other = node.output(0) if use == "output" else node.inputs[0]
        return [grad_node(backward_op, [out_grads[0], other], node,
                          attrs=attrs_of(node, attr_names))]
    return rule


def _negative_grad(node, out_grads):
    return [grad_node("negative", [out_grads[0]], node)]


# -- copies ----------------------------------------------------------------------------

_COPY_DTYPES = COMPUTE + (HALF,)
elementwise("_copy", gradient=_identity_grad, prepare="prepare_copy", dtypes=_COPY_DTYPES,
            aliases=("identity",), doc="Copy the input (``identity``).")
elementwise("BlockGrad", gradient=_no_grad, dtypes=_COPY_DTYPES, aliases=("stop_gradient",),
            doc="Copy the input forward; no gradient flows back through it.")
elementwise("zeros_like", gradient=_no_grad, dtypes=_COPY_DTYPES,
            doc="An array of zeros with the input's shape and dtype.")
elementwise("ones_like", gradient=_no_grad, dtypes=_COPY_DTYPES,
            doc="An array of ones with the input's shape and dtype.")

# -- math --------------------------------------------------------------------------------

elementwise("negative", gradient=_negative_grad, dtypes=NUMERIC, doc="-x")
elementwise("abs", gradient=via("_backward_abs", "data"), dtypes=NUMERIC, doc="|x|")
elementwise("exp", gradient=via("elemwise_mul", "output"), doc="e**x")
elementwise("log", gradient=via("elemwise_div", "data"), doc="natural logarithm")
elementwise("sqrt", gradient=via("_backward_sqrt"), doc="square root")
elementwise("rsqrt", gradient=via("_backward_rsqrt"), doc="1 / sqrt(x)")
elementwise("square", gradient=via("_backward_square", "data"), dtypes=NUMERIC, doc="x * x")
elementwise("sin", gradient=via("_backward_sin", "data"), doc="sine")
elementwise("cos", gradient=via("_backward_cos", "data"), doc="cosine")
elementwise("tanh", gradient=via("_backward_tanh"), doc="hyperbolic tangent")
elementwise("sigmoid", gradient=via("_backward_sigmoid"), doc="1 / (1 + e**-x)")
elementwise("relu", gradient=via("_backward_relu"), dtypes=NUMERIC,
            doc="max(x, 0); NaN stays NaN (its gradient too), as MXNet's relu op "
                "(``Activation(act_type='relu')`` maps NaN to 0, as MXNet's does)")
elementwise("softsign", gradient=via("_backward_softsign", "data"), doc="x / (1 + |x|)")

_CLIP_ATTRS = {"a_min": Attr("float"), "a_max": Attr("float")}
elementwise("clip", attrs=_CLIP_ATTRS, dtypes=NUMERIC,
            doc="Clip to [a_min, a_max] (NaN stays NaN; on integer arrays the bounds are "
                "truncated to integers, as MXNet does).",
            gradient=via("_backward_clip", "data", ("a_min", "a_max")))

# Which input each activation's backward reads: its output where that suffices.
_ACT_BACKWARD = {"relu": "output", "sigmoid": "output", "tanh": "output",
                 "softrelu": "output", "softsign": "data"}


def _activation_grad(node, out_grads):
    act = node.attrs["act_type"]
    return via(f"_backward_{act}", _ACT_BACKWARD[act])(node, out_grads)


elementwise("Activation", gradient=_activation_grad, unnamed_inputs=True,
            attrs={"act_type": Attr("str", choices=tuple(_ACT_BACKWARD))},
            doc="relu, sigmoid, tanh, softrelu (log(1 + e**x)) or softsign.")

# -- hidden backward ops: (head gradient, forward output or input) -> input gradient ------

_MORE_BACKWARD = [("sqrt", "output"), ("rsqrt", "output"), ("abs", "data"), ("square", "data"),
                  ("sin", "data"), ("cos", "data")]
for _act, _use in list(_ACT_BACKWARD.items()) + _MORE_BACKWARD:
    elementwise(f"_backward_{_act}", input_names=("ograd", _use), hidden=True,
                gradient=second_order(DERIVATIVES[_act]))
elementwise("_backward_clip", input_names=("ograd", "data"), attrs=_CLIP_ATTRS, hidden=True,
            gradient=second_order(None, ("a_min", "a_max")))


# -- ElementWiseSum ----------------------------------------------------------------------

def _add_n_inputs(attrs):
    return [f"arg{i}" for i in range(attrs["num_args"])]


def _add_n_shape(attrs, in_shapes, out_shapes):
    return equal_shapes("ElementWiseSum", _add_n_inputs(attrs))(attrs, in_shapes, out_shapes)


def _add_n_type(attrs, in_types, out_types):
    return equal_types("ElementWiseSum", _add_n_inputs(attrs))(attrs, in_types, out_types)


ADD_N_FUSED_MAX = 8   # inputs one generated ElementWiseSum loop takes; more are summed in passes


def _add_n_temp(call):
    # Accumulating (grad_req='add') a sum taken in passes builds it apart first,
    # so ``out += x0 + ... + xk`` rounds as one expression does.
    if len(call.in_shapes) > ADD_N_FUSED_MAX and call.req[0] == REQ_ADD:
        return [(call.out_shapes[0], call.out_dtypes[0])]
    return []


def _add_n_grad(node, out_grads):
    return [out_grads[0]] * len(node.inputs)


register(OpDef(
    name="ElementWiseSum", input_names=_add_n_inputs, key_var_num_args="num_args",
    attrs={"num_args": Attr("int")},
    infer_shape=_add_n_shape, infer_type=_add_n_type, gradient=_add_n_grad,
    inplace=_inplace_first, kernels=kernels("prepare_add_n"), supports_add=True,
    temp=_add_n_temp, dtypes=NUMERIC,
    doc="Sum of all inputs (``add_n``); integer inputs sum exactly in their dtype."), aliases=("add_n",))


# -- where ---------------------------------------------------------------------------------

@accepts_partial
def _where_shape(attrs, in_shapes, out_shapes):
    # as MXNet's WhereOpShape, a condition known only in part infers nothing
    cond = in_shapes[0]
    if cond is not None and not is_full(cond):
        return in_shapes, out_shapes
    _, data = equal_shapes("where", ("x", "y"))(attrs, in_shapes[1:], out_shapes)
    shape = data[0]
    if cond is not None and shape is not None:
        cond, shape = tuple(cond), tuple(shape)
        if compatible(cond, shape):
            shape = cond
        elif len(cond) == 1 and len(shape) > 1 and compatible(cond, shape[:1]):
            shape = cond + shape[1:]
        else:
            raise shape_error("where", f"condition shape {cond} must equal the shape of x and "
                              f"y {show(shape)} or be ({shape[0] if shape else '?'},)", in_shapes)
    return [cond, shape, shape], [shape]


def _where_grad(node, out_grads):
    back = backward_node("_backward_where", [out_grads[0], node.inputs[0]], node, {})
    return [None, back.output(0), back.output(1)]


def _backward_where_shape(attrs, in_shapes, out_shapes):
    shapes = [in_shapes[0]] + list(out_shapes)
    known = next((s for s in shapes if s is not None), None)
    for s in shapes:
        if s is not None and tuple(s) != tuple(known):
            raise shape_error("_backward_where", f"gradient shapes {shapes_str(shapes)} differ",
                              in_shapes)
    return [known, in_shapes[1]], [known, known]


def _backward_where_type(attrs, in_types, out_types):
    t = next((x for x in [in_types[0]] + list(out_types) if x is not None), None)
    return [t, in_types[1]], [t, t]


register(OpDef(
    name="where", input_names=("condition", "x", "y"),
    half_mirrors=True,
    infer_shape=_where_shape, infer_type=equal_types("where", ("condition", "x", "y"), skip=(0,)),
    gradient=_where_grad, inplace=lambda attrs: [(1, 0), (2, 0)],
    kernels=kernels("prepare_where"), supports_add=True, int_inputs=(0,),
    doc="x where condition is nonzero, else y; condition has x's shape or one "
        "entry per row (x.shape[0],)."))

register(OpDef(
    name="_backward_where", input_names=("ograd", "condition"), num_outputs=2,
    half_mirrors=True,
    infer_shape=_backward_where_shape, infer_type=_backward_where_type,
    inplace=_inplace_first, kernels=kernels("prepare_backward_where"), supports_add=True, int_inputs=(1,),
    hidden=True, doc="Gradients of where's x and y."))
