"""The linear-algebra family (nbdl/ops/linalg.py): _linalg_gemm, _linalg_gemm2,
_linalg_potrf, _linalg_potri, _linalg_trmm, _linalg_trsm, _linalg_syrk,
_linalg_gelqf, _linalg_syevd, _linalg_sumlogdiag, _linalg_extractdiag,
_linalg_makediag, _linalg_extracttrian, _linalg_maketrian, _linalg_inverse,
_linalg_det, _linalg_slogdet and khatri_rao, against numpy references
written here, numeric gradients (float64), the CUDA simulator and bad input."""
import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.linalg import NotPositiveDefinite
from nbdl.testing import check_consistency, check_numeric_gradient, check_symbolic_forward

S = nbdl.sym
A, B, C = S.var("A"), S.var("B"), S.var("C")


def spd(rng, shape):
    """Well-conditioned symmetric positive definite matrices."""
    x = rng.normal(size=shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def lower_tri(rng, shape):
    """Lower triangular matrices with a safely non-zero diagonal (junk above)."""
    x = rng.normal(size=shape)
    n = shape[-1]
    x[..., range(n), range(n)] = rng.uniform(1.0, 2.0, size=shape[:-1])
    return x


def op_t(x, t):
    return np.swapaxes(x, -1, -2) if t else x


def fwd(sym, loc, expected, rtol=1e-6, atol=1e-8):
    return check_symbolic_forward(sym, loc, expected, rtol=rtol, atol=atol)


# ------------------------------------------------------------------ products

@pytest.mark.parametrize("ta,tb", [(False, False), (True, True)])
def test_gemm_gemm2_forward(ta, tb, rng):
    a = rng.normal(size=(2, 3, 4) if not ta else (2, 4, 3))
    b = rng.normal(size=(2, 4, 5) if not tb else (2, 5, 4))
    c = rng.normal(size=(2, 3, 5))
    ref = op_t(a, ta) @ op_t(b, tb)
    fwd(S.linalg.gemm(A, B, C, transpose_a=ta, transpose_b=tb, alpha=2.0, beta=0.5),
        {"A": a, "B": b, "C": c}, [2.0 * ref + 0.5 * c])
    fwd(S.linalg.gemm2(A, B, transpose_a=ta, transpose_b=tb, alpha=-1.5), {"A": a, "B": b},
        [-1.5 * ref])


def test_gemm2_axis_and_float32(rng):
    # rows on axis 1 of (2, 3, 4, 5): matrices (3, 5) batched over axes 0 and 2
    a = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    b = rng.normal(size=(2, 5, 4, 2)).astype(np.float32)
    ref = np.einsum("pmqk,pkqn->pmqn", a, b)
    outs = fwd(S.linalg.gemm2(A, B, axis=1), {"A": a, "B": b}, [ref], rtol=1e-5, atol=1e-5)
    assert outs[0].dtype == np.float32 and outs[0].shape == (2, 3, 4, 2)


def test_gemm_gemm2_gradients(rng):
    loc = {"A": rng.normal(size=(2, 4, 3)), "B": rng.normal(size=(2, 2, 4)),
           "C": rng.normal(size=(2, 3, 2))}
    check_numeric_gradient(S.linalg.gemm(A, B, C, transpose_a=True, transpose_b=True,
                                         alpha=0.7, beta=-2.0), loc)
    loc = {"A": rng.normal(size=(3, 2, 2, 4)), "B": rng.normal(size=(3, 4, 2, 3))}
    check_numeric_gradient(S.linalg.gemm2(A, B, axis=-3, alpha=1.3), loc)


@pytest.mark.parametrize("right,lower,tr", [(False, True, False), (True, False, True),
                                            (False, False, True), (True, True, False)])
def test_trmm_trsm(right, lower, tr, rng):
    a = lower_tri(rng, (2, 3, 3))
    if not lower:
        a = np.swapaxes(a, -1, -2).copy()
    b = rng.normal(size=(2, 4, 3) if right else (2, 3, 4))
    t = np.tril(a) if lower else np.triu(a)
    ot = op_t(t, tr)
    mm = b @ ot if right else ot @ b
    sm = b @ np.linalg.inv(ot) if right else np.linalg.inv(ot) @ b
    at = dict(rightside=right, lower=lower, transpose=tr, alpha=0.5)
    fwd(S.linalg.trmm(A, B, **at), {"A": a, "B": b}, [0.5 * mm])
    fwd(S.linalg.trsm(A, B, **at), {"A": a, "B": b}, [0.5 * sm], rtol=1e-6, atol=1e-7)
    check_numeric_gradient(S.linalg.trmm(A, B, **at), {"A": a, "B": b})
    check_numeric_gradient(S.linalg.trsm(A, B, **at), {"A": a, "B": b})


@pytest.mark.parametrize("tr", [False, True])
def test_syrk(tr, rng):
    a = rng.normal(size=(2, 3, 4))
    ref = op_t(a, tr) @ op_t(a, not tr)
    fwd(S.linalg.syrk(A, transpose=tr, alpha=2.0), {"A": a}, [2.0 * ref])
    check_numeric_gradient(S.linalg.syrk(A, transpose=tr, alpha=2.0), {"A": a})


def test_khatri_rao(rng):
    a, b, c = rng.normal(size=(2, 3)), rng.normal(size=(3, 3)), rng.normal(size=(2, 3))
    ref2 = np.einsum("ik,jk->ijk", a, b).reshape(6, 3)
    ref3 = np.einsum("ik,jk,lk->ijlk", a, b, c).reshape(12, 3)
    fwd(S.khatri_rao(A, B), {"A": a, "B": b}, [ref2])
    fwd(S.khatri_rao(A, B, C), {"A": a, "B": b, "C": c}, [ref3])
    fwd(S.khatri_rao(A), {"A": a}, [a])
    x = nbdl.nd.khatri_rao(nbdl.nd.array([[1, -1], [2, -3]]), nbdl.nd.array([[1, 4], [2, 5],
                                                                            [3, 6]]))
    np.testing.assert_allclose(x.asnumpy(), [[1, -4], [2, -5], [3, -6], [2, -12], [4, -15],
                                             [6, -18]])


# ------------------------------------------------------------------ factorisations

@pytest.mark.parametrize("lower", [True, False])
def test_potrf_potri(lower, rng):
    a = spd(rng, (2, 3, 3))
    ll = np.linalg.cholesky(a)
    fwd(S.linalg.potrf(A, lower=lower), {"A": a}, [ll if lower else np.swapaxes(ll, -1, -2)])
    t = lower_tri(rng, (2, 3, 3))
    if lower:
        ref = np.linalg.inv(np.tril(t) @ np.swapaxes(np.tril(t), -1, -2))
    else:
        t = np.swapaxes(t, -1, -2).copy()
        ref = np.linalg.inv(np.swapaxes(np.triu(t), -1, -2) @ np.triu(t))
    fwd(S.linalg.potri(A, lower=lower), {"A": t}, [ref], rtol=1e-6, atol=1e-7)
    check_numeric_gradient(S.linalg.potri(A, lower=lower), {"A": t})
    # potrf's gradient is MXNet's symmetric one: check it through a symmetric input
    x = rng.normal(size=(2, 3, 4))
    check_numeric_gradient(S.linalg.potrf(S.linalg.syrk(A), lower=lower), {"A": x})


def test_gelqf(rng):
    a = np.array([[1., 2., 3.], [4., 5., 6.]])
    outs = fwd(S.linalg.gelqf(A), {"A": a},
               [np.array([[-0.26726124, -0.53452248, -0.80178373],
                          [0.87287156, 0.21821789, -0.43643578]]),
                np.array([[-3.74165739, 0.], [-8.55235974, 1.96396101]])], rtol=1e-6)
    x = rng.normal(size=(2, 3, 4))
    q, ll = [o.asnumpy() for o in nbdl.nd.linalg.gelqf(nbdl.nd.array(x, dtype=np.float64))]
    np.testing.assert_allclose(ll @ q, x, atol=1e-12)
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(3), (2, 3, 3)),
                               atol=1e-12)
    assert np.all(np.triu(ll, 1) == 0) and outs[1].shape == (2, 2)
    check_numeric_gradient(S.linalg.gelqf(A), {"A": x})


