"""CTCLoss (alias ctc_loss): forward against a brute-force reference that
enumerates every alignment, gradients against central differences and
against the brute-force gradient, lengths, blank 'first'/'last', errors,
cpu vs the CUDA simulator."""
import itertools

import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.ctc import CTCInputError
from nbdl.ops.registry import REQ_NULL, REQ_WRITE, Call, get_op, pick_args
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward)


def np_log_softmax(x):
    x = np.asarray(x, np.float64)
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def collapse(path, blank):
    out, prev = [], None
    for k in path:
        if k != prev and k != blank:
            out.append(int(k))
        prev = k
    return out


def brute_force(x, label, blank):
    """-log p(label | x) and its gradient w.r.t. the activations x (T, C),
    by summing over all C**T paths."""
    T, C = x.shape
    lp = np_log_softmax(x)
    if T == 0:
        return (0.0 if not label else np.inf), np.zeros_like(lp)
    paths = np.array(list(itertools.product(range(C), repeat=T)))
    ok = np.array([collapse(p, blank) == list(label) for p in paths])
    if not ok.any():
        return np.inf, np.zeros_like(lp)
    good = paths[ok]
    logp = lp[np.arange(T), good].sum(1)
    p = np.exp(logp)
    total = p.sum()
    post = np.zeros((T, C))  # posterior occupancy of class c at time t
    for path, w in zip(good, p / total):
        post[np.arange(T), path] += w
    return -np.log(total), np.exp(lp) - post


def reference(x, label, blank_label="first", data_lengths=None, label_lengths=None):
    """Per-sample loss (N,) and data gradient (T, N, C) with MXNet's label rules."""
    T, N, C = x.shape
    blank, pad = (0, 0) if blank_label == "first" else (C - 1, -1)
    loss = np.zeros(N)
    grad = np.zeros((T, N, C))
    for n in range(N):
        row = [int(v) for v in label[n]]
        if label_lengths is not None:
            row = row[:int(label_lengths[n])]
        elif pad in row:
            row = row[:row.index(pad)]
        tn = T if data_lengths is None else int(data_lengths[n])
        loss[n], grad[:tn, n] = brute_force(x[:tn, n], row, blank)
    return loss, grad


def ctc_sym(**attrs):
    names = ["data", "label"]
    if attrs.get("use_data_lengths"):
        names.append("data_lengths")
    if attrs.get("use_label_lengths"):
        names.append("label_lengths")
    return nbdl.sym.CTCLoss(*[nbdl.sym.var(n) for n in names], **attrs)


CASES = [
    # (T, N, C, labels, blank_label)
    (4, 3, 4, [[1, 2], [3, 3], [1, 0]], "first"),     # repeat needs a blank between
    (4, 3, 4, [[0, 1], [2, 2], [0, -1]], "last"),
    (3, 2, 3, [[1, 1], [2, 0]], "first"),            # 1,1 needs T >= 3
    (5, 2, 3, [[0, 0], [-1, -1]], "last"),           # empty label: all blanks
    (1, 2, 2, [[1], [0]], "first"),
]


@pytest.mark.parametrize("T,N,C,labels,blank_label", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_and_gradient_against_brute_force(T, N, C, labels, blank_label, dtype, rng):
    x = rng.uniform(-2, 2, (T, N, C)).astype(dtype)
    lab = np.array(labels, dtype=np.float32)
    loss, grad = reference(x, lab, blank_label)
    sym = ctc_sym(blank_label=blank_label)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)
    outs = check_symbolic_forward(sym, {"data": x, "label": lab}, [loss], **tol)
    assert outs[0].dtype == dtype
    og = rng.uniform(0.5, 2, N).astype(dtype)
    check_symbolic_backward(sym, {"data": x, "label": lab}, [og],
                            {"data": grad * og[None, :, None]}, **tol)


