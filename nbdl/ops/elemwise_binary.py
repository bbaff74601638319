"""Binary elementwise ops: rules only (kernels in nbdl.kernels.*.elemwise_binary).

- ``elemwise_add/sub/mul/div``: equal shapes (``_plus``/``_Plus``... aliases);
- ``broadcast_*``: numpy broadcasting; gradients are summed back to each
  input's shape by the hidden ``_reduce_sum_like(data, like)``, which copies
  when nothing was broadcast (shapes are unknown when gradients are built);
- ``_mod``, ``_power``, ``_maximum``, ``_minimum``, ``_hypot``, the
  comparisons and ``_logical_and/or/xor``: the same-shape forms MXNet's
  Symbol operators make (``x ** y`` is ``_power``, ``x == y`` is ``_equal``);
  their gradients are the broadcast forms' rules;
- ``_plus_scalar``...: one array and the float attribute ``scalar``.
Comparisons and logical ops give 1 / 0 in the input dtype and pass no
gradient.  Every forward op here also takes int32, int64, uint8 and int8
arrays (division truncates toward zero; a zero divisor gives 0 in ``/`` and
``%``), with the scalar cast to the array's dtype, as MXNet does."""
from ..dtype import FLOATING, NUMERIC
from .elemwise_grad2 import DERIVATIVES, second_order
from .elemwise_unary import (_identity_grad, _inplace_both, _negative_grad, _no_grad, attrs_of,
                             elementwise, equal_types, grad_node, kernels, via)
from .registry import Attr, OpDef, register, shape_error

_BINARY = ("lhs", "rhs")


def _node(op, inputs, node, suffix, attrs=None):
    return grad_node(op, inputs, node, suffix, attrs)


# -- same shape ------------------------------------------------------------------------

def _sub_grad(node, out_grads):
    return [out_grads[0], _negative_grad(node, out_grads)[0]]


def _mul_grad(node, out_grads):
    g, (lhs, rhs) = out_grads[0], node.inputs
    return [_node("elemwise_mul", [g, rhs], node, "backward_lhs"),
            _node("elemwise_mul", [g, lhs], node, "backward_rhs")]


def _div_grad(node, out_grads):
    # d(l/r)/dl = 1/r;  d(l/r)/dr = -(l/r)/r = -(g/r) * out
    g, rhs = out_grads[0], node.inputs[1]
    q = _node("elemwise_div", [g, rhs], node, "backward_lhs")
    qy = _node("elemwise_mul", [q, node.output(0)], node, "backward_qy")
    return [q, _node("negative", [qy], node, "backward_rhs")]


def _add_grad(node, out_grads):
    return [out_grads[0], out_grads[0]]


for _name, _grad, _aliases in [("elemwise_add", _add_grad, ("_plus", "_Plus")),
                               ("elemwise_sub", _sub_grad, ("_minus", "_Minus")),
                               ("elemwise_mul", _mul_grad, ("_mul", "_Mul")),
                               ("elemwise_div", _div_grad, ("_div", "_Div"))]:
    elementwise(_name, input_names=_BINARY, gradient=_grad, family="elemwise_binary",
                aliases=_aliases, dtypes=NUMERIC, doc=f"{_name[9:]} of two arrays of the same shape")


# -- broadcasting -----------------------------------------------------------------------

def broadcast_shapes(where, lhs, rhs, in_shapes=None):
    """numpy's broadcast of two shapes; ``ShapeError`` naming both otherwise."""
    nd = max(len(lhs), len(rhs))
    a = (1,) * (nd - len(lhs)) + tuple(lhs)
    b = (1,) * (nd - len(rhs)) + tuple(rhs)
    out = []
    for da, db in zip(a, b):
        if da != db and da != 1 and db != 1:
            raise shape_error(where, f"shapes {tuple(lhs)} and {tuple(rhs)} cannot be broadcast "
                              f"together", in_shapes)
        out.append(db if da == 1 else da)
    return tuple(out)


