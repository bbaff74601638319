"""FullyConnected, dot, batch_dot and their backward ops."""
import warnings

import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.executor.interpret import run_op
from nbdl.ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, get_op
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)

sym = nbdl.sym


# ---------------------------------------------------------------- numpy references

def fc_ref(x, w, b, flatten):
    x2 = x.reshape(x.shape[0], int(np.prod(x.shape[1:]))) if flatten else x
    out = np.tensordot(x2, w, axes=([x2.ndim - 1], [1]))
    return out if b is None else out + b


def dot_ref(a, b, ta=False, tb=False):
    if a.ndim == 1 and b.ndim == 1:
        return np.array([np.sum(a * b)])
    return np.tensordot(a, b, axes=([0 if ta else a.ndim - 1], [b.ndim - 1 if tb else 0]))


def batch_dot_ref(a, b, ta=False, tb=False):
    a = np.swapaxes(a, -1, -2) if ta else a
    b = np.swapaxes(b, -1, -2) if tb else b
    return np.einsum("...mk,...kn->...mn", a, b)


def _fc(no_bias=False, flatten=True, num_hidden=3):
    return sym.FullyConnected(sym.var("x"), num_hidden=num_hidden, no_bias=no_bias,
                              flatten=flatten, name="fc")


def _fc_loc(xshape, num_hidden, no_bias, flatten, dtype=np.float64, rng=np.random):
    k = int(np.prod(xshape[1:])) if flatten else xshape[-1]
    loc = {"x": rng.uniform(-1, 1, xshape).astype(dtype),
           "fc_weight": rng.uniform(-1, 1, (num_hidden, k)).astype(dtype)}
    if not no_bias:
        loc["fc_bias"] = rng.uniform(-1, 1, (num_hidden,)).astype(dtype)
    return loc


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- FullyConnected

