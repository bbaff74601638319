"""MXNet's elementwise contrib layers (rules only; the expressions are in
``nbdl.kernels.shared.elemwise_exprs.CONTRIB``, the kernels generated from
them, float16 included):

- ``_contrib_quadratic(data, a, b, c)``: ``a * x**2 + b * x + c``; gradient
  ``g * (2 * a * x + b)`` (hidden ``_backward_contrib_quadratic``);
- ``_contrib_gradientmultiplier(data, scalar)``: the identity forward, the
  head gradient times ``scalar`` backward (gradient reversal with a negative
  scalar);
- ``_contrib_div_sqrt_dim(data)``: ``x / sqrt(data.shape[-1])`` (attention
  scores); its gradient is the same op on the head gradient;
- ``_contrib_round_ste(data)`` / ``_contrib_sign_ste(data)``: ``round`` /
  ``sign`` forward, the head gradient passed straight through (quantized
  training's straight-through estimators).
"""
from ..dtype import COMPUTE, FLOATING, HALF, NUMERIC
from .elemwise_unary import _identity_grad, elementwise, grad_node, via
from .registry import Attr

_QUADRATIC_ATTRS = {"a": Attr("float", 0.0, doc="Coefficient of the quadratic term."),
                    "b": Attr("float", 0.0, doc="Coefficient of the linear term."),
                    "c": Attr("float", 0.0, doc="The constant term.")}

elementwise("_contrib_quadratic", attrs=_QUADRATIC_ATTRS,
            gradient=via("_backward_contrib_quadratic", "data", ("a", "b")),
            doc="a * x**2 + b * x + c, elementwise.")
elementwise("_backward_contrib_quadratic", input_names=("ograd", "data"),
            attrs=_QUADRATIC_ATTRS, hidden=True, aliases=("_contrib_backward_quadratic",))


def _multiplier_grad(node, out_grads):
    return [grad_node("_mul_scalar", [out_grads[0]], node,
                      attrs={"scalar": node.attrs["scalar"]})]


elementwise("_contrib_gradientmultiplier",
            attrs={"scalar": Attr("float", 1.0, doc="The factor the gradient is multiplied by."),
                   "is_int": Attr("bool", True, doc="Written by MXNet's front end; unused.")},
            gradient=_multiplier_grad, prepare="prepare_copy", dtypes=COMPUTE + (HALF,),
            doc="The identity forward; backward the head gradient times ``scalar``.")


def _div_sqrt_dim_grad(node, out_grads):
    return [grad_node("_contrib_div_sqrt_dim", [out_grads[0]], node)]


elementwise("_contrib_div_sqrt_dim", gradient=_div_sqrt_dim_grad,
            prepare="prepare_div_sqrt_dim", family="contrib_elemwise", dtypes=FLOATING,
            doc="data / sqrt(data.shape[-1]), elementwise (scaled dot-product attention).")

elementwise("_contrib_round_ste", gradient=_identity_grad, dtypes=NUMERIC,
            doc="round(x) (halves away from zero) forward; gradient 1 everywhere.")
elementwise("_contrib_sign_ste", gradient=_identity_grad, dtypes=NUMERIC,
            doc="sign(x) forward; gradient 1 everywhere.")
