"""CUDA kernels for LeakyReLU, swish, log_sigmoid, mish and their backward
ops (expressions and views as in ``nbdl.kernels.cpu.activations_nn``)."""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.elemwise_plan import size_of
from ..shared.activations_nn import act_of, prelu_views, scalars_for, spec_for
from ._elemwise_gen import launch, map_kernel
from ._launch import launcher


def prepare_act(call):
    act = act_of(call)
    backward = call.op.name.startswith("_backward_")
    spec = spec_for(act, backward)
    n = size_of(call.out_shapes[0])
    fn = map_kernel(spec, call.out_dtypes[0])
    return Launch(launch(fn, n), scalars_for(call, act) + (int(call.req[0]),),
                  views=[(n,)] * (len(spec.args) + 1))


@cuda.jit
def _prelu_forward(x, gamma, out, req):
    C = x.shape[1]
    inner = x.shape[2]
    n = x.shape[0] * C * inner
    for r in range(cuda.grid(1), n, cuda.gridsize(1)):
        i = r % inner
        q = r // inner
        c = q % C
        o = q // C
        a = gamma[o if gamma.shape[0] > 1 else 0, c if gamma.shape[1] > 1 else 0]
        v = x[o, c, i]
        y = v if v > 0 else a * v
        if req == REQ_ADD:
            out[o, c, i] += y
        else:
            out[o, c, i] = y


@cuda.jit
def _prelu_data_grad(og, x, gamma, dx, req):
    C = x.shape[1]
    inner = x.shape[2]
    n = x.shape[0] * C * inner
    for r in range(cuda.grid(1), n, cuda.gridsize(1)):
        i = r % inner
        q = r // inner
        c = q % C
        o = q // C
        a = gamma[o if gamma.shape[0] > 1 else 0, c if gamma.shape[1] > 1 else 0]
        v = og[o, c, i] if x[o, c, i] > 0 else og[o, c, i] * a
        if req == REQ_ADD:
            dx[o, c, i] += v
        else:
            dx[o, c, i] = v


@cuda.jit
def _prelu_gamma_grad(og, x, dgamma, zero, req):
    """One thread per gamma entry ``(k0, k1)``, summing the data entries it
    is broadcast over (every ``o`` when ``g0 == 1``, every ``c`` when
    ``g1 == 1``)."""
    C = x.shape[1]
    inner = x.shape[2]
    g0 = dgamma.shape[0]
    g1 = dgamma.shape[1]
    for k in range(cuda.grid(1), g0 * g1, cuda.gridsize(1)):
        k0 = k // g1
        k1 = k - k0 * g1
        s = zero
        for o in range(x.shape[0]):
            if g0 == 1 or o == k0:
                for c in range(C):
                    if g1 == 1 or c == k1:
                        for i in range(inner):
                            if not x[o, c, i] > 0:
                                s += og[o, c, i] * x[o, c, i]
        if req == REQ_ADD:
            dgamma[k0, k1] += s
        else:
            dgamma[k0, k1] = s


def _noop(*args):
    pass


def prepare_prelu(call):
    data, gamma = prelu_views(call.in_shapes[0], call.in_shapes[1])
    n = data[0] * data[1] * data[2]
    if n == 0 or call.req[0] == REQ_NULL:
        return Launch(_noop, (), views=[data, gamma, data])
    return Launch(launcher(_prelu_forward, n), (int(call.req[0]),), views=[data, gamma, data])


def prepare_prelu_backward(call):
    data, gamma = prelu_views(call.in_shapes[1], call.in_shapes[2])
    r_x, r_g = (int(r) for r in call.req)
    n = data[0] * data[1] * data[2]
    zero = np.dtype(call.out_dtypes[0]).type(0)
    run_x = launcher(_prelu_data_grad, n) if r_x != REQ_NULL and n else None
    ng = gamma[0] * gamma[1]
    run_g = launcher(_prelu_gamma_grad, ng) if r_g != REQ_NULL and ng else None

    def fn(og, x, g, dx, dg):
        if run_x is not None:
            run_x(og, x, g, dx, r_x)
        if run_g is not None:
            run_g(og, x, dg, zero, r_g)
    return Launch(fn, (), views=[data, data, gamma, data, gamma])


def prepare_leaky_relu(call):
    if call.attrs["act_type"] == "prelu":
        return prepare_prelu(call)
    return prepare_act(call)


def prepare_leaky_relu_backward(call):
    if call.attrs["act_type"] == "prelu":
        return prepare_prelu_backward(call)
    return prepare_act(call)
