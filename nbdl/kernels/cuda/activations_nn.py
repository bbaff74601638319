"""CUDA kernels for LeakyReLU, swish, log_sigmoid, mish and their backward
ops (expressions and views as in ``nbdl.kernels.cpu.activations_nn``)."""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.activations_nn import (act_plan, leaky_relu_prepares, prelu_views, py_prelu_at,
                                     scalars_for)
from ..shared.store import py_unravel4
from ._elemwise_gen import launch, map_kernel
from ._launch import launcher


def prepare_act(call):
    act, backward, spec, n = act_plan(call)
    fn = map_kernel(spec, call.out_dtypes[0])
    return Launch(launch(fn, n), scalars_for(call, act) + (int(call.req[0]),),
                  views=[(n,)] * (len(spec.args) + 1))


_prelu_at = cuda.jit(device=True)(py_prelu_at)
_unravel4 = cuda.jit(device=True)(py_unravel4)


@cuda.jit
def _prelu_apply(s, x, gamma, out, req):
    """PReLU's forward (``s`` = x) or data gradient (``s`` = the head
    gradient): one thread per element."""
    for r in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        _, o, c, i = _unravel4(r, x.shape[0], x.shape[1], x.shape[2])
        _prelu_at(s, x, gamma, out, o, c, i, req == REQ_ADD)


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
    run = launcher(_prelu_apply, n)

    def fn(x, gamma_, out, req):
        run(x, x, gamma_, out, req)
    return Launch(fn, (int(call.req[0]),), views=[data, gamma, data])


def prepare_prelu_backward(call):
    data, gamma = prelu_views(call.in_shapes[1], call.in_shapes[2])
    r_x, r_g = (int(r) for r in call.req)
    n = data[0] * data[1] * data[2]
    zero = np.dtype(call.out_dtypes[0]).type(0)
    run_x = launcher(_prelu_apply, n) if r_x != REQ_NULL and n else None
    ng = gamma[0] * gamma[1]
    run_g = launcher(_prelu_gamma_grad, ng) if r_g != REQ_NULL and ng else None

    def fn(og, x, g, dx, dg):
        if run_x is not None:
            run_x(og, x, g, dx, r_x)
        if run_g is not None:
            run_g(og, x, dg, zero, r_g)
    return Launch(fn, (), views=[data, data, gamma, data, gamma])


prepare_leaky_relu, prepare_leaky_relu_backward = leaky_relu_prepares(
    prepare_prelu, prepare_prelu_backward, prepare_act)
