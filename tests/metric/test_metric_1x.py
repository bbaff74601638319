"""nbdl.metric (MXNet 1.x's metrics): every metric against a numpy reference
computed here, local against global statistics after reset_local, F1 / MCC
macro and micro averaging, create() by every name, JSON configs,
CompositeEvalMetric, CustomMetric / np with numpy functions, errors."""
import copy
import json
import math

import numpy as np
import pytest

import nbdl
from nbdl import metric
from nbdl.errors import ShapeError
from nbdl.gluon import metric as gluon_metric
from nbdl.metric import MetricError


@pytest.fixture
def rng():
    return np.random.RandomState(3)


def nd(a):
    return nbdl.nd.array(a)


def _binary_batches(rng, n=4, size=9):
    preds = [rng.rand(size, 2) for _ in range(n)]
    labels = [rng.randint(0, 2, size).astype(np.float32) for _ in range(n)]
    return labels, preds


def _counts(label, pred):
    p, t = pred.argmax(axis=1) == 1, label == 1
    return (int((p & t).sum()), int((p & ~t).sum()), int((~p & t).sum()), int((~p & ~t).sum()))


def _f1(tp, fp, fn, tn):
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return 2 * prec * rec / (prec + rec) if prec + rec else 0.0


def _mcc(tp, fp, fn, tn):
    if not tp + fp + fn + tn:
        return 0.0
    factors = [f for f in (tp + fp, tp + fn, tn + fp, tn + fn) if f]
    return (tp * tn - fp * fn) / math.sqrt(np.prod(np.array(factors, dtype=np.float64)))


def _sum(*counts):
    return tuple(int(sum(c[i] for c in counts)) for i in range(4))


def test_nbdl_metric_is_the_1x_module():
    assert nbdl.metric is metric
    assert metric.create("acc").__class__ is metric.Accuracy
    assert gluon_metric.create("acc").__class__ is gluon_metric.Accuracy
    # shared implementation: the 1.x class is Gluon's under the 1.x base
    assert issubclass(metric.Accuracy, gluon_metric.Accuracy)
    assert issubclass(metric.Accuracy, metric.EvalMetric)


def test_accuracy_and_top_k(rng):
    pred, label = rng.rand(12, 5), rng.randint(0, 5, 12).astype(np.float32)
    m = metric.Accuracy()
    m.update([nd(label)], [nd(pred)])
    assert m.get() == ("accuracy", pytest.approx(np.mean(pred.argmax(1) == label)))
    top = metric.create("top_k_accuracy", top_k=3)
    top.update(nd(label), nd(pred))
    best3 = np.argsort(-pred, axis=1)[:, :3]
    assert top.get() == ("top_k_accuracy_3",
                         pytest.approx(np.mean([label[i] in best3[i] for i in range(12)])))
    # 2-d labels against argmax rows, as in 1.x
    two_d = metric.Accuracy()
    two_d.update([nd(label.reshape(3, 4))], [nd(pred)])
    assert two_d.get()[1] == pytest.approx(np.mean(pred.argmax(1) == label))


def test_f1_macro_averages_updates_and_micro_scores_the_summed_counts(rng):
    labels, preds = _binary_batches(rng)
    counts = [_counts(lb, p) for lb, p in zip(labels, preds)]
    macro, micro = metric.F1(), metric.create("f1", average="micro")
    assert math.isnan(macro.get()[1]) and math.isnan(micro.get()[1])
    # two pairs per update: an update's counts are the sum over its pairs
    for i in (0, 2):
        for m in (macro, micro):
            m.update([nd(labels[i]), nd(labels[i + 1])], [nd(preds[i]), nd(preds[i + 1])])
    per_update = [_f1(*_sum(counts[0], counts[1])), _f1(*_sum(counts[2], counts[3]))]
    assert macro.get()[1] == pytest.approx(np.mean(per_update))
    assert macro.num_inst == 2
    assert micro.get()[1] == pytest.approx(_f1(*_sum(*counts)))
    assert micro.num_inst == sum(len(lb) for lb in labels)
    # reset_local: local restarts, global keeps everything since reset
    for m in (macro, micro):
        m.reset_local()
        m.update([nd(labels[0])], [nd(preds[0])])
    assert macro.get()[1] == pytest.approx(_f1(*counts[0]))
    assert macro.get_global()[1] == pytest.approx(np.mean(per_update + [_f1(*counts[0])]))
    assert micro.get()[1] == pytest.approx(_f1(*counts[0]))
    assert micro.get_global()[1] == pytest.approx(_f1(*_sum(*counts, counts[0])))
    # no positive at all: 0, not a division error
    none = metric.F1()
    none.update([nd([0, 0])], [nd([[0.9, 0.1], [0.8, 0.2]])])
    assert none.get()[1] == 0.0


