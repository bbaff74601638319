"""``gluon.contrib.nn`` (MXNet 1.x): ``SyncBatchNorm``, the same class as
``nbdl.gluon.nn.SyncBatchNorm`` (``_contrib_SyncBatchNorm``: batch
statistics over every rank of a distributed job)."""
from ..nn import SyncBatchNorm  # noqa: F401

__all__ = ["SyncBatchNorm"]
