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


def py_above(a, b):
    """a ranks above b when selecting the largest (NaN above numbers)."""
    return a > b or (a != a and b == b)


def build_first(jit):
    """``first(x, o, i, p, q, asc)``: whether position p of row (o, :, i)
    comes before position q in the result (ties by position), plain, with
    ``py_above`` compiled by ``jit``; the caller compiles it.

    Parameters
    ----------
    jit : callable
        The device's decorator for ``py_above``.

    Returns
    -------
    function
    """
    above = jit(py_above)

    def first(x, o, i, p, q, asc):
        a = x[o, p, i]
        b = x[o, q, i]
        if asc:
            if above(b, a):
                return True
            if above(a, b):
                return False
        else:
            if above(a, b):
                return True
            if above(b, a):
                return False
        return p < q
    return first