def _broadcast_rule(opname):
    def rule(attrs, in_shapes, out_shapes):
        lhs, rhs = in_shapes
        out = out_shapes[0]
        if lhs is None or rhs is None:
            return [lhs, rhs], [out]   # an input cannot be recovered from the output
        res = broadcast_shapes(opname, lhs, rhs, in_shapes)
        if out is not None and tuple(out) != res:
            raise shape_error(opname, f"output shape {tuple(out)} is not the broadcast {res} "
                              f"of {tuple(lhs)} and {tuple(rhs)}", in_shapes)
        return [lhs, rhs], [res]
    return rule


def sum_like(entry, like, node, suffix):
    """``entry`` (output-shaped) summed down to the shape of ``like``."""
    return _node("_reduce_sum_like", [entry, like], node, suffix)


def _bcast_add_grad(node, out_grads):
    g, (lhs, rhs) = out_grads[0], node.inputs
    return [sum_like(g, lhs, node, "backward_lhs"), sum_like(g, rhs, node, "backward_rhs")]


def _bcast_sub_grad(node, out_grads):
    g, (lhs, rhs) = out_grads[0], node.inputs
    gr = sum_like(g, rhs, node, "backward_rhs_sum")
    return [sum_like(g, lhs, node, "backward_lhs"), _node("negative", [gr], node, "backward_rhs")]


def _bcast_mul_grad(node, out_grads):
    g, (lhs, rhs) = out_grads[0], node.inputs
    gl = _node("broadcast_mul", [g, rhs], node, "backward_lhs_full")
    gr = _node("broadcast_mul", [g, lhs], node, "backward_rhs_full")
    return [sum_like(gl, lhs, node, "backward_lhs"), sum_like(gr, rhs, node, "backward_rhs")]


def _bcast_div_grad(node, out_grads):
    g, (lhs, rhs) = out_grads[0], node.inputs
    q = _node("broadcast_div", [g, rhs], node, "backward_lhs_full")
    qy = _node("elemwise_mul", [q, node.output(0)], node, "backward_rhs_full")
    gr = sum_like(qy, rhs, node, "backward_rhs_sum")
    return [sum_like(q, lhs, node, "backward_lhs"), _node("negative", [gr], node, "backward_rhs")]


def _masked_grad(lhs_mask, rhs_mask):
    """maximum/minimum: the gradient goes to the side the mask selects."""
    def rule(node, out_grads):
        g, (lhs, rhs) = out_grads[0], node.inputs
        res = []
        for side, mask_op, like in (("lhs", lhs_mask, lhs), ("rhs", rhs_mask, rhs)):
            mask = _node(mask_op, [lhs, rhs], node, f"backward_{side}_mask")
            full = _node("elemwise_mul", [g, mask], node, f"backward_{side}_full")
            res.append(sum_like(full, like, node, f"backward_{side}"))
        return res
    return rule


def _partials_grad(prefix):
    """Gradient from hidden ``{prefix}_lhs`` / ``{prefix}_rhs`` ops giving the
    broadcast partial derivatives (power, hypot)."""
    def rule(node, out_grads):
        g, (lhs, rhs) = out_grads[0], node.inputs
        res = []
        for side, like in (("lhs", lhs), ("rhs", rhs)):
            d = _node(f"{prefix}_{side}", [lhs, rhs], node, f"backward_{side}_d")
            full = _node("elemwise_mul", [g, d], node, f"backward_{side}_full")
            res.append(sum_like(full, like, node, f"backward_{side}"))
        return res
    return rule


def broadcast(name, gradient, aliases=(), hidden=False, doc="", dtypes=NUMERIC):
    return register(OpDef(
        name=name, input_names=_BINARY,
        infer_shape=_broadcast_rule(name), infer_type=equal_types(name, _BINARY),
        gradient=gradient, inplace=_inplace_both,
        kernels=kernels("prepare_broadcast", "elemwise_binary"), supports_add=True,
        hidden=hidden, dtypes=dtypes, doc=doc or f"{name[10:]} with numpy broadcasting"),
        aliases=aliases)


broadcast("broadcast_add", _bcast_add_grad, aliases=("broadcast_plus",))
broadcast("broadcast_sub", _bcast_sub_grad, aliases=("broadcast_minus",))
broadcast("broadcast_mul", _bcast_mul_grad)
broadcast("broadcast_div", _bcast_div_grad)