def _eigh_mxnet(a):
    w, v = np.linalg.eigh(a)
    u = np.swapaxes(v, -1, -2).copy()
    idx = np.argmax(np.abs(u), axis=-1)
    sign = np.sign(np.take_along_axis(u, idx[..., None], axis=-1))
    return u * sign, w


def test_syevd(rng):
    a = np.array([[1., 2.], [2., 4.]])
    fwd(S.linalg.syevd(A), {"A": a}, [np.array([[0.89442719, -0.4472136],
                                                [0.4472136, 0.89442719]]), np.array([0., 5.])],
        rtol=1e-6, atol=1e-7)
    x = rng.normal(size=(2, 4, 4))
    x = x + np.swapaxes(x, -1, -2)
    u, w = _eigh_mxnet(x)
    fwd(S.linalg.syevd(A), {"A": x}, [u, w], rtol=1e-6, atol=1e-9)
    outs = fwd(S.linalg.syevd(A), {"A": x.astype(np.float32)}, [u, w], rtol=1e-4, atol=1e-4)
    assert outs[0].dtype == np.float32
    check_numeric_gradient(S.linalg.syevd(S.linalg.syrk(A)), {"A": rng.normal(size=(2, 3, 3))})


# ------------------------------------------------------------------ inverse, det, slogdet, sumlogdiag

