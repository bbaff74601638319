"""``nbdl.optimizer``: MXNet's optimizers, each update one fused kernel
(``nbdl.kernels.cpu.optimizer`` / ``nbdl.kernels.cuda.optimizer``)."""
from .optimizer import (LearningRateConflict, Optimizer, OptimizerError, create,  # noqa: F401
                        register)
from .sgd import SGD  # noqa: F401
from .nag import NAG  # noqa: F401
from .adam import Adam  # noqa: F401
from .adamw import AdamW  # noqa: F401
from .rmsprop import RMSProp  # noqa: F401
from .adagrad import AdaGrad  # noqa: F401
from .adadelta import AdaDelta  # noqa: F401
from .adamax import Adamax  # noqa: F401
from .nadam import Nadam  # noqa: F401
from .lamb import LAMB  # noqa: F401
from .ftrl import Ftrl  # noqa: F401
from .signum import Signum  # noqa: F401
from .ftml import FTML  # noqa: F401
from .sgld import SGLD  # noqa: F401
from . import contrib  # noqa: F401  (mx.optimizer.contrib.GroupAdaGrad)
from .updater import Updater, get_updater  # noqa: F401

__all__ = ["Optimizer", "OptimizerError", "LearningRateConflict", "create", "register", "SGD",
           "NAG", "Adam", "AdamW",
           "RMSProp", "AdaGrad", "AdaDelta", "Adamax", "Nadam", "LAMB", "Ftrl", "Signum", "FTML", "SGLD",
           "Updater", "get_updater"]
