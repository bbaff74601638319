"""CPU kernels for the shape family (nbdl.ops.shape, nbdl.ops.concat_slice).

Four kinds of loop cover every op:

- ``copy_kernel``: a flat copy (Reshape, Flatten, expand_dims, squeeze,
  reshape_like).  It returns at once when the output *is* the input (the
  planner ran it in place), and a same-index copy is correct anyway.
- ``gather_kernel`` / ``scatter_kernel``: a walk over up to MAX_RANK
  (count, stride) dims (transpose, slice, flip, tile, repeat and their
  gradients); ``prepare`` merges dims first, so most walks are 1-3 deep.
  ``transpose2d_kernel`` is the blocked fast path for (batched) 2-D transposes.
- ``window_copy`` / ``window_scatter``: rows of a 2-D ``(outer, axis*inner)``
  view (slice_axis), which is also what Concat and SliceChannel are made of.
- ``concat_kernel`` / ``split_kernel``: variadic (``*args``) kernels; Numba
  compiles one specialisation per arity.
"""
from numba import njit
from numba.core import types
from numba.extending import overload

from ...ops.concat_slice import slice_axis_range, slice_gather
from ...ops.registry import REQ_ADD, REQ_NULL, Launch, shape_error
from ...ops.shape import (MAX_RANK, c_strides, flip_axes, norm_axis, repeat_dims, size_of,
                          strided_plan, tile_dims, transpose_axes)

_BLOCK = 32  # tile edge of the blocked transpose (32x32 float32 = 4 KiB)


# -- flat copy --------------------------------------------------------------------------

@njit(cache=True)
def copy_kernel(x, out, req):
    if req == REQ_NULL or (req != REQ_ADD and x.ctypes.data == out.ctypes.data):
        return
    if req == REQ_ADD:
        for i in range(x.size):
            out[i] += x[i]
    else:
        for i in range(x.size):
            out[i] = x[i]


@njit(cache=True)
def copy_like_kernel(x, like, out, req):
    copy_kernel(x, out, req)


# -- strided gather / scatter --------------------------------------------------------------

@njit(cache=True)
def gather_kernel(x, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
                  s0, s1, s2, s3, s4, s5, s6, s7, req):
    """out (flat, C order over n0..n7) = x[base + sum i_d * s_d]."""
    if req == REQ_NULL:
        return
    add = req == REQ_ADD
    k = 0
    for i0 in range(n0):
        o0 = base + i0 * s0
        for i1 in range(n1):
            o1 = o0 + i1 * s1
            for i2 in range(n2):
                o2 = o1 + i2 * s2
                for i3 in range(n3):
                    o3 = o2 + i3 * s3
                    for i4 in range(n4):
                        o4 = o3 + i4 * s4
                        for i5 in range(n5):
                            o5 = o4 + i5 * s5
                            for i6 in range(n6):
                                o6 = o5 + i6 * s6
                                if add:
                                    for i7 in range(n7):
                                        out[k + i7] += x[o6 + i7 * s7]
                                else:
                                    for i7 in range(n7):
                                        out[k + i7] = x[o6 + i7 * s7]
                                k += n7


@njit(cache=True)
def scatter_kernel(g, like, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
                   s0, s1, s2, s3, s4, s5, s6, s7, req, overlap):
    """The adjoint of ``gather_kernel``: out[base + sum i_d * s_d] gets g.
    ``req`` write zeroes ``out`` first; ``overlap`` (tile, repeat: several
    elements of g land on one of out) accumulates even then."""
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        for i in range(out.size):
            out[i] = 0
    add = req == REQ_ADD or overlap != 0
    k = 0
    for i0 in range(n0):
        o0 = base + i0 * s0
        for i1 in range(n1):
            o1 = o0 + i1 * s1
            for i2 in range(n2):
                o2 = o1 + i2 * s2
                for i3 in range(n3):
                    o3 = o2 + i3 * s3
                    for i4 in range(n4):
                        o4 = o3 + i4 * s4
                        for i5 in range(n5):
                            o5 = o4 + i5 * s5
                            for i6 in range(n6):
                                o6 = o5 + i6 * s6
                                if add:
                                    for i7 in range(n7):
                                        out[o6 + i7 * s7] += g[k + i7]
                                else:
                                    for i7 in range(n7):
                                        out[o6 + i7 * s7] = g[k + i7]
                                k += n7


