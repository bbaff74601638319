"""CUDA kernels of the fill ops (nbdl.ops.init_ops): grid-stride loops."""
import numpy as np
from numba import cuda

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.init_ops import affine_params, linspace_params
from ._launch import launcher


@cuda.jit
def fill_affine(out, a, b, repeat, req):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        v = a + (i // repeat) * b
        if req == REQ_ADD:
            out[i] += v
        elif req != REQ_NULL:
            out[i] = v


@cuda.jit
def fill_eye(out, k, req):
    m = out.shape[1]
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        r = i // m
        c = i - r * m
        v = 1 if c - r == k else 0
        if req == REQ_ADD:
            out[r, c] += v
        elif req != REQ_NULL:
            out[r, c] = v


def _affine(call, params=affine_params):
    a, b, repeat = params(call)
    n = int(np.prod(call.out_shapes[0]))
    return Launch(launcher(fill_affine, n), (a, b, repeat, int(call.req[0])), views=[(n,)])


prepare_zeros = prepare_ones = prepare_full = prepare_arange = _affine


def prepare_linspace(call):
    return _affine(call, linspace_params)


def prepare_eye(call):
    n = int(np.prod(call.out_shapes[0]))
    return Launch(launcher(fill_eye, n), (int(call.attrs["k"]), int(call.req[0])))
