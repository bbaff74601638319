"""Classification metrics: Accuracy, TopKAccuracy, F1, MCC."""
import math

import numpy

from ...errors import ShapeError
from ...ndarray import NDArray
from .base import EvalMetric, KeptStats, MetricError, alias, check_average, register


def _int_labels(label, where):
    flat = label.ravel()
    as_int = flat.astype(numpy.int64)
    if not numpy.array_equal(as_int, flat):
        raise MetricError(f"{where}: labels must be integers, got values such as "
                          f"{flat[as_int != flat][:3].tolist()}")
    return as_int


@alias("acc")
class Accuracy(EvalMetric):
    """The fraction of predictions equal to the labels; predictions with a
    shape other than the labels' are class scores, reduced by argmax over
    ``axis``."""

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names)
        self.axis = axis

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            pred_label = pred
            if pred.shape != label.shape:
                if not -pred.ndim <= self.axis < pred.ndim:
                    raise ShapeError(f"{self.name}: axis {self.axis} is out of range for "
                                     f"predictions of shape {pred.shape}")
                pred_label = numpy.argmax(pred, axis=self.axis)
            if pred_label.size != label.size:
                raise ShapeError(f"{self.name}: labels of shape {label.shape} do not match "
                                 f"predictions of shape {pred.shape}")
            correct = (pred_label.ravel().astype(numpy.int64) == label.ravel().astype(numpy.int64))
            self._add(int(correct.sum()), label.size)


@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """The fraction of samples whose label is among the ``top_k`` highest
    scores of their prediction row."""

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        if isinstance(top_k, bool) or not isinstance(top_k, (int, numpy.integer)) or top_k < 1:
            raise MetricError(f"TopKAccuracy: top_k must be a positive integer, got {top_k!r}")
        super().__init__(f"{name}_{top_k}", top_k=top_k, output_names=output_names,
                         label_names=label_names)
        self.top_k = int(top_k)

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            if pred.ndim != 2 or pred.shape[0] != label.size:
                raise ShapeError(f"{self.name}: predictions must have shape (num_samples, "
                                 f"num_classes) matching labels of shape {label.shape}; got "
                                 f"predictions of shape {pred.shape}")
            k = min(self.top_k, pred.shape[1])
            top = numpy.argpartition(pred, -k, axis=1)[:, -k:]
            hit = (top == _int_labels(label, self.name)[:, None]).any(axis=1)
            self._add(int(hit.sum()), label.size)


CLASS_TYPES = ("binary", "multiclass", "multilabel")


class _ClassCounts:
    """Per-class confusion counts (true/false positives/negatives), one
    entry per class (one for binary classification); ``None`` until the
    first update fixes the number of classes."""

    def __init__(self, num_classes=None):
        self.num_classes = num_classes
        self.tp = self.fp = self.fn = self.tn = None
        if num_classes is not None:
            self.tp, self.fp, self.fn, self.tn = (numpy.zeros(num_classes, dtype=numpy.int64)
                                                  for _ in range(4))

    def add(self, tp, fp, fn, tn):
        if self.num_classes is None:
            self.__init__(len(tp))
        self.tp = self.tp + tp
        self.fp = self.fp + fp
        self.fn = self.fn + fn
        self.tn = self.tn + tn

    @property
    def rows(self):
        """Samples seen (every class counts each sample once)."""
        if self.num_classes is None:
            return 0
        return int(self.tp[0] + self.fp[0] + self.fn[0] + self.tn[0])

    def fscore(self, average):
        """``'micro'``: F1 of the counts summed over classes; ``'macro'``:
        the mean of the per-class F1 scores (0 where a class has no
        positive prediction and no positive label)."""
        if self.num_classes is None:
            return 0.0
        if average == "micro":
            return _f1(int(self.tp.sum()), int(self.fp.sum()), int(self.fn.sum()))
        return float(numpy.mean([_f1(int(a), int(b), int(c))
                                 for a, b, c in zip(self.tp, self.fp, self.fn)]))

    def mcc(self):
        """Matthews correlation of binary counts; zero factors are left out of
        the denominator (MXNet's rule), so a constant prediction gives 0."""
        if self.num_classes is None:
            return 0.0
        tp, fp, fn, tn = (float(v[0]) for v in (self.tp, self.fp, self.fn, self.tn))
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)


