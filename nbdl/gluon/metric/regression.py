"""Regression metrics: MAE, MSE, RMSE (averaged over samples, as in Gluon
2.0) and PearsonCorrelation."""
import math

import numpy

from ...errors import ShapeError
from .base import EvalMetric, KeptStats, alias, check_average, register


def _per_sample(metric, label, pred):
    """``label - pred`` as float64 of shape ``(num_samples, -1)``; 1-D arrays
    are one value per sample, so ``(n,)`` matches ``(n, 1)``."""
    if label.ndim == 0 or pred.ndim == 0 or label.shape[0] != pred.shape[0] \
            or label.size != pred.size:
        raise ShapeError(f"{metric.name}: labels of shape {label.shape} do not match "
                         f"predictions of shape {pred.shape}")
    n = label.shape[0]
    return (label.astype(numpy.float64).reshape(n, -1) -
            pred.astype(numpy.float64).reshape(n, -1))


@register
class MAE(EvalMetric):
    """Mean absolute error: the mean over samples of each sample's mean
    ``|label - pred|``."""

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            diff = _per_sample(self, label, pred)
            if diff.size:
                self._add(float(numpy.abs(diff).mean(axis=1).sum()), diff.shape[0])


@register
class MSE(EvalMetric):
    """Mean squared error: the mean over samples of each sample's mean
    ``(label - pred) ** 2``."""

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            diff = _per_sample(self, label, pred)
            if diff.size:
                self._add(float(numpy.square(diff).mean(axis=1).sum()), diff.shape[0])


@register
class RMSE(MSE):
    """Root mean squared error: the square root of ``MSE``."""

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def _value(self, total, count):
        return math.sqrt(total / count) if count else float("nan")


class _Moments:
    """Count, means and centred (co)moments of paired values, merged batch
    by batch (Chan et al.), so a correlation over many updates is as exact
    as one over the concatenated data."""

    def __init__(self):
        self.n = 0
        self.mx = self.my = self.sxx = self.syy = self.sxy = 0.0

    def add(self, x, y):
        m = x.size
        if m == 0:
            return
        bx, by = x.mean(), y.mean()
        dx, dy = x - bx, y - by
        n = self.n + m
        ex, ey = bx - self.mx, by - self.my
        w = self.n * m / n
        self.sxx += float(dx @ dx) + ex * ex * w
        self.syy += float(dy @ dy) + ey * ey * w
        self.sxy += float(dx @ dy) + ex * ey * w
        self.mx += ex * m / n
        self.my += ey * m / n
        self.n = n

    def corr(self):
        denom = math.sqrt(self.sxx * self.syy)
        return self.sxy / denom if denom > 0 else float("nan")


@alias("pearsonr")
class PearsonCorrelation(KeptStats, EvalMetric):
    """Pearson correlation between labels and predictions (flattened).
    ``average='macro'`` averages the correlation of each label/prediction
    pair; ``'micro'`` is the correlation over all values seen."""

    def __init__(self, name="pearsonr", output_names=None, label_names=None, average="macro"):
        self.average = check_average("PearsonCorrelation", average)
        super().__init__(name, average=average, output_names=output_names,
                         label_names=label_names)

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            if label.shape != pred.shape:
                raise ShapeError(f"{self.name}: labels of shape {label.shape} do not match "
                                 f"predictions of shape {pred.shape}")
            x = pred.astype(numpy.float64).ravel()
            y = label.astype(numpy.float64).ravel()
            if self.average == "macro":
                one = _Moments()
                one.add(x, y)
                self._add(one.corr(), 1)
                continue
            self._add_stats(x, y)

    _new_stats = _Moments

    @staticmethod
    def _score(moments):
        return moments.corr()

    @staticmethod
    def _weight(moments):
        return moments.n
