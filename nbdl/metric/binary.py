"""MXNet 1.x's confusion-count metrics: F1 and MCC (binary) and PCC (the
multiclass Matthews / Pearson correlation of a confusion matrix).

F1 and MCC read predictions as MXNet 1.x does: scores ``(num_samples,
num_classes)`` whose argmax over axis 1 is the predicted class, class 1
being the positive one; labels are 0 or 1.  Their ``average`` is 1.x's
(it differs from Gluon 2.0's ``nbdl.gluon.metric.F1``, which averages over
classes and defaults to 'micro'):

- ``'macro'`` (the default): the score of each ``update`` call, averaged
  over calls (``get``: since ``reset_local``, ``get_global``: since
  ``reset``);
- ``'micro'``: the score of the counts summed over the updates since
  ``reset_local`` (``get``) or ``reset`` (``get_global``).
"""
import math

import numpy

from .._docs import shared_doc
from ..errors import ShapeError
from ..gluon.metric.base import KeptStats, check_average
from .base import EvalMetric, MetricError, _Global, register


class _Counts:
    """True/false positive/negative counts of binary decisions."""

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
        """Matthews correlation; factors that are zero are left out of the
        denominator (MXNet's rule), so a constant prediction gives 0."""
        if not self.total:
            return 0.0
        tp, fp, fn, tn = float(self.tp), float(self.fp), float(self.fn), float(self.tn)
        denom = 1.0
        for t in (tp + fp, tp + fn, tn + fp, tn + fn):
            if t:
                denom *= t
        return (tp * tn - fp * fn) / math.sqrt(denom)


class _BinaryMetric(_Global, KeptStats, EvalMetric):
    """F1 / MCC with MXNet 1.x's binary input and averaging."""

    def __init__(self, name, output_names, label_names, average):
        self.average = check_average(type(self).__name__, average)
        super().__init__(name, output_names=output_names, label_names=label_names,
                         average=average)

    def _counts(self, label, pred):
        if pred.ndim != 2 or pred.shape[0] != label.size:
            raise ShapeError(f"{self.name}: predictions must be class scores (num_samples, "
                             f"num_classes) with one row per label; got predictions of shape "
                             f"{pred.shape} for labels of shape {label.shape}")
        y = label.ravel()
        if not numpy.isin(y, (0, 1)).all():
            raise MetricError(f"{self.name} supports binary classification only: labels must be "
                              f"0 or 1, got {numpy.unique(y)[:5].tolist()}")
        p = numpy.argmax(pred, axis=1) == 1
        t = y == 1
        c = _Counts()
        c.tp, c.fp = int((p & t).sum()), int((p & ~t).sum())
        c.fn, c.tn = int((~p & t).sum()), int((~p & ~t).sum())
        return c

    def update(self, labels, preds):
        """Add the confusion counts of every label/prediction pair (all are
        checked before anything is added).

        Parameters
        ----------
        labels : array or list of arrays
            Labels 0 or 1.
        preds : array or list of arrays
            Scores ``(num_samples, num_classes)``, one array per label array.
        """
        batch = _Counts()
        for label, pred in [(lbl, prd) for lbl, prd in self._pairs(labels, preds)]:
            batch.add(self._counts(label, pred))
        if self.average == "macro":
            value = self._score(batch)
            self._add(value, 1)
            return
        self._add_stats(batch)

    _new_stats = _Counts

    @staticmethod
    def _weight(counts):
        return counts.total


_BINARY_ARGS = '''
output_names : list of str, optional
    The predictions ``update_dict`` uses.
label_names : list of str, optional
    The labels ``update_dict`` uses.
average : {'macro', 'micro'}, default 'macro'
    Average per update ('macro') or score the summed counts ('micro').
'''


@register
@shared_doc(binary_args=_BINARY_ARGS)
class F1(_BinaryMetric):
    """F1 score of binary classification (MXNet 1.x's ``F1``; see the
    module for the input and ``average``).

    Parameters
    ----------
    name : str, default 'f1'
        The display name.
    {binary_args}
    """

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    @staticmethod
    def _score(counts):
        return counts.fscore()


