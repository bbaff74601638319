"""Embedding's prepare-time views, shared by the CPU and CUDA kernels."""
import math


def embedding_views(call, data_shape):
    m = math.prod(data_shape)
    d = call.attrs["output_dim"]
    return (m,), (call.attrs["input_dim"], d), (m, d)


def py_row_of(v, n):
    """The weight row an index value ``v`` selects among ``n`` rows (clipped
    to [0, n - 1], as MXNet's Embedding; plain Python compiled by both
    devices' kernels)."""
    j = int(v)
    if j < 0:
        return 0
    if j >= n:
        return n - 1
    return j
