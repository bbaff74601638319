"""Embedding losses: TripletLoss, CosineEmbeddingLoss, SDMLLoss."""
from ...errors import AttrError, ShapeError
from ...ndarray.ndarray import NDArray
from ._base import Loss, apply_weighting, check_number, op, reshape_like

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
    The result is MXNet 1.x's: one loss per pair as a column, shape
    ``(pairs, 1)`` (``(batch, 1)`` for 2-d inputs; Gluon documents
    ``(batch,)``), which ``sample_weight`` is broadcast against (give it as
    ``(batch, 1)``)."""

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
        loss = op("Reshape", op("elemwise_add", pull, push), shape=(-1, 1))
        return apply_weighting(loss, self._weight, sample_weight)

    @staticmethod
    def _cosine_similarity(x, y, axis=-1):
        # |x| |y| = sqrt(|x|^2 |y|^2): one square root, and its gradient stays
        # finite at zero vectors because the maximum routes it to the bound
        dot = op("sum", op("elemwise_mul", x, y), axis=(axis,))
        xx = op("sum", op("square", x), axis=(axis,))
        yy = op("sum", op("square", y), axis=(axis,))
        norms = op("sqrt", op("_maximum_scalar", op("elemwise_mul", xx, yy), scalar=_EPS * _EPS))
        return op("elemwise_div", dot, norms)


class SDMLLoss(Loss):
    """Smoothed Deep Metric Learning loss (Bonadiman, Kumar & Mittal 2019) of
    two aligned batches ``x1``, ``x2`` of shape ``(batch, dim)``: row ``i`` of
    ``x2`` is the positive pair of row ``i`` of ``x1``, every other row a
    negative.  With ``D[i, j] = sum((x1[i] - x2[j])**2)`` and the smoothed
    identity ``L`` (``1 - s`` on the diagonal, ``s / (batch - 1)`` elsewhere),
    the loss of sample ``i`` is the KL divergence, the sum over ``j`` of
    ``L[i, j] * (log(L[i, j]) - log_softmax(-D, axis=1)[i, j])``, times
    ``weight`` (MXNet 1.9.1's number; Gluon 2.0's SDMLLoss divides it by the
    batch size, through its KLDivLoss's mean).

    Parameters
    ----------
    smoothing_parameter : float
        The probability mass ``s`` spread over the negatives, in [0, 1).
    weight : float or None
        Scales the loss (MXNet 1.x accepted it but did not apply it).
    batch_axis : int
        Must be 0: the rows are the samples.

    ``forward(x1, x2)`` returns one loss per sample, shape ``(batch,)``; a
    batch needs at least 2 samples.
    """

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._smoothing = check_number("SDMLLoss", "smoothing_parameter", smoothing_parameter)
        if not 0.0 <= self._smoothing < 1.0:
            raise AttrError(f"SDMLLoss: smoothing_parameter must be in [0, 1), got "
                            f"{smoothing_parameter!r}")
        if batch_axis != 0:
            raise AttrError(f"SDMLLoss: batch_axis must be 0 (rows are samples), got "
                            f"{batch_axis!r}")

    def forward(self, x1, x2):
        if isinstance(x1, NDArray) and isinstance(x2, NDArray):
            if x1.ndim != 2 or tuple(x1.shape) != tuple(x2.shape) or x1.shape[0] < 2:
                raise ShapeError(f"SDMLLoss: x1 and x2 must both be (batch, dim) with batch >= "
                                 f"2, got {tuple(x1.shape)} and {tuple(x2.shape)}")
        s = self._smoothing
        diff = op("broadcast_sub", op("expand_dims", x1, axis=1), op("expand_dims", x2, axis=0))
        dist = op("sum", op("square", diff), axis=(2,))               # (batch, batch)
        ones = op("ones_like", dist)
        gold = op("diag", op("diag", ones))                            # identity
        n = op("sum", ones, axis=(1,), keepdims=True)                  # (batch, 1): batch
        off = op("_rdiv_scalar", op("_minus_scalar", n, scalar=1.0), scalar=s)
        labels = op("elemwise_add", op("_mul_scalar", gold, scalar=1.0 - s),
                    op("broadcast_mul", op("_rminus_scalar", gold, scalar=1.0), off))
        log_p = op("log_softmax", op("negative", dist), axis=1)
        log_l = op("log", op("_plus_scalar", labels, scalar=1e-12))
        loss = op("elemwise_mul", labels, op("elemwise_sub", log_l, log_p))
        loss = apply_weighting(loss, self._weight, None)
        return op("sum", loss, axis=(1,))
