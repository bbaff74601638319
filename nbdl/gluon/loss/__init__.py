"""``nbdl.gluon.loss``: Gluon 2.0's losses as HybridBlocks (``gluon.loss``).

Every loss returns one value per sample (shape ``(batch,)``): the
elementwise loss times ``sample_weight`` and ``weight``, averaged over every
axis except ``batch_axis`` (see ``_base``)."""
from ._base import Loss  # noqa: F401
from .classification import (HingeLoss, KLDivLoss, LogisticLoss, SigmoidBCELoss,  # noqa: F401
                             SigmoidBinaryCrossEntropyLoss, SoftmaxCELoss, SoftmaxCrossEntropyLoss,
                             SquaredHingeLoss)
from .ctc import CTCLoss  # noqa: F401
from .embedding import CosineEmbeddingLoss, SDMLLoss, TripletLoss  # noqa: F401
from .regression import HuberLoss, L1Loss, L2Loss, PoissonNLLLoss  # noqa: F401

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss",
           "HingeLoss", "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
           "CosineEmbeddingLoss", "SDMLLoss"]
