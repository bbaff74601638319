"""``nbdl.collective``: the MPI layer of distributed training (mpi4py over
MPICH; optional, imported only when a distributed feature is used).

``init()`` makes the job's ``World`` (rank, size, local rank, three
communicators, abort-on-error, thread pinning); ``allreduce``,
``iallreduce``, ``broadcast``, ``barrier`` and ``allgather`` work on host
numpy arrays with a watchdog (``NBDL_DIST_TIMEOUT``); ``sum_across_ranks``
is the reduce step SyncBatchNorm's kernels call between their phases (a
no-op in a single process).  It sits low in the layers (beside
``nbdl.config``) so that kernels can call it; the user API is
``nbdl.distributed`` and the ``dist_*`` kvstores."""
from .parts import resolve_parts, shard_indices  # noqa: F401
from .ops import (Pending, allgather, allreduce, barrier, broadcast,  # noqa: F401
                  iallreduce, sum_across_ranks, wait)
from .world import (INSTALL, DistributedError, World, active, environment_rank,  # noqa: F401
                    init, mpi_module, world)

__all__ = ["World", "DistributedError", "Pending", "INSTALL", "init", "world", "active",
           "mpi_module", "environment_rank", "allreduce", "iallreduce", "broadcast",
           "barrier", "allgather", "sum_across_ranks", "wait", "resolve_parts", "shard_indices"]