@njit(cache=True)
def transpose2d_kernel(x, out, req):
    """x (B, M, N) -> out (B, N, M), in cache-sized blocks."""
    if req == REQ_NULL:
        return
    nb, m, n = x.shape
    for b in range(nb):
        for i0 in range(0, m, _BLOCK):
            i1 = min(i0 + _BLOCK, m)
            for j0 in range(0, n, _BLOCK):
                j1 = min(j0 + _BLOCK, n)
                if req == REQ_ADD:
                    for j in range(j0, j1):
                        for i in range(i0, i1):
                            out[b, j, i] += x[b, i, j]
                else:
                    for j in range(j0, j1):
                        for i in range(i0, i1):
                            out[b, j, i] = x[b, i, j]


# -- windows of (outer, width) rows --------------------------------------------------------

@njit(cache=True)
def window_copy(x, out, off, req):
    """out[r, :] = x[r, off:off + out.shape[1]]."""
    if req == REQ_NULL:
        return
    w = out.shape[1]
    for r in range(out.shape[0]):
        if req == REQ_ADD:
            for j in range(w):
                out[r, j] += x[r, off + j]
        else:
            for j in range(w):
                out[r, j] = x[r, off + j]


@njit(cache=True)
def window_put(src, out, off, req):
    """out[r, off:off + src.shape[1]] = src[r, :] (the adjoint of window_copy)."""
    if req == REQ_NULL:
        return
    w = src.shape[1]
    for r in range(src.shape[0]):
        if req == REQ_ADD:
            for j in range(w):
                out[r, off + j] += src[r, j]
        else:
            for j in range(w):
                out[r, off + j] = src[r, j]


@njit(cache=True)
def window_scatter(g, like, out, off, req):
    """Zeros outside the window (unless adding), g inside it."""
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        w = g.shape[1]
        for r in range(out.shape[0]):
            for j in range(off):
                out[r, j] = 0
            for j in range(off + w, out.shape[1]):
                out[r, j] = 0
    window_put(g, out, off, req)


# -- variadic: Concat and SliceChannel / _backward_Concat -------------------------------

@njit(cache=True)
def concat_kernel(*args):
    """args = (in_0, .., in_{n-1}, out, req), every array an (outer, width) view."""
    out = args[-2]
    req = args[-1]
    off = 0
    for a in args[:-2]:
        window_put(a, out, off, req)
        off += a.shape[1]


def _split_body(args):  # typed by the overload below; never called from Python
    raise NotImplementedError


@overload(_split_body)
def _split_body_impl(args):
    """Unrolls ``args = (x, like_0..like_{k-1}, out_0..out_{n-1}, req_0..req_{n-1})``
    at compile time (one req per output, so the split is known from the types)."""
    n = sum(1 for t in args.types if isinstance(t, types.Integer))
    k = len(args.types) - 1 - 2 * n
    lines = ["def impl(args):", "    x = args[0]", "    off = 0"]
    for i in range(n):
        o, r = 1 + k + i, 1 + k + n + i
        lines.append(f"    window_copy(x, args[{o}], off, args[{r}])")
        lines.append(f"    off += args[{o}].shape[1]")
    scope = {}
    exec("\n".join(lines), {"window_copy": window_copy}, scope)  # noqa: S102 (fixed template)
    return scope["impl"]


@njit(cache=True)
def split_kernel(*args):
    """args = (x, [shape-only inputs...], out_0..out_{n-1}, req_0..req_{n-1})."""
    _split_body(args)


# -- prepare -------------------------------------------------------------------------------

def _flat(shape):
    return (size_of(shape),)


def rows_view(shape, axis, outer):
    """(outer, shape[axis] * inner): the 2-D view windows along ``axis`` use."""
    return (outer, size_of(shape[axis:]))


def prepare_copy(call):
    n = size_of(call.out_shapes[0])
    return Launch(copy_kernel, (call.req[0],), views=[(n,), (n,)])


def prepare_copy_like(call):
    n = size_of(call.out_shapes[0])
    return Launch(copy_like_kernel, (call.req[0],),
                  views=[(n,), _flat(call.in_shapes[1]), (n,)])


def _plan_or_fail(call, out_shape, strides, base):
    plan = strided_plan(out_shape, strides, base)
    if plan is None:
        raise shape_error(call.where(), f"needs more than {MAX_RANK} non-mergeable dims",
                          call.in_shapes)
    return plan


