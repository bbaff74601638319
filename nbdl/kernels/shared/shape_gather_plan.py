"""Plans of stack, diag, slice_like and broadcast_like (``nbdl.ops.shape_gather``)
over the shape family's loops (``nbdl.kernels.shared.shape_plan``): plain
Python, device-neutral; the CPU and CUDA modules ``shape_gather`` map
``Plan.kernel`` to their loop of that name.

Loops used: ``concat`` (stack), ``gather`` (diag of a 2-D+ input),
``gather_like`` (a gather whose op has a shape-only second input: slice_like,
broadcast_like, diag's gradient of a 1-D input), ``scatter`` (the gradients
of slice_like and of diag of a 2-D+ input) and ``put`` (a scatter into a
zeroed output with no shape-only input: diag of a 1-D input)."""
from ...ops.shape import c_strides, size_of
from ...ops.shape_gather import diag_axes, stack_axis
from .shape_plan import Plan, _gather, _plan_or_fail, _scatter


def _flat(shape):
    return (size_of(shape),)


def stack(call):
    """Each input as (outer, inner) rows, the output as (outer, n * inner)."""
    d = call.in_shapes[0]
    a = stack_axis(call.attrs, len(d))
    outer, inner = size_of(d[:a]), size_of(d[a:])
    n = len(call.in_shapes)
    return Plan("concat", (call.req[0],), views=[(outer, inner)] * n + [(outer, n * inner)])


def diagonal_walk(attrs, d):
    """(walk, strides, base) of the k-th diagonal of a 2-D+ shape ``d``."""
    a1, a2, length = diag_axes(attrs, d)
    st = c_strides(d)
    walk = tuple(n for i, n in enumerate(d) if i not in (a1, a2)) + (length,)
    strides = tuple(s for i, s in enumerate(st) if i not in (a1, a2)) + (st[a1] + st[a2],)
    k = attrs["k"]
    base = k * st[a2] if k >= 0 else -k * st[a1]
    return walk, strides, base


def matrix_walk(k, n):
    """(walk, strides, base) of the k-th diagonal of the (n + |k|)-square matrix."""
    size = n + abs(k)
    return (n,), (size + 1,), (k if k >= 0 else -k * size)


def _gather_like(call, walk, strides, base):
    counts, steps = _plan_or_fail(call, walk, strides, base)
    return Plan("gather_like", (int(base),) + counts + steps + (call.req[0],),
                views=[_flat(call.in_shapes[0]), _flat(call.in_shapes[1]),
                       _flat(call.out_shapes[0])])


def diag(call):
    d = call.in_shapes[0]
    if len(d) == 1:
        walk, strides, base = matrix_walk(call.attrs["k"], d[0])
        counts, steps = _plan_or_fail(call, walk, strides, base)
        return Plan("put", (int(base),) + counts + steps + (call.req[0], 0),
                    views=[_flat(d), _flat(call.out_shapes[0])])
    walk, strides, base = diagonal_walk(call.attrs, d)
    return _gather(call, walk, strides, base, d)


def backward_diag(call):
    """(out_grad, data) -> gradient of data."""
    d = call.in_shapes[1]
    if len(d) == 1:
        return _gather_like(call, *matrix_walk(call.attrs["k"], d[0]))
    walk, strides, base = diagonal_walk(call.attrs, d)
    return _scatter(call, walk, strides, base, False)


def slice_like(call):
    return _gather_like(call, call.out_shapes[0], c_strides(call.in_shapes[0]), 0)


def backward_slice_like(call):
    return _scatter(call, call.in_shapes[0], c_strides(call.out_shapes[0]), 0, False)


def broadcast_like(call):
    lhs, out = call.in_shapes[0], call.out_shapes[0]
    strides = tuple(0 if n == 1 and m != 1 else s
                    for n, m, s in zip(lhs, out, c_strides(lhs)))
    return _gather_like(call, out, strides, 0)
