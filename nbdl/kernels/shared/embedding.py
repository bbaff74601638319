"""Embedding's prepare-time views, shared by the CPU and CUDA kernels."""
import math


def embedding_views(call, data_shape):
    m = math.prod(data_shape)
    d = call.attrs["output_dim"]
    return (m,), (call.attrs["input_dim"], d), (m, d)