def test_mcc_macro_and_micro(rng):
    labels, preds = _binary_batches(rng, n=3)
    counts = [_counts(lb, p) for lb, p in zip(labels, preds)]
    macro, micro = metric.MCC(), metric.MCC(average="micro")
    for lb, p in zip(labels, preds):
        macro.update([nd(lb)], [nd(p)])
        micro.update([nd(lb)], [nd(p)])
    assert macro.get()[1] == pytest.approx(np.mean([_mcc(*c) for c in counts]))
    assert micro.get()[1] == pytest.approx(_mcc(*_sum(*counts)))
    constant = metric.MCC()
    constant.update([nd([0, 0])], [nd([[0.9, 0.1], [0.8, 0.2]])])
    assert constant.get()[1] == 0.0


def test_f1_errors():
    with pytest.raises(MetricError, match="binary classification only: labels must be 0 or 1, "
                                          r"got \[0.0, 1.0, 2.0\]"):
        metric.F1().update([nd([0, 1, 2])], [nd(np.zeros((3, 3)))])
    with pytest.raises(ShapeError, match=r"predictions of shape \(3,\) for labels of shape "
                                         r"\(3,\)"):
        metric.F1().update([nd([0, 1, 1])], [nd([0.2, 0.7, 0.9])])
    with pytest.raises(MetricError, match="average must be 'macro' or 'micro', got 'weighted'"):
        metric.F1(average="weighted")


def test_regression_metrics_average_per_array(rng):
    labels = [rng.rand(6, 2), rng.rand(3, 2), rng.rand(5)]
    preds = [rng.rand(6, 2), rng.rand(3, 2), rng.rand(5, 1)]
    diffs = [labels[0] - preds[0], labels[1] - preds[1], labels[2][:, None] - preds[2]]
    expected = {"mae": np.mean([np.abs(d).mean() for d in diffs]),
                "mse": np.mean([(d ** 2).mean() for d in diffs]),
                "rmse": np.mean([np.sqrt((d ** 2).mean()) for d in diffs])}
    for name, value in expected.items():
        m = metric.create(name)
        m.update([nd(x) for x in labels], [nd(x) for x in preds])
        assert m.get() == (name, pytest.approx(value))
        assert m.num_inst == 3
    # a single array pair (1.x accepts bare NDArrays)
    pred = np.array([[1.0, 2.0, 3.0, 4.0]])
    mse = metric.create("mse")
    mse.update(nd(pred + 0.1), nd(pred))
    assert mse.get()[1] == pytest.approx(0.01, rel=1e-5)    # float32 arrays
    # Gluon 2.0's MSE averages over samples instead: a different number here
    g = gluon_metric.MSE()
    g.update([nd(x) for x in labels[:2]], [nd(x) for x in preds[:2]])
    per_sample = np.concatenate([(d ** 2).mean(axis=1) for d in diffs[:2]]).mean()
    assert g.get()[1] == pytest.approx(per_sample)
    with pytest.raises(ShapeError, match=r"labels of shape \(4, 1\) do not match predictions "
                                         r"of shape \(4, 3\)"):
        metric.MAE().update([nd(np.zeros(4))], [nd(np.zeros((4, 3)))])


