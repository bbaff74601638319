"""gluon.metric: every metric against a numpy reference computed here."""
import math

import numpy as np
import pytest

import nbdl
from nbdl.errors import NbdlError, ShapeError
from nbdl.gluon import metric


@pytest.fixture
def rng():
    return np.random.RandomState(42)


def test_accuracy_argmax_lists_and_mixed_inputs(rng):
    preds = [rng.rand(6, 4).astype(np.float32), rng.rand(5, 4).astype(np.float32)]
    labels = [rng.randint(0, 4, 6), rng.randint(0, 4, 5)]
    m = metric.Accuracy()
    m.update([nbdl.nd.array(labels[0]), labels[1]], [nbdl.nd.array(preds[0]), preds[1]])
    correct = sum(int((p.argmax(1) == y).sum()) for p, y in zip(preds, labels))
    assert m.get() == ("accuracy", pytest.approx(correct / 11))
    same_shape = metric.Accuracy()
    same_shape.update(np.array([1, 2, 3]), np.array([1, 0, 3]))
    assert same_shape.get()[1] == pytest.approx(2 / 3)
    with pytest.raises(ShapeError, match=r"labels of shape \(3,\) do not match predictions of "
                                          r"shape \(4, 2\)"):
        metric.Accuracy().update(np.zeros(3), np.zeros((4, 2)))


def test_top_k_accuracy(rng):
    pred = rng.randn(20, 6)
    label = rng.randint(0, 6, 20)
    m = metric.TopKAccuracy(top_k=3)
    assert m.name == "top_k_accuracy_3"
    m.update(nbdl.nd.array(label), nbdl.nd.array(pred, dtype=np.float64))
    top3 = np.argsort(-pred, axis=1)[:, :3]
    expected = np.mean([label[i] in top3[i] for i in range(20)])
    assert m.get()[1] == pytest.approx(expected)
    with pytest.raises(metric.MetricError, match="top_k must be a positive integer"):
        metric.TopKAccuracy(top_k=0)
    with pytest.raises(ShapeError, match=r"\(20,\)"):
        m.update(label, pred[:5])


def _binary_counts(label, pred_label):
    tp = int(((pred_label == 1) & (label == 1)).sum())
    fp = int(((pred_label == 1) & (label == 0)).sum())
    fn = int(((pred_label == 0) & (label == 1)).sum())
    tn = int(((pred_label == 0) & (label == 0)).sum())
    return tp, fp, fn, tn


def _f1(tp, fp, fn, tn):
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def _mcc(tp, fp, fn, tn):
    terms = [tp + fp, tp + fn, tn + fp, tn + fn]
    denom = math.prod(t for t in terms if t)
    return (tp * tn - fp * fn) / math.sqrt(denom)


def _binary_batches(rng):
    out = []
    for n in (12, 9):
        pred = rng.rand(n, 2)
        out.append((rng.randint(0, 2, n), pred))
    return out


@pytest.mark.parametrize("cls,score", [(metric.F1, _f1), (metric.MCC, _mcc)])
def test_f1_and_mcc_macro_and_micro(rng, cls, score):
    batches = _binary_batches(rng)
    per_batch = [_binary_counts(y, p.argmax(1)) for y, p in batches]
    totals = tuple(map(sum, zip(*per_batch)))
    macro, micro = cls(average="macro"), cls(average="micro")
    for y, p in batches:
        macro.update([nbdl.nd.array(y)], [nbdl.nd.array(p)])
        micro.update(y, p)
    assert macro.get()[1] == pytest.approx(np.mean([score(*c) for c in per_batch]))
    assert micro.get()[1] == pytest.approx(score(*totals))
    assert micro.num_inst == 21
    assert macro.get()[1] != pytest.approx(micro.get()[1])


def test_f1_with_probabilities_and_bad_labels():
    m = metric.F1(average="micro")
    prob = np.array([0.9, 0.2, 0.7, 0.4, 0.6])
    label = np.array([1, 0, 0, 1, 1])
    m.update(label, prob)
    assert m.get()[1] == pytest.approx(_f1(*_binary_counts(label, (prob > 0.5).astype(int))))
    with pytest.raises(metric.MetricError, match=r"labels 0 and 1, got \[0, 2\]"):
        m.update(np.array([0, 2]), np.array([[0.1, 0.9], [0.8, 0.2]]))
    with pytest.raises(metric.MetricError, match="average must be 'macro' or 'micro'"):
        metric.F1(average="weighted")
    with pytest.raises(ShapeError, match=r"\(n, 2\), \(n, 1\) or \(n,\).*\(3, 3\)"):
        m.update(np.zeros(3), np.zeros((3, 3)))