def test_infeasible_label_gives_inf_and_zero_gradient(rng):
    x = rng.uniform(-1, 1, (2, 2, 3))
    lab = np.array([[1, 1], [1, 2]], np.int32)   # 1,1 needs 3 steps; 1,2 fits in 2
    loss, grad = reference(x, lab)
    assert np.isinf(loss[0]) and np.isfinite(loss[1])
    sym = ctc_sym()
    check_symbolic_forward(sym, {"data": x, "label": lab}, [loss])
    check_symbolic_backward(sym, {"data": x, "label": lab}, [np.ones(2)], {"data": grad})
    assert not grad[:, 0].any() and grad[:, 1].any()


@pytest.mark.parametrize("blank_label", ["first", "last"])
@pytest.mark.parametrize("use_dl,use_ll", [(True, False), (False, True), (True, True)])
def test_lengths(blank_label, use_dl, use_ll, rng):
    T, N, C = 5, 3, 4
    x = rng.uniform(-2, 2, (T, N, C))
    base = 1 if blank_label == "first" else 0
    # label values past label_lengths are junk (but valid classes) on purpose
    lab = np.array([[base, base + 1, base + 2], [base + 2, base, base + 1],
                    [base + 1, base + 1, base]], np.float64)
    if not use_ll:  # pad instead
        pad = 0 if blank_label == "first" else -1
        lab[0, 2] = pad
        lab[1, 1:] = pad
        lab[2, :] = pad
    dl = np.array([5, 3, 0], np.float64)
    ll = np.array([2, 1, 0], np.float64)
    loss, grad = reference(x, lab, blank_label, dl if use_dl else None, ll if use_ll else None)
    loc = {"data": x, "label": lab}
    if use_dl:
        loc["data_lengths"] = dl
    if use_ll:
        loc["label_lengths"] = ll
    sym = ctc_sym(blank_label=blank_label, use_data_lengths=use_dl, use_label_lengths=use_ll)
    check_symbolic_forward(sym, loc, [loss])
    check_symbolic_backward(sym, loc, [np.ones(N)], {"data": grad})
    if use_dl:
        assert not grad[3:, 1].any() and not grad[:, 2].any()


@pytest.mark.parametrize("blank_label", ["first", "last"])
def test_numeric_gradient(blank_label, rng):
    x = rng.uniform(-1, 1, (4, 2, 3))
    lab = np.array([[1, 0], [0, 0]] if blank_label == "last" else [[1, 2], [2, 0]], np.int32)
    check_numeric_gradient(ctc_sym(blank_label=blank_label), {"data": x, "label": lab},
                           grad_nodes=["data"])


def test_numeric_gradient_with_lengths(rng):
    x = rng.uniform(-1, 1, (4, 2, 3))
    loc = {"data": x, "label": np.array([[1, 2], [2, 1]], np.int32),
           "data_lengths": np.array([4, 2], np.int32), "label_lengths": np.array([2, 1], np.int32)}
    check_numeric_gradient(ctc_sym(use_data_lengths=True, use_label_lengths=True), loc,
                           grad_nodes=["data"])


def test_alias_eager_and_autograd(rng):
    x = rng.uniform(-1, 1, (3, 2, 3)).astype(np.float32)
    lab = np.array([[1, 2], [1, 0]], np.float32)
    loss, grad = reference(x, lab)
    data = nbdl.nd.array(x)
    data.attach_grad()
    with nbdl.autograd.record():
        out = nbdl.nd.ctc_loss(data, nbdl.nd.array(lab))
    out.backward()
    assert out.shape == (2,)
    assert_almost_equal(out.asnumpy(), loss, rtol=1e-5, atol=1e-5)
    assert_almost_equal(data.grad.asnumpy(), grad, rtol=1e-4, atol=1e-5)


