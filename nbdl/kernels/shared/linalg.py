"""Per-matrix linear algebra shared by the CPU and CUDA kernels of
``nbdl.ops.linalg``: BLAS-3 style products (gemm, trmm, trsm), Cholesky,
LU with partial pivoting, the cyclic Jacobi eigensolver, Householder LQ and
the backward compositions of MXNet 1.9.1's ``la_op-inl.h``.

Every function works on one matrix (2-D slices of the batched views), in
the arrays' own dtype, never allocates (scratch comes in as arguments) and
is plain Python, so one source serves both devices: ``build(jit)`` compiles
them with the decorator a device module gives (``njit(cache=True,
error_model="numpy")`` on the CPU, ``cuda.jit(device=True)`` on CUDA) and
returns them as attributes.  The functions are closures so that each calls
the compiled versions of the others.  (Pure Python; this module imports
neither device.)

Triangles follow BLAS: ``lower`` selects the triangle of ``a`` that is read
(diagonal included); ``transpose`` uses ``op(T) = T^T``; ``rightside``
multiplies / solves from the right.
"""
import math
import types


def _routines(**fns):
    """A module object holding ``fns``: compiled code calls ``r.gemm(...)``
    on a module global ``r`` (Numba resolves a module's attributes at compile
    time; it cannot type other namespaces)."""
    m = types.ModuleType("nbdl.kernels.shared.linalg.routines")
    for name, fn in fns.items():
        setattr(m, name, fn)
    return m