def _f1(tp, fp, fn):
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _binary_values(flat, where):
    if not numpy.isin(flat, (0, 1)).all():
        raise MetricError(f"{where}: binary and multilabel classification need labels 0 and 1, "
                          f"got {numpy.unique(flat).tolist()}")
    return flat == 1


class _ConfusionMetric(KeptStats, EvalMetric):
    """F1 / MCC: per-class confusion counts accumulated over every update
    since ``reset`` (global) and since ``reset_local`` (local); ``get()`` is
    the score of the local counts, ``get_global()`` of the global ones.

    How predictions become decisions, by ``class_type``:

    - ``'binary'``: labels 0/1.  Predictions shaped like the labels, or
      ``(..., 1)``, are probabilities of class 1; ``(..., 2)`` are two-class
      scores whose column 1 is that probability.  Positive means
      ``probability > threshold`` (for softmax rows at the default 0.5 this is
      their argmax).
    - ``'multiclass'``: labels are class ids; predictions ``(..., k)`` are
      class scores, reduced by argmax over the last axis; one label per row.
    - ``'multilabel'``: labels 0/1 of the predictions' shape ``(..., k)``;
      each class is positive where its score is ``> threshold`` (a float, or
      one threshold per class).
    """

    def __init__(self, name, class_type, threshold, average, output_names, label_names):
        where = type(self).__name__
        if class_type not in CLASS_TYPES:
            raise MetricError(f"{where}: class_type must be one of "
                              f"{', '.join(map(repr, CLASS_TYPES))}, got {class_type!r}")
        self.class_type = class_type
        self.average = check_average(where, average)
        self.threshold = self._check_threshold(threshold, class_type, where)
        self._num_classes = None
        super().__init__(name, class_type=class_type, threshold=threshold, average=average,
                         output_names=output_names, label_names=label_names)

    @staticmethod
    def _check_threshold(threshold, class_type, where):
        if isinstance(threshold, (bool, numpy.bool_)):
            raise MetricError(f"{where}: threshold must be a number, got {threshold!r}")
        if isinstance(threshold, (int, float, numpy.integer, numpy.floating)):
            return float(threshold)
        if isinstance(threshold, NDArray):
            threshold = threshold.asnumpy()
        if isinstance(threshold, (list, tuple, numpy.ndarray)):
            arr = numpy.asarray(threshold, dtype=numpy.float64)
            if class_type != "multilabel" or arr.ndim != 1:
                raise MetricError(f"{where}: a threshold per class is a 1-d array and applies "
                                  f"to class_type='multilabel' only; got shape {arr.shape} with "
                                  f"class_type={class_type!r}")
            return arr
        raise MetricError(f"{where}: threshold must be a number (or, for multilabel, one number "
                          f"per class), got {type(threshold).__name__}")

    def _mismatch(self, label, pred, why):
        return ShapeError(f"{self.name} (class_type={self.class_type!r}): labels of shape "
                          f"{label.shape} do not match predictions of shape {pred.shape}: {why}")

    def _counts(self, label, pred):
        """(tp, fp, fn, tn) per class for one label/prediction pair."""
        y = _int_labels(label, self.name)
        if self.class_type == "multiclass":
            if pred.ndim == 0 or pred.shape[-1] == 0:
                raise self._mismatch(label, pred, "multiclass predictions are class scores "
                                                  "(..., num_classes)")
            k = pred.shape[-1]
            pred_label = numpy.argmax(pred.reshape(-1, k), axis=1)
            if pred_label.size != y.size:
                raise self._mismatch(label, pred, f"the argmax over the last axis gives "
                                                  f"{pred_label.size} predicted classes for "
                                                  f"{y.size} labels")
            if y.size and (y.min() < 0 or y.max() >= k):
                raise MetricError(f"{self.name}: multiclass labels must be class ids in [0, {k}) "
                                  f"for predictions of shape {pred.shape}, got "
                                  f"{numpy.unique(y[(y < 0) | (y >= k)])[:5].tolist()}")
            tp = numpy.bincount(y[pred_label == y], minlength=k)
            predicted = numpy.bincount(pred_label, minlength=k)
            actual = numpy.bincount(y, minlength=k)
            fp, fn = predicted - tp, actual - tp
            return tp, fp, fn, y.size - tp - fp - fn
        if self.class_type == "binary":
            if pred.shape == label.shape:
                scores = pred.ravel()
            elif pred.ndim >= 1 and pred.shape[-1] == 2:
                scores = pred.reshape(-1, 2)[:, 1]
            elif pred.ndim >= 1 and pred.shape[-1] == 1:
                scores = pred.ravel()
            else:
                raise self._mismatch(label, pred, "binary predictions are probabilities of "
                                                  "class 1 shaped like the labels or (..., 1), "
                                                  "or two-class scores (..., 2)")
            if scores.size != y.size:
                raise self._mismatch(label, pred, f"{scores.size} predictions for {y.size} labels")
            p = (scores > self.threshold)[:, None]
            t = _binary_values(y, self.name)[:, None]
        else:
            if pred.shape != label.shape or pred.ndim == 0:
                raise self._mismatch(label, pred, "multilabel labels must have the predictions' "
                                                  "shape (..., num_classes)")
            k = pred.shape[-1]
            if isinstance(self.threshold, numpy.ndarray) and self.threshold.shape != (k,):
                raise self._mismatch(label, pred, f"{self.threshold.shape[0]} per-class "
                                                  f"thresholds for {k} classes")
            p = pred.reshape(-1, k) > self.threshold
            t = _binary_values(y, self.name).reshape(-1, k)
        tp, fp = (p & t).sum(axis=0), (p & ~t).sum(axis=0)
        fn, tn = (~p & t).sum(axis=0), (~p & ~t).sum(axis=0)
        return tp, fp, fn, tn

    def update(self, labels, preds):
        # Every pair is checked before any count is added, so a bad pair
        # leaves the metric as it was.
        batch = [self._counts(label, pred) for label, pred in self._pairs(labels, preds)]
        k = self._num_classes
        for counts in batch:
            n = len(counts[0])
            if k is not None and n != k:
                raise MetricError(f"{self.name}: the number of classes changed from {k} to {n} "
                                  f"(reset() starts over)")
            k = n
        self._num_classes = k
        for counts in batch:
            self._add_stats(*counts)

    def reset(self):
        self._num_classes = None
        super().reset()

    def _new_stats(self):
        return _ClassCounts(self._num_classes)

    @staticmethod
    def _weight(counts):
        return counts.rows


