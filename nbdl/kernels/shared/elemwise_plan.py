"""Index plans for broadcasting and for summing a broadcast back down, shared
by the CPU and CUDA kernels (pure Python, run once per prepare).

Both collapse the problem to a few dimensions: size-1 output dimensions are
dropped and neighbouring dimensions with the same broadcast pattern are
merged, so ``(N, C, H, W) + (1, C, 1, 1)`` becomes three dimensions
``(N, C, H*W)``.  The kernels are written for a fixed rank of ``RANK`` and the
plan pads at the front with size-1 dimensions."""
from ...errors import ShapeError
from ...ops.registry import REQ_NULL

RANK = 6


def size_of(shape):
    """The number of elements of ``shape`` (a Python int)."""
    n = 1
    for d in shape:
        n *= int(d)
    return n


def grouped_sum(k, group, kernel, copy, write_req, add_req):
    """A launcher for ``ElementWiseSum`` of ``k > group`` inputs, shared by the
    CPU and CUDA kernels: a generated loop over more than a few arrays would
    take one argument per input (and Numba and CUDA cannot compile 10,000
    arguments), so the sum runs in passes of at most ``group`` arrays, each
    pass adding the next arrays to the running sum:
    ``((x0 + ... + x[g-1]) + x[g] + ...)``, the same left-to-right order as
    one expression.  ``kernel(m)`` is the ``m``-input sum kernel
    (``fn(*xs, out, req)``), ``copy(x, out, req)`` copies or accumulates.
    The launcher takes ``(*xs, out[, temp], req)``; with ``add_req`` the sum
    is built in ``temp`` and added to ``out`` once, as one expression would."""
    first = kernel(group)
    rest = {}
    passes = []
    i = group
    while i < k:
        m = min(group - 1, k - i)
        if m not in rest:
            rest[m] = kernel(m + 1)
        passes.append((rest[m], i, i + m))
        i += m

    def run(*arrays):
        req = arrays[-1]
        if req == REQ_NULL:
            return
        out = arrays[k]
        acc = arrays[k + 1] if req == add_req else out
        first(*arrays[:group], acc, write_req)
        for fn, lo, hi in passes:
            fn(acc, *arrays[lo:hi], acc, write_req)
        if req == add_req:
            copy(acc, out, add_req)
    return run


def _pad(shape, nd):
    return (1,) * (nd - len(shape)) + tuple(shape)


def _too_complex(what, shapes):
    return ShapeError(f"{what}: shapes {', '.join(str(tuple(s)) for s in shapes)} alternate "
                      f"broadcast and full dimensions more than {RANK} times after merging; "
                      f"reshape the inputs to merge dimensions")


def broadcast_dims(lhs, rhs, out, what="broadcast"):
    """Collapsed ``[(size, stride_lhs, stride_rhs)]`` for an output of shape
    ``out`` read from contiguous ``lhs`` and ``rhs`` (stride 0 where an input
    is broadcast), outermost first, padded to ``RANK`` entries."""
    nd = len(out)
    a, b = _pad(lhs, nd), _pad(rhs, nd)
    groups = []   # [size, lhs broadcast?, rhs broadcast?]
    for da, db, do in zip(a, b, out):
        if do == 1:
            continue
        pattern = (da == 1, db == 1)
        if groups and tuple(groups[-1][1:]) == pattern:
            groups[-1][0] *= do
        else:
            groups.append([do, *pattern])
    if len(groups) > RANK:
        raise _too_complex(what, (lhs, rhs))
    dims = []
    step_a = step_b = 1
    for size, bc_a, bc_b in reversed(groups):
        dims.append((size, 0 if bc_a else step_a, 0 if bc_b else step_b))
        if not bc_a:
            step_a *= size
        if not bc_b:
            step_b *= size
    dims.extend([(1, 0, 0)] * (RANK - len(dims)))
    return dims[::-1]


def broadcast_scalars(lhs, rhs, out, what="broadcast"):
    """Kernel scalars ``d0..d4, n, sa0..sa5, sb0..sb5`` of the general
    broadcast kernel: the first five sizes are rows, the last is the inner
    loop."""
    dims = broadcast_dims(lhs, rhs, out, what)
    return (tuple(int(d[0]) for d in dims) + tuple(int(d[1]) for d in dims)
            + tuple(int(d[2]) for d in dims))


def where_rows(cond_shape, data_shape):
    """(rows, inner, n) of a ``where`` condition with one entry per row, each
    covering ``inner`` consecutive elements of the data (inner == 1: same
    shape; ``n`` the data's size)."""
    rows, n = size_of(cond_shape), size_of(data_shape)
    return rows, (n // rows if rows else 0), n


def reduce_sum_like_plan(call):
    """``(data shape, like shape, data size, output size, req, views)`` of a
    ``_reduce_sum_like`` call (flat views of data, like and output)."""
    data, like = (tuple(s) for s in call.in_shapes)
    nd, nl = size_of(data), size_of(like)
    no = size_of(call.out_shapes[0])
    return data, like, nd, no, int(call.req[0]), [(nd,), (nl,), (no,)]


def reduce_groups(data, like, what="_reduce_sum_like"):
    """Collapsed ``[(size, reduced)]`` of ``data`` summed down to ``like``."""
    nd = max(len(data), len(like))
    d, l_ = _pad(data, nd), _pad(like, nd)
    groups = []
    for dd, dl in zip(d, l_):
        if dd == 1:
            continue
        reduced = dl == 1
        if groups and groups[-1][1] == reduced:
            groups[-1][0] *= dd
        else:
            groups.append([dd, reduced])
    if len(groups) > RANK:
        raise _too_complex(what, (data, like))
    return [tuple(g) for g in groups]


def scatter_scalars(groups):
    """``d0..d4, n, so0..so5``: walk ``data`` in order and add each element to
    the output offset (stride 0 along reduced dimensions)."""
    dims = []
    step = 1
    for size, reduced in reversed(groups):
        dims.append((size, 0 if reduced else step))
        if not reduced:
            step *= size
    dims.extend([(1, 0)] * (RANK - len(dims)))
    dims = dims[::-1]
    return tuple(int(s) for s, _ in dims) + tuple(int(st) for _, st in dims)


def gather_scalars(groups):
    """``k0..k2, ks0..ks2, r0..r2, rs0..rs2``: for each output element (the
    kept dimensions, in order) sum over the reduced ones; strides are into
    ``data``."""
    kept, red = [], []
    step = 1
    for size, reduced in reversed(groups):
        (red if reduced else kept).append((size, step))
        step *= size
    half = RANK // 2
    kept = (kept + [(1, 0)] * (half - len(kept)))[::-1]
    red = (red + [(1, 0)] * (half - len(red)))[::-1]
    return (tuple(s for s, _ in kept) + tuple(st for _, st in kept)
            + tuple(s for s, _ in red) + tuple(st for _, st in red))