@register
@shared_doc(binary_args=_BINARY_ARGS)
class MCC(_BinaryMetric):
    """Matthews correlation coefficient of binary classification (MXNet
    1.x's ``MCC``; see the module for the input and ``average``).

    Parameters
    ----------
    name : str, default 'mcc'
        The display name.
    {binary_args}
    """

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    @staticmethod
    def _score(counts):
        return counts.mcc()


@register
class PCC(EvalMetric):
    """The multiclass Matthews correlation (Pearson correlation of the
    one-hot predictions and labels) of the confusion matrix accumulated since
    ``reset_local`` (``get``) or ``reset`` (``get_global``); NaN while a
    marginal of the matrix is constant.  Predictions are class scores
    (argmax over axis 1) or class ids shaped like the labels; the matrix
    grows as new classes appear.

    Parameters
    ----------
    name : str, default 'pcc'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    has_global_stats : bool, default True
        Whether ``get_global`` reports the matrix since ``reset``.
    """

    def __init__(self, name="pcc", output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _classes(self, label, pred):
        y = label.ravel()
        if pred.shape != label.shape:
            if pred.ndim < 2:
                raise ShapeError(f"{self.name}: predictions of shape {pred.shape} are neither "
                                 f"class ids shaped like the labels {label.shape} nor class "
                                 f"scores (num_samples, num_classes)")
            pred = numpy.argmax(pred, axis=1)
        p = pred.ravel()
        if p.size != y.size:
            raise ShapeError(f"{self.name}: {p.size} predicted classes for labels of shape "
                             f"{label.shape}")
        for what, v in (("labels", y), ("predicted classes", p)):
            as_int = v.astype(numpy.int64)
            if v.size and (not numpy.array_equal(as_int, v) or as_int.min() < 0):
                raise MetricError(f"{self.name}: {what} must be class ids >= 0, got "
                                  f"{numpy.unique(v)[:5].tolist()}")
        return y.astype(numpy.int64), p.astype(numpy.int64)

    def update(self, labels, preds):
        """Add every pair to the confusion matrices (one update counts once).

        Parameters
        ----------
        labels : array or list of arrays
            Class ids.
        preds : array or list of arrays
            Class scores or class ids, one array per label array.
        """
        pairs = [self._classes(lbl, prd) for lbl, prd in self._pairs(labels, preds)]
        for y, p in pairs:
            n = int(max(p.max(initial=0), y.max(initial=0))) + 1
            if n > self.k:
                self._grow(n - self.k)
            m = numpy.zeros((self.k, self.k))
            numpy.add.at(m, (p, y), 1)
            self._lcm += m
            self._gcm += m
        self.num_inst += 1
        self.global_num_inst += 1

    def _grow(self, inc):
        pad = ((0, inc), (0, inc))
        self._lcm = numpy.pad(self._lcm, pad)
        self._gcm = numpy.pad(self._gcm, pad)
        self.k += inc

    @staticmethod
    def _mcc(cmat):
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return float(cov_xy / math.sqrt(cov_xx * cov_yy))

    def get(self):
        """``('pcc', value)`` of the matrix since ``reset_local``."""
        return self.name, self._mcc(self._lcm) if self.num_inst else float("nan")

    def get_global(self):
        """``('pcc', value)`` of the matrix since ``reset`` (the local value
        without global statistics)."""
        if not self._has_global_stats:
            return self.get()
        return self.name, self._mcc(self._gcm) if self.global_num_inst else float("nan")

    def reset(self):
        """Clear the local and the global matrices."""
        super().reset()
        self._gcm = numpy.zeros((self.k, self.k))
        self._lcm = numpy.zeros((self.k, self.k))

    def reset_local(self):
        """Clear the local matrix only."""
        super().reset_local()
        self._lcm = numpy.zeros((self.k, self.k))
