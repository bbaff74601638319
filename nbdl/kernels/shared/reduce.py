"""argmax / argmin's comparison and the (K0, R0, K1, R1, K2, R2) /
(R0, K0, R1, K1, R2, K2) reduction layouts, written once for both devices
(plain Python: compiled by ``njit`` in ``kernels.cpu.reduce*``, by
``cuda.jit(device=True)`` in ``kernels.cuda.reduce*``), and the moments'
prepare-time geometry."""
from ...ops.reduce import reduce_plan
from ...ops.reduce_norm import _axes


def py_better(v, best, is_min):
    """Whether ``v`` replaces the running ``best`` of argmin (``is_min``) or
    argmax: strictly smaller (larger), or a NaN over a number (the first of
    ties, and the first NaN, win)."""
    if is_min:
        return v < best or (v != v and best == best)
    return v > best or (v != v and best == best)


def py_extents(x, tail):
    """(R0, R1, R2): the reduced extents of ``x`` in its layout (``tail``:
    kept and reduced axes alternate starting with a kept one)."""
    if tail:
        return x.shape[1], x.shape[3], x.shape[5]
    return x.shape[0], x.shape[2], x.shape[4]


def py_at(x, tail, k0, k1, k2, r0, r1, r2):
    """The element of kept position (k0, k1, k2) and reduced (r0, r1, r2)."""
    if tail:
        return x[k0, r0, k1, r1, k2, r2]
    return x[r0, k0, r1, k1, r2, k2]


def moments_geometry(call, ishape):
    """(tail, data view, mean view, 1 / count (NaN for none)) of moments."""
    axes = _axes(call.attrs, len(ishape), call.where())
    tail, big, small, count = reduce_plan(ishape, axes, call.where())
    return tail, big, small, (1.0 / count if count else float("nan"))
