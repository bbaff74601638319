"""Classification metrics: Accuracy, TopKAccuracy, F1, MCC."""
import math

import numpy

from ...errors import ShapeError
from .base import EvalMetric, MetricError, alias, register


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


class _BinaryCounts:
    """Confusion counts of a binary classifier."""

    def __init__(self):
        self.tp = self.fp = self.fn = self.tn = 0

    def add(self, other):
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        self.tn += other.tn

    @property
    def total(self):
        return self.tp + self.fp + self.fn + self.tn

    def fscore(self):
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0

    def mcc(self):
        # MXNet leaves zero factors out of the denominator.
        denom = 1.0
        for t in (self.tp + self.fp, self.tp + self.fn, self.tn + self.fp, self.tn + self.fn):
            if t:
                denom *= t
        return (self.tp * self.tn - self.fp * self.fn) / math.sqrt(denom)


class _BinaryMetric(EvalMetric):
    """F1 / MCC: binary labels (0 or 1) against class scores of shape
    ``(n, 2)`` (argmax) or probabilities of class 1 of shape ``(n,)`` or
    ``(n, 1)`` (thresholded at ``threshold``)."""

    def __init__(self, name, average, threshold, output_names, label_names):
        if average not in ("macro", "micro"):
            raise MetricError(f"{type(self).__name__}: average must be 'macro' or 'micro', got "
                              f"{average!r}")
        self.average = average
        self.threshold = threshold
        super().__init__(name, average=average, threshold=threshold, output_names=output_names,
                         label_names=label_names)

    def _counts(self, label, pred):
        if pred.ndim == 2 and pred.shape[1] == 2:
            pred_label = numpy.argmax(pred, axis=1)
        elif pred.ndim == 1 or (pred.ndim == 2 and pred.shape[1] == 1):
            pred_label = (pred.ravel() > self.threshold).astype(numpy.int64)
        else:
            raise ShapeError(f"{self.name}: predictions must have shape (n, 2), (n, 1) or (n,) "
                             f"for binary classification, got {pred.shape}")
        if pred_label.size != label.size:
            raise ShapeError(f"{self.name}: labels of shape {label.shape} do not match "
                             f"predictions of shape {pred.shape}")
        y = _int_labels(label, self.name)
        if not numpy.isin(y, (0, 1)).all():
            raise MetricError(f"{self.name}: binary classification needs labels 0 and 1, got "
                              f"{numpy.unique(y).tolist()}")
        c = _BinaryCounts()
        p = pred_label.ravel() == 1
        t = y == 1
        c.tp, c.fp = int((p & t).sum()), int((p & ~t).sum())
        c.fn, c.tn = int((~p & t).sum()), int((~p & ~t).sum())
        return c

    def update(self, labels, preds):
        batch = _BinaryCounts()
        for label, pred in self._pairs(labels, preds):
            batch.add(self._counts(label, pred))
        if self.average == "macro":
            self._add(self._score(batch), 1)
            return
        self._local.add(batch)
        self._global.add(batch)
        self.sum_metric = self._score(self._local) * self._local.total
        self.num_inst = self._local.total
        self.global_sum_metric = self._score(self._global) * self._global.total
        self.global_num_inst = self._global.total

    def reset(self):
        super().reset()
        self._local, self._global = _BinaryCounts(), _BinaryCounts()

    def reset_local(self):
        super().reset_local()
        self._local = _BinaryCounts()


@register
class F1(_BinaryMetric):
    """F1 score of binary classification (see ``_BinaryMetric`` for inputs)."""

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro",
                 threshold=0.5):
        super().__init__(name, average, threshold, output_names, label_names)

    def _score(self, counts):
        return counts.fscore()


@register
class MCC(_BinaryMetric):
    """Matthews correlation coefficient of binary classification."""

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro",
                 threshold=0.5):
        super().__init__(name, average, threshold, output_names, label_names)

    def _score(self, counts):
        return counts.mcc()