def test_large_batch_parallel_variant(rng, monkeypatch):
    from nbdl import config
    monkeypatch.setattr(config, "parallel_threshold", lambda: 1)
    x = rng.uniform(-1, 1, (3, 6, 3))
    lab = np.tile(np.array([[1, 2]], np.int32), (6, 1))
    lab[::2, 1] = 0
    loss, grad = reference(x, lab)
    sym = ctc_sym()
    check_symbolic_forward(sym, {"data": x, "label": lab}, [loss])
    check_symbolic_backward(sym, {"data": x, "label": lab}, [np.ones(6)], {"data": grad})


@pytest.mark.parametrize("shape", [(0, 2, 3), (3, 0, 3), (2, 1, 1)])
def test_empty_and_size_one_shapes(shape, rng):
    T, N, C = shape
    x = rng.uniform(-1, 1, shape)
    lab = np.zeros((N, 2), np.int32)    # empty labels ('first': 0 is the padding)
    loss, grad = reference(x, lab)
    sym = ctc_sym()
    check_symbolic_forward(sym, {"data": x, "label": lab}, [loss])
    check_symbolic_backward(sym, {"data": x, "label": lab}, [np.ones(N)], {"data": grad})


def test_loss_only_and_gradient_only_requests(rng):
    """REQ_NULL on either output: the other is still right and nothing is
    written into the skipped one."""
    op = get_op("CTCLoss")
    x = rng.uniform(-1, 1, (3, 2, 3))
    lab = np.array([[1, 2], [2, 0]], np.float64)
    loss, grad = reference(x, lab)
    attrs, _ = op.parse_attrs({})
    for req in ([REQ_WRITE, REQ_NULL], [REQ_NULL, REQ_WRITE]):
        call = Call(op, attrs, [x.shape, lab.shape], [x.dtype, lab.dtype],
                    [(2,), x.shape], [x.dtype, x.dtype], req=req)
        launch = op.prepare(call)
        out_l = np.full(2, 7.0)
        out_g = np.full(x.shape, 7.0)
        temps = [np.empty(s, d) for s, d in op.temps(call)]
        launch.fn(*pick_args(launch.args, [x, lab, out_l, out_g, *temps]), *launch.scalars)
        if req[0] == REQ_NULL:
            assert (out_l == 7.0).all()
            assert_almost_equal(out_g, grad)
        else:
            assert (out_g == 7.0).all()
            assert_almost_equal(out_l, loss)


def lattice(x, label, blank):
    """-log of the sum over monotone paths through the extended label's
    states (MXNet's recursion: a step of 2 only into a state whose class is
    neither the blank nor the class two states back), enumerated one by one;
    for labels without the blank this is the usual CTC probability."""
    T, C = x.shape
    lp = np_log_softmax(x)
    ext = [blank]
    for k in label:
        ext += [int(k), blank]
    S = len(ext)
    total = 0.0
    for steps in itertools.product((0, 1, 2), repeat=T - 1):
        for s0 in (0, 1):
            s, ok, path = s0, s0 < S, [s0]
            for d in steps:
                if d == 2 and (s + 2 >= S or ext[s + 2] == blank or ext[s + 2] == ext[s]):
                    ok = False
                    break
                s += d
                ok = ok and s < S
                path.append(s)
            if ok and path[-1] >= S - 2:
                total += np.exp(sum(lp[t, ext[q]] for t, q in enumerate(path)))
    return -np.log(total)


