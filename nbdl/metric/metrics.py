"""MXNet 1.x's accuracy, probability, loss and regression metrics.

Where MXNet 1.x and Gluon 2.0 compute the same thing, the class is Gluon's
(``nbdl.gluon.metric``) under the 1.x base class and registry: Accuracy,
TopKAccuracy, CrossEntropy, NegativeLogLikelihood, Perplexity, Loss,
PearsonCorrelation.  MAE, MSE and RMSE differ: MXNet 1.x averages the
per-array mean over the label/prediction arrays of all updates (each array
counts once, whatever its size), Gluon 2.0 over samples; they are
implemented here.
"""
import math

import numpy

from ..errors import ShapeError
from ..gluon.metric import classification as _cls
from ..gluon.metric import probability as _prob
from ..gluon.metric import regression as _reg
from .base import EvalMetric, _Global, alias, register


@register
@alias("acc")
class Accuracy(_Global, _cls.Accuracy, EvalMetric):
    """The fraction of predictions equal to the labels; predictions whose
    shape differs from the labels' are class scores, reduced by argmax over
    ``axis``.

    Parameters
    ----------
    axis : int, default 1
        The class axis of score predictions.
    name : str, default 'accuracy'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(_Global, _cls.TopKAccuracy, EvalMetric):
    """The fraction of samples whose label is among the ``top_k`` highest
    scores of their prediction row (predictions ``(num_samples,
    num_classes)``); the name gets ``_<top_k>`` appended.

    Parameters
    ----------
    top_k : int, default 1
        How many of the highest scores count.
    name : str, default 'top_k_accuracy'
        The display name (before the suffix).
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super().__init__(top_k=top_k, name=name, output_names=output_names,
                         label_names=label_names)
        self._base_name = name

    def get_config(self):
        """The arguments that recreate this metric (the name before its
        ``_<top_k>`` suffix, so that ``create(config)`` gives the same name;
        MXNet 1.x appends the suffix a second time)."""
        config = super().get_config()
        config["name"] = self._base_name
        return config


@register
@alias("ce")
class CrossEntropy(_Global, _prob.CrossEntropy, EvalMetric):
    """Mean over samples of ``-log(p[label] + eps)``; predictions are
    probabilities with the classes along the last axis.

    Parameters
    ----------
    eps : float, default 1e-12
        Added to the probability before the log.
    name : str, default 'cross-entropy'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """


@register
@alias("nll_loss")
class NegativeLogLikelihood(_Global, _prob.NegativeLogLikelihood, EvalMetric):
    """Mean over samples of ``-log(p[label] + eps)`` (MXNet's ``nll-loss``).

    Parameters
    ----------
    eps : float, default 1e-12
        Added to the probability before the log.
    name : str, default 'nll-loss'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """


@register
class Perplexity(_Global, _prob.Perplexity, EvalMetric):
    """``exp`` of the mean of ``-log(max(p[label], 1e-10))`` over the labels
    other than ``ignore_label``.

    Parameters
    ----------
    ignore_label : int or None
        Labels with this value do not count.
    axis : int, default -1
        The class axis of the predictions.
    name : str, default 'perplexity'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """


@register
class Loss(_Global, _prob.Loss, EvalMetric):
    """The mean of every element of the predictions (loss values); labels
    are ignored (``update(None, losses)`` works).

    Parameters
    ----------
    name : str, default 'loss'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """


@register
class Torch(Loss):
    """``Loss`` under the name ``torch`` (MXNet 1.x's metric for Torch
    criterion outputs).

    Parameters
    ----------
    name : str, default 'torch'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """

    def __init__(self, name="torch", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """``Loss`` under the name ``caffe`` (MXNet 1.x's metric for Caffe loss
    outputs).

    Parameters
    ----------
    name : str, default 'caffe'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """

    def __init__(self, name="caffe", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
@alias("pearsonr")
class PearsonCorrelation(_Global, _reg.PearsonCorrelation, EvalMetric):
    """Pearson correlation of labels and predictions (flattened):
    ``average='macro'`` averages the correlation of each label/prediction
    pair; ``'micro'`` is the correlation over all values since
    ``reset_local`` (``get``) or ``reset`` (``get_global``).

    Parameters
    ----------
    name : str, default 'pearsonr'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    average : {'macro', 'micro'}, default 'macro'
        How updates are combined.
    """


def _difference(metric, label, pred):
    """``label - pred`` in float64, 1-D arrays read as columns (MXNet 1.x's
    reshape to ``(n, 1)``); other shapes must agree."""
    label = label.astype(numpy.float64)
    pred = pred.astype(numpy.float64)
    if label.ndim == 1:
        label = label.reshape(label.shape[0], 1)
    if pred.ndim == 1:
        pred = pred.reshape(pred.shape[0], 1)
    if label.shape != pred.shape:
        raise ShapeError(f"{metric.name}: labels of shape {label.shape} do not match "
                         f"predictions of shape {pred.shape} (1-d arrays read as (n, 1))")
    return label - pred


class _PerArray(_Global, EvalMetric):
    """MXNet 1.x's regression metrics: one value per label/prediction array,
    averaged over the arrays of all updates."""

    def __init__(self, name, output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    def update(self, labels, preds):
        """Add one value per label/prediction pair.

        Parameters
        ----------
        labels : array or list of arrays
            The labels (NDArrays or numpy arrays).
        preds : array or list of arrays
            The predictions, one per label array.
        """
        values = [self._one(_difference(self, label, pred))
                  for label, pred in self._pairs(labels, preds)]
        for v in values:
            self._add(v, 1)


@register
class MAE(_PerArray):
    """Mean absolute error: the mean ``|label - pred|`` of each array,
    averaged over arrays (MXNet 1.x).

    Parameters
    ----------
    name : str, default 'mae'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    @staticmethod
    def _one(diff):
        return float(numpy.abs(diff).mean())


@register
class MSE(_PerArray):
    """Mean squared error: the mean ``(label - pred) ** 2`` of each array,
    averaged over arrays (MXNet 1.x).

    Parameters
    ----------
    name : str, default 'mse'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    @staticmethod
    def _one(diff):
        return float(numpy.square(diff).mean())


@register
class RMSE(_PerArray):
    """Root mean squared error of each array, averaged over arrays (MXNet
    1.x: the mean of the per-array RMSEs, not the root of the mean MSE).

    Parameters
    ----------
    name : str, default 'rmse'
        The display name.
    output_names : list of str, optional
        The predictions ``update_dict`` uses.
    label_names : list of str, optional
        The labels ``update_dict`` uses.
    """

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)

    @staticmethod
    def _one(diff):
        return math.sqrt(float(numpy.square(diff).mean()))
