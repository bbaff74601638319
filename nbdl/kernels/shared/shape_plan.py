"""Where the shape family's data moves: for each op of nbdl.ops.shape /
nbdl.ops.concat_slice, which of the family's loops runs (``Plan.kernel``),
with which scalars and over which views.  Plain Python, device-neutral: the
CPU kernels (``nbdl.kernels.cpu.shape``) and the CUDA ones
(``nbdl.kernels.cuda.shape``) each map ``Plan.kernel`` to their own loop of
that name and signature.

The loops: ``copy`` / ``copy_like`` (a flat copy), ``gather`` / ``scatter``
(a walk over up to MAX_RANK (count, stride) dims; dims are merged first),
``transpose2d`` (a blocked (batched) 2-D transpose), ``window_copy`` /
``window_scatter`` (rows of a 2-D ``(outer, axis*inner)`` view) and the
variadic ``concat`` / ``split``."""
from collections import namedtuple

from ...ops.concat_slice import slice_axis_range, slice_gather, split_v2_bounds
from ...ops.registry import shape_error
from .elemwise_exprs import cast_scalar
from ...ops.shape import (MAX_RANK, c_strides, flip_axes, norm_axis, repeat_dims, size_of,
                          strided_plan, tile_dims, transpose_axes)

Plan = namedtuple("Plan", "kernel scalars views")
Plan.__doc__ = """``kernel``: the loop's name; ``scalars`` and ``views`` as in ``Launch``."""


def _flat(shape):
    return (size_of(shape),)


def rows_view(shape, axis, outer):
    """(outer, shape[axis] * inner): the 2-D view windows along ``axis`` use."""
    return (outer, size_of(shape[axis:]))


def copy(call):
    n = size_of(call.out_shapes[0])
    return Plan("copy", (call.req[0],), views=[(n,), (n,)])


def copy_like(call):
    n = size_of(call.out_shapes[0])
    return Plan("copy_like", (call.req[0],),
                views=[(n,), _flat(call.in_shapes[1]), (n,)])


def _plan_or_fail(call, out_shape, strides, base):
    plan = strided_plan(out_shape, strides, base)
    if plan is None:
        raise shape_error(call.where(), f"needs more than {MAX_RANK} non-mergeable dims",
                          call.in_shapes)
    return plan


def _gather(call, out_shape, strides, base, x_shape, out_full=None):
    counts, steps = _plan_or_fail(call, out_shape, strides, base)
    return Plan("gather", (int(base),) + counts + steps + (call.req[0],),
                views=[_flat(x_shape), _flat(out_full or out_shape)])


def transpose_gather(call):
    """(out shape, strides into the input) of a transpose."""
    d = call.in_shapes[0]
    axes = transpose_axes(call.attrs["axes"], len(d))
    st = c_strides(d)
    return tuple(d[a] for a in axes), tuple(st[a] for a in axes)


def batched_2d(counts, steps):
    """(B, M, N) when the merged walk is a (batched) 2-D transpose, else None."""
    dims = [(n, s) for n, s in zip(counts, steps) if n != 1]
    if len(dims) == 2:
        dims.insert(0, (1, 0))
    if len(dims) != 3:
        return None
    (b, sb), (n, sn), (m, sm) = dims
    if sn == 1 and sm == n and (b == 1 or sb == m * n):
        return b, m, n
    return None


def transpose(call):
    d = call.in_shapes[0]
    out_shape, strides = transpose_gather(call)
    counts, steps = _plan_or_fail(call, out_shape, strides, 0)
    bmn = batched_2d(counts, steps) if size_of(d) else None
    if bmn is not None:
        b, m, n = bmn
        return Plan("transpose2d", (call.req[0],), views=[(b, m, n), (b, n, m)])
    return _gather(call, out_shape, strides, 0, d)


def flip_gather(call):
    d = call.in_shapes[0]
    axes = flip_axes(call.attrs, len(d))
    st = c_strides(d)
    strides = tuple(-s if i in axes else s for i, s in enumerate(st))
    base = sum((d[i] - 1) * st[i] for i in axes if d[i] > 0)
    return d, strides, base


def flip(call):
    d, strides, base = flip_gather(call)
    return _gather(call, d, strides, base, d)


def tile_gather(d, reps):
    """tile as a walk over (rep_0, n_0, rep_1, n_1, ...) with stride 0 on reps."""
    shp, reps = tile_dims(reps, d)
    st = c_strides(shp)
    walk, strides = [], []
    for n, r, s in zip(shp, reps, st):
        walk += [r, n]
        strides += [0, s]
    return tuple(walk), tuple(strides)


def repeat_gather(attrs, d):
    """repeat as a walk over (.., n_axis, repeats, ..) with stride 0 on repeats."""
    shp, axis = repeat_dims(attrs, d)
    st = c_strides(shp)
    walk = tuple(shp[:axis + 1]) + (attrs["repeats"],) + tuple(shp[axis + 1:])
    strides = tuple(st[:axis + 1]) + (0,) + tuple(st[axis + 1:])
    return walk, strides