def test_probability_metrics(rng):
    probs = rng.rand(10, 4)
    probs /= probs.sum(axis=1, keepdims=True)
    label = rng.randint(0, 4, 10).astype(np.float32)
    picked = probs[np.arange(10), label.astype(int)]
    for name in ("ce", "nll_loss"):
        m = metric.create(name)
        m.update([nd(label)], [nd(probs)])
        assert m.get()[1] == pytest.approx(np.mean(-np.log(picked + 1e-12)), rel=1e-6)
    perp = metric.create("perplexity", 1)
    perp.update([nd(label)], [nd(probs)])
    keep = label != 1
    assert perp.get()[1] == pytest.approx(np.exp(-np.log(picked[keep]).mean()), rel=1e-6)
    for name in ("loss", "torch", "caffe"):
        m = metric.create(name)
        m.update(None, nd(probs))
        m.update(None, [nd(probs[:3])])
        assert m.get() == (name, pytest.approx(np.concatenate([probs.ravel(),
                                                               probs[:3].ravel()]).mean()))


def test_pearson_and_pcc(rng):
    labels, preds = [rng.rand(4, 3) for _ in range(2)], [rng.rand(4, 3) for _ in range(2)]
    macro, micro = metric.create("pearsonr"), metric.create("pearsonr", average="micro")
    for lb, p in zip(labels, preds):
        macro.update([nd(lb)], [nd(p)])
        micro.update([nd(lb)], [nd(p)])
    per = [np.corrcoef(p.ravel(), lb.ravel())[0, 1] for lb, p in zip(labels, preds)]
    assert macro.get()[1] == pytest.approx(np.mean(per))
    every = np.corrcoef(np.concatenate([p.ravel() for p in preds]),
                        np.concatenate([lb.ravel() for lb in labels]))[0, 1]
    assert micro.get()[1] == pytest.approx(every)
    # PCC: the multiclass MCC of the confusion matrix
    y = rng.randint(0, 3, 40)
    scores = rng.rand(40, 3)
    yhat = scores.argmax(axis=1)
    cm = np.zeros((3, 3))
    np.add.at(cm, (yhat, y), 1)
    n, x, t = cm.sum(), cm.sum(axis=1), cm.sum(axis=0)
    ref = (np.trace(cm) * n - x @ t) / math.sqrt((n * n - x @ x) * (n * n - t @ t))
    pcc = metric.create("pcc")
    pcc.update([nd(y[:25]), nd(y[25:])], [nd(scores[:25]), nd(scores[25:])])
    assert pcc.get()[1] == pytest.approx(ref)
    ids = metric.PCC()
    ids.update([nd(y)], [nd(yhat.astype(np.float32))])       # class ids instead of scores
    assert ids.get()[1] == pytest.approx(ref)
    # binary: PCC agrees with MCC
    yb, sb = rng.randint(0, 2, 30), rng.rand(30, 2)
    p2, m2 = metric.PCC(), metric.MCC()
    p2.update([nd(yb)], [nd(sb)])
    m2.update([nd(yb)], [nd(sb)])
    assert p2.get()[1] == pytest.approx(m2.get()[1])
    assert math.isnan(metric.PCC().get()[1])


def _global_check(name, make_batch, **kwargs):
    """After updates each followed by reset_local, get_global() equals get()
    of a metric that was never reset_local-ed; reset_local then restarts get()."""
    m1 = metric.create(name, **kwargs)
    m2 = copy.deepcopy(m1)
    for _ in range(5):
        labels, preds = make_batch()
        m1.update(labels, preds)
        m1.reset_local()
        m2.update(labels, preds)
    assert m1.get_global()[1] == pytest.approx(m2.get()[1])
    assert math.isnan(m1.get()[1]) if not isinstance(m1, metric.CompositeEvalMetric) else True
    labels, preds = make_batch()
    m1.update(labels, preds)
    m3 = metric.create(name, **kwargs)
    m3.update(labels, preds)
    assert m1.get() == m3.get()