def test_mae_mse_rmse_average_over_samples(rng):
    batches = [(rng.randn(4), rng.randn(4, 1)), (rng.randn(3, 2), rng.randn(3, 2))]
    per_sample_abs, per_sample_sq = [], []
    for y, p in batches:
        d = y.reshape(len(y), -1) - p.reshape(len(p), -1)
        per_sample_abs.extend(np.abs(d).mean(axis=1))
        per_sample_sq.extend((d ** 2).mean(axis=1))
    mae, mse, rmse = metric.MAE(), metric.MSE(), metric.RMSE()
    for y, p in batches:
        for m in (mae, mse, rmse):
            m.update(nbdl.nd.array(y), nbdl.nd.array(p))
    assert mae.get()[1] == pytest.approx(np.mean(per_sample_abs), rel=1e-6)
    assert mse.get()[1] == pytest.approx(np.mean(per_sample_sq), rel=1e-6)
    assert rmse.get() == ("rmse", pytest.approx(np.sqrt(np.mean(per_sample_sq)), rel=1e-6))
    with pytest.raises(ShapeError, match=r"labels of shape \(4,\) do not match predictions of "
                                         r"shape \(4, 2\)"):
        mae.update(np.zeros(4), np.zeros((4, 2)))


def test_cross_entropy_and_nll(rng):
    pred = rng.rand(2, 3, 5)
    pred /= pred.sum(-1, keepdims=True)
    label = rng.randint(0, 5, (2, 3))
    ce = metric.CrossEntropy()
    ce.update(nbdl.nd.array(label), nbdl.nd.array(pred))
    picked = np.take_along_axis(pred, label[..., None], -1).ravel()
    assert ce.get() == ("cross-entropy", pytest.approx(np.mean(-np.log(picked + 1e-12)), rel=1e-6))
    nll = metric.create("nll_loss")
    nll.update(label, pred)
    assert nll.get()[1] == pytest.approx(ce.get()[1], rel=1e-6)
    with pytest.raises(metric.MetricError, match=r"class indices in \[0, 5\), got \[7\]"):
        ce.update(np.array([7]), np.ones((1, 5)) / 5)
    with pytest.raises(ShapeError, match=r"labels of shape \(4,\) do not match predictions of "
                                         r"shape \(3, 5\)"):
        ce.update(np.zeros(4), np.ones((3, 5)))


def test_perplexity_with_ignore_label(rng):
    pred = rng.rand(2, 4, 6)
    pred /= pred.sum(-1, keepdims=True)
    label = rng.randint(0, 6, (2, 4))
    label[0, 1] = label[1, 3] = -1
    m = metric.Perplexity(ignore_label=-1)
    m.update([nbdl.nd.array(label)], [nbdl.nd.array(pred)])
    keep = label != -1
    picked = np.take_along_axis(pred, np.where(keep, label, 0)[..., None], -1)[..., 0][keep]
    assert m.num_inst == 6
    assert m.get()[1] == pytest.approx(np.exp(-np.log(picked).mean()), rel=1e-5)
    plain = metric.Perplexity(ignore_label=None, axis=1)
    plain.update(np.array([0, 2]), np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]))
    assert plain.get()[1] == pytest.approx(np.exp(-(np.log(0.5) + np.log(0.8)) / 2))


def test_pearson_macro_and_micro(rng):
    pairs = [(rng.randn(10), rng.randn(10)), (rng.randn(2, 4), rng.randn(2, 4))]
    pairs = [(y, 0.6 * y + p) for y, p in pairs]
    macro = metric.PearsonCorrelation()
    micro = metric.create("pearsonr", average="micro")
    for y, p in pairs:
        macro.update(nbdl.nd.array(y), nbdl.nd.array(p))
        micro.update(y, p)
    per_pair = [np.corrcoef(p.ravel(), y.ravel())[0, 1] for y, p in pairs]
    overall = np.corrcoef(np.concatenate([p.ravel() for _, p in pairs]),
                          np.concatenate([y.ravel() for y, _ in pairs]))[0, 1]
    assert macro.get()[1] == pytest.approx(np.mean(per_pair), rel=1e-5)
    assert micro.get()[1] == pytest.approx(overall, rel=1e-5)


