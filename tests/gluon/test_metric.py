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


def _confusion(labels, decisions, k):
    """Per-class (tp, fp, fn, tn) lists by direct loops.  ``labels`` and
    ``decisions`` are lists of rows; a row is a class id (multiclass) or a
    list of k 0/1 flags (binary: k == 1, multilabel)."""
    tp, fp, fn, tn = [0] * k, [0] * k, [0] * k, [0] * k
    for y, d in zip(labels, decisions):
        for c in range(k):
            is_label = (y == c) if isinstance(y, int) else y[c] == 1
            is_pred = (d == c) if isinstance(d, int) else d[c] == 1
            if is_pred and is_label:
                tp[c] += 1
            elif is_pred:
                fp[c] += 1
            elif is_label:
                fn[c] += 1
            else:
                tn[c] += 1
    return tp, fp, fn, tn


def _reference_f1(counts, average):
    tp, fp, fn, tn = counts
    if average == "micro":
        return _f1(sum(tp), sum(fp), sum(fn), sum(tn))
    return sum(_f1(*c) for c in zip(tp, fp, fn, tn)) / len(tp)


# Two update calls per class type: (labels, predictions) pairs, the decisions
# they lead to (written by hand), and the per-class confusion counts of both
# calls together (also by hand; the loops above must agree).
F1_DATA = {
    "binary": dict(
        k=1,
        batches=[(np.array([1, 0, 1, 1]), np.array([[0.2, 0.8], [0.4, 0.6], [0.7, 0.3],
                                                    [0.1, 0.9]])),
                 (np.array([0, 1]), np.array([0.2, 0.7]))],
        decisions=[[[1], [1], [0], [1]], [[0], [1]]],
        counts=([3], [1], [1], [1])),
    "multiclass": dict(
        k=3,
        batches=[(np.array([0, 1, 2, 2, 1]), np.eye(3)[[0, 2, 2, 1, 1]] * 0.8 + 0.1),
                 (np.array([[0], [0], [2]]), np.array([[3.0, -1.0, 0.0], [0.0, 2.0, 1.0],
                                                       [-2.0, -3.0, -1.0]]))],
        decisions=[[0, 2, 2, 1, 1], [0, 1, 2]],
        counts=([2, 1, 2], [0, 2, 1], [1, 1, 1], [5, 4, 4])),
    "multilabel": dict(
        k=2,
        batches=[(np.array([[1, 0], [0, 1], [1, 1]]), np.array([[0.9, 0.2], [0.6, 0.7],
                                                                 [0.4, 0.8]])),
                 (np.array([[0, 0]]), np.array([[0.1, 0.95]]))],
        decisions=[[[1, 0], [1, 1], [0, 1]], [[0, 1]]],
        counts=([1, 2], [1, 1], [1, 0], [1, 1])),
}
# F1 by hand from those counts: binary p = r = 3/4; multiclass per class
# 0.8, 0.4, 2/3 (micro = accuracy 5/8); multilabel per class 0.5, 0.8,
# micro p = 3/5, r = 3/4.
F1_EXPECTED = {("binary", "micro"): 0.75, ("binary", "macro"): 0.75,
               ("multiclass", "micro"): 0.625, ("multiclass", "macro"): (0.8 + 0.4 + 2 / 3) / 3,
               ("multilabel", "micro"): 2 / 3, ("multilabel", "macro"): 0.65}


def _rows(labels):
    return [int(v) if np.ndim(v) == 0 else [int(x) for x in np.ravel(v)]
            for v in (labels if labels.ndim > 1 and labels.shape[-1] > 1 else labels.ravel())]


