"""CUDA kernels for matrix products (FullyConnected, dot, batch_dot).

Operands are viewed as batched matrices ``(B, rows, cols)`` (B = 1 for dot
and FullyConnected) and one gemm serves every product: cuBLAS through CuPy
on a real GPU for float32/float64 (``_cublas.py`` says why), otherwise a
tiled shared-memory kernel: the transpose flags pick how a tile is loaded
and each thread owns one output element.  Both accumulate in place, so
``REQ_ADD`` needs no temp on the GPU, and add FullyConnected's bias.
"""
import math

import numpy as np
from numba import cuda, float32, float64

from ...ops.matrix import batch_dot_dims, dot_dims, fc_dims
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.matrix import temp_rules
from . import _cublas
from ._launch import launcher
from ..shared.store import py_put

_put = cuda.jit(device=True)(py_put)

# A GPU's tile, in the simulator too (256 Python threads a block there):
# tests/ops/test_cuda_launch_config.py multiplies shapes that take several
# tiles along every dimension.
TILE = 16
MAX_GRID_Z = 65535


def _make_gemm(nb_dtype):
    @cuda.jit
    def gemm_kernel(a, b, out, bias, ta, tb, has_bias, req):
        # out[z] (M, N) = op(a[z]) (M, K) . op(b[z]) (K, N) (+ bias[col]).
        sa = cuda.shared.array((TILE, TILE), nb_dtype)
        sb = cuda.shared.array((TILE, TILE), nb_dtype)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * TILE + ty
        col = cuda.blockIdx.x * TILE + tx
        nbatch, m, n = out.shape
        k = a.shape[1] if ta else a.shape[2]
        for z in range(cuda.blockIdx.z, nbatch, cuda.gridDim.z):
            acc = nb_dtype(0)
            for k0 in range(0, k, TILE):
                # sa[ty, tx] = A[row, k0 + tx]; sb[ty, tx] = B[k0 + ty, col]
                kk = k0 + tx
                if row < m and kk < k:
                    sa[ty, tx] = a[z, kk, row] if ta else a[z, row, kk]
                else:
                    sa[ty, tx] = 0
                kk = k0 + ty
                if col < n and kk < k:
                    sb[ty, tx] = b[z, col, kk] if tb else b[z, kk, col]
                else:
                    sb[ty, tx] = 0
                cuda.syncthreads()
                for t in range(TILE):
                    acc += sa[ty, t] * sb[t, tx]
                cuda.syncthreads()
            if row < m and col < n:
                if has_bias:
                    acc += bias[col]
                _put(out, (z, row, col), acc, req == REQ_ADD)
    return gemm_kernel


_GEMMS = {}


def _gemm_kernel(dtype):
    dt = np.dtype(dtype)
    kern = _GEMMS.get(dt)
    if kern is None:
        kern = _GEMMS[dt] = _make_gemm(float32 if dt == np.float32 else float64)
    return kern


@cuda.jit
def col_sum_kernel(g, db, req):
    """db[j] = sum_i g[0, i, j] (FullyConnected's bias gradient)."""
    start = cuda.grid(1)
    m = g.shape[1]
    for j in range(start, db.size, cuda.gridsize(1)):
        acc = 0.0  # float64 accumulator, cast on store
        for i in range(m):
            acc += g[0, i, j]
        _put(db, j, acc, req == REQ_ADD)


def gemm_launcher(dtype, bsz, m, n):
    """A function ``(a, b, out, bias, ta, tb, has_bias, req)`` over a grid
    covering (B, M, N); nothing is launched for an empty output or REQ_NULL."""
    kern = _gemm_kernel(dtype)
    grid = (max(1, math.ceil(n / TILE)), max(1, math.ceil(m / TILE)), max(1, min(bsz, MAX_GRID_Z)))
    empty = bsz * m * n == 0
    cp = _cublas.cupy_for_gemm() if np.dtype(dtype).char in "fd" else None

    def run(a, b, out, bias, ta, tb, has_bias, req):
        if req == REQ_NULL or empty:
            return
        if cp is not None and (a.shape[1] if ta else a.shape[2]) > 0:
            _cublas.gemm(cp, a, b, out, bias, ta, tb, has_bias, req)
            return
        if not has_bias:
            bias = out.reshape(out.size)  # a 1-D view, never read: keeps one signature
        kern[grid, (TILE, TILE)](a, b, out, bias, ta, tb, has_bias, req)
    return run


def _operand_views(bsz, m, k, n, ta, tb):
    return (bsz,) + ((k, m) if ta else (m, k)), (bsz,) + ((n, k) if tb else (k, n))


def _dot_backward_fn(dtype, bsz, m, k, n, ta, tb):
    """dlhs, drhs of out = op_a(a) . op_b(b) (see the CPU kernel for the algebra)."""
    da_rows, da_cols = (k, m) if ta else (m, k)
    db_rows, db_cols = (n, k) if tb else (k, n)
    run_a = gemm_launcher(dtype, bsz, da_rows, da_cols)
    run_b = gemm_launcher(dtype, bsz, db_rows, db_cols)

    def fn(g, a, b, da, db, tmp_a, tmp_b, req_a, req_b):
        if ta:
            run_a(b, g, da, None, tb, 1, 0, req_a)
        else:
            run_a(g, b, da, None, 0, 1 - tb, 0, req_a)
        if tb:
            run_b(g, a, db, None, 1, ta, 0, req_b)
        else:
            run_b(a, g, db, None, 1 - ta, 0, 0, req_b)
    return fn


