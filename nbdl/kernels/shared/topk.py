"""TopK's prepare-time views, shared by the CPU and CUDA kernels."""
from ...ops.topk import topk_geometry


def topk_views(call, shape):
    """(data view, value/indices view, k)."""
    outer, n, inner, k, _ = topk_geometry(call.attrs, shape)
    return (outer, n, inner), (outer, k, inner), k
