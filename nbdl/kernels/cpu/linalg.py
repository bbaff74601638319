"""CPU kernels of ``nbdl.ops.linalg``: one ``@njit`` loop over the batch per
op, calling the per-matrix routines of ``nbdl.kernels.shared.linalg``
(compiled here with ``njit(cache=True, error_model="numpy")``, so a zero
pivot gives inf/NaN instead of raising).  Views and scalars come from
``nbdl.kernels.shared.linalg_plan``.  ``_linalg_potrf`` raises
``NotPositiveDefinite`` from the kernel."""
import numpy as np
from ..shared.jit import njit

from ...ops.linalg import NotPositiveDefinite
from ...ops.registry import Launch
from ..shared import linalg as _shared
from ..shared.linalg_plan import KERNEL_NAMES, all_null, prepares

_jit = njit(cache=True, error_model="numpy")
_r = _shared.build(_jit)


@_jit
def gemm_kernel(a, b, c, out, alpha, beta, ta, tb):
    for p in range(out.shape[0]):
        for q in range(out.shape[2]):
            _r.gemm(a[p, :, q, :], b[p, :, q, :], c[p, :, q, :], out[p, :, q, :],
                  alpha, beta, ta, tb)


@_jit
def gemm2_kernel(a, b, out, alpha, beta, ta, tb):
    for p in range(out.shape[0]):
        for q in range(out.shape[2]):
            o = out[p, :, q, :]
            _r.gemm(a[p, :, q, :], b[p, :, q, :], o, o, alpha, beta, ta, tb)


@_jit
def _dot(a, b, out, ta, tb):
    """out = op(a) . op(b) through BLAS (numba passes a transposed view as a
    transpose flag)."""
    if ta:
        if tb:
            np.dot(a.T, b.T, out)
        else:
            np.dot(a.T, b, out)
    elif tb:
        np.dot(a, b.T, out)
    else:
        np.dot(a, b, out)


@_jit
def gemm_blas_kernel(a, b, c, out, alpha, beta, ta, tb):
    """gemm on ``(B, rows, cols)`` views (row axis -2) through BLAS."""
    for p in range(out.shape[0]):
        o = out[p]
        _dot(a[p], b[p], o, ta, tb)
        for i in range(o.shape[0]):
            for j in range(o.shape[1]):
                if beta == 0:
                    o[i, j] = alpha * o[i, j]
                else:
                    o[i, j] = alpha * o[i, j] + beta * c[p, i, j]


@_jit
def gemm2_blas_kernel(a, b, out, alpha, beta, ta, tb):
    """gemm2 on ``(B, rows, cols)`` views through BLAS."""
    for p in range(out.shape[0]):
        o = out[p]
        _dot(a[p], b[p], o, ta, tb)
        if alpha != 1:
            for i in range(o.shape[0]):
                for j in range(o.shape[1]):
                    o[i, j] = alpha * o[i, j]


@_jit
def syrk_blas_kernel(a, out, alpha, zero, tr):
    """syrk through BLAS; the lower triangle is mirrored so that the result
    is exactly symmetric (MXNet's syrk computes one triangle)."""
    for p in range(out.shape[0]):
        o = out[p]
        _dot(a[p], a[p], o, tr, 1 - tr)
        for i in range(o.shape[0]):
            for j in range(i + 1):
                v = alpha * o[i, j]
                o[i, j] = v
                o[j, i] = v


@_jit
def trmm_kernel(a, b, out, alpha, right, lower, tr):
    for i in range(out.shape[0]):
        _r.trmm(a[i], b[i], out[i], alpha, right, lower, tr)


@_jit
def trsm_kernel(a, b, out, alpha, right, lower, tr):
    for i in range(out.shape[0]):
        _r.trsm(a[i], b[i], out[i], alpha, right, lower, tr)


@_jit
def syrk_kernel(a, out, alpha, zero, tr):
    for i in range(out.shape[0]):
        _r.gemm(a[i], a[i], out[i], out[i], alpha, zero, tr, 1 - tr)


@_jit
def potrf_kernel(a, out, status, lower):
    for i in range(a.shape[0]):
        status[i] = _r.potrf(a[i], out[i], lower)
        if status[i] == 0:
            raise NotPositiveDefinite("_linalg_potrf: argument 'A' holds a matrix that is not "
                                      "positive definite (a pivot of its Cholesky "
                                      "factorisation is <= 0)")


@_jit
def potri_kernel(a, out, tmp, lower):
    for i in range(a.shape[0]):
        _r.potri(a[i], out[i], tmp[i], lower)


@_jit
def inverse_kernel(a, out, w, piv):
    for i in range(a.shape[0]):
        _r.copy(a[i], w[i])
        _r.lu(w[i], piv[i])
        _r.lu_inverse(w[i], piv[i], out[i])


@_jit
def det_kernel(a, out, w, piv):
    for i in range(a.shape[0]):
        out[i] = _r.det(a[i], w[i], piv[i])


@_jit
def slogdet_kernel(a, sign, logdet, w, piv, want_sign, want_log):
    for i in range(a.shape[0]):
        s = _r.slogdet_sign(a[i], w[i], piv[i])
        if want_sign:
            sign[i] = s
        if want_log:
            logdet[i] = _r.logabsdiag(w[i])


@_jit
def sumlogdiag_kernel(a, out):
    for i in range(a.shape[0]):
        out[i] = _r.sumlogdiag(a[i])