@pytest.mark.parametrize("class_type", ["binary", "multiclass", "multilabel"])
@pytest.mark.parametrize("average", ["micro", "macro"])
def test_f1_class_types_and_averages(class_type, average):
    d = F1_DATA[class_type]
    labels = []
    for y, _ in d["batches"]:
        labels += [[v] for v in _rows(y)] if class_type == "binary" else _rows(y)
    decisions = [r for batch in d["decisions"] for r in batch]
    counts = _confusion(labels, decisions, d["k"])
    assert counts == tuple(d["counts"])
    want = F1_EXPECTED[class_type, average]
    assert _reference_f1(counts, average) == pytest.approx(want)

    m = metric.F1(class_type=class_type, average=average)
    (y1, p1), (y2, p2) = d["batches"]
    m.update([nbdl.nd.array(y1)], [nbdl.nd.array(p1, dtype=np.float64)])
    first = _confusion(labels[:len(d["decisions"][0])], d["decisions"][0], d["k"])
    assert m.get() == ("f1", pytest.approx(_reference_f1(first, average)))
    m.update(y2, p2)                                   # accumulates the counts
    assert m.get() == ("f1", pytest.approx(want))
    assert m.get_global()[1] == pytest.approx(want)
    assert m.num_inst == len(labels)
    m.reset_local()
    m.update(y2, p2)
    second = _confusion(labels[len(d["decisions"][0]):], d["decisions"][1], d["k"])
    assert m.get()[1] == pytest.approx(_reference_f1(second, average))
    both = tuple([a + b for a, b in zip(x, y)] for x, y in zip(counts, second))
    assert m.get_global()[1] == pytest.approx(_reference_f1(both, average))
    m.reset()
    assert math.isnan(m.get()[1]) and math.isnan(m.get_global()[1])
    m.update([y1, y2], [p1, p2])                        # a list of pairs in one call
    assert m.get()[1] == pytest.approx(want)


def test_f1_mxnet2_examples_and_binary_prediction_layouts():
    f1 = metric.F1()
    assert (f1.class_type, f1.threshold, f1.average) == ("binary", 0.5, "micro")
    f1.update([nbdl.nd.array([0.0, 1.0, 1.0])], [nbdl.nd.array([[0.3, 0.7], [0.0, 1.0], [0.4, 0.6]])])
    assert f1.get() == ("f1", pytest.approx(0.8))      # tp 2, fp 1, fn 0
    label = np.array([1, 0, 0, 1, 1])
    prob = np.array([0.9, 0.2, 0.7, 0.4, 0.6])
    want = _f1(*_binary_counts(label, (prob > 0.5).astype(int)))
    for pred in (prob, prob[:, None], np.stack([1 - prob, prob], axis=1)):
        m = metric.F1()
        m.update(label, pred)
        assert m.get()[1] == pytest.approx(want)
    m = metric.F1(threshold=0.65)                     # column 1 against the threshold
    m.update(label, np.stack([1 - prob, prob], axis=1))
    assert m.get()[1] == pytest.approx(_f1(*_binary_counts(label, (prob > 0.65).astype(int))))


def test_f1_per_class_thresholds_for_multilabel():
    d = F1_DATA["multilabel"]
    m = metric.F1(class_type="multilabel", average="macro", threshold=[0.5, 0.75])
    for y, p in d["batches"]:
        m.update(y, p)
    # class 1 now needs > 0.75: decisions [0, 0, 1, 1] against labels [0, 1, 1, 0]
    assert m.get()[1] == pytest.approx((0.5 + _f1(1, 1, 1, 1)) / 2)
    with pytest.raises(ShapeError, match=r"f1.*\(1, 3\).*2 per-class thresholds for 3 classes"):
        m.update(np.zeros((1, 3)), np.zeros((1, 3)))
    with pytest.raises(metric.MetricError, match="multilabel"):
        metric.F1(threshold=[0.5, 0.5])


