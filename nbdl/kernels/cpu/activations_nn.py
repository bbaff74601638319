"""CPU kernels for LeakyReLU (leaky, elu, selu, gelu, gelu_tanh, prelu),
swish, log_sigmoid and mish, and their backward ops.

The elementwise forms are one expression each, compiled by the elementwise
generator (``_elemwise_gen.map_kernel``); their backward ops read the head
gradient ``g`` and the forward *input* ``x``.  ``s`` is the op's one scalar
(LeakyReLU's slope, swish's beta).  PReLU has its own loops: the data is
viewed as ``(outer, C, inner)`` with ``C`` the channel axis (axis 1) and
gamma as ``(C,)`` or ``(1,)`` (one slope shared by every channel)."""
import math

import numpy as np
from numba import njit, prange

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.elemwise_exprs import Spec
from ._elemwise_gen import map_kernel
from ._parallel import twins as _twins, use_parallel
from ..shared.elemwise_plan import size_of

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


def scalars_for(call, act):
    t = np.dtype(call.out_dtypes[0]).type
    attr = _SCALAR_ATTR.get(act)
    return () if attr is None else (t(call.attrs[attr]),)


def prepare_act(call):
    """Every elementwise activation and its backward: ``out[i] = f(...)``."""
    act = act_of(call)
    backward = call.op.name.startswith("_backward_")
    spec = spec_for(act, backward)
    n = size_of(call.out_shapes[0])
    fn = map_kernel(f"{'bwd' if backward else 'fwd'}_{act}", spec, use_parallel(n))
    return Launch(fn, scalars_for(call, act) + (int(call.req[0]),),
                  views=[(n,)] * (len(spec.args) + 1))


# -- PReLU -------------------------------------------------------------------------------

@njit(cache=True)
def prelu_forward(x, gamma, out, req):
    if req == REQ_NULL:
        return
    C = x.shape[1]
    inner = x.shape[2]
    shared = gamma.shape[0] == 1
    zero = x.dtype.type(0)
    for o in range(x.shape[0]):
        for c in range(C):
            a = gamma[0] if shared else gamma[c]
            for i in range(inner):
                v = x[o, c, i]
                y = v if v > zero else a * v
                if req == REQ_ADD:
                    out[o, c, i] += y
                else:
                    out[o, c, i] = y


@njit(cache=True, parallel=True)
def prelu_forward_parallel(x, gamma, out, req):
    if req == REQ_NULL:
        return
    C = x.shape[1]
    inner = x.shape[2]
    shared = gamma.shape[0] == 1
    zero = x.dtype.type(0)
    for r in prange(x.shape[0] * C):
        o = r // C
        c = r - o * C
        a = gamma[0] if shared else gamma[c]
        for i in range(inner):
            v = x[o, c, i]
            y = v if v > zero else a * v
            if req == REQ_ADD:
                out[o, c, i] += y
            else:
                out[o, c, i] = y


@njit(cache=True)
def prelu_backward(og, x, gamma, dx, dgamma, r_x, r_g):
    """dx = og where x > 0 else og * gamma; dgamma = sum of og * x where x <= 0."""
    C = x.shape[1]
    inner = x.shape[2]
    shared = gamma.shape[0] == 1
    zero = x.dtype.type(0)
    if r_x != REQ_NULL:
        for o in range(x.shape[0]):
            for c in range(C):
                a = gamma[0] if shared else gamma[c]
                for i in range(inner):
                    v = og[o, c, i] if x[o, c, i] > zero else og[o, c, i] * a
                    if r_x == REQ_ADD:
                        dx[o, c, i] += v
                    else:
                        dx[o, c, i] = v
    if r_g != REQ_NULL:
        if r_g != REQ_ADD:
            for k in range(dgamma.shape[0]):
                dgamma[k] = zero
        for o in range(x.shape[0]):
            for c in range(C):
                k = 0 if shared else c
                s = zero
                for i in range(inner):
                    if not x[o, c, i] > zero:
                        s += og[o, c, i] * x[o, c, i]
                dgamma[k] += s


def prelu_views(shape, gamma_shape):
    """``(outer, C, inner)`` of the data (channel axis 1) and gamma's ``(g,)``."""
    shape = tuple(shape)
    if len(shape) < 2:
        return (1, 1, math.prod(shape)), (int(math.prod(gamma_shape)),)
    return (shape[0], shape[1], math.prod(shape[2:])), (int(math.prod(gamma_shape)),)


def prepare_prelu(call):
    data, gamma = prelu_views(call.in_shapes[0], call.in_shapes[1])
    parallel = use_parallel(math.prod(data))
    fn = prelu_forward_parallel if parallel else prelu_forward
    return Launch(fn, (int(call.req[0]),), views=[data, gamma, data])


def prepare_prelu_backward(call):
    data, gamma = prelu_views(call.in_shapes[1], call.in_shapes[2])
    return Launch(prelu_backward, tuple(int(r) for r in call.req),
                  views=[data, data, gamma, data, gamma])


def prepare_leaky_relu(call):
    if call.attrs["act_type"] == "prelu":
        return prepare_prelu(call)
    return prepare_act(call)


def prepare_leaky_relu_backward(call):
    if call.attrs["act_type"] == "prelu":
        return prepare_prelu_backward(call)
    return prepare_act(call)


# Serial twins: what an executor runs until the parallel variant is compiled.
_twins((prelu_forward_parallel, prelu_forward))
