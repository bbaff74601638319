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
from ._parallel import twins as _twins, use_parallel
from ..shared.elemwise_plan import size_of
from ..shared.activations_nn import act_of, prelu_views, scalars_for, spec_for


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
    per_o = gamma.shape[0] > 1
    per_c = gamma.shape[1] > 1
    zero = x.dtype.type(0)
    for o in range(x.shape[0]):
        for c in range(C):
            a = gamma[o if per_o else 0, c if per_c else 0]
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
    per_o = gamma.shape[0] > 1
    per_c = gamma.shape[1] > 1
    zero = x.dtype.type(0)
    for r in prange(x.shape[0] * C):
        o = r // C
        c = r - o * C
        a = gamma[o if per_o else 0, c if per_c else 0]
        for i in range(inner):
            v = x[o, c, i]
            y = v if v > zero else a * v
            if req == REQ_ADD:
                out[o, c, i] += y
            else:
                out[o, c, i] = y


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
                a = gamma[o if per_o else 0, c if per_c else 0]
                for i in range(inner):
                    v = og[o, c, i] if x[o, c, i] > zero else og[o, c, i] * a
                    if r_x == REQ_ADD:
                        dx[o, c, i] += v
                    else:
                        dx[o, c, i] = v
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
