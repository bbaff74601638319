"""``nbdl.metric``: MXNet 1.x's metrics (``mx.metric``), with 1.x's names,
registry and ``create``.  Gluon 2.0's metrics are ``nbdl.gluon.metric``;
where the two compute the same thing the classes here are Gluon's under the
1.x base class (``metrics``), where they differ (F1/MCC averaging, the
per-array MAE/MSE/RMSE, PCC, ``get_global`` of user metrics without global
statistics) the 1.x behaviour is implemented here (``base``, ``binary``,
``metrics``)."""
from .base import (CompositeEvalMetric, CustomMetric, EvalMetric, MetricError,  # noqa: F401
                   alias, check_label_shapes, create, np, register)
from .binary import F1, MCC, PCC  # noqa: F401
from .metrics import (MAE, MSE, RMSE, Accuracy, Caffe, CrossEntropy, Loss,  # noqa: F401
                      NegativeLogLikelihood, PearsonCorrelation, Perplexity, TopKAccuracy, Torch)

__all__ = ["EvalMetric", "CompositeEvalMetric", "CustomMetric", "MetricError", "Accuracy",
           "TopKAccuracy", "F1", "MCC", "PCC", "Perplexity", "MAE", "MSE", "RMSE",
           "CrossEntropy", "NegativeLogLikelihood", "PearsonCorrelation", "Loss", "Torch",
           "Caffe", "create", "register", "alias", "check_label_shapes", "np"]