@_jit
def gelqf_kernel(a, q, ll, w, tau, want_q, want_l):
    for i in range(a.shape[0]):
        _r.gelqf(a[i], w[i], tau[i], q[i], ll[i], want_q, want_l)


@_jit
def syevd_kernel(a, u, ev, w, evt, want_u, want_l, eps, sweeps):
    for i in range(a.shape[0]):
        _r.syevd(a[i], w[i], u[i], evt[i], want_u, eps, sweeps)
        if want_l:
            for j in range(ev.shape[1]):
                ev[i, j] = evt[i, j]


@_jit
def potrf_backward_kernel(dl, ll, out, lower):
    for i in range(out.shape[0]):
        _r.potrf_backward(dl[i], ll[i], out[i], lower)


@_jit
def potri_backward_kernel(dout, a, o, res, tmp, lower):
    for i in range(res.shape[0]):
        _r.potri_backward(dout[i], a[i], o[i], res[i], tmp[i], lower)


@_jit
def gelqf_backward_kernel(dq, dl, q, ll, out, tmpm):
    for i in range(out.shape[0]):
        _r.gelqf_backward(dq[i], dl[i], q[i], ll[i], out[i], tmpm[i])


@_jit
def syevd_backward_kernel(du, dl, u, ev, out, tx, ty, tiny):
    for i in range(out.shape[0]):
        _r.syevd_backward(du[i], dl[i], u[i], ev[i], out[i], tx[i], ty[i], tiny)


@_jit
def sumlogdiag_backward_kernel(g, a, out):
    for i in range(out.shape[0]):
        for r in range(out.shape[1]):
            for c in range(out.shape[2]):
                out[i, r, c] = g[i] / a[i, r, c] if r == c else out.dtype.type(0)


@_jit
def det_backward_kernel(g, d, a, out, w, piv):
    for i in range(out.shape[0]):
        if d[i] == 0:
            out[i, :, :] = 0
        else:
            _r.inverse_t(a[i], w[i], piv[i], out[i], g[i] * d[i])


@_jit
def slogdet_backward_kernel(g, logdet, a, out, w, piv):
    for i in range(out.shape[0]):
        if logdet[i] == -np.inf:
            out[i, :, :] = 0
        else:
            _r.inverse_t(a[i], w[i], piv[i], out[i], g[i])


@_jit
def extractdiag_kernel(a, out, k):
    for i in range(out.shape[0]):
        _r.extractdiag(a[i], out[i], k)


@_jit
def makediag_kernel(a, out, k):
    for i in range(out.shape[0]):
        _r.makediag(a[i], out[i], k)


@_jit
def extracttrian_kernel(a, out, k, lower):
    for i in range(out.shape[0]):
        _r.trian(a[i], out[i], k, lower, 1)


@_jit
def maketrian_kernel(a, out, k, lower):
    for i in range(out.shape[0]):
        _r.trian(out[i], a[i], k, lower, 0)


@_jit
def khatri_rao2_kernel(a, b, out):
    """out[i * Mb + j, k] = a[i, k] * b[j, k]."""
    mb = b.shape[0]
    for i in range(a.shape[0]):
        for j in range(mb):
            for k in range(out.shape[1]):
                out[i * mb + j, k] = a[i, k] * b[j, k]


@_jit
def copy2_kernel(a, out):
    for i in range(a.shape[0]):
        for k in range(a.shape[1]):
            out[i, k] = a[i, k]


@njit(cache=True)
def noop():
    """A kernel that does nothing (every output of the call has req null):
    it takes no arrays (``Launch.args=()``), so one compilation serves all."""
    return


_KERNELS = {name: globals()[name + "_kernel"] for name in KERNEL_NAMES}


_BLAS = {"gemm": gemm_blas_kernel, "gemm2": gemm2_blas_kernel, "syrk": syrk_blas_kernel}


def _blas_views(name, views):
    """The 3-D views of the BLAS variant, or None when it does not apply
    (rows not on axis -2, or an empty matrix: numba's np.dot wants both)."""
    if name == "syrk":
        return views if all(min(v) > 0 for v in views) else None
    if any(v[2] != 1 or min(v) == 0 for v in views):
        return None
    return [(v[0], v[1], v[3]) for v in views]


def _launch(name, call, views, scalars):
    if all_null(call):
        return Launch(noop, (), views, args=())
    if name in _BLAS:
        blas = _blas_views(name, views)
        if blas is not None:
            return Launch(_BLAS[name], scalars, blas)
    return Launch(_KERNELS[name], scalars, views)


# prepare_<name> for each routine of KERNEL_NAMES (the op table's names)
globals().update(prepares(_launch))


def prepare_khatri_rao(call):
    """Chains the two-matrix product through the partial-product temps (a
    Python launcher for three or more inputs)."""
    n = len(call.in_shapes)
    if n == 1:
        return Launch(copy2_kernel, (), None)
    if n == 2:
        return Launch(khatri_rao2_kernel, (), None)

    def launch(*arrays):
        ins, out, temps = arrays[:n], arrays[n], arrays[n + 1:]
        acc = ins[0]
        for i in range(1, n):
            dst = temps[i - 1] if i < n - 1 else out
            khatri_rao2_kernel(acc, ins[i], dst)
            acc = dst
    return Launch(launch, (), None)
