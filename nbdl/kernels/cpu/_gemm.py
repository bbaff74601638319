"""``gemm(a, b, c, alpha, beta)``: ``c = alpha * a . b + beta * c`` callable
from ``@njit`` code, for 2-D float32/float64 views whose elements are unit
strided along one axis (row-major, or a transposed row-major view such as
``x.T``) with any leading dimension (``col[:, j0:j1]``).

``np.dot(a, b, out)`` inside njit overwrites ``out`` and copies any operand
that is not contiguous; the convolution kernels accumulate weight gradients
over blocks of images (``beta = 1``) and honour ``REQ_ADD`` without a
scratch GEMM result, so they call the BLAS gemm that numba's ``np.dot``
calls (numba's ``numba_xxgemm`` helper, which forwards to scipy's
``cython_blas``) with their own ``beta`` and leading dimensions.  BLAS
threading is controlled as for ``np.dot`` (``_blas_threads``).
"""
from llvmlite import ir
from numba import types

from ..shared.jit import njit
from ._parallel import chunk
from numba.core import cgutils
from numba.extending import intrinsic

import scipy.linalg.cython_blas  # noqa: F401  (numba_xxgemm resolves sgemm/dgemm from it)


@intrinsic
def _xxgemm(typingctx, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    """Column-major gemm: C(m, n) = alpha op(A) op(B) + beta C; ``ta``/``tb``
    non-zero transpose; ``a``/``b``/``c`` are addresses (integers)."""
    if not isinstance(alpha, types.Float) or beta != alpha:
        return None
    kind = ord("s" if alpha.bitwidth == 32 else "d")
    sig = types.intc(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)

    def codegen(context, builder, sig, args):
        i8 = ir.IntType(8)
        vp = i8.as_pointer()
        ip = context.get_value_type(types.intp)
        fnty = ir.FunctionType(ir.IntType(32), [i8, i8, i8, ip, ip, ip, vp, vp, ip, vp, ip,
                                                vp, vp, ip])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemm")
        tys = sig.args

        def as_int(i):
            return context.cast(builder, args[i], tys[i], types.intp)

        def flag(i):
            nz = builder.icmp_signed("!=", as_int(i), ir.Constant(ip, 0))
            return builder.select(nz, ir.Constant(i8, ord("t")), ir.Constant(i8, ord("n")))

        def ptr(i):
            return builder.inttoptr(as_int(i), vp)

        p_alpha = cgutils.alloca_once_value(builder, args[5])
        p_beta = cgutils.alloca_once_value(builder, args[10])
        return builder.call(fn, [ir.Constant(i8, kind), flag(0), flag(1), as_int(2), as_int(3),
                                 as_int(4), builder.bitcast(p_alpha, vp), ptr(6), as_int(7),
                                 ptr(8), as_int(9), builder.bitcast(p_beta, vp), ptr(11),
                                 as_int(12)])
    return sig, codegen


@intrinsic
def _xxgemv(typingctx, trans, m, n, alpha, a, lda, x, beta, y):
    """Column-major gemv: y = alpha op(A) x + beta y, A (m, n), unit-strided
    ``x`` and ``y``; ``a``/``x``/``y`` are addresses (integers)."""
    if not isinstance(alpha, types.Float) or beta != alpha:
        return None
    kind = ord("s" if alpha.bitwidth == 32 else "d")
    sig = types.intc(trans, m, n, alpha, a, lda, x, beta, y)

    def codegen(context, builder, sig, args):
        i8 = ir.IntType(8)
        vp = i8.as_pointer()
        ip = context.get_value_type(types.intp)
        fnty = ir.FunctionType(ir.IntType(32), [i8, i8, ip, ip, vp, vp, ip, vp, vp, vp])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemv")
        tys = sig.args

        def as_int(i):
            return context.cast(builder, args[i], tys[i], types.intp)

        nz = builder.icmp_signed("!=", as_int(0), ir.Constant(ip, 0))
        flag = builder.select(nz, ir.Constant(i8, ord("t")), ir.Constant(i8, ord("n")))
        p_alpha = cgutils.alloca_once_value(builder, args[3])
        p_beta = cgutils.alloca_once_value(builder, args[7])
        return builder.call(fn, [ir.Constant(i8, kind), flag, as_int(1), as_int(2),
                                 builder.bitcast(p_alpha, vp), builder.inttoptr(as_int(4), vp),
                                 as_int(5), builder.inttoptr(as_int(6), vp),
                                 builder.bitcast(p_beta, vp), builder.inttoptr(as_int(8), vp)])
    return sig, codegen


@njit(cache=True, inline="always")
def _row_gemv(tb, n, k, al, a_ptr, b_ptr, ldb, be, c_ptr):
    """One row: c (n) = al * a (k) . op(B) + be * c, B row-major (k, n), or
    (tb) the transpose of a row-major (n, k), with leading dimension ``ldb``:
    BLAS's gemv.  OpenBLAS's sgemm with one row and m*n*k above 2**20 (its
    small-matrix limit) took 0.8 ms for 1 x 1024 by 1000 (0.05 ms at 1000
    by 1000); gemv runs at memory speed."""
    # column-major, row-major B (k, n) is the (n, k) matrix B^T: c = B^T a;
    # a transposed row-major (n, k) is the (k, n) matrix W^T = B: c = (W^T)^T a
    if tb:
        _xxgemv(1, k, n, al, b_ptr, ldb, a_ptr, be, c_ptr)
    else:
        _xxgemv(0, n, k, al, b_ptr, ldb, a_ptr, be, c_ptr)


@njit(cache=True, inline="always")
def _layout(x):
    """(transposed, leading dimension) of a 2-D view in row-major terms."""
    isz = x.itemsize
    if x.strides[1] == isz or x.shape[1] <= 1:
        return 0, max(x.strides[0] // isz, x.shape[1], 1)
    return 1, max(x.strides[1] // isz, x.shape[0], 1)


@njit(cache=True, inline="always")
def _scale_only(c, beta):
    """c = beta * c (0 where beta is 0, NaN included): a product over k = 0."""
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            c[i, j] = c[i, j] * c.dtype.type(beta) if beta != 0 else c.dtype.type(0)


@njit(cache=True)
def gemm(a, b, c, alpha, beta):
    """c (m, n) = alpha * a (m, k) . b (k, n) + beta * c; shapes are trusted
    (the caller's views are sized at prepare time).  Compiled per operand
    type, and ``x``, ``x.T`` and ``x[r0:r1]`` are three types: callers pass
    every operand as a full slice (``x[:, :]``, layout ``A``) so that one
    compilation per dtype serves them all (a ResNet's first training step
    compiled it four times, 0.34 s each)."""
    m, k = a.shape
    n = c.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:
        _scale_only(c, beta)
        return
    ta, lda = _layout(a)
    tb, ldb = _layout(b)
    tc, ldc = _layout(c)
    al = c.dtype.type(alpha)
    be = c.dtype.type(beta)
    if m == 1 and (a.strides[1] == a.itemsize or k == 1) and (c.strides[1] == c.itemsize
                                                               or n == 1):
        _row_gemv(tb, n, k, al, a.ctypes.data, b.ctypes.data, ldb, be, c.ctypes.data)
        return
    if tc == 0:   # row-major C = A B is column-major C^T = B^T A^T
        _xxgemm(tb, ta, n, m, k, al, b.ctypes.data, ldb, a.ctypes.data, lda, be,
                c.ctypes.data, ldc)
    else:
        _xxgemm(1 - ta, 1 - tb, m, n, k, al, a.ctypes.data, lda, b.ctypes.data, ldb, be,
                c.ctypes.data, ldc)


@njit(cache=True)
def gemm_c(a, b, c, ta, tb, alpha, beta):
    """c (m, n) = alpha * op(a) . op(b) + beta * c for C-contiguous ``a``,
    ``b``, ``c``, op = transpose where the flag (0/1) is set.  The flags are
    run-time values, so one compilation per dtype serves every combination
    (``gemm`` is compiled per operand layout: ``w.T`` is another type)."""
    m, n = c.shape
    k = a.shape[0] if ta else a.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:
        _scale_only(c, beta)
        return
    lda = max(a.shape[1], 1)
    ldb = max(b.shape[1], 1)
    al = c.dtype.type(alpha)
    be = c.dtype.type(beta)
    if m == 1:     # a's one row (or column, ta) and c's row are contiguous
        _row_gemv(tb, n, k, al, a.ctypes.data, b.ctypes.data, ldb, be, c.ctypes.data)
        return
    # row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T
    _xxgemm(tb, ta, n, m, k, al, b.ctypes.data, ldb, a.ctypes.data, lda, be,
            c.ctypes.data, max(n, 1))


@njit(cache=True, inline="always")
def part_bounds(m, n, t, nt):
    """``(r0, r1, c0, c1)``: the rows and columns of an (m, n) result that
    part ``t`` of ``nt`` computes in ``gemm_part``, which cuts the result
    along its longer side (rows: each part reads all of ``b``; columns: all
    of ``a``), so that the operand every part packs again is the smaller
    one (an MLP's 128-row batch by 512 units split by rows packed the whole
    weight matrix twice: 6% slower than BLAS's own threads)."""
    if m >= n:
        lo, hi = chunk(m, t, nt)
        return lo, hi, 0, n
    lo, hi = chunk(n, t, nt)
    return 0, m, lo, hi


@njit(cache=True)
def gemm_part(a, b, c, alpha, beta, t, nt):
    """Part ``t`` of ``nt`` of ``gemm(a, b, c, alpha, beta)``: one thread's
    share of a product split over threads (``part_bounds``)."""
    r0, r1, c0, c1 = part_bounds(c.shape[0], c.shape[1], t, nt)
    if r1 > r0 and c1 > c0:
        gemm(a[r0:r1, :], b[:, c0:c1], c[r0:r1, c0:c1], alpha, beta)


__all__ = ["gemm", "gemm_c", "gemm_part", "part_bounds"]