@pytest.mark.parametrize("xshape", [(4, 5), (2, 3, 4), (2, 2, 1, 3), (1, 1), (0, 3), (3,)])
@pytest.mark.parametrize("flatten", [True, False])
@pytest.mark.parametrize("no_bias", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fc_forward(xshape, flatten, no_bias, dtype, rng):
    loc = _fc_loc(xshape, 3, no_bias, flatten, dtype, rng)
    expect = fc_ref(loc["x"], loc["fc_weight"], loc.get("fc_bias"), flatten)
    out = check_symbolic_forward(_fc(no_bias, flatten), loc, [expect], **_tol(dtype))
    assert out[0].dtype == dtype


@pytest.mark.parametrize("flatten,xshape", [(True, (2, 3)), (True, (2, 2, 1, 2)), (False, (2, 3)),
                                            (False, (2, 1, 2, 3))])
@pytest.mark.parametrize("no_bias", [False, True])
def test_fc_numeric_gradient(flatten, xshape, no_bias, rng):
    check_numeric_gradient(_fc(no_bias, flatten, 2), _fc_loc(xshape, 2, no_bias, flatten, rng=rng))


def test_fc_backward_values(rng):
    loc = _fc_loc((4, 2, 3), 5, False, True, rng=rng)
    g = rng.normal(size=(4, 5))
    x2 = loc["x"].reshape(4, 6)
    expect = {"x": (g @ loc["fc_weight"]).reshape(4, 2, 3), "fc_weight": g.T @ x2,
              "fc_bias": g.sum(axis=0)}
    check_symbolic_backward(_fc(num_hidden=5), loc, [g], expect, rtol=1e-10, atol=1e-12)


def test_fc_arguments_and_shape_inference():
    fc = _fc(num_hidden=7)
    assert fc.list_arguments() == ["x", "fc_weight", "fc_bias"]
    args, outs, aux = fc.infer_shape(x=(5, 3, 4))
    assert args == [(5, 3, 4), (7, 12), (7,)] and outs == [(5, 7)] and aux == []
    args, outs, _ = _fc(flatten=False, num_hidden=7).infer_shape(x=(5, 3, 4))
    assert args == [(5, 3, 4), (7, 4), (7,)] and outs == [(5, 3, 7)]
    nb = _fc(no_bias=True, num_hidden=2)
    assert nb.list_arguments() == ["x", "fc_weight"]
    assert nb.infer_shape(x=(3, 2, 2))[0] == [(3, 2, 2), (2, 4)]
    # Not enough information: MXNet's (None, None, None).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MXNet also warns which arguments are undecided
        assert fc.infer_shape(fc_weight=(7, 12)) == (None, None, None)
    # Attribute strings as in -symbol.json.
    s = sym.FullyConnected(sym.var("d"), num_hidden="4", no_bias="True", flatten="False", name="f")
    assert s.infer_shape(d=(2, 3))[1] == [(2, 4)]


def test_fc_shape_rule_is_two_way_and_partial():
    op = get_op("FullyConnected")
    attrs, _ = op.parse_attrs({"num_hidden": 4, "flatten": False})
    # Data from the output and the weight (flatten=False keeps the leading axes).
    ins, outs = op.infer_shape(attrs, [None, (4, 3), None], [(2, 5, 4)])
    assert ins == [(2, 5, 3), (4, 3), (4,)] and outs == [(2, 5, 4)]
    # Nothing known but the attributes: only the bias.
    ins, outs = op.infer_shape(attrs, [None, None, None], [None])
    assert ins == [None, None, (4,)] and outs == [None]
    with pytest.raises(nbdl.ShapeError, match="weight"):
        op.infer_shape(attrs, [None, (5, 3), None], [None])
    back = get_op("_backward_FullyConnected")
    battrs, _ = back.parse_attrs({"num_hidden": 4})
    ins, outs = back.infer_shape(battrs, [None, (2, 3, 2), None], [None, None, None])
    assert ins == [(2, 4), (2, 3, 2), (4, 6)] and outs == [(2, 3, 2), (4, 6), (4,)]


def test_fc_infer_type():
    args, outs, _ = _fc().infer_type(x=np.float64)
    assert args == [np.float64] * 3 and outs == [np.float64]


def test_fc_weight_shape_error():
    with pytest.raises(nbdl.ShapeError) as e:
        _fc(num_hidden=4).infer_shape(x=(2, 6), fc_weight=(4, 5))
    msg = str(e.value)
    for part in ("FullyConnected", "'fc'", "weight", "(4, 5)", "(2, 6)", "(4, 6)"):
        assert part in msg, (part, msg)
    with pytest.raises(nbdl.ShapeError, match="bias"):
        _fc(num_hidden=4).infer_shape(x=(2, 6), fc_bias=(3,))


@pytest.mark.parametrize("attrs", [{}, {"num_hidden": 0}, {"num_hidden": "x"},
                                   {"num_hidden": 2, "no_bias": "maybe"},
                                   {"num_hidden": 2, "nonsense": 1}])
def test_fc_attr_errors(attrs):
    with pytest.raises(nbdl.AttrError):
        s = sym.FullyConnected(sym.var("x"), name="fc", **attrs)
        s.infer_shape(x=(2, 3))


# ---------------------------------------------------------------- req (null / add) handling

def _run(opname, attrs, inputs, outputs, req, device):
    op = get_op(opname)
    parsed, _ = op.parse_attrs(attrs)
    dev_in = [device.from_numpy(a) for a in inputs]
    dev_out = [device.from_numpy(a) for a in outputs]
    run_op(op, parsed, dev_in, [o.shape for o in outputs], [o.dtype for o in outputs], device,
           outputs=dev_out, req=req)
    return [nbdl.Device.to_numpy(a) for a in dev_out]


@pytest.mark.parametrize("device", [cpu(), pytest.param(gpu(), marks=pytest.mark.cuda)], ids=["cpu", "gpu"])
@pytest.mark.parametrize("no_bias", [False, True])
def test_fc_backward_req(device, no_bias, rng):
    g, x, w = rng.normal(size=(3, 2)), rng.normal(size=(3, 5)), rng.normal(size=(2, 5))
    old = [rng.normal(size=(3, 5)), rng.normal(size=(2, 5)), rng.normal(size=(2,))]
    new = [g @ w, g.T @ x, g.sum(0)]
    n = 2 if no_bias else 3
    attrs = {"num_hidden": 2, "no_bias": no_bias}
    # data_grad not needed (input layer), the rest accumulated.
    req = [REQ_NULL] + [REQ_ADD] * (n - 1)
    got = _run("_backward_FullyConnected", attrs, [g, x, w], [o.copy() for o in old[:n]], req, device)
    np.testing.assert_array_equal(got[0], old[0])
    for i in range(1, n):
        np.testing.assert_allclose(got[i], old[i] + new[i], rtol=1e-12)
    req = [REQ_ADD, REQ_WRITE, REQ_NULL][:n]
    got = _run("_backward_FullyConnected", attrs, [g, x, w], [o.copy() for o in old[:n]], req, device)
    np.testing.assert_allclose(got[0], old[0] + new[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], new[1], rtol=1e-12)
    if n == 3:
        np.testing.assert_array_equal(got[2], old[2])


@pytest.mark.parametrize("device", [cpu(), pytest.param(gpu(), marks=pytest.mark.cuda)], ids=["cpu", "gpu"])
def test_forward_req_add(device, rng):
    x, w, b = rng.normal(size=(3, 4)), rng.normal(size=(2, 4)), rng.normal(size=(2,))
    old = rng.normal(size=(3, 2))
    got = _run("FullyConnected", {"num_hidden": 2}, [x, w, b], [old.copy()], [REQ_ADD], device)
    np.testing.assert_allclose(got[0], old + x @ w.T + b, rtol=1e-12)
    got = _run("FullyConnected", {"num_hidden": 2}, [x, w, b], [old.copy()], [REQ_NULL], device)
    np.testing.assert_array_equal(got[0], old)
    a, c = rng.normal(size=(4, 3)), rng.normal(size=(2, 4))
    got = _run("dot", {"transpose_a": True, "transpose_b": True}, [a, c], [old.copy()], [REQ_ADD], device)
    np.testing.assert_allclose(got[0], old + a.T @ c.T, rtol=1e-12)
    a, c, old = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 2)), rng.normal(size=(2, 3, 2))
    got = _run("batch_dot", {}, [a, c], [old.copy()], [REQ_ADD], device)
    np.testing.assert_allclose(got[0], old + a @ c, rtol=1e-12)