def test_loss_custom_and_np():
    loss = metric.Loss()
    loss.update(None, [nbdl.nd.array([1.0, 2.0]), np.array([[3.0, 6.0]])])
    assert loss.get() == ("loss", pytest.approx(3.0))

    def hits(label, pred):
        return int((label == pred).sum()), label.size
    custom = metric.CustomMetric(hits)
    custom.update([np.array([1, 2, 3])], [nbdl.nd.array([1, 0, 3], dtype=np.int32)])
    assert custom.get() == ("hits", pytest.approx(2 / 3))

    def mean_gap(label, pred):
        return float(np.abs(label - pred).mean())
    wrapped = metric.np(mean_gap)
    wrapped.update([np.zeros(2), np.zeros(2)], [np.ones(2), 3 * np.ones(2)])
    assert wrapped.get() == ("mean_gap", pytest.approx(2.0))
    assert metric.create(lambda y, p: 0.0).name == "custom(<lambda>)"
    extra = metric.CustomMetric(mean_gap, allow_extra_outputs=True)
    extra.update([np.zeros(2)], [np.ones(2), np.ones(3)])
    assert extra.get()[1] == 1.0
    with pytest.raises(ShapeError, match="1 label arrays but 2 prediction arrays"):
        custom.update([np.zeros(2)], [np.ones(2), np.ones(3)])


def test_local_and_global_totals():
    m = metric.Accuracy()
    assert math.isnan(m.get()[1])
    m.update(np.array([1, 1]), np.array([1, 1]))
    m.reset_local()
    m.update(np.array([1, 1]), np.array([1, 0]))
    assert m.get()[1] == 0.5 and m.get_global()[1] == 0.75
    assert m.get_global_name_value() == [("accuracy", 0.75)]
    m.reset()
    assert math.isnan(m.get_global()[1])
    f1 = metric.F1(average="micro")
    f1.update(np.array([1, 0]), np.array([0.9, 0.1]))
    f1.reset_local()
    f1.update(np.array([1, 1]), np.array([0.1, 0.9]))
    assert f1.get()[1] == pytest.approx(_f1(1, 0, 1, 0))
    assert f1.get_global()[1] == pytest.approx(_f1(2, 0, 1, 1))


def test_composite_and_create():
    comp = metric.create(["acc", metric.CrossEntropy(), "f1"])
    assert isinstance(comp, metric.CompositeEvalMetric)
    comp.update(np.array([1, 0]), np.array([[0.2, 0.8], [0.6, 0.4]]))
    names, values = comp.get()
    assert names == ["accuracy", "cross-entropy", "f1"]
    assert values[0] == 1.0 and values[2] == 1.0
    assert values[1] == pytest.approx(-(np.log(0.8) + np.log(0.6)) / 2)
    assert comp.get_metric(1).name == "cross-entropy"
    assert comp.get_name_value()[0] == ("accuracy", 1.0)
    with pytest.raises(metric.MetricError, match="index 5 is out of range for 3 metrics"):
        comp.get_metric(5)
    comp.reset()
    assert all(math.isnan(v) for v in comp.get()[1])
    assert isinstance(metric.create("ACC"), metric.Accuracy)
    assert metric.create("top_k_acc", top_k=2).top_k == 2
    acc = metric.Accuracy()
    assert metric.create(acc) is acc
    with pytest.raises(metric.MetricError, match="unknown metric 'nope'.*acc"):
        metric.create("nope")
    with pytest.raises(metric.MetricError, match="expected a metric name"):
        metric.create(3)


def test_register_and_update_dict():
    @metric.register
    class CountPositives(metric.EvalMetric):
        def __init__(self, name="count_positives"):
            super().__init__(name)

        def update(self, labels, preds):
            for p in preds:
                self.sum_metric += float((p > 0).sum())
                self.num_inst += 1
    m = metric.create("countpositives")
    assert isinstance(m, CountPositives)
    m.update_dict({"y": np.zeros(1)}, {"out": np.array([1.0, -1.0, 2.0])})
    assert m.get() == ("count_positives", 2.0)
    named = metric.MSE(output_names=["b"], label_names=["y"])
    named.update_dict({"y": np.array([1.0])}, {"a": np.array([100.0]), "b": np.array([3.0])})
    assert named.get()[1] == 4.0
    with pytest.raises(metric.MetricError, match="expected an EvalMetric subclass"):
        metric.register(int)
    with pytest.raises(TypeError):
        metric.EvalMetric("abstract")


def test_input_errors():
    m = metric.Accuracy()
    with pytest.raises(metric.MetricError, match=r"preds\[0\] is a list"):
        m.update([np.zeros(2)], [[0, 1]])
    with pytest.raises(metric.MetricError, match="labels must be an NDArray.*got int"):
        m.update(3, np.zeros(2))
    assert issubclass(metric.MetricError, NbdlError)
