"""CPU kernels of the fill ops (nbdl.ops.init_ops): one flat loop each."""
import numpy as np
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.init_ops import affine_params, linspace_params
from ..shared.store import py_put

_put = njit(cache=True, inline="always")(py_put)


@njit(cache=True)
def fill_affine(out, a, b, repeat, req):
    if req == REQ_NULL:
        return
    for i in range(out.size):
        v = a + (i // repeat) * b
        _put(out, i, v, req == REQ_ADD)


@njit(cache=True)
def fill_eye(out, k, req):
    if req == REQ_NULL:
        return
    n, m = out.shape
    for r in range(n):
        for c in range(m):
            v = out.dtype.type(1) if c - r == k else out.dtype.type(0)
            _put(out, (r, c), v, req == REQ_ADD)


def _affine(call, params=affine_params):
    a, b, repeat = params(call)
    n = int(np.prod(call.out_shapes[0]))
    return Launch(fill_affine, (a, b, repeat, int(call.req[0])), views=[(n,)])


prepare_zeros = prepare_ones = prepare_full = prepare_arange = _affine


def prepare_linspace(call):
    return _affine(call, linspace_params)


def prepare_eye(call):
    return Launch(fill_eye, (int(call.attrs["k"]), int(call.req[0])))
