"""CPU kernels for matrix products (FullyConnected, dot, batch_dot).

FullyConnected calls BLAS's gemm through ``_gemm.gemm_c`` (C-contiguous
operands, transposes as run-time flags, ``beta`` of its own): ``REQ_ADD`` accumulates in the GEMM itself, and one
compiled kernel per direction serves both bias settings (an empty bias
stands in when there is none, ``Launch.args``).  dot and batch_dot go to BLAS
through ``np.dot(a, b, out)`` inside njit; numba hands a transposed
C-contiguous operand (``b.T``, an F-contiguous view) to gemm with the
transpose flag instead of copying it, so all four ``transpose_a``/
``transpose_b`` combinations run without scratch.  ``np.dot`` overwrites
``out``, so their ``REQ_ADD`` goes through a planned temp (see
``nbdl.ops.matrix._add_temp``) and is added afterwards.

Each op has a split twin (``*_split``) for products large enough for
threads: they run over Numba's threads (parts of the result,
``_gemm.gemm_part``; for ``batch_dot`` (item, part) units), BLAS held to
one thread inside, so one thread pool does all of nbdl's work and BLAS's
own threads never wait for cores Numba's hold (``_blas_threads.one_pool``,
``NBDL_THREAD_POOL``); the split kernels accumulate ``REQ_ADD`` in the GEMM
itself.  The plain
kernels hold BLAS to one thread for small products (``hold``) and leave
large ones to BLAS's threads under ``NBDL_THREAD_POOL=blas``.
"""
import numpy as np
from numba import prange

from ..shared.jit import njit

from ...ops.matrix import batch_dot_dims, dot_dims, fc_dims
from ...ops.registry import REQ_ADD, REQ_NULL, Launch
from ..shared.matrix import temp_rules
from ._blas_threads import hold_blas, hold_for, one_pool, release_blas, serial_blas
from ._gemm import gemm_c, gemm_part
from ._parallel import chunk, threads, twins as _twins


@njit(cache=True)
def gemm(a, b, out, ta, tb):
    """out = op(a) . op(b) with op = transpose when the flag (0/1) is set."""
    if ta:
        if tb:
            np.dot(a.T, b.T, out)
        else:
            np.dot(a.T, b, out)
    else:
        if tb:
            np.dot(a, b.T, out)
        else:
            np.dot(a, b, out)


@njit(cache=True)
def gemm_req(a, b, out, tmp, ta, tb, req):
    """gemm honouring req: NULL skips, ADD accumulates through ``tmp``."""
    if req == REQ_NULL:
        return
    if req == REQ_ADD:
        gemm(a, b, tmp, ta, tb)
        out += tmp
    else:
        gemm(a, b, out, ta, tb)


@njit(cache=True)
def _add_bias_rows(dst, bias):
    m, n = dst.shape
    for i in range(m):
        for j in range(n):
            dst[i, j] += bias[j]


@njit(cache=True)
def fc_forward(x, w, b, out, tmp, has_bias, req, hold, nt):
    """out (M, N) (=, or += for REQ_ADD) x (M, K) . w (N, K)^T + b (N,); BLAS
    accumulates itself (beta = 1), so ``tmp`` is empty, and without a bias
    ``b`` is an empty stand-in (Launch.args) never read; ``nt``: the split
    variant's thread count (unread here)."""
    if req == REQ_NULL:
        return
    prev = hold_blas(hold)
    gemm_c(x, w, out, 0, 1, 1.0, 1.0 if req == REQ_ADD else 0.0)
    release_blas(prev)
    if has_bias:
        _add_bias_rows(out, b)


@njit(cache=True)
def _bias_grad(g, db, req):
    """db (N,) = column sums of g (M, N), accumulated row by row so the inner
    loop runs over contiguous memory."""
    if req == REQ_NULL:
        return
    if req != REQ_ADD:
        db[:] = 0
    m, n = g.shape
    for i in range(m):
        for j in range(n):
            db[j] += g[i, j]


@njit(cache=True)
def fc_backward(g, x, w, dx, dw, db, tmp_x, tmp_w, has_bias, req_x, req_w, req_b, hold, nt):
    """dx = g . w, dw = g^T . x, db = sum(g, axis=0) (``db`` empty without a
    bias; ``nt`` as for ``fc_forward``)."""
    prev = hold_blas(hold)
    if req_x != REQ_NULL:
        gemm_c(g, w, dx, 0, 0, 1.0, 1.0 if req_x == REQ_ADD else 0.0)
    if req_w != REQ_NULL:
        gemm_c(g, x, dw, 1, 0, 1.0, 1.0 if req_w == REQ_ADD else 0.0)
    release_blas(prev)
    if has_bias:
        _bias_grad(g, db, req_b)