@register
class F1(_ConfusionMetric):
    """F1 score (Gluon 2.0's ``F1``): ``class_type`` 'binary',
    'multiclass' or 'multilabel' (see ``_ConfusionMetric`` for how
    predictions are read); ``average='micro'`` is the F1 of the true/false
    positive and negative counts summed over classes (for multiclass, the
    accuracy), ``'macro'`` the unweighted mean of the per-class F1 scores.
    Binary classification has one class, so both give its F1."""

    def __init__(self, name="f1", output_names=None, label_names=None, class_type="binary",
                 threshold=0.5, average="micro"):
        super().__init__(name, class_type, threshold, average, output_names, label_names)

    def _score(self, counts):
        return counts.fscore(self.average)


@register
class MCC(_ConfusionMetric):
    """Matthews correlation coefficient of binary classification (Gluon
    2.0's ``MCC``, binary only): predictions are read as for
    ``F1(class_type='binary')``.  ``average`` ('macro' or 'micro') is kept
    for MXNet 1.x code; with a single class both are the MCC of the counts
    accumulated since the last reset."""

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro",
                 threshold=0.5):
        super().__init__(name, "binary", threshold, average, output_names, label_names)

    def get_config(self):
        config = super().get_config()
        config.pop("class_type")
        return config

    def _score(self, counts):
        return counts.mcc()