def build(jit):  # noqa: C901  (one closure per routine)
    """Compile the per-matrix routines with ``jit``.

    Parameters
    ----------
    jit : callable
        A decorator (``njit(...)`` or ``cuda.jit(device=True)``) applied to
        every routine.

    Returns
    -------
    module
        The compiled routines by name (``gemm``, ``trmm``, ``trsm``,
        ``potrf``, ``potri``, ``lu``, ``lu_inverse``, ``det``, ``slogdet``,
        ``syevd``, ``gelqf`` and the backward compositions).
    """
    @jit
    def tri_el(a, i, k, lower, transpose):
        """Element (i, k) of op(T), T the ``lower``/upper triangle of a."""
        if transpose:
            t = i
            i = k
            k = t
        if (lower and k <= i) or ((not lower) and k >= i):
            return a[i, k]
        return a.dtype.type(0)

    @jit
    def gemm(a, b, c, out, alpha, beta, ta, tb):
        """out = alpha * op(a) op(b) + beta * c; c is not read when beta is 0
        and may be out itself."""
        kk = a.shape[0] if ta else a.shape[1]
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                acc = out.dtype.type(0)
                for k in range(kk):
                    x = a[k, i] if ta else a[i, k]
                    y = b[j, k] if tb else b[k, j]
                    acc += x * y
                if beta == 0:
                    out[i, j] = alpha * acc
                else:
                    out[i, j] = alpha * acc + beta * c[i, j]

    @jit
    def trmm(a, b, out, alpha, rightside, lower, transpose):
        """out = alpha * op(T) b (or alpha * b op(T) when rightside); out is
        not b."""
        n = a.shape[0]
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                acc = out.dtype.type(0)
                for k in range(n):
                    if rightside:
                        acc += b[i, k] * tri_el(a, k, j, lower, transpose)
                    else:
                        acc += tri_el(a, i, k, lower, transpose) * b[k, j]
                out[i, j] = alpha * acc

    @jit
    def trsm(a, b, out, alpha, rightside, lower, transpose):
        """out = alpha * op(T)^-1 b (or alpha * b op(T)^-1); out may be b."""
        n = a.shape[0]
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[i, j] = alpha * b[i, j]
        eff_lower = lower != transpose
        if not rightside:
            for j in range(out.shape[1]):
                for s in range(n):
                    i = s if eff_lower else n - 1 - s
                    acc = out[i, j]
                    for k in range(n):
                        if (eff_lower and k < i) or ((not eff_lower) and k > i):
                            acc -= tri_el(a, i, k, lower, transpose) * out[k, j]
                    out[i, j] = acc / tri_el(a, i, i, lower, transpose)
        else:
            for r in range(out.shape[0]):
                for s in range(n):
                    j = n - 1 - s if eff_lower else s
                    acc = out[r, j]
                    for k in range(n):
                        if (eff_lower and k > j) or ((not eff_lower) and k < j):
                            acc -= out[r, k] * tri_el(a, k, j, lower, transpose)
                    out[r, j] = acc / tri_el(a, j, j, lower, transpose)

    @jit
    def mirror(x, from_lower):
        """Copy the lower (from_lower) or upper triangle onto the other side."""
        n = x.shape[0]
        for i in range(n):
            for j in range(i):
                if from_lower:
                    x[j, i] = x[i, j]
                else:
                    x[i, j] = x[j, i]

    @jit
    def keep_triangle(x, lower):
        """Zero the strict upper (lower) or strict lower triangle."""
        n = x.shape[0]
        for i in range(n):
            for j in range(n):
                if (lower and j > i) or ((not lower) and j < i):
                    x[i, j] = x.dtype.type(0)

    @jit
    def potrf(a, out, lower):
        """Cholesky factor of a (only its ``lower``/upper triangle is read):
        a = out out^T (lower) or out^T out.  Returns 0 when a pivot is <= 0
        (not positive definite), 1 otherwise; NaN propagates."""
        n = a.shape[0]
        ok = 1
        for i in range(n):
            for j in range(n):
                out[i, j] = a.dtype.type(0)
        for j in range(n):
            s = a[j, j]
            for k in range(j):
                ljk = out[j, k] if lower else out[k, j]
                s -= ljk * ljk
            if s <= 0:
                ok = 0
                d = a.dtype.type(math.nan)
            else:
                d = a.dtype.type(math.sqrt(s))
            out[j, j] = d
            for i in range(j + 1, n):
                t = a[i, j] if lower else a[j, i]
                for k in range(j):
                    if lower:
                        t -= out[i, k] * out[j, k]
                    else:
                        t -= out[k, i] * out[k, j]
                if lower:
                    out[i, j] = t / d
                else:
                    out[j, i] = t / d
        return ok

    @jit
    def eye(x):
        """x = identity."""
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                x[i, j] = x.dtype.type(1) if i == j else x.dtype.type(0)

    @jit
    def potri(a, out, tmp, lower):
        """out = (T T^T)^-1 (lower) or (T^T T)^-1 from the triangular factor
        T of a; tmp is n x n scratch."""
        eye(tmp)
        trsm(a, tmp, tmp, a.dtype.type(1), 0, lower, 0)
        gemm(tmp, tmp, out, out, a.dtype.type(1), a.dtype.type(0), lower, 1 - lower)

    @jit
    def lu(w, piv):
        """LU factorisation with partial pivoting in place (unit lower L
        below the diagonal, U on and above); row k was swapped with row
        piv[k].  Returns the permutation's sign (+1/-1)."""
        n = w.shape[0]
        sign = 1
        for k in range(n):
            p = k
            best = abs(w[k, k])
            for i in range(k + 1, n):
                if abs(w[i, k]) > best:
                    best = abs(w[i, k])
                    p = i
            piv[k] = p
            if p != k:
                sign = -sign
                for j in range(n):
                    t = w[k, j]
                    w[k, j] = w[p, j]
                    w[p, j] = t
            d = w[k, k]
            if d != 0:
                for i in range(k + 1, n):
                    f = w[i, k] / d
                    w[i, k] = f
                    for j in range(k + 1, n):
                        w[i, j] -= f * w[k, j]
        return sign

    @jit
    def lu_inverse(w, piv, out):
        """out = A^-1 from ``lu``'s factors w, piv (a zero pivot gives inf/NaN)."""
        n = w.shape[0]
        eye(out)
        for k in range(n):
            p = piv[k]
            if p != k:
                for j in range(n):
                    t = out[k, j]
                    out[k, j] = out[p, j]
                    out[p, j] = t
        for j in range(n):
            for i in range(n):
                acc = out[i, j]
                for k in range(i):
                    acc -= w[i, k] * out[k, j]
                out[i, j] = acc
            for s in range(n):
                i = n - 1 - s
                acc = out[i, j]
                for k in range(i + 1, n):
                    acc -= w[i, k] * out[k, j]
                out[i, j] = acc / w[i, i]

    @jit
    def copy(src, dst):
        """dst = src (same shape)."""
        for i in range(src.shape[0]):
            for j in range(src.shape[1]):
                dst[i, j] = src[i, j]

    @jit
    def det(a, w, piv):
        """det(a), through ``lu`` in scratch w, piv."""
        copy(a, w)
        d = a.dtype.type(lu(w, piv))
        for i in range(w.shape[0]):
            d *= w[i, i]
        return d

    @jit
    def slogdet_sign(a, w, piv):
        """sign(det(a)) after factorising a into w, piv (read the log with
        ``logabsdiag(w)``)."""
        copy(a, w)
        s = a.dtype.type(lu(w, piv))
        for i in range(w.shape[0]):
            x = w[i, i]
            if x < 0:
                s = -s
            elif x == 0:
                s = a.dtype.type(0)
            elif x != x:
                s = x
        return s

    @jit
    def logabsdiag(w):
        """sum(log|diag(w)|); a zero gives -inf."""
        acc = w.dtype.type(0)
        for i in range(w.shape[0]):
            x = abs(w[i, i])
            if x == 0:
                acc += w.dtype.type(-math.inf)
            else:
                acc += w.dtype.type(math.log(x))
        return acc

    @jit
    def sumlogdiag(a):
        """sum(log(diag(a))): -inf for a zero, NaN for a negative entry."""
        acc = a.dtype.type(0)
        for i in range(a.shape[0]):
            x = a[i, i]
            if x > 0:
                acc += a.dtype.type(math.log(x))
            elif x == 0:
                acc += a.dtype.type(-math.inf)
            else:
                acc += a.dtype.type(math.nan)
        return acc

    @jit
    def inverse_t(a, w, piv, out, scale):
        """out = scale * inverse(a)^T (scratch w, piv)."""
        copy(a, w)
        lu(w, piv)
        lu_inverse(w, piv, out)
        n = out.shape[0]
        for i in range(n):
            out[i, i] *= scale
            for j in range(i):
                t = out[i, j]
                out[i, j] = scale * out[j, i]
                out[j, i] = scale * t

    @jit
    def syevd(a, w, u, evals, want_u, eps, sweeps):
        """Eigendecomposition of the symmetric a (lower triangle read):
        a = u^T diag(evals) u, evals ascending, each row of u signed so that
        its largest-magnitude entry (the first on ties) is positive, as
        MXNet.  Cyclic Jacobi on w; u is only written when ``want_u``."""
        n = a.shape[0]
        for i in range(n):
            for j in range(n):
                w[i, j] = a[i, j] if i >= j else a[j, i]
        if want_u:
            eye(u)
        for _ in range(sweeps):
            off = 0.0
            tot = 0.0
            for p in range(n):
                for q in range(n):
                    x = float(w[p, q])
                    tot += x * x
                    if p != q:
                        off += x * x
            if off <= eps * eps * tot:
                break
            for p in range(n - 1):
                for q in range(p + 1, n):
                    apq = w[p, q]
                    if apq == 0:
                        continue
                    tau = (float(w[q, q]) - float(w[p, p])) / (2.0 * float(apq))
                    t = 1.0 / (abs(tau) + math.sqrt(1.0 + tau * tau))
                    if tau < 0:
                        t = -t
                    cf = 1.0 / math.sqrt(1.0 + t * t)
                    c = w.dtype.type(cf)
                    s = w.dtype.type(t * cf)
                    for k in range(n):
                        x = w[k, p]
                        y = w[k, q]
                        w[k, p] = c * x - s * y
                        w[k, q] = s * x + c * y
                    for k in range(n):
                        x = w[p, k]
                        y = w[q, k]
                        w[p, k] = c * x - s * y
                        w[q, k] = s * x + c * y
                    if want_u:   # u holds V^T: rows rotate like V's columns
                        for k in range(n):
                            x = u[p, k]
                            y = u[q, k]
                            u[p, k] = c * x - s * y
                            u[q, k] = s * x + c * y
        for i in range(n):
            evals[i] = w[i, i]
        for i in range(n):              # selection sort, ascending
            m = i
            for j in range(i + 1, n):
                if evals[j] < evals[m]:
                    m = j
            if m != i:
                t2 = evals[i]
                evals[i] = evals[m]
                evals[m] = t2
                if want_u:
                    for k in range(n):
                        t3 = u[i, k]
                        u[i, k] = u[m, k]
                        u[m, k] = t3
        if want_u:
            for i in range(n):
                best = abs(u[i, 0])
                m = 0
                for k in range(1, n):
                    if abs(u[i, k]) > best:
                        best = abs(u[i, k])
                        m = k
                if u[i, m] < 0:
                    for k in range(n):
                        u[i, k] = -u[i, k]

    @jit
    def gelqf(a, w, tau, q, ll, want_q, want_l):
        """LQ factorisation a = ll q of an (m, n) a, m <= n, by Householder
        reflections as LAPACK's gelqf/orglq (same signs): ll lower (m, m),
        q (m, n) with orthonormal rows.  Scratch w (m, n), tau (m)."""
        m = a.shape[0]
        n = a.shape[1]
        copy(a, w)
        for i in range(m):
            alpha = float(w[i, i])
            xn = 0.0
            for j in range(i + 1, n):
                xn += float(w[i, j]) * float(w[i, j])
            xn = math.sqrt(xn)
            if xn == 0:
                tau[i] = w.dtype.type(0)
                continue
            beta = -math.copysign(math.hypot(alpha, xn), alpha)
            tau[i] = w.dtype.type((beta - alpha) / beta)
            scal = 1.0 / (alpha - beta)
            for j in range(i + 1, n):
                w[i, j] = w.dtype.type(w[i, j] * scal)
            w[i, i] = w.dtype.type(beta)
            for r in range(i + 1, m):       # rows below: W[r] := W[r] H_i
                s = w[r, i]
                for j in range(i + 1, n):
                    s += w[r, j] * w[i, j]
                s *= tau[i]
                w[r, i] -= s
                for j in range(i + 1, n):
                    w[r, j] -= s * w[i, j]
        if want_l:
            for i in range(m):
                for j in range(m):
                    ll[i, j] = w[i, j] if j <= i else w.dtype.type(0)
        if want_q:
            for i in range(m):
                for j in range(n):
                    q[i, j] = w.dtype.type(1) if i == j else w.dtype.type(0)
            for s2 in range(m):
                i = m - 1 - s2
                for r in range(m):          # Q := Q H_i
                    s = q[r, i]
                    for j in range(i + 1, n):
                        s += q[r, j] * w[i, j]
                    s *= tau[i]
                    q[r, i] -= s
                    for j in range(i + 1, n):
                        q[r, j] -= s * w[i, j]

    @jit
    def potrf_backward(dl, ll, out, lower):
        """dA = 0.5 T^-T copyLTU(T^T dT) T^-1 for T = potrf(A) (lower; the
        transposed formula when upper), symmetric."""
        one = ll.dtype.type(1)
        trmm(ll, dl, out, one, 1 - lower, lower, 1)
        mirror(out, lower)
        trsm(ll, out, out, one, 0, lower, lower)
        trsm(ll, out, out, ll.dtype.type(0.5), 1, lower, 1 - lower)

    @jit
    def potri_backward(dout, ll, o, res, tmp, lower):
        """dT = -tri(O (dO + dO^T) T^-T) for O = potri(T) (lower; transposed
        formula when upper); tmp is n x n scratch."""
        one = ll.dtype.type(1)
        zero = ll.dtype.type(0)
        if lower:
            gemm(o, dout, tmp, tmp, one, zero, 0, 0)
            gemm(o, dout, tmp, tmp, one, one, 0, 1)
        else:
            gemm(dout, o, tmp, tmp, one, zero, 0, 0)
            gemm(dout, o, tmp, tmp, one, one, 1, 0)
        trsm(ll, tmp, res, -one, lower, lower, 1)
        keep_triangle(res, lower)

    @jit
    def gelqf_backward(dq, dl, q, ll, out, tmpm):
        """dA = L^-T (dQ + copyLTU(M) Q), M = L^T dL - dQ Q^T; tmpm is
        (m, m) scratch."""
        one = ll.dtype.type(1)
        trmm(ll, dl, tmpm, one, 0, 1, 1)
        gemm(dq, q, tmpm, tmpm, -one, one, 0, 1)
        mirror(tmpm, 1)
        gemm(tmpm, q, dq, out, one, one, 0, 0)
        trsm(ll, out, out, one, 0, 1, 1)

    @jit
    def syevd_backward(du, dl, u, evals, out, tx, ty, tiny):
        """dA = U^T Y U with Y_ij = (X_ij - X_ji) / (2 max(l_i - l_j, tiny))
        (i > j, symmetric), Y_ii = dl_i, X = dU U^T."""
        one = u.dtype.type(1)
        zero = u.dtype.type(0)
        n = u.shape[0]
        gemm(du, u, tx, tx, one, zero, 0, 1)
        for i in range(n):
            for j in range(i):
                den = evals[i] - evals[j]
                if den < tiny:
                    den = tiny
                e = (tx[i, j] - tx[j, i]) / (u.dtype.type(2) * den)
                ty[i, j] = e
                ty[j, i] = e
            ty[i, i] = dl[i]
        gemm(u, ty, tx, tx, one, zero, 1, 0)
        gemm(tx, u, out, out, one, zero, 0, 0)

    @jit
    def extractdiag(a, out, k):
        """out = the k-th diagonal of the square a."""
        for i in range(out.shape[0]):
            r = i - k if k < 0 else i
            c = i + k if k > 0 else i
            out[i] = a[r, c]

    @jit
    def makediag(v, out, k):
        """out = zeros with v on the k-th diagonal."""
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[i, j] = out.dtype.type(0)
        for i in range(v.shape[0]):
            r = i - k if k < 0 else i
            c = i + k if k > 0 else i
            out[r, c] = v[i]

    @jit
    def trian_index(r, c, k, lower):
        """Position of (r, c) in MXNet's packed triangle, or -1 outside it."""
        if k > 0 or (k == 0 and not lower):
            t = r
            r = c
            c = t
        r -= abs(k)
        if r >= c:
            return (r * (r + 1)) // 2 + c
        return -1

    @jit
    def trian(mat, vec, k, lower, extract):
        """extract: vec = the packed triangle of mat; else mat = zeros with
        the triangle unpacked from vec."""
        n = mat.shape[0]
        for r in range(n):
            for c in range(n):
                idx = trian_index(r, c, k, lower)
                if extract:
                    if idx >= 0:
                        vec[idx] = mat[r, c]
                elif idx >= 0:
                    mat[r, c] = vec[idx]
                else:
                    mat[r, c] = mat.dtype.type(0)

    return _routines(
        gemm=gemm, trmm=trmm, trsm=trsm, potrf=potrf, potri=potri, lu=lu,
        lu_inverse=lu_inverse, det=det, slogdet_sign=slogdet_sign, logabsdiag=logabsdiag,
        inverse_t=inverse_t, syevd=syevd, gelqf=gelqf, potrf_backward=potrf_backward,
        potri_backward=potri_backward, gelqf_backward=gelqf_backward,
        syevd_backward=syevd_backward, extractdiag=extractdiag, makediag=makediag,
        trian=trian, copy=copy, sumlogdiag=sumlogdiag)