def test_inverse_det_slogdet(rng):
    x = rng.normal(size=(2, 3, 3))
    fwd(S.linalg.inverse(A), {"A": x}, [np.linalg.inv(x)], rtol=1e-6, atol=1e-9)
    fwd(S.linalg.det(A), {"A": x}, [np.linalg.det(x)])
    s, la = np.linalg.slogdet(x)
    fwd(S.linalg.slogdet(A), {"A": x}, [s, la])
    outs = fwd(S.linalg.det(A), {"A": x[0]}, [np.linalg.det(x[:1])])
    assert outs[0].shape == (1,)
    sing = np.array([[1., 2.], [2., 4.]])
    fwd(S.linalg.slogdet(A), {"A": sing}, [np.array([0.]), np.array([-np.inf])])
    fwd(S.linalg.det(A), {"A": sing}, [np.array([0.])])
    for sym in (S.linalg.inverse(A), S.linalg.det(A), S.linalg.slogdet(A)):
        check_numeric_gradient(sym, {"A": x})


def test_sumlogdiag(rng):
    x = lower_tri(rng, (2, 3, 3))
    fwd(S.linalg.sumlogdiag(A), {"A": x}, [np.log(np.diagonal(x, axis1=-2, axis2=-1)).sum(-1)])
    check_numeric_gradient(S.linalg.sumlogdiag(A), {"A": x})


# ------------------------------------------------------------------ diagonal / triangle copies

def packed(x, k, lower):
    """Reference packing of MXNet's extracttrian."""
    if k > 0 or (k == 0 and not lower):
        x = np.swapaxes(x, -1, -2)
    r, c = np.tril_indices(x.shape[-1], -abs(k))
    return np.ascontiguousarray(x[..., r, c])


@pytest.mark.parametrize("k,lower", [(0, True), (0, False), (1, True), (-1, False)])
def test_diag_trian(k, lower, rng):
    x = rng.normal(size=(2, 3, 3))
    d = np.diagonal(x, offset=k, axis1=-2, axis2=-1)
    fwd(S.linalg.extractdiag(A, offset=k), {"A": x}, [d])
    fwd(S.linalg.makediag(A, offset=k), {"A": d}, [np.stack([np.diag(v, k) for v in d])])
    t = packed(x, k, lower)
    fwd(S.linalg.extracttrian(A, offset=k, lower=lower), {"A": x}, [t])
    made = np.zeros_like(x)
    if k > 0 or (k == 0 and not lower):
        r, c = np.tril_indices(3, -abs(k))
        made[..., c, r] = t
    else:
        r, c = np.tril_indices(3, -abs(k))
        made[..., r, c] = t
    fwd(S.linalg.maketrian(A, offset=k, lower=lower), {"A": t}, [made])
    for sym, loc in [(S.linalg.extractdiag(A, offset=k), x), (S.linalg.makediag(A, offset=k), d),
                     (S.linalg.extracttrian(A, offset=k, lower=lower), x),
                     (S.linalg.maketrian(A, offset=k, lower=lower), t)]:
        check_numeric_gradient(sym, {"A": loc})