@pytest.mark.parametrize("name, kwargs, kind", [
    ("acc", {}, "class"), ("top_k_acc", {"top_k": 2}, "class"), ("f1", {}, "binary"),
    ("f1", {"average": "micro"}, "binary"), ("mcc", {}, "binary"),
    ("mcc", {"average": "micro"}, "binary"), ("pcc", {}, "binary"),
    ("perplexity", {"ignore_label": None}, "class"), ("ce", {}, "class"),
    ("nll_loss", {}, "class"), ("loss", {}, "class"), ("mae", {}, "same"),
    ("mse", {}, "same"), ("rmse", {}, "same"), ("pearsonr", {}, "same"),
    ("pearsonr", {"average": "micro"}, "same"), (["acc", "f1"], {}, "binary"),
])
def test_global_statistics_survive_reset_local(rng, name, kwargs, kind):
    def make_batch():
        if kind == "same":
            return [nd(rng.rand(6, 2))], [nd(rng.rand(6, 2))]
        k = 2 if kind == "binary" else 4
        p = rng.rand(8, k)
        p /= p.sum(axis=1, keepdims=True)
        return [nd(rng.randint(0, k, 8).astype(np.float32))], [nd(p)]
    _global_check(name, make_batch, **kwargs)


ALL_NAMES = {
    "acc": metric.Accuracy, "accuracy": metric.Accuracy,
    "top_k_accuracy": metric.TopKAccuracy, "top_k_acc": metric.TopKAccuracy,
    "topkaccuracy": metric.TopKAccuracy, "f1": metric.F1, "mcc": metric.MCC, "pcc": metric.PCC,
    "perplexity": metric.Perplexity, "mae": metric.MAE, "mse": metric.MSE, "rmse": metric.RMSE,
    "ce": metric.CrossEntropy, "crossentropy": metric.CrossEntropy,
    "nll_loss": metric.NegativeLogLikelihood,
    "negativeloglikelihood": metric.NegativeLogLikelihood,
    "pearsonr": metric.PearsonCorrelation, "pearsoncorrelation": metric.PearsonCorrelation,
    "loss": metric.Loss, "torch": metric.Torch, "caffe": metric.Caffe,
    "composite": metric.CompositeEvalMetric,
    "compositeevalmetric": metric.CompositeEvalMetric,
}


@pytest.mark.parametrize("name", sorted(ALL_NAMES))
def test_create_by_every_name_and_json_config_round_trip(name):
    args = (-1,) if name == "perplexity" else ()
    kwargs = {"top_k": 3} if "top" in name else {}
    m = metric.create(name.upper(), *args, **kwargs)
    assert type(m) is ALL_NAMES[name]
    text = json.dumps(m.get_config())
    again = metric.create(text)
    assert type(again) is type(m) and again.get_config() == m.get_config()
    assert again.name == m.name
    assert metric.create(m.get_config()).get_config() == m.get_config()


def test_create_other_forms_and_errors():
    acc = metric.Accuracy()
    assert metric.create(acc) is acc
    gluon_acc = gluon_metric.Accuracy()
    assert metric.create(gluon_acc) is gluon_acc
    assert type(metric.create('["acc", {"axis": 0}]')) is metric.Accuracy
    assert metric.create('["acc", {"axis": 0}]').axis == 0
    assert type(metric.create(metric="f1", average="micro")) is metric.F1
    with pytest.raises(MetricError, match="unknown metric 'nosuch'; registered names are"):
        metric.create("nosuch")
    with pytest.raises(MetricError, match="already a metric"):
        metric.create(acc, axis=0)
    with pytest.raises(MetricError, match="bad JSON config"):
        metric.create("{not json")
    with pytest.raises(MetricError, match="expected a metric name"):
        metric.create(3)


def test_composite(rng):
    labels, preds = _binary_batches(rng, n=1)
    comp = metric.create(["acc", "f1"])
    assert isinstance(comp, metric.CompositeEvalMetric)
    comp.add(metric.Loss())
    assert type(comp.get_metric(1)) is metric.F1
    comp.update([nd(labels[0])], [nd(preds[0])])
    names, values = comp.get()
    assert names == ["accuracy", "f1", "loss"]
    assert values[0] == pytest.approx(np.mean(preds[0].argmax(1) == labels[0]))
    assert values[1] == pytest.approx(_f1(*_counts(labels[0], preds[0])))
    assert comp.get_name_value()[1] == ("f1", values[1])
    assert comp.get_global() == (names, values)
    with pytest.raises(MetricError, match="index 5 is out of range for 3 metrics"):
        comp.get_metric(5)
    # update_dict keeps only label_names / output_names
    named = metric.CompositeEvalMetric(["acc"], label_names=["y"], output_names=["out"])
    named.update_dict({"y": nd(labels[0]), "other": nd(np.zeros(3))},
                      {"out": nd(preds[0]), "extra": nd(np.zeros((3, 2)))})
    assert named.get()[1][0] == pytest.approx(values[0])
    config = json.loads(json.dumps(comp.get_config()))
    rebuilt = metric.create(config)
    assert [type(m) for m in rebuilt.metrics] == [metric.Accuracy, metric.F1, metric.Loss]


