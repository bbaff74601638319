"""CUDA kernels of ``nbdl.ops.linalg``: one thread per matrix, each running
the per-matrix routine of ``nbdl.kernels.shared.linalg`` (compiled here as
device functions), with the CPU's views and scalars
(``nbdl.kernels.shared.linalg_plan``).  Straightforward rather than fast:
meant for the small matrices these ops usually see.  Kernels cannot raise,
so ``_linalg_potrf`` records a status per matrix and its launcher raises
``NotPositiveDefinite`` after reading it back."""
import math

from numba import cuda

from ...ops.linalg import NotPositiveDefinite
from ...ops.registry import Launch
from ..shared import linalg as _shared
from ..shared.linalg_plan import KERNEL_NAMES, all_null, prepares
from ._launch import grid1d

_r = _shared.build(cuda.jit(device=True))


@cuda.jit
def gemm_kernel(a, b, c, out, alpha, beta, ta, tb):
    i = cuda.grid(1)
    if i < out.shape[0] * out.shape[2]:
        p = i // out.shape[2]
        q = i % out.shape[2]
        _r.gemm(a[p, :, q, :], b[p, :, q, :], c[p, :, q, :], out[p, :, q, :],
              alpha, beta, ta, tb)


@cuda.jit
def gemm2_kernel(a, b, out, alpha, beta, ta, tb):
    i = cuda.grid(1)
    if i < out.shape[0] * out.shape[2]:
        p = i // out.shape[2]
        q = i % out.shape[2]
        _r.gemm(a[p, :, q, :], b[p, :, q, :], out[p, :, q, :], out[p, :, q, :],
              alpha, beta, ta, tb)


@cuda.jit
def trmm_kernel(a, b, out, alpha, right, lower, tr):
    i = cuda.grid(1)
    if i < out.shape[0]:
        _r.trmm(a[i], b[i], out[i], alpha, right, lower, tr)


@cuda.jit
def trsm_kernel(a, b, out, alpha, right, lower, tr):
    i = cuda.grid(1)
    if i < out.shape[0]:
        _r.trsm(a[i], b[i], out[i], alpha, right, lower, tr)


@cuda.jit
def syrk_kernel(a, out, alpha, zero, tr):
    i = cuda.grid(1)
    if i < out.shape[0]:
        _r.gemm(a[i], a[i], out[i], out[i], alpha, zero, tr, 1 - tr)


@cuda.jit
def potrf_kernel(a, out, status, lower):
    i = cuda.grid(1)
    if i < a.shape[0]:
        status[i] = _r.potrf(a[i], out[i], lower)


@cuda.jit
def potri_kernel(a, out, tmp, lower):
    i = cuda.grid(1)
    if i < a.shape[0]:
        _r.potri(a[i], out[i], tmp[i], lower)


@cuda.jit
def inverse_kernel(a, out, w, piv):
    i = cuda.grid(1)
    if i < a.shape[0]:
        _r.copy(a[i], w[i])
        _r.lu(w[i], piv[i])
        _r.lu_inverse(w[i], piv[i], out[i])


@cuda.jit
def det_kernel(a, out, w, piv):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = _r.det(a[i], w[i], piv[i])


@cuda.jit
def slogdet_kernel(a, sign, logdet, w, piv, want_sign, want_log):
    i = cuda.grid(1)
    if i < a.shape[0]:
        s = _r.slogdet_sign(a[i], w[i], piv[i])
        if want_sign:
            sign[i] = s
        if want_log:
            logdet[i] = _r.logabsdiag(w[i])


