"""Metrics of predicted probabilities and losses: CrossEntropy,
NegativeLogLikelihood, Perplexity, Loss."""
import math

import numpy

from ...errors import ShapeError
from .base import EvalMetric, MetricError, _host_list, alias, register


def _picked(metric, label, pred, axis, ignore_label=None):
    """The probability each prediction gives its label: ``pred`` has the
    classes along ``axis`` and one row per label.  Returns the picked
    probabilities and a mask of the labels that count."""
    if pred.ndim == 0 or not -pred.ndim <= axis < pred.ndim:
        raise ShapeError(f"{metric.name}: axis {axis} is out of range for predictions of shape "
                         f"{pred.shape}")
    probs = numpy.moveaxis(pred, axis, -1)
    num_classes = probs.shape[-1]
    probs = probs.reshape(-1, num_classes)
    y = label.ravel()
    if probs.shape[0] != y.size:
        raise ShapeError(f"{metric.name}: labels of shape {label.shape} do not match "
                         f"predictions of shape {pred.shape} (classes along axis {axis})")
    keep = numpy.ones(y.size, dtype=bool) if ignore_label is None else y != ignore_label
    idx = y.astype(numpy.int64)
    bad = keep & ((idx != y) | (idx < 0) | (idx >= num_classes))
    if bad.any():
        raise MetricError(f"{metric.name}: labels must be class indices in [0, {num_classes}), "
                          f"got {y[bad][:3].tolist()}")
    idx = numpy.where(keep, idx, 0)
    return probs[numpy.arange(y.size), idx].astype(numpy.float64), keep


@alias("ce")
class CrossEntropy(EvalMetric):
    """Mean over samples of ``-log(p[label] + eps)``; predictions are
    probabilities with the classes along the last axis."""

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names)
        self.eps = eps

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            prob, _ = _picked(self, label, pred, -1)
            self._add(float((-numpy.log(prob + self.eps)).sum()), prob.size)


@alias("nll_loss")
class NegativeLogLikelihood(CrossEntropy):
    """The same average as ``CrossEntropy``, under MXNet's name ``nll-loss``."""

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(eps=eps, name=name, output_names=output_names, label_names=label_names)


@register
class Perplexity(EvalMetric):
    """``exp`` of the mean of ``-log(max(p[label], 1e-10))`` over the labels
    that are not ``ignore_label``; ``axis`` holds the classes."""

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, axis=axis, output_names=output_names,
                         label_names=label_names)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            prob, keep = _picked(self, label, pred, self.axis, self.ignore_label)
            loss = -numpy.log(numpy.maximum(prob[keep], 1e-10)).sum()
            self._add(float(loss), int(keep.sum()))

    def _value(self, total, count):
        return math.exp(total / count) if count else float("nan")


@register
class Loss(EvalMetric):
    """The mean of loss values: ``update(_, preds)`` ignores the labels and
    averages every element of ``preds``."""

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, _, preds):
        for pred in _host_list(preds, "preds", self.name):
            self._add(float(pred.astype(numpy.float64).sum()), pred.size)

