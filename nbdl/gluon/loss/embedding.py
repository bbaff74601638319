"""Embedding losses: TripletLoss, CosineEmbeddingLoss."""
from ._base import Loss, apply_weighting, batch_mean, check_number, op, reshape_like

# lower bound of |x| * |y| in the cosine similarity, as Gluon's
_EPS = 1e-12


class TripletLoss(Loss):
    """``max(sum(|positive - pred|**2) - sum(|negative - pred|**2) + margin,
    0)``, the sums over every axis except ``batch_axis``: one loss per
    sample, then weighted.

    ``forward(pred, positive, negative, sample_weight=None)``."""

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = check_number("TripletLoss", "margin", margin)

    def forward(self, pred, positive, negative, sample_weight=None):
        positive = reshape_like(positive, pred)
        negative = reshape_like(negative, pred)
        gap = op("elemwise_sub", op("square", op("elemwise_sub", positive, pred)),
                 op("square", op("elemwise_sub", negative, pred)))
        loss = op("sum", gap, axis=(self._batch_axis,), exclude=True)
        loss = op("relu", op("_plus_scalar", loss, scalar=self._margin))
        return apply_weighting(loss, self._weight, sample_weight)


class CosineEmbeddingLoss(Loss):
    """For pairs ``(input1, input2)`` and labels 1 (similar) or -1
    (dissimilar): ``1 - cos`` where the label is 1, ``max(0, cos - margin)``
    where it is -1 (0 for any other label), with ``cos = x.y / max(|x| |y|,
    1e-12)`` along the last axis.

    ``forward(input1, input2, label, sample_weight=None)``; ``label`` holds
    one value per pair (``input1.shape[:-1]`` elements, e.g. ``(batch,)``).
    The result has one loss per sample, shape ``(batch,)``: Gluon documents
    that shape but returned ``(batch, 1)``."""

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = check_number("CosineEmbeddingLoss", "margin", margin)

    def forward(self, input1, input2, label, sample_weight=None):
        input1 = reshape_like(input1, input2)
        cos = self._cosine_similarity(input1, input2)
        label = reshape_like(label, cos)
        similar = op("_equal_scalar", label, scalar=1.0)
        dissimilar = op("_equal_scalar", label, scalar=-1.0)
        pull = op("elemwise_mul", op("_rminus_scalar", cos, scalar=1.0), similar)
        push = op("elemwise_mul", op("relu", op("_minus_scalar", cos, scalar=self._margin)),
                  dissimilar)
        loss = op("elemwise_add", pull, push)
        loss = apply_weighting(loss, self._weight, sample_weight)
        return batch_mean(loss, self._batch_axis)

    @staticmethod
    def _cosine_similarity(x, y, axis=-1):
        # |x| |y| = sqrt(|x|^2 |y|^2): one square root, and its gradient stays
        # finite at zero vectors because the maximum routes it to the bound
        dot = op("sum", op("elemwise_mul", x, y), axis=(axis,))
        xx = op("sum", op("square", x), axis=(axis,))
        yy = op("sum", op("square", y), axis=(axis,))
        norms = op("sqrt", op("_maximum_scalar", op("elemwise_mul", xx, yy), scalar=_EPS * _EPS))
        return op("elemwise_div", dot, norms)