# ---------------------------------------------------------------- prepare

def prepare_fc(call):
    m, k = fc_dims(call.attrs, call.in_shapes[0])
    n = call.attrs["num_hidden"]
    run = gemm_launcher(call.out_dtypes[0], 1, m, n)
    views = [(1, m, k), (1, n, k)]
    if call.attrs["no_bias"]:
        def fn(x, w, out, tmp, req):
            run(x, w, out, None, 0, 1, 0, req)
        return Launch(fn, (call.req[0],), views + [(1, m, n), None])

    def fn_bias(x, w, b, out, tmp, req):
        run(x, w, out, b, 0, 1, 1, req)
    return Launch(fn_bias, (call.req[0],), views + [(n,), (1, m, n), None])


def prepare_fc_backward(call):
    m, k = fc_dims(call.attrs, call.in_shapes[1])
    n = call.attrs["num_hidden"]
    dt = call.out_dtypes[0]
    run_dx = gemm_launcher(dt, 1, m, k)
    run_dw = gemm_launcher(dt, 1, n, k)
    col_sum = launcher(col_sum_kernel, n)

    def grads(g, x, w, dx, dw, req_x, req_w):
        run_dx(g, w, dx, None, 0, 0, 0, req_x)    # dx = g . w
        run_dw(g, x, dw, None, 1, 0, 0, req_w)    # dw = g^T . x

    views = [(1, m, n), (1, m, k), (1, n, k), (1, m, k), (1, n, k)]
    if call.attrs["no_bias"]:
        def fn(g, x, w, dx, dw, tmp_x, tmp_w, req_x, req_w):
            grads(g, x, w, dx, dw, req_x, req_w)
        return Launch(fn, tuple(call.req[:2]), views + [None, None])

    def fn_bias(g, x, w, dx, dw, db, tmp_x, tmp_w, req_x, req_w, req_b):
        grads(g, x, w, dx, dw, req_x, req_w)
        if req_b != REQ_NULL and n > 0:
            col_sum(g, db, req_b)
    return Launch(fn_bias, tuple(call.req[:3]), views + [(n,), None, None])


def prepare_dot(call):
    ta, tb = int(call.attrs["transpose_a"]), int(call.attrs["transpose_b"])
    m, k, n, _ = dot_dims(call.in_shapes[0], call.in_shapes[1], ta, tb)
    va, vb = _operand_views(1, m, k, n, ta, tb)
    run = gemm_launcher(call.out_dtypes[0], 1, m, n)

    def fn(a, b, out, tmp, req):
        run(a, b, out, None, ta, tb, 0, req)
    return Launch(fn, (call.req[0],), [va, vb, (1, m, n), None])


def prepare_dot_backward(call):
    ta, tb = int(call.attrs["transpose_a"]), int(call.attrs["transpose_b"])
    m, k, n, _ = dot_dims(call.in_shapes[1], call.in_shapes[2], ta, tb)
    va, vb = _operand_views(1, m, k, n, ta, tb)
    fn = _dot_backward_fn(call.out_dtypes[0], 1, m, k, n, ta, tb)
    return Launch(fn, (call.req[0], call.req[1]), [(1, m, n), va, vb, va, vb, None, None])


def prepare_batch_dot(call):
    ta, tb = int(call.attrs["transpose_a"]), int(call.attrs["transpose_b"])
    bsz, m, k, n, _ = batch_dot_dims(call.in_shapes[0], call.in_shapes[1], ta, tb)
    va, vb = _operand_views(bsz, m, k, n, ta, tb)
    run = gemm_launcher(call.out_dtypes[0], bsz, m, n)

    def fn(a, b, out, tmp, req):
        run(a, b, out, None, ta, tb, 0, req)
    return Launch(fn, (call.req[0],), [va, vb, (bsz, m, n), None])


def prepare_batch_dot_backward(call):
    ta, tb = int(call.attrs["transpose_a"]), int(call.attrs["transpose_b"])
    bsz, m, k, n, _ = batch_dot_dims(call.in_shapes[1], call.in_shapes[2], ta, tb)
    va, vb = _operand_views(bsz, m, k, n, ta, tb)
    fn = _dot_backward_fn(call.out_dtypes[0], bsz, m, k, n, ta, tb)
    return Launch(fn, (call.req[0], call.req[1]), [(bsz, m, n), va, vb, va, vb, None, None])


# -- scratch rules: the GEMM kernels accumulate themselves --------------------------

(temp_fc, temp_fc_backward, temp_dot, temp_dot_backward, temp_batch_dot,
 temp_batch_dot_backward) = temp_rules(dot_adds=True)
