"""The stores and flat-index splits every kernel family writes, as plain
functions both devices compile (``njit(inline="always")`` on the CPU,
``cuda.jit(device=True)`` on CUDA): ``py_put`` honours a write/add flag,
``py_copy`` a req over a flat array, ``py_add_at`` is the serial scatter-add
whose CUDA counterpart is ``cuda.atomic.add`` (a shared function that
scatters takes the adder from its device module, see
``kernels.shared.spatial_transformer.build_sampler_backward``); ``py_store_req``
honours a req for one element."""
from ...ops.registry import REQ_ADD, REQ_NULL



def py_put(a, i, v, add):
    """``a[i] = v``, or ``a[i] += v`` when ``add`` (``i`` an index or a tuple
    of indices)."""
    if add:
        a[i] += v
    else:
        a[i] = v


def py_copy(src, dst, req):
    """Flat ``dst`` = ``src`` (same size), added to when ``req`` is
    ``REQ_ADD``, untouched when it is ``REQ_NULL``."""
    if req == REQ_ADD:
        for i in range(dst.size):
            dst[i] += src[i]
    elif req != REQ_NULL:
        for i in range(dst.size):
            dst[i] = src[i]


def py_store_req(a, i, v, req):
    """``a[i]`` written, or added to when ``req`` is ``REQ_ADD``, untouched
    when it is ``REQ_NULL``."""
    if req == REQ_ADD:
        a[i] += v
    elif req != REQ_NULL:
        a[i] = v


def py_add_at(a, i, v):
    """``a[i] += v`` (the CPU's serial scatter-add)."""
    a[i] += v


def py_unravel4(r, B, C, D):
    """(i0, i1, i2, i3) of flat position ``r`` of a C-ordered (A, B, C, D)
    array (one thread per element of a 4-d output)."""
    i3 = r % D
    q = r // D
    i2 = q % C
    q = q // C
    return q // B, q % B, i2, i3