def tile(call):
    walk, strides = tile_gather(call.in_shapes[0], call.attrs["reps"])
    return _gather(call, walk, strides, 0, call.in_shapes[0], call.out_shapes[0])


def repeat(call):
    walk, strides = repeat_gather(call.attrs, call.in_shapes[0])
    return _gather(call, walk, strides, 0, call.in_shapes[0], call.out_shapes[0])


def _scatter(call, walk, strides, base, overlap):
    counts, steps = _plan_or_fail(call, walk, strides, base)
    return Plan("scatter", (int(base),) + counts + steps + (call.req[0], int(overlap)),
                views=[_flat(call.in_shapes[0]), _flat(call.in_shapes[1]),
                       _flat(call.out_shapes[0])])


def backward_tile(call):
    walk, strides = tile_gather(call.out_shapes[0], call.attrs["reps"])
    return _scatter(call, walk, strides, 0, True)


def backward_repeat(call):
    walk, strides = repeat_gather(call.attrs, call.out_shapes[0])
    return _scatter(call, walk, strides, 0, True)


def slice(call):
    out_shape, strides, base = slice_gather(call.attrs, call.in_shapes[0])
    return _gather(call, out_shape, strides, base, call.in_shapes[0])


def backward_slice(call):
    out_shape, strides, base = slice_gather(call.attrs, call.out_shapes[0])
    return _scatter(call, out_shape, strides, base, False)


def axis_windows(call, data_shape):
    """(axis, begin, end, outer, inner) of slice_axis on ``data_shape``."""
    a, b, e = slice_axis_range(call.attrs, data_shape)
    return a, b, e, size_of(data_shape[:a]), size_of(data_shape[a + 1:])


def slice_axis(call):
    d = call.in_shapes[0]
    a, b, e, outer, inner = axis_windows(call, d)
    return Plan("window_copy", (b * inner, call.req[0]),
                views=[(outer, d[a] * inner), (outer, (e - b) * inner)])


def backward_slice_axis(call):
    d = call.out_shapes[0]
    a, b, e, outer, inner = axis_windows(call, d)
    return Plan("window_scatter", (b * inner, call.req[0]),
                views=[(outer, (e - b) * inner), _flat(call.in_shapes[1]), (outer, d[a] * inner)])


def concat_views(call, shapes, whole):
    """2-D (outer, dim*inner) views of the pieces and of the joined array."""
    d = norm_axis(call.attrs["dim"], len(whole), call.where())
    outer = size_of(whole[:d])
    return [rows_view(s, d, outer) for s in shapes], rows_view(whole, d, outer)


def concat(call):
    pieces, whole = concat_views(call, call.in_shapes, call.out_shapes[0])
    return Plan("concat", (call.req[0],), views=pieces + [whole])


def backward_concat(call):
    pieces, whole = concat_views(call, call.out_shapes, call.in_shapes[0])
    carriers = [_flat(s) for s in call.in_shapes[1:]]
    return Plan("split", tuple(call.req), views=[whole] + carriers + pieces)


def split_views(call):
    d = call.in_shapes[0]
    a = norm_axis(call.attrs["axis"], len(d), call.where())
    outer = size_of(d[:a])
    piece = (outer, size_of(d[a:]) // call.attrs["num_outputs"])
    return (outer, size_of(d[a:])), [piece] * call.attrs["num_outputs"]


def split(call):
    whole, pieces = split_views(call)
    return Plan("split", tuple(call.req), views=[whole] + pieces)


def split_v2(call):
    d = call.in_shapes[0]
    a, bounds = split_v2_bounds(call.attrs, d)
    outer, inner = size_of(d[:a]), size_of(d[a + 1:])
    pieces = [(outer, (e - b) * inner) for b, e in bounds]
    return Plan("split", tuple(call.req), views=[rows_view(d, a, outer)] + pieces)


def _window_walk(call):
    """(base, counts, strides) of the window ``begin:end:step`` of input 0."""
    win, strides, base = slice_gather(call.attrs, call.in_shapes[0])
    counts, steps = _plan_or_fail(call, win, strides, base)
    return (int(base),) + counts + steps


def slice_assign(call):
    n = size_of(call.in_shapes[0])
    return Plan("slice_assign", _window_walk(call) + (call.req[0],),
                views=[(n,), _flat(call.in_shapes[1]), (n,)])


def slice_assign_scalar(call):
    n = size_of(call.in_shapes[0])
    value = cast_scalar(call.where(), "scalar", call.attrs["scalar"], call.out_dtypes[0])
    return Plan("slice_assign_scalar", _window_walk(call) + (call.req[0], value),
                views=[(n,), (n,)])