@njit(cache=True, parallel=True)
def fc_forward_split(x, w, b, out, tmp, has_bias, req, hold, nt):
    """``fc_forward`` with the product split over Numba's threads
    (``_gemm.gemm_part``: along the result's longer side; BLAS held to one
    thread inside): what runs when nbdl runs one thread pool
    (``_blas_threads.one_pool``) or the BLAS itself is serial; ``nt`` parts,
    one a thread (from prepare: Numba's thread count read inside a kernel
    would keep it out of the on-disk cache)."""
    if req == REQ_NULL:
        return
    saved = hold_blas(1)
    beta = 1.0 if req == REQ_ADD else 0.0
    for t in prange(nt):
        gemm_part(x, w.T, out, 1.0, beta, t, nt)
    release_blas(saved)
    if has_bias:
        _add_bias_rows(out, b)


@njit(cache=True, parallel=True)
def fc_backward_split(g, x, w, dx, dw, db, tmp_x, tmp_w, has_bias, req_x, req_w, req_b, hold,
                      nt):
    """``fc_backward`` with both products split over Numba's threads (BLAS
    held to one thread inside)."""
    saved = hold_blas(1)
    for t in prange(nt):
        if req_x != REQ_NULL:
            gemm_part(g, w, dx, 1.0, 1.0 if req_x == REQ_ADD else 0.0, t, nt)
        if req_w != REQ_NULL:
            gemm_part(g.T, x, dw, 1.0, 1.0 if req_w == REQ_ADD else 0.0, t, nt)
    release_blas(saved)
    if has_bias:
        _bias_grad(g, db, req_b)


@njit(cache=True)
def dot_forward(a, b, out, tmp, ta, tb, req, hold, nt):
    """out (=|+=) op(a) . op(b) (``nt``: the split variant's thread count,
    unread here)."""
    prev = hold_blas(hold)
    gemm_req(a, b, out, tmp, ta, tb, req)
    release_blas(prev)


@njit(cache=True)
def dot_backward(g, a, b, da, db, tmp_a, tmp_b, ta, tb, req_a, req_b, hold, nt):
    prev = hold_blas(hold)
    _dot_backward(g, a, b, da, db, tmp_a, tmp_b, ta, tb, req_a, req_b)
    release_blas(prev)


@njit(cache=True)
def _dot_backward(g, a, b, da, db, tmp_a, tmp_b, ta, tb, req_a, req_b):
    """Gradients of out = op_a(a) . op_b(b) for out_grad g:
    d op_a(a) = g . op_b(b)^T and d op_b(b) = op_a(a)^T . g, transposed back
    when the operand was used transposed."""
    if ta:
        gemm_req(b, g, da, tmp_a, tb, 1, req_a)           # op_b(b) . g^T
    else:
        gemm_req(g, b, da, tmp_a, 0, 1 - tb, req_a)      # g . op_b(b)^T
    if tb:
        gemm_req(g, a, db, tmp_b, 1, ta, req_b)           # g^T . op_a(a)
    else:
        gemm_req(a, g, db, tmp_b, 1 - ta, 0, req_b)      # op_a(a)^T . g


@njit(cache=True)
def batch_dot_forward(a, b, out, tmp, ta, tb, req, hold, nt):
    prev = hold_blas(hold)
    for i in range(out.shape[0]):
        gemm_req(a[i], b[i], out[i], tmp, ta, tb, req)
    release_blas(prev)


@njit(cache=True)
def batch_dot_backward(g, a, b, da, db, tmp_a, tmp_b, ta, tb, req_a, req_b, hold, nt):
    prev = hold_blas(hold)
    for i in range(g.shape[0]):
        _dot_backward(g[i], a[i], b[i], da[i], db[i], tmp_a, tmp_b, ta, tb, req_a, req_b)
    release_blas(prev)


# -- the split variants: products over Numba's threads, BLAS held to one ----------------