@cuda.jit
def sumlogdiag_kernel(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        out[i] = _r.sumlogdiag(a[i])


@cuda.jit
def gelqf_kernel(a, q, ll, w, tau, want_q, want_l):
    i = cuda.grid(1)
    if i < a.shape[0]:
        _r.gelqf(a[i], w[i], tau[i], q[i], ll[i], want_q, want_l)


@cuda.jit
def syevd_kernel(a, u, ev, w, evt, want_u, want_l, eps, sweeps):
    i = cuda.grid(1)
    if i < a.shape[0]:
        _r.syevd(a[i], w[i], u[i], evt[i], want_u, eps, sweeps)
        if want_l:
            for j in range(ev.shape[1]):
                ev[i, j] = evt[i, j]


@cuda.jit
def potrf_backward_kernel(dl, ll, out, lower):
    i = cuda.grid(1)
    if i < out.shape[0]:
        _r.potrf_backward(dl[i], ll[i], out[i], lower)


@cuda.jit
def potri_backward_kernel(dout, a, o, res, tmp, lower):
    i = cuda.grid(1)
    if i < res.shape[0]:
        _r.potri_backward(dout[i], a[i], o[i], res[i], tmp[i], lower)


@cuda.jit
def gelqf_backward_kernel(dq, dl, q, ll, out, tmpm):
    i = cuda.grid(1)
    if i < out.shape[0]:
        _r.gelqf_backward(dq[i], dl[i], q[i], ll[i], out[i], tmpm[i])


@cuda.jit
def syevd_backward_kernel(du, dl, u, ev, out, tx, ty, tiny):
    i = cuda.grid(1)
    if i < out.shape[0]:
        _r.syevd_backward(du[i], dl[i], u[i], ev[i], out[i], tx[i], ty[i], tiny)


@cuda.jit
def sumlogdiag_backward_kernel(g, a, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        for r in range(out.shape[1]):
            for c in range(out.shape[2]):
                out[i, r, c] = g[i] / a[i, r, c] if r == c else out.dtype.type(0)


@cuda.jit(device=True)
def _zero(x):
    for r in range(x.shape[0]):
        for c in range(x.shape[1]):
            x[r, c] = x.dtype.type(0)


@cuda.jit
def det_backward_kernel(g, d, a, out, w, piv):
    i = cuda.grid(1)
    if i < out.shape[0]:
        if d[i] == 0:
            _zero(out[i])
        else:
            _r.inverse_t(a[i], w[i], piv[i], out[i], g[i] * d[i])


@cuda.jit
def slogdet_backward_kernel(g, logdet, a, out, w, piv):
    i = cuda.grid(1)
    if i < out.shape[0]:
        if logdet[i] == -math.inf:
            _zero(out[i])
        else:
            _r.inverse_t(a[i], w[i], piv[i], out[i], g[i])


@cuda.jit
def extractdiag_kernel(a, out, k):
    i = cuda.grid(1)
    if i < out.shape[0]:
        _r.extractdiag(a[i], out[i], k)


@cuda.jit
def makediag_kernel(a, out, k):
    i = cuda.grid(1)
    if i < out.shape[0]:
        _r.makediag(a[i], out[i], k)


@cuda.jit
def extracttrian_kernel(a, out, k, lower):
    i = cuda.grid(1)
    if i < out.shape[0]:
        _r.trian(a[i], out[i], k, lower, 1)


@cuda.jit
def maketrian_kernel(a, out, k, lower):
    i = cuda.grid(1)
    if i < out.shape[0]:
        _r.trian(out[i], a[i], k, lower, 0)


@cuda.jit
def khatri_rao2_kernel(a, b, out):
    """out[i * Mb + j, k] = a[i, k] * b[j, k], one thread per output element."""
    t = cuda.grid(1)
    mb = b.shape[0]
    n = out.shape[1]
    if t < out.shape[0] * n:
        r = t // n
        k = t % n
        out[r, k] = a[r // mb, k] * b[r % mb, k]


@cuda.jit
def copy2_kernel(a, out):
    t = cuda.grid(1)
    n = a.shape[1]
    if t < a.shape[0] * n:
        out[t // n, t % n] = a[t // n, t % n]


_KERNELS = {name: globals()[name + "_kernel"] for name in KERNEL_NAMES}


def _threads(name, views):
    """One thread per matrix: the batch of the output view (P * Q for gemm)."""
    n_in = {"gemm": 3, "gemm2": 2}.get(name)
    if n_in is not None:
        v = views[n_in]
        return v[0] * v[2]
    return max(v[0] for v in views)


def _noop(*args):
    return


def _launch(name, call, views, scalars):
    if all_null(call):
        return Launch(_noop, scalars, views)
    kernel = _KERNELS[name]
    blocks, threads = grid1d(_threads(name, views), 32)

    def fn(*args):
        kernel[blocks, threads](*args)
        if name == "potrf" and (args[2].copy_to_host() == 0).any():
            raise NotPositiveDefinite("_linalg_potrf: argument 'A' holds a matrix that is "
                                      "not positive definite (a pivot of its Cholesky "
                                      "factorisation is <= 0)")
    return Launch(fn, scalars, views)


# prepare_<name> for each routine of KERNEL_NAMES (the op table's names)
globals().update(prepares(_launch))


def prepare_khatri_rao(call):
    """Chains the two-matrix product through the partial-product temps."""
    n = len(call.in_shapes)
    rows, cols = call.out_shapes[0]

    def launch(*arrays):
        ins, out, temps = arrays[:n], arrays[n], arrays[n + 1:]
        if n == 1:
            copy2_kernel[grid1d(rows * cols)](ins[0], out)
            return
        acc = ins[0]
        for i in range(1, n):
            dst = temps[i - 1] if i < n - 1 else out
            khatri_rao2_kernel[grid1d(dst.shape[0] * cols)](acc, ins[i], dst)
            acc = dst
    return Launch(launch, (), None)
