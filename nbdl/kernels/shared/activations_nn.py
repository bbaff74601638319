"""The activations' expressions (one per activation and its gradient, compiled
by both elementwise generators), their scalars, and PReLU's views."""
import math

import numpy as np

from ...ops.activations_nn import gamma_axes
from .elemwise_exprs import Spec
from .elemwise_plan import size_of


# SELU's constants (Klambauer et al.), as MXNet uses them.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_LAMBDA = 1.0507009873554804934193349852946
_R2 = "T(0.7071067811865476)"       # 1 / sqrt(2)
_RPI = "T(0.3989422804014327)"      # 1 / sqrt(2 pi)
_K = "T(0.7978845608028654)"        # sqrt(2 / pi)
_C = "T(0.044715)"
_TANH_U = f"math.tanh({_K} * (x + {_C} * x * x * x))"
_SIG_BX = "(T(1) / (T(1) + math.exp(-s * x)))"
_SOFTPLUS = "(x if x > T(20) else math.log1p(math.exp(x)))"

FORWARD = {
    "leaky": "x if x > T(0) else s * x",
    "elu": "x if x > T(0) else s * math.expm1(x)",
    "selu": f"T({SELU_LAMBDA!r}) * (x if x > T(0) else T({SELU_ALPHA!r}) * math.expm1(x))",
    "gelu": f"T(0.5) * x * (T(1) + math.erf(x * {_R2}))",
    "gelu_tanh": f"T(0.5) * x * (T(1) + {_TANH_U})",
    "swish": f"x * {_SIG_BX}",
    "log_sigmoid": "(x if x < T(0) else T(0)) - math.log1p(math.exp(-abs(x)))",
    "mish": f"x * math.tanh({_SOFTPLUS})",
}

BACKWARD = {
    "leaky": "g if x > T(0) else g * s",
    "elu": "g if x > T(0) else g * s * math.exp(x)",
    "selu": f"g * T({SELU_LAMBDA!r}) * (T(1) if x > T(0) else T({SELU_ALPHA!r}) * math.exp(x))",
    "gelu": (f"g * (T(0.5) * (T(1) + math.erf(x * {_R2})) "
             f"+ x * {_RPI} * math.exp(T(-0.5) * x * x))"),
    "gelu_tanh": (f"g * (T(0.5) * (T(1) + {_TANH_U}) + T(0.5) * x * (T(1) - {_TANH_U} * {_TANH_U})"
                  f" * {_K} * (T(1) + T(3) * {_C} * x * x))"),
    "swish": f"g * {_SIG_BX} * (T(1) + s * x * (T(1) - {_SIG_BX}))",
    "log_sigmoid": "g / (T(1) + math.exp(x))",
    "mish": (f"g * (math.tanh({_SOFTPLUS}) + x * (T(1) - math.tanh({_SOFTPLUS}) ** 2)"
             " / (T(1) + math.exp(-x)))"),
}
# which attribute is the kernel's scalar ``s``

_SCALAR_ATTR = {"leaky": "slope", "elu": "slope", "swish": "beta"}


def act_of(call):
    """The activation an elementwise call computes."""
    name = call.op.name
    if name in ("LeakyReLU", "_backward_LeakyReLU"):
        return call.attrs["act_type"]
    return name[len("_backward_"):] if name.startswith("_backward_") else name


def spec_for(act, backward):
    expr = (BACKWARD if backward else FORWARD)[act]
    scalars = ("s",) if act in _SCALAR_ATTR else ()
    return Spec(("g", "x") if backward else ("x",), expr, scalars)


def act_plan(call):
    """(activation, is backward, expression spec, element count) of an
    elementwise activation call (or its backward)."""
    act = act_of(call)
    backward = call.op.name.startswith("_backward_")
    return act, backward, spec_for(act, backward), size_of(call.out_shapes[0])


def scalars_for(call, act):
    t = np.dtype(call.out_dtypes[0]).type
    attr = _SCALAR_ATTR.get(act)
    return () if attr is None else (t(call.attrs[attr]),)


def prelu_views(shape, gamma_shape):
    """``(A, B, inner)`` of the data (its axes 0 and 1 and the rest; 1-D data is
    ``(N, 1, 1)``) and gamma's ``(g0, g1)``: gamma broadcast as MXNet's
    ``expand_shape`` (``ops.activations_nn.gamma_axes``) over axes 0 and 1, each
    extent either the data's or 1."""
    shape = tuple(int(d) for d in shape)
    lead = (shape + (1, 1))[:2]
    g = gamma_axes(gamma_shape, shape) or (1,)
    return (lead[0], lead[1], math.prod(shape[2:])), (g + (1, 1))[:2]


def leaky_relu_prepares(prepare_prelu, prepare_prelu_backward, prepare_act):
    """LeakyReLU's ``(prepare, prepare_backward)`` on a device: PReLU's
    kernels for ``act_type='prelu'`` (gamma an input), the elementwise
    activation kernels otherwise.

    Parameters
    ----------
    prepare_prelu, prepare_prelu_backward, prepare_act : callable
        The device's prepares.

    Returns
    -------
    tuple of callable
    """
    def prepare_leaky_relu(call):
        if call.attrs["act_type"] == "prelu":
            return prepare_prelu(call)
        return prepare_act(call)

    def prepare_leaky_relu_backward(call):
        if call.attrs["act_type"] == "prelu":
            return prepare_prelu_backward(call)
        return prepare_act(call)
    return prepare_leaky_relu, prepare_leaky_relu_backward


def py_prelu_at(s, x, gamma, out, o, c, i, add):
    """``out[o, c, i]`` = (or +=) ``s[o, c, i]`` where ``x[o, c, i] > 0``,
    else that times gamma at ``(o, c)`` (gamma's 2-D view of ``prelu_views``,
    an extent of 1 broadcast):
    PReLU's forward with ``s = x``, its data gradient with ``s`` the head
    gradient (plain Python compiled by both devices' kernels)."""
    a = gamma[o if gamma.shape[0] > 1 else 0, c if gamma.shape[1] > 1 else 0]
    v = s[o, c, i]
    y = v if x[o, c, i] > x.dtype.type(0) else a * v
    if add:
        out[o, c, i] += y
    else:
        out[o, c, i] = y