@pytest.mark.parametrize("device", [cpu(), pytest.param(gpu(), marks=pytest.mark.cuda)], ids=["cpu", "gpu"])
@pytest.mark.parametrize("opname,ashape,bshape", [("_backward_dot", (3, 4), (4, 2)),
                                                  ("_backward_batch_dot", (2, 3, 4), (2, 4, 2))])
def test_dot_backward_req(device, opname, ashape, bshape, rng):
    a, b = rng.normal(size=ashape), rng.normal(size=bshape)
    g = rng.normal(size=ashape[:-1] + bshape[-1:])
    da_old, db_old = rng.normal(size=ashape), rng.normal(size=bshape)
    da = g @ np.swapaxes(b, -1, -2)
    db = np.swapaxes(a, -1, -2) @ g
    got = _run(opname, {}, [g, a, b], [da_old.copy(), db_old.copy()], [REQ_ADD, REQ_NULL], device)
    np.testing.assert_allclose(got[0], da_old + da, rtol=1e-12)
    np.testing.assert_array_equal(got[1], db_old)
    got = _run(opname, {}, [g, a, b], [da_old.copy(), db_old.copy()], [REQ_NULL, REQ_ADD], device)
    np.testing.assert_array_equal(got[0], da_old)
    np.testing.assert_allclose(got[1], db_old + db, rtol=1e-12)


# ---------------------------------------------------------------- dot

DOT_CASES = [
    ((3, 4), (4, 5), False, False), ((4, 3), (4, 5), True, False), ((3, 4), (5, 4), False, True),
    ((4, 3), (5, 4), True, True), ((2, 3, 4), (4, 5), False, False), ((4, 2, 3), (4, 5, 2), True, False),
    ((2, 3, 4), (5, 2, 4), False, True), ((4,), (4,), False, False), ((4,), (4, 3), False, False),
    ((3, 4), (4,), False, False), ((4,), (3, 4), False, True), ((4, 3), (4,), True, False),
    ((1, 1), (1, 1), False, False), ((0, 3), (3, 2), False, False), ((2, 0), (0, 3), False, False),
    ((2, 3), (3, 0), False, False),
]


def _dot_sym(ta, tb, op="dot"):
    return getattr(sym, op)(sym.var("a"), sym.var("b"), transpose_a=ta, transpose_b=tb)


