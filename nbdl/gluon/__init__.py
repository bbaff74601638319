"""Gluon (2.0 and 1.x dialects): Blocks, Parameters, Trainer, layers, losses, metrics, data."""
from .block import Block, HookHandle  # noqa: F401
from .hybrid_block import HybridBlock  # noqa: F401
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterError  # noqa: F401
from .parameter_dict import MissingParameterError, ParameterDict  # noqa: F401
from .trainer import Trainer, TrainerError  # noqa: F401
from .symbol_block import SymbolBlock  # noqa: F401
from . import nn  # noqa: F401
from . import data, metric, utils  # noqa: F401
from . import loss  # noqa: F401
from . import rnn  # noqa: F401
from . import model_zoo  # noqa: F401
from . import contrib  # noqa: F401