# name -> (gradient, doc); each is broadcast_<name> and the same-shape _<name>
_MATH = {
    # d/da = 1, d/db = -floor(a / b) (0 for integers), as MXNet's mod_grad / mod_rgrad
    "mod": (_partials_grad("_broadcast_mod_grad"), "lhs % rhs, the sign following rhs "
                                                   "(numpy's mod); 0 where rhs is 0"),
    "power": (_partials_grad("_broadcast_power_grad"), "lhs ** rhs"),
    "maximum": (_masked_grad("broadcast_greater_equal", "broadcast_lesser"),
                "the larger of lhs and rhs; NaN if either is NaN (the gradient then goes to "
                "neither), as MXNet"),
    "minimum": (_masked_grad("broadcast_lesser_equal", "broadcast_greater"),
                "the smaller of lhs and rhs; NaN if either is NaN, as MXNet"),
    "hypot": (_partials_grad("_broadcast_hypot_grad"), "sqrt(lhs**2 + rhs**2)"),
}
for _cmp in ("equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal"):
    _MATH[_cmp] = (_no_grad, f"lhs {_cmp} rhs as 1/0 in the inputs' dtype")
for _lg in ("and", "or", "xor"):
    _MATH[f"logical_{_lg}"] = (_no_grad, f"lhs {_lg} rhs (non-zero is true) as 1/0")


def _capital(name):
    """MXNet's legacy alias of a same-shape op: _Mod, _Not_Equal, _Logical_And."""
    return "_" + "_".join(w.title() for w in name.split("_"))


for _name, (_grad, _doc) in _MATH.items():
    broadcast(f"broadcast_{_name}", _grad, doc=f"{_doc}, with numpy broadcasting")
    elementwise(f"_{_name}", input_names=_BINARY, gradient=_grad, family="elemwise_binary",
                aliases=(_capital(_name),), dtypes=NUMERIC,
                doc=f"{_doc}; arrays of the same shape")

for _side, _doc in (("lhs", "rhs * lhs ** (rhs - 1)"), ("rhs", "lhs ** rhs * log(lhs)")):
    broadcast(f"_broadcast_power_grad_{_side}", None, hidden=True, doc=_doc, dtypes=FLOATING)
for _side in ("lhs", "rhs"):
    broadcast(f"_broadcast_hypot_grad_{_side}", None, hidden=True, dtypes=FLOATING,
              doc=f"{_side} / hypot(lhs, rhs)")
broadcast("_broadcast_mod_grad_lhs", None, hidden=True, dtypes=NUMERIC,
          doc="1 (0 for integers: MXNet's mod_grad)")
broadcast("_broadcast_mod_grad_rhs", None, hidden=True, dtypes=NUMERIC,
          doc="-floor(lhs / rhs) (0 for integers: MXNet's mod_rgrad)")


# -- _reduce_sum_like ----------------------------------------------------------------------

def _reduce_sum_like_shape(attrs, in_shapes, out_shapes):
    data, like = in_shapes
    out = out_shapes[0]
    if like is not None and out is not None and tuple(like) != tuple(out):
        raise shape_error("_reduce_sum_like", f"output shape {tuple(out)} must equal the shape "
                          f"of like {tuple(like)}", in_shapes)
    shape = like if like is not None else out
    if data is not None and shape is not None:
        nd = max(len(data), len(shape))
        d = (1,) * (nd - len(data)) + tuple(data)
        s = (1,) * (nd - len(shape)) + tuple(shape)
        if any(ds != 1 and ds != dd for dd, ds in zip(d, s)):
            raise shape_error("_reduce_sum_like", f"{tuple(data)} cannot be summed down to "
                              f"{tuple(shape)} (that shape does not broadcast to it)", in_shapes)
    return [data, shape], [shape]


def _reduce_sum_like_grad(node, out_grads):
    data = node.inputs[0]
    zeros = _node("zeros_like", [data], node, "backward_zeros")
    return [_node("broadcast_add", [zeros, out_grads[0]], node, "backward"), None]