# ------------------------------------------------------------------ CUDA (simulator) vs CPU

@pytest.mark.cuda
def test_cuda_matches_cpu(rng):
    x = rng.normal(size=(2, 3, 3))
    sym_x = x + np.swapaxes(x, -1, -2)
    t = lower_tri(rng, (2, 3, 3))
    cases = [
        (S.linalg.gemm(A, B, C, transpose_a=True, alpha=0.5, axis=-3),
         {"A": rng.normal(size=(3, 2, 2)), "B": rng.normal(size=(3, 2, 2)),
          "C": rng.normal(size=(2, 2, 2))}),
        (S.linalg.trsm(A, B, rightside=True, alpha=2.0), {"A": t, "B": rng.normal(size=(2, 2, 3))}),
        (S.linalg.trmm(A, B, transpose=True), {"A": t, "B": rng.normal(size=(2, 3, 2))}),
        (S.linalg.potrf(S.linalg.syrk(A)), {"A": rng.normal(size=(2, 3, 4))}),
        (S.linalg.potri(A), {"A": t}),
        (S.linalg.gelqf(A), {"A": rng.normal(size=(2, 2, 3))}),
        (S.linalg.syevd(A), {"A": sym_x}),
        (S.Group([S.linalg.inverse(A), S.linalg.det(A), S.linalg.slogdet(A)[1],
                  S.linalg.sumlogdiag(A)]), {"A": t}),
        (S.linalg.maketrian(S.linalg.extracttrian(A, offset=-1), offset=1), {"A": x}),
        (S.linalg.makediag(S.linalg.extractdiag(A, offset=1)), {"A": x}),
    ]
    for sym, loc in cases:
        check_consistency(sym, loc, devices=[cpu(), gpu()], rtol=1e-9, atol=1e-9)
    for sym in (S.khatri_rao(A, B, C), S.khatri_rao(A, B), S.khatri_rao(A)):
        check_consistency(sym, {"A": x[0], "B": x[1], "C": t[0]}, devices=[cpu(), gpu()],
                          grad=False)  # no gradient, as in MXNet
    bad = nbdl.nd.array(np.array([[[1., 2.], [2., 1.]]]), device=gpu(), dtype=np.float64)
    with pytest.raises(NotPositiveDefinite, match=r"_linalg_potrf.*'A'"):
        nbdl.nd.linalg.potrf(bad)


# ------------------------------------------------------------------ spellings and errors

