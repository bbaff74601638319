"""``nbdl.gluon.metric``: evaluation metrics (Gluon's ``gluon.metric``,
MXNet's ``mx.metric``).  See ``base`` for the conventions (local and global
totals, ``macro`` / ``micro`` averaging) and ``classification`` for F1's
binary / multiclass / multilabel inputs."""
from .base import (CompositeEvalMetric, CustomMetric, EvalMetric, MetricError,  # noqa: F401
                   alias, check_label_shapes, create, np, register)
from .classification import F1, MCC, Accuracy, TopKAccuracy  # noqa: F401
from .probability import CrossEntropy, Loss, NegativeLogLikelihood, Perplexity  # noqa: F401
from .regression import MAE, MSE, RMSE, PearsonCorrelation  # noqa: F401
