"""CPU kernels for the shape family (nbdl.ops.shape, nbdl.ops.concat_slice);
which loop an op runs, with which scalars and views, is
``nbdl.kernels.shared.shape_plan`` (shared with the CUDA kernels).

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
import numpy as np

from ..shared.jit import njit
from numba.core import types
from numba.extending import overload

from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared import shape_plan as _plan
from ..shared.shape_walk import walk_offset as _walk_offset
from ..shared.store import py_copy

_copy = njit(cache=True, inline="always")(py_copy)

_U = np.uint64
_BLOCK = 32  # tile edge of the blocked transpose (32x32 float32 = 4 KiB)


# -- flat copy --------------------------------------------------------------------------

@njit(cache=True)
def copy_kernel(x, out, req):
    if req != REQ_ADD and x.ctypes.data == out.ctypes.data:
        return
    _copy(x, out, req)


@njit(cache=True)
def copy_like_kernel(x, like, out, req):
    copy_kernel(x, out, req)


# -- strided gather / scatter --------------------------------------------------------------

@njit(cache=True, inline="always")
def _strided_copy(src, dst, base, n0, n1, n2, n3, n4, n5, n6, n7,
                  s0, s1, s2, s3, s4, s5, s6, s7, add, to_strided):
    """The walk over n0..n7 (C order) of the strided positions ``base + sum
    i_d * s_d``: their elements of ``src`` copied (added) into flat ``dst``,
    or, ``to_strided``, flat ``src`` copied (added) onto them in ``dst``."""
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
                                if to_strided:
                                    if add:
                                        for i7 in range(n7):
                                            dst[o6 + i7 * s7] += src[k + i7]
                                    else:
                                        for i7 in range(n7):
                                            dst[o6 + i7 * s7] = src[k + i7]
                                elif add:
                                    for i7 in range(n7):
                                        dst[k + i7] += src[o6 + i7 * s7]
                                else:
                                    for i7 in range(n7):
                                        dst[k + i7] = src[o6 + i7 * s7]
                                k += n7


@njit(cache=True)
def gather_kernel(x, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
                  s0, s1, s2, s3, s4, s5, s6, s7, req):
    """out (flat, C order over n0..n7) = x[base + sum i_d * s_d]."""
    if req == REQ_NULL:
        return
    _strided_copy(x, out, base, n0, n1, n2, n3, n4, n5, n6, n7, s0, s1, s2, s3, s4, s5, s6, s7,
                  req == REQ_ADD, False)


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
    _strided_copy(g, out, base, n0, n1, n2, n3, n4, n5, n6, n7, s0, s1, s2, s3, s4, s5, s6, s7,
                  req == REQ_ADD or overlap != 0, True)


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

@njit(cache=True, inline="always")
def _window_rows(src, dst, so, do, w, req):
    """dst[r, do:do + w] = (or +=) src[r, so:so + w] for every row r.  The
    column indices are unsigned: Numba tests a signed ``do + j`` for
    wraparound, which kept LLVM from vectorising the copy (Concat's 1.5 MB
    of SqueezeNet's first fire module: 95 -> 13 us)."""
    so_, do_, w_ = _U(so), _U(do), _U(w)
    for r in range(src.shape[0]):
        if req == REQ_ADD:
            for j in range(w_):
                dst[r, do_ + j] += src[r, so_ + j]
        else:
            for j in range(w_):
                dst[r, do_ + j] = src[r, so_ + j]


@njit(cache=True)
def window_copy(x, out, off, req):
    """out[r, :] = x[r, off:off + out.shape[1]]."""
    if req != REQ_NULL:
        _window_rows(x, out, off, 0, out.shape[1], req)


@njit(cache=True)
def window_put(src, out, off, req):
    """out[r, off:off + src.shape[1]] = src[r, :] (the adjoint of window_copy)."""
    if req != REQ_NULL:
        _window_rows(src, out, 0, off, src.shape[1], req)


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


# -- writing into a window: _slice_assign / _slice_assign_scalar ----------------------------

walk_offset = njit(cache=True)(_walk_offset)


@njit(cache=True)
def _copy_unless_same(x, out):
    if x.ctypes.data != out.ctypes.data:
        for i in range(x.size):
            out[i] = x[i]


@njit(cache=True)
def slice_assign_kernel(lhs, rhs, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
                        s0, s1, s2, s3, s4, s5, s6, s7, req):
    """out = lhs with the window (base, n_d, s_d) = rhs (flat, C order)."""
    if req == REQ_NULL:
        return
    _copy_unless_same(lhs, out)
    for k in range(rhs.size):
        out[walk_offset(k, base, n0, n1, n2, n3, n4, n5, n6, n7,
                        s0, s1, s2, s3, s4, s5, s6, s7)] = rhs[k]


@njit(cache=True)
def slice_assign_scalar_kernel(x, out, base, n0, n1, n2, n3, n4, n5, n6, n7,
                               s0, s1, s2, s3, s4, s5, s6, s7, req, value):
    """out = x with the window (base, n_d, s_d) = value."""
    if req == REQ_NULL:
        return
    _copy_unless_same(x, out)
    for k in range(n0 * n1 * n2 * n3 * n4 * n5 * n6 * n7):
        out[walk_offset(k, base, n0, n1, n2, n3, n4, n5, n6, n7,
                        s0, s1, s2, s3, s4, s5, s6, s7)] = value


# -- prepares: the shared plan with this device's loop ------------------------------------

_LOOPS = {"copy": copy_kernel, "copy_like": copy_like_kernel, "gather": gather_kernel,
          "scatter": scatter_kernel, "transpose2d": transpose2d_kernel, "window_copy": window_copy,
          "window_scatter": window_scatter, "concat": concat_kernel, "split": split_kernel,
          "slice_assign": slice_assign_kernel, "slice_assign_scalar": slice_assign_scalar_kernel}


def _launch(plan):
    return Launch(_LOOPS[plan.kernel], plan.scalars, views=plan.views)


def prepare_copy(call):
    return _launch(_plan.copy(call))


def prepare_copy_like(call):
    return _launch(_plan.copy_like(call))


def prepare_transpose(call):
    return _launch(_plan.transpose(call))


def prepare_flip(call):
    return _launch(_plan.flip(call))


def prepare_tile(call):
    return _launch(_plan.tile(call))


def prepare_repeat(call):
    return _launch(_plan.repeat(call))


def prepare_backward_tile(call):
    return _launch(_plan.backward_tile(call))


def prepare_backward_repeat(call):
    return _launch(_plan.backward_repeat(call))


def prepare_slice(call):
    return _launch(_plan.slice(call))


def prepare_backward_slice(call):
    return _launch(_plan.backward_slice(call))


def prepare_slice_axis(call):
    return _launch(_plan.slice_axis(call))


def prepare_backward_slice_axis(call):
    return _launch(_plan.backward_slice_axis(call))


def prepare_concat(call):
    return _launch(_plan.concat(call))


def prepare_backward_concat(call):
    return _launch(_plan.backward_concat(call))


def prepare_split(call):
    return _launch(_plan.split(call))


def prepare_split_v2(call):
    return _launch(_plan.split_v2(call))


def prepare_slice_assign(call):
    return _launch(_plan.slice_assign(call))


def prepare_slice_assign_scalar(call):
    return _launch(_plan.slice_assign_scalar(call))
