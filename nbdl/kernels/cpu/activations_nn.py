"""CPU kernels for LeakyReLU (leaky, elu, selu, gelu, gelu_tanh, prelu),
swish, log_sigmoid and mish, and their backward ops.

The elementwise forms are one expression each, compiled by the elementwise
generator (``_elemwise_gen.map_kernel``); their backward ops read the head
gradient ``g`` and the forward *input* ``x``.  ``s`` is the op's one scalar
(LeakyReLU's slope, swish's beta).  PReLU has its own loops: the data is
viewed as ``(N, C, inner)`` (axes 0, 1 and the rest) and gamma as
``(g0, g1)``, each extent the data's or 1 (``(1, C)`` per channel, ``(1, 1)``
one slope shared by all, ``(N, C)`` one per sample and channel)."""
import math

from numba import prange

from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ._elemwise_gen import map_kernel
from ._parallel import serial_and_parallel, use_parallel
from ..shared.activations_nn import (act_plan, leaky_relu_prepares, prelu_views, py_prelu_at,
                                     scalars_for)


def prepare_act(call):
    """Every elementwise activation and its backward: ``out[i] = f(...)``."""
    act, backward, spec, n = act_plan(call)
    fn = map_kernel(f"{'bwd' if backward else 'fwd'}_{act}", spec, use_parallel(n))
    return Launch(fn, scalars_for(call, act) + (int(call.req[0]),),
                  views=[(n,)] * (len(spec.args) + 1))


# -- PReLU -------------------------------------------------------------------------------

_prelu_at = njit(cache=True, inline="always")(py_prelu_at)


def prelu_forward(x, gamma, out, req):
    if req == REQ_NULL:
        return
    C = x.shape[1]
    for r in prange(x.shape[0] * C):
        o = r // C
        for i in range(x.shape[2]):
            _prelu_at(x, x, gamma, out, o, r - o * C, i, req == REQ_ADD)


prelu_forward, prelu_forward_parallel = serial_and_parallel(prelu_forward)


@njit(cache=True)
def prelu_backward(og, x, gamma, dx, dgamma, r_x, r_g):
    """dx = og where x > 0 else og * gamma; dgamma = the sum of og * x where
    x <= 0 over the axes gamma is broadcast along."""
    C = x.shape[1]
    inner = x.shape[2]
    per_o = gamma.shape[0] > 1
    per_c = gamma.shape[1] > 1
    zero = x.dtype.type(0)
    if r_x != REQ_NULL:
        for o in range(x.shape[0]):
            for c in range(C):
                for i in range(inner):
                    _prelu_at(og, x, gamma, dx, o, c, i, r_x == REQ_ADD)
    if r_g != REQ_NULL:
        if r_g != REQ_ADD:
            dgamma[:, :] = zero
        for o in range(x.shape[0]):
            for c in range(C):
                s = zero
                for i in range(inner):
                    if not x[o, c, i] > zero:
                        s += og[o, c, i] * x[o, c, i]
                dgamma[o if per_o else 0, c if per_c else 0] += s


def prepare_prelu(call):
    data, gamma = prelu_views(call.in_shapes[0], call.in_shapes[1])
    parallel = use_parallel(math.prod(data))
    fn = prelu_forward_parallel if parallel else prelu_forward
    return Launch(fn, (int(call.req[0]),), views=[data, gamma, data])


def prepare_prelu_backward(call):
    data, gamma = prelu_views(call.in_shapes[1], call.in_shapes[2])
    return Launch(prelu_backward, tuple(int(r) for r in call.req),
                  views=[data, data, gamma, data, gamma])


prepare_leaky_relu, prepare_leaky_relu_backward = leaky_relu_prepares(
    prepare_prelu, prepare_prelu_backward, prepare_act)