@njit(cache=True)
def _part(x, y, out, tx, ty, req, t, nt):
    """Part t of nt (``_gemm.gemm_part``) of out (=, or += for REQ_ADD)
    op(x) . op(y), op transposed where the flag is set: one thread's share
    of a split product (views with a leading dimension, no copies)."""
    if req == REQ_NULL:
        return
    beta = 1.0 if req == REQ_ADD else 0.0
    if tx:
        if ty:
            gemm_part(x.T, y.T, out, 1.0, beta, t, nt)
        else:
            gemm_part(x.T, y, out, 1.0, beta, t, nt)
    elif ty:
        gemm_part(x, y.T, out, 1.0, beta, t, nt)
    else:
        gemm_part(x, y, out, 1.0, beta, t, nt)


@njit(cache=True)
def _dot_backward_part(g, a, b, da, db, ta, tb, req_a, req_b, t, nt):
    """Part t of nt of both of ``_dot_backward``'s products."""
    if ta:
        _part(b, g, da, tb, 1, req_a, t, nt)
    else:
        _part(g, b, da, 0, 1 - tb, req_a, t, nt)
    if tb:
        _part(g, a, db, 1, ta, req_b, t, nt)
    else:
        _part(a, g, db, 1 - ta, 0, req_b, t, nt)


@njit(cache=True, parallel=True)
def dot_forward_split(a, b, out, tmp, ta, tb, req, hold, nt):
    """``dot_forward`` split over ``nt`` of Numba's threads (``_part``), BLAS
    held to one thread (``REQ_ADD`` accumulates in the GEMM: ``tmp``
    unread)."""
    saved = hold_blas(1)
    for t in prange(nt):
        _part(a, b, out, ta, tb, req, t, nt)
    release_blas(saved)


@njit(cache=True, parallel=True)
def dot_backward_split(g, a, b, da, db, tmp_a, tmp_b, ta, tb, req_a, req_b, hold, nt):
    saved = hold_blas(1)
    for t in prange(nt):
        _dot_backward_part(g, a, b, da, db, ta, tb, req_a, req_b, t, nt)
    release_blas(saved)