def test_mcc_binary_accumulates_like_mxnet2():
    d = F1_DATA["binary"]
    for average in ("macro", "micro"):
        m = metric.MCC(average=average)
        for y, p in d["batches"]:
            m.update(y, p)
        assert m.get() == ("mcc", pytest.approx(_mcc(3, 1, 1, 1)))   # (3 - 1) / sqrt(4*4*2*2)
        assert m.get()[1] == pytest.approx(0.25)
    fp, tn, fn, tp = 1000, 1, 1, 10000                 # MXNet 2.0's documentation example
    preds = np.array([[.3, .7]] * fp + [[.7, .3]] * tn + [[.7, .3]] * fn + [[.3, .7]] * tp)
    labels = np.array([0.0] * (fp + tn) + [1.0] * (fn + tp))
    f1, mcc = metric.F1(), metric.MCC()
    f1.update(labels, preds)
    mcc.update(labels, preds)
    assert f1.get()[1] == pytest.approx(0.95233560306652054)
    assert mcc.get()[1] == pytest.approx(0.01917751877733392)
    constant = metric.MCC()
    constant.update(np.array([0, 1, 1]), np.array([0.9, 0.9, 0.9]))
    assert constant.get()[1] == 0.0
    assert "class_type" not in metric.MCC().get_config()
    assert metric.create("mcc", average="micro").average == "micro"


def test_f1_mcc_bad_inputs():
    with pytest.raises(metric.MetricError, match="class_type must be one of"):
        metric.F1(class_type="ternary")
    with pytest.raises(metric.MetricError, match="average must be 'macro' or 'micro'"):
        metric.F1(average="weighted")
    with pytest.raises(metric.MetricError, match="average must be 'macro' or 'micro'"):
        metric.MCC(average="weighted")
    with pytest.raises(metric.MetricError, match="threshold must be a number"):
        metric.F1(threshold="high")
    cases = [
        ("binary", np.zeros(3), np.zeros((3, 3)), r"f1 \(class_type='binary'\): labels of shape "
                                                  r"\(3,\) do not match predictions of shape \(3, 3\)"),
        ("binary", np.zeros(3), np.zeros((4, 1)), r"\(3,\).*\(4, 1\).*4 predictions for 3 labels"),
        ("binary", np.zeros(3), np.zeros(4), r"\(3,\).*\(4,\).*shaped like the labels"),
        ("multiclass", np.zeros(3), np.zeros((4, 3)), r"\(3,\).*\(4, 3\).*4 predicted classes"),
        ("multilabel", np.zeros((2, 2)), np.zeros((2, 3)), r"\(2, 2\).*\(2, 3\)"),
    ]
    for class_type, y, p, match in cases:
        with pytest.raises(ShapeError, match=match):
            metric.F1(class_type=class_type).update(y, p)
    with pytest.raises(metric.MetricError, match=r"labels 0 and 1, got \[0, 2\]"):
        metric.F1().update(np.array([0, 2]), np.array([[0.1, 0.9], [0.8, 0.2]]))
    with pytest.raises(metric.MetricError, match=r"class ids in \[0, 3\).*\[3\]"):
        metric.F1(class_type="multiclass").update(np.array([0, 3]), np.zeros((2, 3)))
    with pytest.raises(metric.MetricError, match="labels must be integers"):
        metric.F1().update(np.array([0.5, 1.0]), np.array([0.1, 0.9]))
    m = metric.F1(class_type="multiclass")
    m.update(np.array([0, 1]), np.eye(3)[[0, 1]])
    with pytest.raises(metric.MetricError, match="number of classes changed from 3 to 4"):
        m.update(np.array([0]), np.zeros((1, 4)))
    # a bad pair anywhere in the call leaves the counts as they were
    with pytest.raises(ShapeError):
        m.update([np.array([2]), np.array([0])], [np.eye(3)[[2]], np.zeros((2, 3))])
    assert m.get()[1] == 1.0 and m.num_inst == 2
    m.reset()                                           # a new number of classes after reset
    m.update(np.array([3]), np.eye(4)[[3]])
    assert m.get()[1] == 1.0
    with pytest.raises(ShapeError, match="2 label arrays but 1 prediction arrays"):
        metric.MCC().update([np.zeros(2), np.zeros(2)], [np.zeros(2)])


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