def test_spellings(rng):
    x = spd(rng, (3, 3)).astype(np.float32)
    nd = nbdl.nd.array(x)
    ref = np.linalg.cholesky(x)
    for fn in (nbdl.nd.linalg.potrf, nbdl.nd.linalg_potrf, nbdl.nd._linalg_potrf,
               nbdl.np.linalg.cholesky):
        np.testing.assert_allclose(fn(nd).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    x, nd = x.astype(np.float64), nbdl.nd.array(x, dtype=np.float64)
    np.testing.assert_allclose(nbdl.np.linalg.inv(nd).asnumpy(), np.linalg.inv(x), rtol=1e-6)
    d = nbdl.np.linalg.det(nd)
    assert d.shape == () and np.isclose(float(d.asnumpy()), np.linalg.det(x), rtol=1e-6)
    s, la = nbdl.np.linalg.slogdet(nd)
    assert s.shape == () and np.isclose(float(la.asnumpy()), np.linalg.slogdet(x)[1], rtol=1e-6)
    assert nbdl.np.linalg.det(S.var("A")).infer_shape(A=(3, 3))[1] == [(1,)]
    assert S.linalg_gemm2(A, B).list_arguments() == ["A", "B"]
    assert S.linalg.syevd(A).list_outputs() == ["syevd0_output0", "syevd0_output1"] or \
        S.linalg.syevd(A).list_outputs()[0].endswith("_output0")
    assert S.linalg.gemm2(A, B, name="g").name == "g" and S.linalg.det(A).list_outputs()[0] \
        .startswith("det")
    y = S.linalg.det(A)
    assert S.load_json(y.tojson()).infer_shape(A=(4, 2, 2))[1] == [(4,)]


def test_errors(rng):
    with pytest.raises(nbdl.ShapeError, match=r"_linalg_inverse.*'A'.*square.*\(2, 3\)"):
        S.linalg.inverse(A).infer_shape(A=(2, 3))
    with pytest.raises(nbdl.ShapeError, match=r"_linalg_det.*at least 2 axes.*\(3,\)"):
        S.linalg.det(A).infer_shape(A=(3,))
    with pytest.raises(nbdl.ShapeError, match=r"_linalg_gemm2.*incompatible.*\(2, 3\).*\(4, 2\)"):
        S.linalg.gemm2(A, B).infer_shape(A=(2, 3), B=(4, 2))
    with pytest.raises(nbdl.ShapeError, match=r"_linalg_gelqf.*m <= n"):
        S.linalg.gelqf(A).infer_shape(A=(3, 2))
    with pytest.raises(nbdl.ShapeError, match=r"_linalg_trsm.*square"):
        S.linalg.trsm(A, B).infer_shape(A=(2, 3), B=(2, 3))
    with pytest.raises(nbdl.ShapeError, match=r"_linalg_maketrian.*triangular number"):
        S.linalg.maketrian(A).infer_shape(A=(2, 4))
    with pytest.raises(nbdl.ShapeError, match=r"khatri_rao.*same number of columns"):
        S.khatri_rao(A, B).infer_shape(A=(2, 3), B=(2, 2))
    bad = np.array([[1., 2.], [2., 1.]])
    with pytest.raises(NotPositiveDefinite, match=r"_linalg_potrf.*'A'.*not positive definite"):
        nbdl.nd.linalg.potrf(nbdl.nd.array(bad))
    with pytest.raises(nbdl.DTypeError, match=r"_linalg_inverse.*int32"):
        nbdl.nd.linalg.inverse(nbdl.nd.array(np.eye(2), dtype=np.int32))


def test_unread_outputs(rng):
    """An output nobody reads is not computed (REQ_NULL) and the others stay right."""
    x = rng.normal(size=(2, 3, 3))
    x = x + np.swapaxes(x, -1, -2)
    u, w = _eigh_mxnet(x)
    fwd(S.linalg.syevd(A)[1], {"A": x}, [w])
    fwd(S.linalg.syevd(A)[0], {"A": x}, [u])
    y = rng.normal(size=(2, 2, 3))
    q, ll = [o.asnumpy() for o in nbdl.nd.linalg.gelqf(nbdl.nd.array(y, dtype=np.float64))]
    fwd(S.linalg.gelqf(A)[1], {"A": y}, [ll])
    fwd(S.linalg.gelqf(A)[0], {"A": y}, [q])
    s, la = np.linalg.slogdet(x)
    fwd(S.linalg.slogdet(A)[1], {"A": x}, [la])
    fwd(S.linalg.slogdet(A)[0], {"A": x}, [s])


def test_empty_shapes():
    a, b = np.zeros((0, 2, 3)), np.zeros((0, 3, 2))
    fwd(S.linalg.gemm2(A, B), {"A": a, "B": b}, [np.zeros((0, 2, 2))])
    fwd(S.linalg.gemm2(A, B), {"A": np.zeros((2, 0)), "B": np.zeros((0, 3))}, [np.zeros((2, 3))])
    fwd(S.linalg.inverse(A), {"A": np.zeros((0, 3, 3))}, [np.zeros((0, 3, 3))])
    fwd(S.linalg.det(A), {"A": np.zeros((2, 0, 0))}, [np.ones(2)])   # numpy: det of 0x0 is 1