@pytest.mark.parametrize("ashape,bshape,ta,tb", DOT_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dot_forward(ashape, bshape, ta, tb, dtype, rng):
    a = rng.uniform(-1, 1, ashape).astype(dtype)
    b = rng.uniform(-1, 1, bshape).astype(dtype)
    expect = dot_ref(a, b, ta, tb)
    s = _dot_sym(ta, tb)
    with nbdl.np_shape(True):       # a 0 dim is a size, not unknown
        assert s.infer_shape(a=ashape, b=bshape)[1] == [expect.shape]
    check_symbolic_forward(s, {"a": a, "b": b}, [expect], **_tol(dtype))


@pytest.mark.parametrize("ashape,bshape,ta,tb", [c for c in DOT_CASES if 0 not in c[0] + c[1]][:12])
def test_dot_numeric_gradient(ashape, bshape, ta, tb, rng):
    check_numeric_gradient(_dot_sym(ta, tb), {"a": rng.normal(size=ashape), "b": rng.normal(size=bshape)})


def test_dot_vector_gives_shape_1():
    s = _dot_sym(False, False)
    assert s.infer_shape(a=(3,), b=(3,))[1] == [(1,)]


@pytest.mark.parametrize("ashape,bshape,ta,tb", [((2, 3), (4, 5), False, False),
                                                 ((2, 3), (2, 5), False, False),
                                                 ((3,), (3,), True, False),
                                                 ((2, 3, 4), (3, 4), False, False)])
def test_dot_shape_errors(ashape, bshape, ta, tb):
    with pytest.raises(nbdl.ShapeError) as e:
        _dot_sym(ta, tb).infer_shape(a=ashape, b=bshape)
    msg = str(e.value)
    assert "dot" in msg and str(ashape) in msg and str(bshape) in msg, msg


def test_dot_attr_error():
    with pytest.raises(nbdl.AttrError):
        sym.dot(sym.var("a"), sym.var("b"), transpose_a="sideways")


# ---------------------------------------------------------------- batch_dot

BATCH_CASES = [((2, 3, 4), (2, 4, 5), False, False), ((2, 4, 3), (2, 4, 5), True, False),
               ((2, 3, 4), (2, 5, 4), False, True), ((2, 4, 3), (2, 5, 4), True, True),
               ((1, 1, 1), (1, 1, 1), False, False), ((0, 2, 3), (0, 3, 2), False, False),
               ((2, 2, 3, 4), (2, 2, 4, 1), False, False), ((2, 3, 0), (2, 0, 2), False, False)]


@pytest.mark.parametrize("ashape,bshape,ta,tb", BATCH_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_dot_forward(ashape, bshape, ta, tb, dtype, rng):
    a = rng.uniform(-1, 1, ashape).astype(dtype)
    b = rng.uniform(-1, 1, bshape).astype(dtype)
    check_symbolic_forward(_dot_sym(ta, tb, "batch_dot"), {"a": a, "b": b},
                           [batch_dot_ref(a, b, ta, tb)], **_tol(dtype))


@pytest.mark.parametrize("ashape,bshape,ta,tb", BATCH_CASES[:4])
def test_batch_dot_numeric_gradient(ashape, bshape, ta, tb, rng):
    check_numeric_gradient(_dot_sym(ta, tb, "batch_dot"),
                           {"a": rng.normal(size=ashape), "b": rng.normal(size=bshape)})


@pytest.mark.parametrize("ashape,bshape", [((2, 3, 4), (2, 5, 6)), ((2, 3, 4), (3, 4, 5)),
                                           ((3, 4), (4, 5)), ((2, 3, 4), (2, 1, 4, 5))])
def test_batch_dot_shape_errors(ashape, bshape):
    with pytest.raises(nbdl.ShapeError) as e:
        _dot_sym(False, False, "batch_dot").infer_shape(a=ashape, b=bshape)
    assert "batch_dot" in str(e.value) and str(ashape) in str(e.value)


# ---------------------------------------------------------------- cpu vs cuda (simulator)

@pytest.mark.cuda
def test_fc_cuda_matches_cpu(rng):
    for no_bias, flatten, xshape in [(False, True, (2, 2, 3)), (True, False, (2, 1, 3))]:
        loc = _fc_loc(xshape, 5, no_bias, flatten, np.float32, rng)
        check_consistency(_fc(no_bias, flatten, 5), loc, rtol=1e-5, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_dot_cuda_matches_cpu(ta, tb, rng):
    a = rng.normal(size=(5, 3) if ta else (3, 5))
    b = rng.normal(size=(2, 5) if tb else (5, 2))
    check_consistency(_dot_sym(ta, tb), {"a": a, "b": b}, rtol=1e-10, atol=1e-12)
    a = rng.normal(size=(2, 3, 2) if ta else (2, 2, 3)).astype(np.float32)
    b = rng.normal(size=(2, 2, 3) if tb else (2, 3, 2)).astype(np.float32)
    check_consistency(_dot_sym(ta, tb, "batch_dot"), {"a": a, "b": b}, rtol=1e-5, atol=1e-5)


@pytest.mark.cuda
def test_dot_cuda_vectors_and_empty(rng):
    check_consistency(_dot_sym(False, False), {"a": rng.normal(size=(3,)), "b": rng.normal(size=(3,))})
    check_consistency(_dot_sym(False, False), {"a": rng.normal(size=(2, 0)), "b": rng.normal(size=(0, 3))})


@pytest.mark.parametrize("ta", [0, 1])
@pytest.mark.parametrize("tb", [0, 1])
def test_gemm_c_transposes_by_flag(ta, tb):
    """``_gemm.gemm_c``: BLAS on C-contiguous operands with the transposes as
    run-time flags (one compilation serves all four), beta accumulating,
    empty products included."""
    from nbdl.kernels.cpu._gemm import gemm_c
    rng = np.random.RandomState(ta * 2 + tb)
    for m, k, n in ((3, 4, 5), (1, 7, 2), (4, 1, 3), (0, 2, 3), (2, 0, 3)):
        a = rng.rand(*((k, m) if ta else (m, k))).astype(np.float32)
        b = rng.rand(*((n, k) if tb else (k, n))).astype(np.float32)
        c = rng.rand(m, n).astype(np.float32)
        ref = (a.T if ta else a) @ (b.T if tb else b) + np.float32(0.5) * c
        gemm_c(a, b, c, ta, tb, 1.0, 0.5)
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-6)
    f32 = [sig for sig in gemm_c.signatures if str(sig[0].dtype) == "float32"]
    assert len(f32) == 1, f32


# ---------------------------------------------------------------- split over Numba's threads

@pytest.mark.parametrize("m,k,n", [(7, 5, 3), (1, 4, 6), (6, 3, 1)])
@pytest.mark.parametrize("has_bias", [0, 1])
def test_fc_split_kernels_match_the_plain_ones(m, k, n, has_bias, rng):
    """``fc_forward_split``/``fc_backward_split`` (what runs for large
    products under one thread pool, or when the BLAS is serial): the plain
    kernels' results for every req, with fewer rows or units than threads
    too (row and column parts).  Float32, as the networks run them (the
    float64 variants would be compiled for this test alone)."""
    from nbdl.kernels.cpu import matrix as M
    f32 = np.float32
    x, w, b = (rng.normal(size=s).astype(f32) for s in ((m, k), (n, k), (n,)))
    g = rng.normal(size=(m, n)).astype(f32)
    empty = np.zeros((0,), f32)
    for req in (REQ_WRITE, REQ_ADD, REQ_NULL):
        outs = [np.full((m, n), 0.5, f32), np.full((m, n), 0.5, f32)]
        for fn, out in zip((M.fc_forward, M.fc_forward_split), outs):
            fn(x, w, b, out, empty, has_bias, req, 1, 2)
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5)
        if req == REQ_WRITE:
            np.testing.assert_allclose(outs[0], x @ w.T + (b if has_bias else 0), rtol=1e-5, atol=1e-5)
        grads = [[np.full((m, k), 0.5, f32), np.full((n, k), 0.5, f32), np.full((n,), 0.5, f32)]
                 for _ in range(2)]
        for fn, (dx, dw, db) in zip((M.fc_backward, M.fc_backward_split), grads):
            fn(g, x, w, dx, dw, db, empty, empty, has_bias, req, req, req, 1, 2)
        for a, e in zip(grads[1], grads[0]):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5)
        if req == REQ_ADD:
            np.testing.assert_allclose(grads[0][1], 0.5 + g.T @ x, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ta,tb", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("bsz,m,k,n", [(1, 7, 5, 3), (3, 1, 4, 6), (1, 6, 3, 1), (2, 4, 0, 3)])
def test_dot_split_kernels_match_the_plain_ones(ta, tb, bsz, m, k, n, rng):
    """The split dot / batch_dot kernels (over 2 of Numba's threads, ``REQ_ADD``
    in the GEMM) give the plain kernels' results (``REQ_ADD`` through the
    temp) and numpy's, for every transpose, req, fewer rows or items than
    threads, and an empty inner dimension.  Float32, as the networks run
    them (the float64 variants would be compiled for this test alone)."""
    from nbdl.kernels.cpu import matrix as M
    f32 = np.float32
    a = rng.normal(size=(bsz,) + ((k, m) if ta else (m, k))).astype(f32)
    b = rng.normal(size=(bsz,) + ((n, k) if tb else (k, n))).astype(f32)
    g = rng.normal(size=(bsz, m, n)).astype(f32)
    opa, opb = (a.transpose(0, 2, 1) if ta else a), (b.transpose(0, 2, 1) if tb else b)
    prod = opa @ opb
    da_ref = g @ opb.transpose(0, 2, 1)
    db_ref = opa.transpose(0, 2, 1) @ g
    da_ref = da_ref.transpose(0, 2, 1) if ta else da_ref
    db_ref = db_ref.transpose(0, 2, 1) if tb else db_ref
    tmp = np.zeros((m, n), f32)
    tmp_a, tmp_b = np.zeros(a.shape[1:], f32), np.zeros(b.shape[1:], f32)
    kernels = [(M.dot_forward, M.dot_forward_split, M.dot_backward, M.dot_backward_split, 0),
               (M.batch_dot_forward, M.batch_dot_forward_split, M.batch_dot_backward,
                M.batch_dot_backward_split, 1)]
    for fwd, fwd_s, bwd, bwd_s, batched in kernels:
        if not batched and bsz > 1:
            continue
        pick = (lambda x: x) if batched else (lambda x: x[0])
        for req in (REQ_WRITE, REQ_ADD, REQ_NULL):
            base = {REQ_WRITE: 0.0, REQ_ADD: 0.5, REQ_NULL: 0.5}[req]
            outs = [np.full(pick(prod).shape, 0.5, f32) for _ in range(2)]
            fwd(pick(a), pick(b), outs[0], tmp, ta, tb, req, 1, 2)
            fwd_s(pick(a), pick(b), outs[1], tmp, ta, tb, req, 0, 2)
            want = pick(prod) + base if req != REQ_NULL else np.full(outs[0].shape, 0.5, f32)
            for out in outs:
                np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
            grads = [[np.full(pick(a).shape, 0.5, f32), np.full(pick(b).shape, 0.5, f32)]
                     for _ in range(2)]
            bwd(pick(g), pick(a), pick(b), *grads[0], tmp_a, tmp_b, ta, tb, req, req, 1, 2)
            bwd_s(pick(g), pick(a), pick(b), *grads[1], tmp_a, tmp_b, ta, tb, req, req, 0, 2)
            for i, ref in enumerate((pick(da_ref), pick(db_ref))):
                want = ref + base if req != REQ_NULL else np.full(ref.shape, 0.5, f32)
                for run in grads:
                    np.testing.assert_allclose(run[i], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("pool,serial", [("numba", False), ("blas", False), ("blas", True)])
def test_products_split_over_the_one_thread_pool(pool, serial, monkeypatch):
    """A product large enough for threads splits over Numba's threads under
    ``NBDL_THREAD_POOL=numba`` (the default) or when the BLAS is serial, and
    runs on BLAS's threads only under ``blas``; a small one never splits."""
    from nbdl.kernels.cpu import matrix as M
    from nbdl.ops.registry import Call
    if not nbdl.kernels.cpu._blas_threads.BLAS_THREAD_CONTROL:
        pytest.skip("a BLAS whose threads nbdl cannot hold")
    monkeypatch.setenv("NBDL_THREAD_POOL", pool)
    monkeypatch.setattr(M, "serial_blas", lambda: serial)
    f32 = np.dtype(np.float32)
    split = nbdl.kernels.cpu._parallel.threads() > 1 and (pool == "numba" or serial)
    cases = [("FullyConnected", {"num_hidden": 4}, [(8, 5), (4, 5), (4,)], [(8, 4)],
              M.prepare_fc, M.fc_forward_split, M.fc_forward),
             ("dot", {}, [(8, 5), (5, 4)], [(8, 4)], M.prepare_dot, M.dot_forward_split,
              M.dot_forward),
             ("batch_dot", {}, [(3, 8, 5), (3, 5, 4)], [(3, 8, 4)], M.prepare_batch_dot,
              M.batch_dot_forward_split, M.batch_dot_forward)]
    for name, attrs, ins, outs, prepare, split_fn, plain in cases:
        op = get_op(name)
        parsed, _ = op.parse_attrs(attrs)
        call = Call(op, parsed, ins, [f32] * len(ins), outs, [f32], device=cpu(),
                    req=[REQ_WRITE])
        monkeypatch.setenv("NBDL_BLAS_SERIAL_MAX_FLOPS", "1")
        assert prepare(call).fn is (split_fn if split else plain), name
        monkeypatch.setenv("NBDL_BLAS_SERIAL_MAX_FLOPS", str(1 << 30))
        assert prepare(call).fn is plain, name
