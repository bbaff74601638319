"""Gluon losses against numpy references written here: per-sample values
with weight / sample_weight / batch_axis, autograd gradients against central
differences of the reference, hybridized against eager."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.gluon import loss as gloss
from nbdl.testing import assert_almost_equal

# ---------------------------------------------------------------- helpers


def nd(x):
    x = np.asarray(x)
    return nbdl.nd.array(x, dtype=x.dtype)


def run(block, inputs, grad_idx=(0,), head=None):
    """Eager (or cached, when hybridized) forward and backward: the loss and
    the gradients of ``sum(loss * head)`` for ``inputs[grad_idx]``."""
    arrays = [nd(x) if x is not None else None for x in inputs]
    for i in grad_idx:
        arrays[i].attach_grad()
    while arrays and arrays[-1] is None:     # trailing optional inputs left out
        arrays.pop()
    with autograd.record():
        out = block(*arrays)
    out.backward(None if head is None else nd(head.astype(out.dtype)))
    return out.asnumpy(), [arrays[i].grad.asnumpy() for i in grad_idx]


def numeric_grad(f, inputs, i, head, eps=1e-6):
    """Central differences of ``sum(f(*inputs) * head)`` w.r.t. ``inputs[i]``."""
    args = [None if a is None else np.array(a, dtype=np.float64, order="C") for a in inputs]
    x = args[i]
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        flat[k] = old + eps
        fp = np.sum(f(*args) * head)
        flat[k] = old - eps
        fm = np.sum(f(*args) * head)
        flat[k] = old
        gflat[k] = (fp - fm) / (2 * eps)
    return g


def weighting(loss, weight, sample_weight):
    if sample_weight is not None:
        loss = loss * sample_weight
    if weight is not None:
        loss = loss * weight
    return loss


def batch_mean(loss, batch_axis):
    axis = batch_axis % loss.ndim
    rest = tuple(a for a in range(loss.ndim) if a != axis)
    return loss.mean(axis=rest) if rest else loss


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def stirling(t):
    safe = np.maximum(t, 1.0)
    return np.where(t > 1, safe * np.log(safe) - safe + 0.5 * np.log(2 * np.pi * safe), 0.0)


def huber(p, l, rho=0.7):
    d = np.abs(l - p)
    return np.where(d > rho, d - 0.5 * rho, 0.5 / rho * d ** 2)


# ---------------------------------------------------------------- elementwise losses

def normal(rng, shape):
    return rng.normal(size=shape)


def signs(rng, shape):
    return rng.choice([-1.0, 1.0], size=shape)


def bits(rng, shape):
    return rng.choice([0.0, 1.0], size=shape)


def unit(rng, shape):
    return rng.uniform(0.05, 0.95, size=shape)


def counts(rng, shape):
    return rng.randint(0, 6, size=shape).astype(np.float64)


def rates(rng, shape):
    return rng.uniform(0.5, 3.0, size=shape)


# id: (class, kwargs, pred sampler, label sampler, elementwise reference)
ELEMENTWISE = {
    "l1": (gloss.L1Loss, {}, normal, normal, lambda p, l: np.abs(l - p)),
    "l2": (gloss.L2Loss, {}, normal, normal, lambda p, l: 0.5 * (l - p) ** 2),
    "huber": (gloss.HuberLoss, {"rho": 0.7}, normal, normal, huber),
    "hinge": (gloss.HingeLoss, {"margin": 1.5}, normal, signs,
              lambda p, l: np.maximum(0, 1.5 - p * l)),
    "squared_hinge": (gloss.SquaredHingeLoss, {}, normal, signs,
                      lambda p, l: np.maximum(0, 1 - p * l) ** 2),
    "logistic_signed": (gloss.LogisticLoss, {}, normal, signs,
                        lambda p, l: np.logaddexp(0, -p * l)),
    "logistic_binary": (gloss.LogisticLoss, {"label_format": "binary"}, normal, bits,
                        lambda p, l: np.logaddexp(0, -p * (2 * l - 1))),
    "bce": (gloss.SigmoidBinaryCrossEntropyLoss, {}, lambda r, s: 3 * r.normal(size=s), unit,
            lambda p, l: -(l * np.log(sigmoid(p)) + (1 - l) * np.log(1 - sigmoid(p)))),
    "bce_from_sigmoid": (gloss.SigmoidBCELoss, {"from_sigmoid": True}, unit, bits,
                         lambda p, l: -(l * np.log(p + 1e-12) + (1 - l) * np.log(1 - p + 1e-12))),
    "kldiv": (gloss.KLDivLoss, {}, normal, unit, lambda p, l: l * (np.log(l + 1e-12) - p)),
}
# PoissonNLLLoss returns one number (the mean over every element), as MXNet's
POISSON = {
    "poisson": ({}, normal, counts, lambda p, l: np.exp(p) - l * p),
    "poisson_rate_full": ({"from_logits": False, "compute_full": True}, rates, counts,
                          lambda p, l: p - l * np.log(p + 1e-8) + stirling(l)),
}

# (shape, batch_axis, weight, sample_weight shape)
VARIANTS = [((4, 3), 0, None, None), ((4, 3), 0, 2.5, (4, 1)), ((3, 5, 2), 1, None, (1, 5, 1)),
            ((5,), 0, 0.5, (5,)), ((2, 3), -1, None, (1, 3))]


def elementwise_case(name, shape, batch_axis, weight, sw_shape, rng):
    cls, kwargs, pgen, lgen, f = ELEMENTWISE[name]
    if weight is None:   # the class's default (L2Loss: 1, the others: None)
        block = cls(batch_axis=batch_axis, **kwargs)
    else:
        block = cls(weight=weight, batch_axis=batch_axis, **kwargs)
    pred, label = pgen(rng, shape), lgen(rng, shape)
    sw = rng.uniform(0.5, 2.0, sw_shape) if sw_shape is not None else None

    def ref(p, l, s):
        return batch_mean(weighting(f(p, l), weight, s), batch_axis)
    return block, [pred, label, sw], ref


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: f"{v[0]}-axis{v[1]}-w{v[2]}-sw{v[3]}")
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_forward(name, variant, rng):
    block, inputs, ref = elementwise_case(name, *variant, rng)
    args = [nd(x) for x in inputs if x is not None]
    out = block(*args).asnumpy()
    assert out.shape == (variant[0][variant[1]],)
    assert_almost_equal(out, ref(*inputs), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_gradient_and_hybridized(name, rng):
    block, inputs, ref = elementwise_case(name, (4, 3), 0, 2.5, (4, 1), rng)
    head = rng.uniform(0.5, 1.5, 4)
    out, grads = run(block, inputs, grad_idx=(0, 2), head=head)
    assert_almost_equal(out, ref(*inputs), rtol=1e-10, atol=1e-12)
    for k, i in enumerate((0, 2)):
        assert_almost_equal(grads[k], numeric_grad(ref, inputs, i, head), rtol=1e-5, atol=1e-7,
                            names=(f"autograd grad of input {i}", "numeric"))
    block.hybridize()
    out_h, grads_h = run(block, inputs, grad_idx=(0, 2), head=head)
    assert_almost_equal(out_h, out, rtol=1e-12, atol=1e-14, names=("hybridized", "eager"))
    for gh, g in zip(grads_h, grads):
        assert_almost_equal(gh, g, rtol=1e-12, atol=1e-14, names=("hybridized grad", "eager"))


@pytest.mark.parametrize("name", sorted(POISSON))
def test_poisson_nll_is_the_mean_over_every_element(name, rng):
    kwargs, pgen, lgen, f = POISSON[name]
    block = gloss.PoissonNLLLoss(weight=2.5, **kwargs)
    pred, label, sw = pgen(rng, (4, 3)), lgen(rng, (4, 3)), rng.uniform(0.5, 2.0, (4, 1))

    def ref(p, lab, s):
        return np.array([np.mean(weighting(f(p, lab), 2.5, s))])
    out, grads = run(block, [pred, label, sw], grad_idx=(0, 2), head=np.array([1.3]))
    assert out.shape == (1,)
    assert_almost_equal(out, ref(pred, label, sw), rtol=1e-10, atol=1e-12)
    for k, i in enumerate((0, 2)):
        assert_almost_equal(grads[k], numeric_grad(ref, [pred, label, sw], i, np.array([1.3])),
                            rtol=1e-5, atol=1e-7)
    block.hybridize()
    out_h, _ = run(block, [pred, label, sw], grad_idx=(0,), head=np.array([1.3]))
    assert_almost_equal(out_h, out, rtol=1e-12, atol=1e-14)
    assert float(block(nd(pred), nd(label)).asscalar()) == pytest.approx(
        2.5 * float(np.mean(f(pred, label))), rel=1e-10)


@pytest.mark.parametrize("name", ["l2", "huber", "bce", "kldiv"])
def test_float32_stays_float32(name, rng):
    block, inputs, ref = elementwise_case(name, (4, 3), 0, None, None, rng)
    out = block(*[nd(x.astype(np.float32)) for x in inputs[:2]])
    assert out.dtype == np.float32
    assert_almost_equal(out.asnumpy(), ref(*inputs), rtol=1e-5, atol=1e-6)


def test_label_gradient_of_l2(rng):
    pred, label = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    _, (g,) = run(gloss.L2Loss(), [pred, label], grad_idx=(1,))
    assert_almost_equal(g, (label - pred) / 2, rtol=1e-12)


def test_label_is_reshaped_like_pred(rng):
    pred, label = rng.normal(size=(4, 1)), rng.normal(size=(4,))
    out = gloss.L1Loss()(nd(pred), nd(label)).asnumpy()
    assert_almost_equal(out, np.abs(label - pred[:, 0]))


def test_stable_bce_for_large_logits():
    pred = np.array([[80.0, -80.0, 0.0]], np.float32)
    label = np.array([[0.0, 1.0, 1.0]], np.float32)
    out = gloss.SigmoidBCELoss()(nd(pred), nd(label)).asnumpy()
    assert np.isfinite(out).all()
    assert_almost_equal(out, [(80 + 80 + np.log(2)) / 3], rtol=1e-6)


# ---------------------------------------------------------------- softmax cross-entropy, KL

@pytest.mark.parametrize("shape,axis,batch_axis,weight,sw_shape", [
    ((4, 5), -1, 0, None, None), ((4, 5), -1, 0, 3.0, (4, 1)), ((2, 3, 4), 1, 0, None, (2, 1, 4)),
    ((3, 2, 4), -1, 1, 0.5, None)])
@pytest.mark.parametrize("sparse,from_logits", [(True, False), (False, False), (True, True)])
def test_softmax_cross_entropy(shape, axis, batch_axis, weight, sw_shape, sparse, from_logits, rng):
    pred = rng.normal(size=shape)
    ax = axis % len(shape)
    k = shape[ax]
    if sparse:
        label = rng.randint(0, k, size=shape[:ax] + shape[ax + 1:]).astype(np.float64)
    else:
        label = rng.dirichlet(np.ones(k), size=int(np.prod(shape)) // k)
        label = np.moveaxis(label.reshape(shape[:ax] + shape[ax + 1:] + (k,)), -1, ax)
    sw = rng.uniform(0.5, 2, sw_shape) if sw_shape else None
    block = gloss.SoftmaxCrossEntropyLoss(axis=axis, sparse_label=sparse, from_logits=from_logits,
                                          weight=weight, batch_axis=batch_axis)

    def ref(p, l, s):
        logp = p if from_logits else log_softmax(p, ax)
        if sparse:
            idx = np.expand_dims(l.astype(np.int64), ax)
            loss = -np.take_along_axis(logp, idx, axis=ax)
        else:
            loss = -(logp * l).sum(axis=ax, keepdims=True)
        return batch_mean(weighting(loss, weight, s), batch_axis)
    head = rng.uniform(0.5, 1.5, shape[batch_axis])
    out, (g,) = run(block, [pred, label, sw], head=head)
    assert_almost_equal(out, ref(pred, label, sw), rtol=1e-10, atol=1e-12)
    assert_almost_equal(g, numeric_grad(ref, [pred, label, sw], 0, head), rtol=1e-5, atol=1e-7)
    block.hybridize()
    out_h, (g_h,) = run(block, [pred, label, sw], head=head)
    assert_almost_equal(out_h, out, rtol=1e-12, atol=1e-14)
    assert_almost_equal(g_h, g, rtol=1e-12, atol=1e-14)


def test_softmax_ce_alias_and_analytic_gradient(rng):
    assert gloss.SoftmaxCELoss is gloss.SoftmaxCrossEntropyLoss
    pred = rng.normal(size=(3, 4)).astype(np.float32)
    label = np.array([0, 3, 1], np.int32)
    out, (g,) = run(gloss.SoftmaxCELoss(), [pred, label])
    p = np.exp(log_softmax(pred.astype(np.float64), 1))
    assert_almost_equal(g, p - np.eye(4)[label], rtol=1e-5, atol=1e-6)
    assert_almost_equal(out, -np.log(p[np.arange(3), label]), rtol=1e-5)


def test_kldiv_from_unnormalised_scores(rng):
    pred, label = rng.normal(size=(2, 3, 4)), rng.dirichlet(np.ones(3), size=(2, 4))
    label = np.moveaxis(label, -1, 1)
    block = gloss.KLDivLoss(from_logits=False, axis=1, weight=2.0)

    def ref(p, l):
        return batch_mean(2.0 * l * (np.log(l + 1e-12) - log_softmax(p, 1)), 0)
    head = rng.uniform(0.5, 1.5, 2)
    out, (g,) = run(block, [pred, label], head=head)
    assert_almost_equal(out, ref(pred, label), rtol=1e-10)
    assert_almost_equal(g, numeric_grad(ref, [pred, label], 0, head), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("from_sigmoid", [False, True])
def test_sigmoid_bce_pos_weight(from_sigmoid, rng):
    pred = unit(rng, (4, 3)) if from_sigmoid else 3 * rng.normal(size=(4, 3))
    label, pos_weight, sw = unit(rng, (4, 3)), rng.uniform(0.5, 3, (1, 3)), rng.uniform(1, 2, (4, 1))
    block = gloss.SigmoidBinaryCrossEntropyLoss(from_sigmoid=from_sigmoid, weight=1.5)

    def ref(p, l, s, w):
        prob = p if from_sigmoid else sigmoid(p)
        eps = 1e-12 if from_sigmoid else 0.0
        loss = -(l * np.log(prob + eps) * w + (1 - l) * np.log(1 - prob + eps))
        return batch_mean(weighting(loss, 1.5, s), 0)
    head = rng.uniform(0.5, 1.5, 4)
    inputs = [pred, label, sw, pos_weight]
    out, grads = run(block, inputs, grad_idx=(0, 1), head=head)
    assert_almost_equal(out, ref(*inputs), rtol=1e-9, atol=1e-12)
    for k, i in enumerate((0, 1)):
        assert_almost_equal(grads[k], numeric_grad(ref, inputs, i, head), rtol=1e-5, atol=1e-7)
    block.hybridize()
    out_h, grads_h = run(block, inputs, grad_idx=(0, 1), head=head)
    assert_almost_equal(out_h, out, rtol=1e-12, atol=1e-14)
    assert_almost_equal(grads_h[0], grads[0], rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- triplet, cosine

@pytest.mark.parametrize("batch_axis,weight,with_sw", [(0, None, False), (1, 2.0, True)])
def test_triplet(batch_axis, weight, with_sw, rng):
    shape = (4, 3) if batch_axis == 0 else (3, 4)
    pred, pos, neg = (rng.normal(size=shape) for _ in range(3))
    sw = rng.uniform(0.5, 2, 4) if with_sw else None
    block = gloss.TripletLoss(margin=0.5, weight=weight, batch_axis=batch_axis)

    def ref(p, a, b, s):
        other = 1 - batch_axis
        loss = np.maximum(((a - p) ** 2 - (b - p) ** 2).sum(axis=other) + 0.5, 0)
        return weighting(loss, weight, s)
    head = rng.uniform(0.5, 1.5, 4)
    inputs = [pred, pos, neg, sw]
    out, grads = run(block, inputs, grad_idx=(0, 1, 2), head=head)
    assert out.shape == (4,)
    assert_almost_equal(out, ref(*inputs), rtol=1e-10, atol=1e-12)
    for k in range(3):
        assert_almost_equal(grads[k], numeric_grad(ref, inputs, k, head), rtol=1e-5, atol=1e-7)
    block.hybridize()
    out_h, _ = run(block, inputs, grad_idx=(0,), head=head)
    assert_almost_equal(out_h, out, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("margin,weight,with_sw", [(0.0, None, False), (0.2, 3.0, True)])
def test_cosine_embedding(margin, weight, with_sw, rng):
    x, y = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    label = np.array([1.0, -1.0, 1.0, -1.0, 0.0])
    sw = rng.uniform(0.5, 2, (5, 1)) if with_sw else None
    block = gloss.CosineEmbeddingLoss(margin=margin, weight=weight)

    def ref(a, b, l, s):
        cos = (a * b).sum(-1) / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1),
                                          1e-12)
        loss = np.where(l == 1, 1 - cos, np.where(l == -1, np.maximum(0, cos - margin), 0.0))
        return weighting(loss.reshape(-1, 1), weight, s)
    head = rng.uniform(0.5, 1.5, (5, 1))
    inputs = [x, y, label, sw]
    out, grads = run(block, inputs, grad_idx=(0, 1), head=head)
    assert out.shape == (5, 1) and out[4, 0] == 0      # MXNet 1.x's column
    assert_almost_equal(out, ref(*inputs), rtol=1e-10, atol=1e-12)
    for k in range(2):
        assert_almost_equal(grads[k], numeric_grad(ref, inputs, k, head), rtol=1e-5, atol=1e-7)
    block.hybridize()
    out_h, grads_h = run(block, inputs, grad_idx=(0, 1), head=head)
    assert_almost_equal(out_h, out, rtol=1e-12, atol=1e-14)
    assert_almost_equal(grads_h[1], grads[1], rtol=1e-12, atol=1e-14)


def test_cosine_embedding_zero_vector_has_finite_gradient():
    x, y = np.zeros((1, 3)), np.ones((1, 3))
    out, grads = run(gloss.CosineEmbeddingLoss(), [x, y, np.array([1.0])], grad_idx=(0, 1))
    assert_almost_equal(out, [[1.0]])
    assert all(np.isfinite(g).all() for g in grads)


# ---------------------------------------------------------------- CTC

def np_ctc(x_tnc, label, blank, pad, dlen=None, llen=None):
    """Per-sample CTC loss by the alpha recursion in probability space."""
    T, N, C = x_tnc.shape
    out = np.zeros(N)
    for n in range(N):
        tn = T if dlen is None else int(dlen[n])
        lab = [int(v) for v in label[n]]
        lab = lab[:int(llen[n])] if llen is not None else (lab[:lab.index(pad)] if pad in lab
                                                             else lab)
        ext = [blank]
        for v in lab:
            ext += [v, blank]
        z = x_tnc[:tn, n] - x_tnc[:tn, n].max(-1, keepdims=True)
        prob = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
        if tn == 0:
            out[n] = 0.0 if not lab else np.inf
            continue
        a = np.zeros(len(ext))
        a[0] = prob[0, blank]
        if len(ext) > 1:
            a[1] = prob[0, ext[1]]
        for t in range(1, tn):
            prev = a.copy()
            for s in range(len(ext)):
                v = prev[s] + (prev[s - 1] if s >= 1 else 0)
                if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                    v += prev[s - 2]
                a[s] = v * prob[t, ext[s]]
        total = a[-1] + (a[-2] if len(ext) > 1 else 0)
        out[n] = -np.log(total) if total > 0 else np.inf
    return out


@pytest.mark.parametrize("layout,label_layout", [("NTC", "NT"), ("TNC", "TN"), ("NTC", "TN")])
@pytest.mark.parametrize("lengths", [False, True])
def test_ctc_loss(layout, label_layout, lengths, rng):
    N, T, C = 3, 5, 4                                # blank = 3 (the last class)
    x_ntc = rng.normal(size=(N, T, C))
    label_nt = np.array([[0, 1, -1], [2, 2, -1], [1, -1, -1]], np.float64)
    dlen = np.array([5, 4, 2], np.float64) if lengths else None
    llen = np.array([2, 2, 1], np.float64) if lengths else None
    sw = rng.uniform(0.5, 2, N)
    pred = x_ntc if layout == "NTC" else x_ntc.transpose(1, 0, 2)
    label = label_nt if label_layout == "NT" else label_nt.T
    block = gloss.CTCLoss(layout=layout, label_layout=label_layout, weight=2.0)

    def ref(p, l, d, k, s):
        x = p.transpose(1, 0, 2) if layout == "NTC" else p
        lab = l if label_layout == "NT" else l.T
        return np_ctc(x, lab, C - 1, -1, d, k) * s * 2.0
    inputs = [pred, label, dlen, llen, sw]
    head = rng.uniform(0.5, 1.5, N)
    out, (g,) = run(block, inputs, head=head)
    assert out.shape == (N,)
    assert_almost_equal(out, ref(*inputs), rtol=1e-10, atol=1e-12)
    assert_almost_equal(g, numeric_grad(ref, inputs, 0, head), rtol=1e-5, atol=1e-7)
    if lengths:                                      # hybridized blocks take no None inputs
        block.hybridize()
        out_h, (g_h,) = run(block, inputs, head=head)
        assert_almost_equal(out_h, out, rtol=1e-12, atol=1e-14)
        assert_almost_equal(g_h, g, rtol=1e-12, atol=1e-14)


def test_ctc_loss_hybridized_without_lengths(rng):
    x = rng.normal(size=(2, 4, 3)).astype(np.float32)
    label = np.array([[0, 1], [1, -1]], np.float32)
    block = gloss.CTCLoss()
    eager, (g,) = run(block, [x, label])
    assert_almost_equal(eager, np_ctc(x.transpose(1, 0, 2).astype(np.float64), label, 2, -1),
                        rtol=1e-5)
    block.hybridize()
    hyb, (g_h,) = run(block, [x, label])
    assert_almost_equal(hyb, eager, rtol=1e-6, atol=1e-6)
    assert_almost_equal(g_h, g, rtol=1e-6, atol=1e-6)


def test_ctc_loss_label_equal_to_blank_is_computed(rng):
    # MXNet 1.x computes a loss for a label holding the blank class (the last
    # one here); tests/ops/test_ctc.py checks the op's number
    x = rng.normal(size=(1, 4, 3))
    got = gloss.CTCLoss()(nd(x), nd(np.array([[2.0, 1.0, -1.0]]))).asnumpy()
    op = nbdl.nd.CTCLoss(nd(x.transpose(1, 0, 2)), nd(np.array([[2.0, 1.0]])),
                         blank_label="last").asnumpy()
    assert np.isfinite(got).all()
    assert_almost_equal(got, op, rtol=1e-6)
    with pytest.raises(nbdl.NbdlError, match=r"label\[0, 0\] = 3\.0 is not a valid class"):
        gloss.CTCLoss()(nd(x), nd(np.array([[3.0, -1.0]])))


# ---------------------------------------------------------------- construction

@pytest.mark.parametrize("make,match", [
    (lambda: gloss.LogisticLoss(label_format="probability"), r"label_format='probability'"),
    (lambda: gloss.CTCLoss(layout="NCT"), r"layout='NCT'"),
    (lambda: gloss.CTCLoss(label_layout="TT"), r"label_layout='TT'"),
    (lambda: gloss.L1Loss(weight="2"), r"weight must be a number or None, got '2'"),
    (lambda: gloss.L2Loss(batch_axis=0.5), r"batch_axis must be an integer, got 0.5"),
    (lambda: gloss.HuberLoss(rho=0), r"rho must be positive, got 0.0"),
    (lambda: gloss.HingeLoss(margin=None), r"margin must be a number, got None"),
    (lambda: gloss.SoftmaxCELoss(axis="last"), r"axis must be an integer, got 'last'"),
    (lambda: gloss.L1Loss(prefix="l1_"), r"unknown arguments \['prefix'\]"),
])
def test_bad_arguments(make, match):
    with pytest.raises(nbdl.NbdlError, match=match):
        make()


def test_repr_and_defaults():
    assert repr(gloss.L2Loss()) == "L2Loss(batch_axis=0, w=1.0)"
    assert repr(gloss.L1Loss(batch_axis=1)) == "L1Loss(batch_axis=1, w=None)"
    assert gloss.CTCLoss(label_layout="TN")._batch_axis == 1
    assert gloss.SigmoidBCELoss is gloss.SigmoidBinaryCrossEntropyLoss
    assert isinstance(gloss.TripletLoss(), gloss.Loss)
    assert not gloss.SoftmaxCELoss().collect_params()


def test_shape_mismatch_names_the_shapes(rng):
    with pytest.raises(nbdl.ShapeError, match=r"\(4, 3\)"):
        gloss.L1Loss()(nd(rng.normal(size=(4, 3))), nd(rng.normal(size=(5,))))


# -- SDMLLoss (MXNet 1.9.1's number: the KL divergence per sample) -------------------

def np_sdml(x1, x2, s=0.3, weight=1.0):
    n = x1.shape[0]
    dist = ((x1[:, None, :] - x2[None, :, :]) ** 2).sum(axis=2)
    z = -dist - (-dist).max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    labels = np.eye(n) * (1 - s) + (1 - np.eye(n)) * s / (n - 1)
    return weight * (labels * (np.log(labels + 1e-12) - log_p)).sum(axis=1)


def test_sdml_loss_forward_gradient_and_hybridized(rng):
    x1 = rng.uniform(-1, 1, (4, 3))
    x2 = x1 + rng.uniform(-0.3, 0.3, (4, 3))
    block = gloss.SDMLLoss(smoothing_parameter=0.2, weight=1.5)

    def ref(a, b):
        return np_sdml(a, b, 0.2, 1.5)
    head = rng.uniform(0.5, 1.5, 4)
    out, grads = run(block, [x1, x2], grad_idx=(0, 1), head=head)
    assert out.shape == (4,)
    assert_almost_equal(out, ref(x1, x2), rtol=1e-10, atol=1e-12)
    for k in (0, 1):
        assert_almost_equal(grads[k], numeric_grad(ref, [x1, x2], k, head), rtol=1e-5, atol=1e-7)
    block.hybridize()
    out_h, grads_h = run(block, [x1, x2], grad_idx=(0,), head=head)
    assert_almost_equal(out_h, out, rtol=1e-12, atol=1e-14)
    assert_almost_equal(grads_h[0], grads[0], rtol=1e-12, atol=1e-14)


def test_sdml_aligned_pairs_give_a_lower_loss(rng):
    x1 = rng.uniform(-1, 1, (5, 8))
    aligned = gloss.SDMLLoss()(nd(x1), nd(x1 + 0.01)).asnumpy()
    shuffled = gloss.SDMLLoss()(nd(x1), nd(x1[::-1] + 0.01)).asnumpy()
    assert aligned.mean() < shuffled.mean()


def test_sdml_loss_errors():
    with pytest.raises(nbdl.errors.ShapeError, match="SDMLLoss.*\\(3, 2\\) and \\(3, 4\\)"):
        gloss.SDMLLoss()(nd(np.ones((3, 2))), nd(np.ones((3, 4))))
    with pytest.raises(nbdl.errors.ShapeError, match="batch >= 2"):
        gloss.SDMLLoss()(nd(np.ones((1, 2))), nd(np.ones((1, 2))))
    with pytest.raises(nbdl.errors.AttrError, match="smoothing_parameter"):
        gloss.SDMLLoss(smoothing_parameter=1.0)
    with pytest.raises(nbdl.errors.AttrError, match="batch_axis"):
        gloss.SDMLLoss(batch_axis=1)
