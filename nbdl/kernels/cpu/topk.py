"""CPU kernels for topk and the scatter of its value gradient.

The data is viewed as ``(outer, n, inner)`` around the axis (``(1, size,
1)`` for axis=None) and the value/indices outputs as ``(outer, k, inner)``.
Each row's positions are sorted by a stable bottom-up merge sort in two
planned int64 scratch rows of length n, so a row costs O(n log n) and
nothing is allocated.  Order: largest first (``asc``: smallest first),
equal values by position, NaN above every number.
"""
import numpy as np
from ..shared.jit import njit

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ...ops.topk import topk_temp
from ..shared.topk import as_topk_call, build_first, topk_views


_first = njit(cache=True, inline="always")(build_first(njit(cache=True, inline="always")))


@njit(cache=True)
def sort_row(x, o, i, perm, buf, asc):
    """``perm[:n]`` = the row's positions in result order (stable merge sort,
    ``buf`` as scratch)."""
    n = x.shape[1]
    for t in range(n):
        perm[t] = t
    width = 1
    src, dst = perm, buf
    in_perm = True
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            a, b, t = lo, mid, lo
            while a < mid and b < hi:
                if _first(x, o, i, src[b], src[a], asc):
                    dst[t] = src[b]
                    b += 1
                else:
                    dst[t] = src[a]
                    a += 1
                t += 1
            while a < mid:
                dst[t] = src[a]
                a += 1
                t += 1
            while b < hi:
                dst[t] = src[b]
                b += 1
                t += 1
        src, dst = dst, src
        in_perm = not in_perm
        width *= 2
    if not in_perm:
        for t in range(n):
            perm[t] = src[t]


@njit(cache=True)
def topk_one(x, out, perm, buf, k, asc, mask, req):
    """ret_typ 'indices' (``out`` = positions) or 'mask' (``out`` has data's
    view and gets 1 at the selected positions)."""
    if req == REQ_NULL:
        return
    one = out.dtype.type(1)
    for o in range(x.shape[0]):
        for i in range(x.shape[2]):
            sort_row(x, o, i, perm, buf, asc)
            if mask:
                for t in range(x.shape[1]):
                    out[o, t, i] = 0
                for t in range(k):
                    out[o, perm[t], i] = one
            else:
                for t in range(k):
                    out[o, t, i] = perm[t]


@njit(cache=True)
def topk_two(x, val, ind, perm, buf, k, asc, req_val, req_ind):
    """ret_typ 'value' / 'both': the values and their positions."""
    if req_val == REQ_NULL and req_ind == REQ_NULL:
        return
    for o in range(x.shape[0]):
        for i in range(x.shape[2]):
            sort_row(x, o, i, perm, buf, asc)
            for t in range(k):
                p = perm[t]
                if req_val != REQ_NULL:
                    val[o, t, i] = x[o, p, i]
                if req_ind != REQ_NULL:
                    ind[o, t, i] = p


@njit(cache=True)
def topk_backward(og, ind, data, grad, req):
    """``grad[o, ind[o, t, i], i] += og[o, t, i]`` (zeroed first unless req is
    add); ``data`` is an input for its shape only.  Positions are clipped to
    the row so a hand-made index array cannot write outside it."""
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        grad[...] = 0
    n = grad.shape[1]
    for o in range(og.shape[0]):
        for t in range(og.shape[1]):
            for i in range(og.shape[2]):
                p = int(ind[o, t, i])
                p = 0 if p < 0 else (n - 1 if p >= n else p)
                grad[o, p, i] += og[o, t, i]


def prepare_topk(call):
    dview, kview, k = topk_views(call, call.in_shapes[0])
    ret, asc = call.attrs["ret_typ"], bool(call.attrs["is_ascend"])
    n = dview[1]
    if ret in ("value", "both"):
        return Launch(topk_two, (k, asc, call.req[0], call.req[1]),
                      views=[dview, kview, kview, (n,), (n,)])
    mask = ret == "mask"
    return Launch(topk_one, (k, asc, mask, call.req[0]),
                  views=[dview, dview if mask else kview, (n,), (n,)])


def prepare_topk_backward(call):
    dview, kview, _ = topk_views(call, call.in_shapes[2])
    return Launch(topk_backward, (call.req[0],), views=[kview, kview, dview, dview])


# -- scratch rule (ops.topk's rule for kernels that sort in scratch) --------------

def temp_topk(call):
    return topk_temp(call, scratch=True)


# -- sort / argsort: topk with k=0 ---------------------------------------------

def prepare_sort(call):
    """sort (values, hidden int64 positions) and argsort (positions): topk's kernels."""
    return prepare_topk(as_topk_call(call))


def temp_sort(call):
    return topk_temp(as_topk_call(call), scratch=True)
