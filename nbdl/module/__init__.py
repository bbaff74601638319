"""``nbdl.module`` (also ``nbdl.mod``): MXNet 1.x's Module API on nbdl's
Executor.

``Module`` binds a symbol to one executor and trains it (``fit``, or
``bind`` / ``init_params`` / ``init_optimizer`` / ``forward`` /
``backward`` / ``update``); ``BucketingModule`` keeps one Module per bucket
key sharing the parameters.  See ``module.py`` for where nbdl differs from
MXNet (one device per module, nbdl's optimizer state files)."""
from ._common import BatchEndParam, DataDesc, ModuleError  # noqa: F401
from .base_module import BaseModule  # noqa: F401
from .bucketing_module import BucketingModule  # noqa: F401
from .executor_group import ExecutorGroup  # noqa: F401
from .module import Module  # noqa: F401

__all__ = ["BaseModule", "Module", "BucketingModule", "ExecutorGroup", "BatchEndParam",
           "DataDesc", "ModuleError"]
