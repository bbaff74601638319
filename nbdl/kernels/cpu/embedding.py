"""CPU kernels for Embedding and its weight-gradient scatter.

Views: ids flattened to ``(m,)``, the weight ``(input_dim, output_dim)``,
the output and its head gradient ``(m, output_dim)``.  An id is truncated
toward zero (C's cast, as MXNet) and clipped to ``[0, input_dim)``."""
import math

from numba import prange

from ..shared.jit import njit

from ._parallel import serial_and_parallel, use_parallel
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.embedding import embedding_views, py_row_of


row_of = njit(cache=True, inline="always")(py_row_of)


@njit(cache=True, inline="always")
def _copy_row(ids, weight, out, t, add):
    j = row_of(ids[t], weight.shape[0])
    if add:
        for k in range(out.shape[1]):
            out[t, k] += weight[j, k]
    else:
        for k in range(out.shape[1]):
            out[t, k] = weight[j, k]


def embedding_forward(ids, weight, out, req):
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    for t in prange(ids.shape[0]):
        _copy_row(ids, weight, out, t, add)


embedding_forward, embedding_forward_parallel = serial_and_parallel(embedding_forward)


@njit(cache=True)
def embedding_backward(og, ids, weight, grad, req):
    """``grad[row_of(ids[t])] += og[t]`` (zeroed first unless req is add);
    ``weight`` is passed for its shape only and never read.  Serial:
    repeated ids would race in a parallel scatter."""
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        grad[...] = 0
    n = grad.shape[0]
    for t in range(ids.shape[0]):
        j = row_of(ids[t], n)
        for k in range(grad.shape[1]):
            grad[j, k] += og[t, k]


def prepare_embedding(call):
    ids, w, out = embedding_views(call, call.in_shapes[0])
    fn = embedding_forward_parallel if use_parallel(math.prod(out)) and ids[0] > 1 else embedding_forward
    return Launch(fn, (call.req[0],), views=[ids, w, out])


def prepare_embedding_backward(call):
    ids, w, out = embedding_views(call, call.in_shapes[1])
    return Launch(embedding_backward, (call.req[0],), views=[out, ids, w, w])