@njit(cache=True, inline="always")
def _units(items, nt):
    """Parts an item of a batch is cut into so that every thread has work."""
    return max(1, -(-nt // max(items, 1)))


@njit(cache=True, parallel=True)
def batch_dot_forward_split(a, b, out, tmp, ta, tb, req, hold, nt):
    """``batch_dot_forward`` over Numba's threads: (item, part) units in
    ``nt`` contiguous runs, each item cut into enough parts for every thread
    to have one; BLAS held to one thread."""
    saved = hold_blas(1)
    per = _units(out.shape[0], nt)
    for t in prange(nt):
        u0, u1 = chunk(out.shape[0] * per, t, nt)
        for u in range(u0, u1):
            i = u // per
            _part(a[i], b[i], out[i], ta, tb, req, u - i * per, per)
    release_blas(saved)


@njit(cache=True, parallel=True)
def batch_dot_backward_split(g, a, b, da, db, tmp_a, tmp_b, ta, tb, req_a, req_b, hold, nt):
    saved = hold_blas(1)
    per = _units(g.shape[0], nt)
    for t in prange(nt):
        u0, u1 = chunk(g.shape[0] * per, t, nt)
        for u in range(u0, u1):
            i = u // per
            _dot_backward_part(g[i], a[i], b[i], da[i], db[i], ta, tb, req_a, req_b,
                               u - i * per, per)
    release_blas(saved)


# ---------------------------------------------------------------- prepare

def _split(flops):
    """``(hold, split)`` for a product of ``flops``: whether BLAS is held to
    one thread, and whether the product is split over Numba's threads
    instead of getting BLAS's: with threads to split over, a product large
    enough for threads (``NBDL_BLAS_SERIAL_MAX_FLOPS``) splits when nbdl
    runs one thread pool (``NBDL_THREAD_POOL``, ``_blas_threads.one_pool``)
    or the BLAS itself is serial (the user set ``OPENBLAS_NUM_THREADS=1``)."""
    hold = hold_for(flops)
    return hold, bool(not hold and threads() > 1 and (one_pool() or serial_blas()))


def prepare_fc(call):
    m, k = fc_dims(call.attrs, call.in_shapes[0])
    n = call.attrs["num_hidden"]
    views = [(m, k), (n, k)]
    hold, split = _split(2 * m * k * n)
    fn = fc_forward_split if split else fc_forward
    if call.attrs["no_bias"]:
        # arrays: x, w, out, tmp; the kernel takes (x, w, b, out, tmp)
        return Launch(fn, (0, call.req[0], hold, threads()), views + [(m, n), None],
                      args=(0, 1, (1, (0,)), 2, 3))
    return Launch(fn, (1, call.req[0], hold, threads()), views + [(n,), (m, n), None])


def prepare_fc_backward(call):
    m, k = fc_dims(call.attrs, call.in_shapes[1])
    n = call.attrs["num_hidden"]
    views = [(m, n), (m, k), (n, k), (m, k), (n, k)]
    hold, split = _split(2 * m * k * n)
    fn = fc_backward_split if split else fc_backward
    if call.attrs["no_bias"]:
        # arrays: g, x, w, dx, dw, tmp_x, tmp_w; the kernel takes a db between dw and tmp_x
        return Launch(fn, (0,) + tuple(call.req[:2]) + (REQ_NULL, hold, threads()),
                      views + [None, None], args=(0, 1, 2, 3, 4, (2, (0,)), 5, 6))
    return Launch(fn, (1,) + tuple(call.req[:3]) + (hold, threads()),
                  views + [(n,), None, None])


# Serial twins: what an executor runs until the split variants are compiled.
_twins((fc_forward_split, fc_forward), (fc_backward_split, fc_backward))


def _operand_views(m, k, n, ta, tb):
    return ((k, m) if ta else (m, k)), ((n, k) if tb else (k, n))


def prepare_dot(call):
    ta, tb = call.attrs["transpose_a"], call.attrs["transpose_b"]
    m, k, n, _ = dot_dims(call.in_shapes[0], call.in_shapes[1], ta, tb)
    va, vb = _operand_views(m, k, n, ta, tb)
    hold, split = _split(2 * m * k * n)
    return Launch(dot_forward_split if split else dot_forward,
                  (int(ta), int(tb), call.req[0], hold, threads()), [va, vb, (m, n), None])


def prepare_dot_backward(call):
    ta, tb = call.attrs["transpose_a"], call.attrs["transpose_b"]
    m, k, n, _ = dot_dims(call.in_shapes[1], call.in_shapes[2], ta, tb)
    va, vb = _operand_views(m, k, n, ta, tb)
    hold, split = _split(2 * m * k * n)
    return Launch(dot_backward_split if split else dot_backward,
                  (int(ta), int(tb), call.req[0], call.req[1], hold, threads()),
                  [(m, n), va, vb, va, vb, None, None])


def _batch_split(bsz, m, k, n):
    """batch_dot's ``(hold, split)``: BLAS held for a small item's product;
    split over Numba's threads by the whole batch's FLOPs (many small items
    split as well as one large one)."""
    hold = hold_for(2 * m * k * n)
    return hold, _split(2 * bsz * m * k * n)[1]


def prepare_batch_dot(call):
    ta, tb = call.attrs["transpose_a"], call.attrs["transpose_b"]
    bsz, m, k, n, _ = batch_dot_dims(call.in_shapes[0], call.in_shapes[1], ta, tb)
    va, vb = _operand_views(m, k, n, ta, tb)
    hold, split = _batch_split(bsz, m, k, n)
    return Launch(batch_dot_forward_split if split else batch_dot_forward,
                  (int(ta), int(tb), call.req[0], hold, threads()),
                  [(bsz,) + va, (bsz,) + vb, (bsz, m, n), None])


def prepare_batch_dot_backward(call):
    ta, tb = call.attrs["transpose_a"], call.attrs["transpose_b"]
    bsz, m, k, n, _ = batch_dot_dims(call.in_shapes[1], call.in_shapes[2], ta, tb)
    va, vb = ((bsz,) + v for v in _operand_views(m, k, n, ta, tb))
    hold, split = _batch_split(bsz, m, k, n)
    return Launch(batch_dot_backward_split if split else batch_dot_backward,
                  (int(ta), int(tb), call.req[0], call.req[1], hold, threads()),
                  [(bsz, m, n), va, vb, va, vb, None, None])


_twins((dot_forward_split, dot_forward), (dot_backward_split, dot_backward),
       (batch_dot_forward_split, batch_dot_forward),
       (batch_dot_backward_split, batch_dot_backward))


# -- scratch rules: np.dot cannot accumulate, so ADD outputs get a buffer -----------

(temp_fc, temp_fc_backward, temp_dot, temp_dot_backward, temp_batch_dot,
 temp_batch_dot_backward) = temp_rules(dot_adds=False)
