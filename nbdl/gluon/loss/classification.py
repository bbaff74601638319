"""Classification losses: SoftmaxCrossEntropyLoss (SoftmaxCELoss),
SigmoidBinaryCrossEntropyLoss (SigmoidBCELoss), KLDivLoss, HingeLoss,
SquaredHingeLoss, LogisticLoss."""
import numbers

from ...errors import AttrError
from ._base import (Loss, apply_weighting, batch_mean, check_choice, check_number, op,
                    reshape_like, softrelu)

# added inside the logs of from_sigmoid BCE and of KLDivLoss's label, as Gluon does
_EPS = 1e-12


def _sub(a, b):
    return op("elemwise_sub", a, b)


def _mul(a, b):
    return op("elemwise_mul", a, b)


def _stable_bce(pred, label):
    """``-label * log(sigmoid(pred)) - (1 - label) * log(1 - sigmoid(pred))``
    as ``max(pred, 0) - pred * label + log(1 + exp(-|pred|))``."""
    return op("elemwise_add", _sub(op("relu", pred), _mul(pred, label)),
              softrelu(op("negative", op("abs", pred))))


class SoftmaxCrossEntropyLoss(Loss):
    """Cross-entropy of ``softmax(pred)`` along ``axis`` against ``label``.

    ``sparse_label=True``: ``label`` holds class indices with ``pred``'s
    shape minus ``axis`` (or that axis kept as 1); otherwise it holds
    probabilities of ``pred``'s shape.  ``from_logits=True``: ``pred`` is
    already a log-probability (``log_softmax`` is not applied).

    ``forward(pred, label, sample_weight=None)``; ``sample_weight`` is
    broadcast against the loss of shape ``pred`` with ``axis`` set to 1."""

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise AttrError(f"SoftmaxCrossEntropyLoss: axis must be an integer, got {axis!r}")
        self._axis = int(axis)
        self._sparse_label = bool(sparse_label)
        self._from_logits = bool(from_logits)

    def forward(self, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = op("log_softmax", pred, axis=self._axis)
        if self._sparse_label:
            loss = op("negative", op("pick", pred, label, axis=self._axis, keepdims=True))
        else:
            label = reshape_like(label, pred)
            loss = op("negative", op("sum", _mul(pred, label), axis=(self._axis,),
                                     keepdims=True))
        loss = apply_weighting(loss, self._weight, sample_weight)
        return batch_mean(loss, self._batch_axis)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross-entropy of ``sigmoid(pred)`` (or of ``pred`` itself when
    ``from_sigmoid=True``) against ``label`` in [0, 1].

    From logits it is computed stably as ``max(x, 0) - x * z + log(1 +
    exp(-|x|))``; with ``pos_weight`` (an array broadcast against the label,
    e.g. ``(1, classes)``) the positive term is scaled: ``x - x * z + (1 +
    (pos_weight - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))``.  From
    probabilities ``-(z * log(p + 1e-12) * pos_weight + (1 - z) * log(1 - p
    + 1e-12))``.

    ``forward(pred, label, sample_weight=None, pos_weight=None)`` (Gluon
    2.0's order)."""

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = bool(from_sigmoid)

    def forward(self, pred, label, sample_weight=None, pos_weight=None):
        label = reshape_like(label, pred)
        if not self._from_sigmoid:
            if pos_weight is None:
                loss = _stable_bce(pred, label)
            else:
                log_weight = op("_plus_scalar", op("broadcast_mul",
                                                   op("_minus_scalar", pos_weight, scalar=1.0),
                                                   label), scalar=1.0)
                tail = op("elemwise_add", softrelu(op("negative", op("abs", pred))),
                          op("relu", op("negative", pred)))
                loss = op("broadcast_add", _sub(pred, _mul(pred, label)),
                          op("broadcast_mul", log_weight, tail))
        else:
            log_p = op("log", op("_plus_scalar", pred, scalar=_EPS))
            log_q = op("log", op("_plus_scalar", op("_rminus_scalar", pred, scalar=1.0),
                                 scalar=_EPS))
            pos = _mul(log_p, label)
            if pos_weight is not None:
                pos = op("broadcast_mul", pos, pos_weight)
            neg = _mul(log_q, op("_rminus_scalar", label, scalar=1.0))
            loss = op("negative", op("broadcast_add", pos, neg))
        loss = apply_weighting(loss, self._weight, sample_weight)
        return batch_mean(loss, self._batch_axis)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class KLDivLoss(Loss):
    """Kullback-Leibler divergence ``label * (log(label + 1e-12) - pred)``,
    averaged per sample.  ``from_logits=True``: ``pred`` is a
    log-probability; otherwise ``log_softmax`` along ``axis`` is applied
    first.

    ``forward(pred, label, sample_weight=None)``."""

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise AttrError(f"KLDivLoss: axis must be an integer, got {axis!r}")
        self._from_logits = bool(from_logits)
        self._axis = int(axis)

    def forward(self, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = op("log_softmax", pred, axis=self._axis)
        log_label = op("log", op("_plus_scalar", label, scalar=_EPS))
        loss = _mul(label, _sub(log_label, pred))
        loss = apply_weighting(loss, self._weight, sample_weight)
        return batch_mean(loss, self._batch_axis)


class HingeLoss(Loss):
    """``max(0, margin - pred * label)`` with labels -1 or 1, averaged per
    sample.

    ``forward(pred, label, sample_weight=None)``."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = check_number(type(self).__name__, "margin", margin)

    def _hinge(self, pred, label):
        label = reshape_like(label, pred)
        return op("relu", op("_rminus_scalar", _mul(pred, label), scalar=self._margin))

    def forward(self, pred, label, sample_weight=None):
        loss = apply_weighting(self._hinge(pred, label), self._weight, sample_weight)
        return batch_mean(loss, self._batch_axis)


class SquaredHingeLoss(HingeLoss):
    """``max(0, margin - pred * label) ** 2`` with labels -1 or 1, averaged
    per sample.

    ``forward(pred, label, sample_weight=None)``."""

    def forward(self, pred, label, sample_weight=None):
        loss = op("square", self._hinge(pred, label))
        loss = apply_weighting(loss, self._weight, sample_weight)
        return batch_mean(loss, self._batch_axis)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))`` with labels -1/1
    (``label_format='signed'``) or 0/1 (``'binary'``), computed stably;
    averaged per sample.

    ``forward(pred, label, sample_weight=None)``."""

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = check_choice("LogisticLoss", "label_format", label_format,
                                          ("signed", "binary"))

    def forward(self, pred, label, sample_weight=None):
        label = reshape_like(label, pred)
        if self._label_format == "signed":
            label = op("_mul_scalar", op("_plus_scalar", label, scalar=1.0), scalar=0.5)
        loss = apply_weighting(_stable_bce(pred, label), self._weight, sample_weight)
        return batch_mean(loss, self._batch_axis)
