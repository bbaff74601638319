"""``nbdl.module`` (also ``nbdl.mod``): MXNet 1.x's Module API on nbdl's
Executor.

``Module`` binds a symbol to one executor and trains it (``fit``, or
``bind`` / ``init_params`` / ``init_optimizer`` / ``forward`` /
``backward`` / ``update``); ``BucketingModule`` keeps one Module per bucket
key sharing the parameters.  A module over several contexts splits each
batch between them as MXNet's DataParallelExecutorGroup does.  See
docs/module.md for where nbdl differs from MXNet (nbdl's optimizer state
files, errors)."""
from ._common import BatchEndParam, DataDesc, ModuleError  # noqa: F401
from .base_module import BaseModule  # noqa: F401
from .bucketing_module import BucketingModule  # noqa: F401
from .executor_group import ExecutorGroup  # noqa: F401
from .module import Module  # noqa: F401

__all__ = ["BaseModule", "Module", "BucketingModule", "ExecutorGroup", "BatchEndParam",
           "DataDesc", "ModuleError"]