def test_custom_metric_and_np_with_numpy_functions(rng):
    labels = [rng.rand(5, 2), rng.rand(4, 2)]
    preds = [rng.rand(5, 2), rng.rand(4, 2)]

    def mean_abs(label, pred):
        return np.abs(label - pred).mean()

    custom = metric.create(mean_abs)
    assert isinstance(custom, metric.CustomMetric) and custom.name == "mean_abs"
    custom.update([nd(x) for x in labels], [nd(x) for x in preds])
    expected = np.mean([np.abs(lb - p).mean() for lb, p in zip(labels, preds)])
    assert custom.get()[1] == pytest.approx(expected)
    custom.reset_local()
    assert math.isnan(custom.get()[1])
    assert custom.get_global()[1] == pytest.approx(expected)

    def sum_and_count(label, pred):
        return float(np.square(label - pred).sum()), label.size

    via_np = metric.np(sum_and_count)
    assert via_np.name == "sum_and_count"
    via_np.update([nd(x) for x in labels], [nd(x) for x in preds])
    total = sum(np.square(lb - p).sum() for lb, p in zip(labels, preds))
    assert via_np.get()[1] == pytest.approx(total / 18)
    lam = metric.CustomMetric(lambda lb, p: 1.0)
    assert lam.name == "custom(<lambda>)"
    extra = metric.np(mean_abs, allow_extra_outputs=True)
    extra.update([nd(labels[0])], [nd(preds[0]), nd(preds[1])])
    assert extra.get()[1] == pytest.approx(np.abs(labels[0] - preds[0]).mean())
    with pytest.raises(ShapeError):
        metric.np(mean_abs).update([nd(labels[0])], [nd(preds[0]), nd(preds[1])])
    with pytest.raises(MetricError, match="cannot be serialised"):
        custom.get_config()
    with pytest.raises(MetricError, match="numpy_feval must be callable"):
        metric.np(3)


def test_user_metric_without_global_stats_reports_local_as_global():
    class Counting(metric.EvalMetric):
        def __init__(self):
            super().__init__("counting")

        def update(self, labels, preds):
            self.sum_metric += 3.0
            self.num_inst += 2

    m = Counting()
    m.update(None, None)
    assert m.get() == ("counting", 1.5)
    assert m.get_global() == ("counting", 1.5)          # 1.x: no global stats -> local
    assert m.get_global_name_value() == [("counting", 1.5)]
    assert str(m) == "EvalMetric: {'counting': 1.5}"

    class WithGlobal(Counting):
        def __init__(self):
            metric.EvalMetric.__init__(self, "g", has_global_stats=True)

    g = WithGlobal()
    g.update(None, None)
    assert math.isnan(g.get_global()[1])   # it never adds to the global totals

    @metric.register
    class Registered(Counting):
        pass
    assert type(metric.create("registered")) is Registered
    with pytest.raises(MetricError, match="expected an EvalMetric subclass"):
        metric.register(int)


def test_check_label_shapes():
    a, b = nd(np.zeros(3)), nd(np.zeros(3))
    assert metric.check_label_shapes(a, b, wrap=True) == ([a], [b])
    with pytest.raises(ShapeError, match="shape of labels 2 does not match shape of "
                                         "predictions 1"):
        metric.check_label_shapes([a, b], [a])
    with pytest.raises(ShapeError, match=r"\(3,\) does not match shape of predictions \(2,\)"):
        metric.check_label_shapes(a, nd(np.zeros(2)), shape=True)