@pytest.mark.parametrize("label", [[3, 1, 3], [1, 3, 3], [3]])
def test_label_equal_to_blank_follows_mxnets_recursion(label, rng):
    # MXNet computes a loss for a label holding the blank class (aligned as a
    # blank state that cannot be skipped into); so does nbdl
    x = rng.normal(size=(5, 1, 4))
    lab = np.array([label], np.float32)
    got = nbdl.nd.CTCLoss(nbdl.nd.array(x), nbdl.nd.array(lab), blank_label="last").asnumpy()
    assert_almost_equal(got, [lattice(x[:, 0], label, 3)], rtol=1e-5)
    # without the blank the lattice is the usual CTC probability
    assert_almost_equal(lattice(x[:, 0], [1, 2], 3), reference(x, [[1, 2]], "last")[0][0],
                        rtol=1e-10)
    check_numeric_gradient(nbdl.sym.CTCLoss(nbdl.sym.var("x"), nbdl.sym.var("l"),
                                            blank_label="last"),
                           {"x": x, "l": lab}, grad_nodes=["x"], rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("label,attrs,match", [
    ([[1, 4]], {}, r"label\[0, 1\] = 4\.0 is not a valid class"),          # >= C
    ([[2, 2.5]], {"blank_label": "last"}, r"label\[0, 1\] = 2\.5 .*blank label is 3"),
    ([[1, -2]], {}, r"label\[0, 1\] = -2\.0"),
    ([[1, 2]], {"use_data_lengths": True}, r"data_lengths\[0\] = 9\.0 is out of range"),
    ([[1, 2]], {"use_label_lengths": True}, r"label_lengths\[0\] = 3\.0 is out of range"),
])
def test_bad_labels_and_lengths_raise(device, label, attrs, match, rng):
    dev = cpu() if device == "cpu" else gpu()
    x = nbdl.nd.array(rng.uniform(-1, 1, (3, 1, 4)), device=dev)
    args = [x, nbdl.nd.array(np.array(label, np.float32), device=dev)]
    if attrs.get("use_data_lengths"):
        args.append(nbdl.nd.array(np.array([9.0]), device=dev))
    if attrs.get("use_label_lengths"):
        args.append(nbdl.nd.array(np.array([3.0]), device=dev))
    with pytest.raises(CTCInputError, match=match) as info:
        nbdl.nd.CTCLoss(*args, **attrs)
    assert isinstance(info.value, nbdl.NbdlError)


def test_shape_errors():
    with pytest.raises(nbdl.ShapeError, match=r"CTCLoss: data must be 3-D"):
        ctc_sym().infer_shape(data=(3, 4), label=(3, 2))
    with pytest.raises(nbdl.ShapeError, match=r"batch size 2 to match data \(3, 2, 4\), got \(3, 2\)"):
        ctc_sym().infer_shape(data=(3, 2, 4), label=(3, 2))
    with pytest.raises(nbdl.ShapeError, match=r"label_lengths must have shape \(2,\)"):
        ctc_sym(use_label_lengths=True).infer_shape(data=(3, 2, 4), label=(2, 2),
                                                   label_lengths=(3,))
    with pytest.raises(nbdl.ShapeError, match=r"alphabet of size 0"), nbdl.np_shape(True):
        ctc_sym().infer_shape(data=(3, 2, 0), label=(2, 2))
    with pytest.raises(nbdl.AttrError):
        ctc_sym(blank_label="middle")


def test_shape_inference_and_outputs():
    sym = ctc_sym(use_data_lengths=True)
    assert sym.list_arguments() == ["data", "label", "data_lengths"]
    assert len(sym.list_outputs()) == 1
    args, outs, _ = sym.infer_shape(data=(5, 3, 4), label=(3, 2))
    assert args == [(5, 3, 4), (3, 2), (3,)] and outs == [(3,)]


@pytest.mark.cuda
@pytest.mark.parametrize("attrs", [{}, {"blank_label": "last", "use_data_lengths": True,
                                        "use_label_lengths": True}])
def test_cpu_vs_cuda(attrs, rng):
    x = rng.uniform(-1, 1, (3, 2, 3)).astype(np.float32)
    loc = {"data": x, "label": np.array([[1, 2], [1, 0]], np.float32)}
    if attrs.get("use_data_lengths"):
        loc["label"] = np.array([[1, 0], [0, 0]], np.float32)
        loc["data_lengths"] = np.array([3, 2], np.float32)
        loc["label_lengths"] = np.array([2, 1], np.float32)
    check_consistency(ctc_sym(**attrs), loc, devices=[cpu(), gpu()], rtol=1e-4, atol=1e-5)