register(OpDef(
    name="_reduce_sum_like", input_names=("data", "like"),
    infer_shape=_reduce_sum_like_shape, infer_type=equal_types("_reduce_sum_like", ("data", "like")),
    gradient=_reduce_sum_like_grad, inplace=lambda attrs: [(0, 0)],
    kernels=kernels("prepare_reduce_sum_like", "elemwise_binary"), supports_add=True,
    hidden=True, dtypes=NUMERIC,
    doc="data summed over the axes where like has size 1 (or is missing), giving like's "
        "shape; only like's shape is read."))


# -- scalar ops ------------------------------------------------------------------------------

# ``is_int`` is written by newer MXNet 1.x front ends; it does not change float results.
_SCALAR_ATTRS = {"scalar": Attr("float"), "is_int": Attr("bool", True)}


def _same_op_grad(op):
    """The gradient is the same scalar op applied to the head gradient."""
    def rule(node, out_grads):
        return [_node(op, [out_grads[0]], node, "backward", attrs_of(node, ("scalar",)))]
    return rule


def _via_scalar(op, use):
    return via(op, use, ("scalar",))


_SCALAR_OPS = [
    ("_plus_scalar", _identity_grad, ("_PlusScalar",)),
    ("_minus_scalar", _identity_grad, ("_MinusScalar",)),
    ("_rminus_scalar", _negative_grad, ("_RMinusScalar",)),
    # MXNet's gradientmultiplier gradient is this product under its own name
    ("_mul_scalar", _same_op_grad("_mul_scalar"),
     ("_MulScalar", "_contrib_backward_gradientmultiplier")),
    ("_div_scalar", _same_op_grad("_div_scalar"), ("_DivScalar",)),
    ("_rdiv_scalar", _via_scalar("_backward_rdiv_scalar", "data"), ("_RDivScalar",)),
    ("_power_scalar", _via_scalar("_backward_power_scalar", "data"), ("_PowerScalar",)),
    ("_rpower_scalar", _via_scalar("_backward_rpower_scalar", "output"), ("_RPowerScalar",)),
    ("_maximum_scalar", _via_scalar("_backward_maximum_scalar", "data"), ("_MaximumScalar",)),
    ("_minimum_scalar", _via_scalar("_backward_minimum_scalar", "data"), ("_MinimumScalar",)),
    ("_mod_scalar", _identity_grad, ("_ModScalar",)),
    ("_rmod_scalar", _via_scalar("_backward_rmod_scalar", "data"), ("_RModScalar",)),
    ("_hypot_scalar", _via_scalar("_backward_hypot_scalar", "data"), ("_HypotScalar",)),
]
_SCALAR_OPS += [(f"_{c}_scalar", _no_grad, ("_" + c.title().replace("_", "") + "Scalar",))
                for c in ("equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
                          "logical_and", "logical_or", "logical_xor")]

for _name, _grad, _aliases in _SCALAR_OPS:
    elementwise(_name, gradient=_grad, attrs=_SCALAR_ATTRS, family="elemwise_binary",
                aliases=_aliases, dtypes=NUMERIC,
                doc=f"{_name[1:-7]} of an array and the float ``scalar`` (cast to the array's "
                    f"dtype: truncated for integer arrays, as MXNet)")

elementwise("smooth_l1", gradient=_via_scalar("_backward_smooth_l1", "data"),
            attrs={"scalar": Attr("float", 1.0, doc="sigma"), "is_int": Attr("bool", True)},
            family="elemwise_binary", aliases=("_npx_smooth_l1",),
            doc="Smooth L1 loss with ``sigma = scalar``: ``0.5 * (sigma * x)**2`` where "
                "``|x| <= 1 / sigma**2``, else ``|x| - 0.5 / sigma**2``.")

for _name, _use in (("_backward_smooth_l1", "data"), ("_backward_rdiv_scalar", "data"),
                    ("_backward_power_scalar", "data"), ("_backward_rpower_scalar", "output"), ("_backward_maximum_scalar", "data"),
                    ("_backward_minimum_scalar", "data"), ("_backward_rmod_scalar", "data"),
                    ("_backward_hypot_scalar", "data")):
    elementwise(_name, input_names=("ograd", _use), attrs=_SCALAR_ATTRS, family="elemwise_binary",
                hidden=True, gradient=second_order(DERIVATIVES[_name[10:]], ("scalar", "is_int")))
