"""Gluon (2.0 and 1.x dialects): Blocks, Parameters, Trainer, layers, losses, metrics, data."""
from .block import Block, HookHandle  # noqa: F401
from .hybrid_block import HybridBlock  # noqa: F401
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterError  # noqa: F401
from .parameter_dict import MissingParameterError, ParameterDict  # noqa: F401
from .trainer import Trainer, TrainerError  # noqa: F401
from .symbol_block import SymbolBlock  # noqa: F401
from .._lazy import lazy_submodules
from . import nn  # noqa: F401
from . import utils  # noqa: F401
from . import loss  # noqa: F401

# Imported on first use (``gluon.data``, ``from nbdl.gluon import rnn``): a
# script that trains a Dense network does not pay for the data pipeline, the
# recurrent layers, the metrics or the model zoo at ``import nbdl``.
_LAZY = {name: name for name in ("data", "metric", "rnn", "model_zoo", "contrib")}
__getattr__, __dir__ = lazy_submodules(globals(), _LAZY)