def _gather(call, out_shape, strides, base, x_shape, out_full=None):
    counts, steps = _plan_or_fail(call, out_shape, strides, base)
    return Launch(gather_kernel, (int(base),) + counts + steps + (call.req[0],),
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


def prepare_transpose(call):
    d = call.in_shapes[0]
    out_shape, strides = transpose_gather(call)
    counts, steps = _plan_or_fail(call, out_shape, strides, 0)
    bmn = batched_2d(counts, steps) if size_of(d) else None
    if bmn is not None:
        b, m, n = bmn
        return Launch(transpose2d_kernel, (call.req[0],), views=[(b, m, n), (b, n, m)])
    return _gather(call, out_shape, strides, 0, d)


def flip_gather(call):
    d = call.in_shapes[0]
    axes = flip_axes(call.attrs, len(d))
    st = c_strides(d)
    strides = tuple(-s if i in axes else s for i, s in enumerate(st))
    base = sum((d[i] - 1) * st[i] for i in axes if d[i] > 0)
    return d, strides, base


def prepare_flip(call):
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


def prepare_tile(call):
    walk, strides = tile_gather(call.in_shapes[0], call.attrs["reps"])
    return _gather(call, walk, strides, 0, call.in_shapes[0], call.out_shapes[0])


def prepare_repeat(call):
    walk, strides = repeat_gather(call.attrs, call.in_shapes[0])
    return _gather(call, walk, strides, 0, call.in_shapes[0], call.out_shapes[0])


def _scatter(call, walk, strides, base, overlap):
    counts, steps = _plan_or_fail(call, walk, strides, base)
    return Launch(scatter_kernel, (int(base),) + counts + steps + (call.req[0], int(overlap)),
                  views=[_flat(call.in_shapes[0]), _flat(call.in_shapes[1]),
                         _flat(call.out_shapes[0])])


def prepare_backward_tile(call):
    walk, strides = tile_gather(call.out_shapes[0], call.attrs["reps"])
    return _scatter(call, walk, strides, 0, True)


def prepare_backward_repeat(call):
    walk, strides = repeat_gather(call.attrs, call.out_shapes[0])
    return _scatter(call, walk, strides, 0, True)


def prepare_slice(call):
    out_shape, strides, base = slice_gather(call.attrs, call.in_shapes[0])
    return _gather(call, out_shape, strides, base, call.in_shapes[0])


def prepare_backward_slice(call):
    out_shape, strides, base = slice_gather(call.attrs, call.out_shapes[0])
    return _scatter(call, out_shape, strides, base, False)


def axis_windows(call, data_shape):
    """(axis, begin, end, outer, inner) of slice_axis on ``data_shape``."""
    a, b, e = slice_axis_range(call.attrs, data_shape)
    return a, b, e, size_of(data_shape[:a]), size_of(data_shape[a + 1:])


def prepare_slice_axis(call):
    d = call.in_shapes[0]
    a, b, e, outer, inner = axis_windows(call, d)
    return Launch(window_copy, (b * inner, call.req[0]),
                  views=[(outer, d[a] * inner), (outer, (e - b) * inner)])


def prepare_backward_slice_axis(call):
    d = call.out_shapes[0]
    a, b, e, outer, inner = axis_windows(call, d)
    return Launch(window_scatter, (b * inner, call.req[0]),
                  views=[(outer, (e - b) * inner), _flat(call.in_shapes[1]), (outer, d[a] * inner)])


def concat_views(call, shapes, whole):
    """2-D (outer, dim*inner) views of the pieces and of the joined array."""
    d = norm_axis(call.attrs["dim"], len(whole), call.where())
    outer = size_of(whole[:d])
    return [rows_view(s, d, outer) for s in shapes], rows_view(whole, d, outer)


def prepare_concat(call):
    pieces, whole = concat_views(call, call.in_shapes, call.out_shapes[0])
    return Launch(concat_kernel, (call.req[0],), views=pieces + [whole])


def prepare_backward_concat(call):
    pieces, whole = concat_views(call, call.out_shapes, call.in_shapes[0])
    carriers = [_flat(s) for s in call.in_shapes[1:]]
    return Launch(split_kernel, tuple(call.req), views=[whole] + carriers + pieces)


def split_views(call):
    d = call.in_shapes[0]
    a = norm_axis(call.attrs["axis"], len(d), call.where())
    outer = size_of(d[:a])
    piece = (outer, size_of(d[a:]) // call.attrs["num_outputs"])
    return (outer, size_of(d[a:])), [piece] * call.attrs["num_outputs"]


def prepare_split(call):
    whole, pieces = split_views(call)
    return Launch(split_kernel, tuple(call.req), views=[whole] + pieces)
