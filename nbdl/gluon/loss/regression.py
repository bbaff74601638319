"""Regression losses: L1Loss, L2Loss, HuberLoss, PoissonNLLLoss."""
import math

from ._base import Loss, apply_weighting, batch_mean, check_number, op, reshape_like


class L1Loss(Loss):
    """``|label - pred|``, averaged per sample.

    ``forward(pred, label, sample_weight=None)``; ``label`` is reshaped to
    ``pred``'s shape."""

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def forward(self, pred, label, sample_weight=None):
        label = reshape_like(label, pred)
        loss = op("abs", op("elemwise_sub", label, pred))
        loss = apply_weighting(loss, self._weight, sample_weight)
        return batch_mean(loss, self._batch_axis)


class L2Loss(Loss):
    """``0.5 * (label - pred)**2`` (times ``weight``, default 1), averaged
    per sample.

    ``forward(pred, label, sample_weight=None)``."""

    def __init__(self, weight=1.0, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def forward(self, pred, label, sample_weight=None):
        label = reshape_like(label, pred)
        loss = op("square", op("elemwise_sub", label, pred))
        half = 0.5 * (1.0 if self._weight is None else self._weight)
        loss = apply_weighting(loss, half, sample_weight)
        return batch_mean(loss, self._batch_axis)


class HuberLoss(Loss):
    """Smoothed L1: ``0.5 / rho * d**2`` where ``d = |label - pred| <= rho``,
    ``d - 0.5 * rho`` beyond; averaged per sample.

    ``forward(pred, label, sample_weight=None)``."""

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = check_number("HuberLoss", "rho", rho, positive=True)

    def forward(self, pred, label, sample_weight=None):
        label = reshape_like(label, pred)
        dist = op("abs", op("elemwise_sub", label, pred))
        far = op("_greater_scalar", dist, scalar=self._rho)
        linear = op("_minus_scalar", dist, scalar=0.5 * self._rho)
        quadratic = op("_mul_scalar", op("square", dist), scalar=0.5 / self._rho)
        loss = op("where", far, linear, quadratic)
        loss = apply_weighting(loss, self._weight, sample_weight)
        return batch_mean(loss, self._batch_axis)


class PoissonNLLLoss(Loss):
    """Negative log-likelihood of ``target`` under a Poisson distribution.

    ``from_logits=True``: ``pred`` is the log of the rate and the loss is
    ``exp(pred) - target * pred``; otherwise ``pred`` is the rate and the
    loss is ``pred - target * log(pred + epsilon)``.  ``compute_full`` adds
    Stirling's approximation of ``log(target!)``, ``target * log(target) -
    target + 0.5 * log(2 * pi * target)``, where ``target > 1``.

    ``forward(pred, target, sample_weight=None, epsilon=None)``: ``epsilon``
    (a number) overrides the constructor's.  As in MXNet (1.x and Gluon
    2.0) the result is one number, the mean over every element (``batch_axis``
    is accepted and changes nothing), unlike the other losses' one value per
    sample."""

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 epsilon=1e-08, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = bool(from_logits)
        self._compute_full = bool(compute_full)
        self._epsilon = check_number("PoissonNLLLoss", "epsilon", epsilon)

    def forward(self, pred, target, sample_weight=None, epsilon=None):
        eps = self._epsilon if epsilon is None else check_number("PoissonNLLLoss", "epsilon",
                                                                 epsilon)
        target = reshape_like(target, pred)
        if self._from_logits:
            loss = op("elemwise_sub", op("exp", pred), op("elemwise_mul", target, pred))
        else:
            log_rate = op("log", op("_plus_scalar", pred, scalar=eps))
            loss = op("elemwise_sub", pred, op("elemwise_mul", target, log_rate))
        if self._compute_full:
            # evaluated at max(target, 1) so that no log(0) or 0 * inf appears
            # where the mask drops the term anyway
            t = op("_maximum_scalar", target, scalar=1.0)
            stirling = op("elemwise_add",
                          op("elemwise_sub", op("elemwise_mul", t, op("log", t)), t),
                          op("_mul_scalar", op("log", op("_mul_scalar", t, scalar=2 * math.pi)),
                             scalar=0.5))
            mask = op("_greater_scalar", target, scalar=1.0)
            loss = op("elemwise_add", loss, op("elemwise_mul", stirling, mask))
        loss = apply_weighting(loss, self._weight, sample_weight)
        return op("mean", loss)
