"""TopK's prepare-time views, shared by the CPU and CUDA kernels, and the
translation of sort / argsort calls into topk calls (both devices run them
through topk's kernels)."""
import dataclasses

from ...ops.sort import as_topk_attrs
from ...ops.topk import topk_geometry


def topk_views(call, shape):
    """(data view, value/indices view, k)."""
    outer, n, inner, k, _ = topk_geometry(call.attrs, shape)
    return (outer, n, inner), (outer, k, inner), k


def as_topk_call(call):
    """A sort / argsort ``call`` as the topk call that computes it (same
    shapes, dtypes and requests; topk's attributes with ``k=0``)."""
    return dataclasses.replace(call, attrs=as_topk_attrs(call.op.name, call.attrs))
