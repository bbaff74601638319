"""``nbdl.distributed``: data-parallel training over processes and machines,
on MPI (mpi4py + MPICH: ``pip install 'nbdl[distributed]'``).

A Horovod-style API (``import nbdl.distributed as hvd``): ``init``,
``rank``, ``size``, ``local_rank``, ``local_size``, ``barrier``,
``allreduce(_)``, ``allgather``, ``broadcast(_)``, ``broadcast_parameters``
and ``DistributedTrainer``; checkpoints written by rank 0
(``save_checkpoint`` / ``load_checkpoint``); a launcher,
``python -m nbdl.distributed.launch -n 4 train.py``.  MXNet's
``kvstore='dist_sync'`` is ``nbdl.kvstore.dist``.  docs/distributed.md
tells how to run a job."""
from ..collective import DistributedError  # noqa: F401
from .api import (allgather, allreduce, allreduce_, barrier, broadcast, broadcast_,  # noqa: F401
                  broadcast_parameters, init, is_initialized, local_rank, local_size, rank,
                  size)
from .checkpoint import load_checkpoint, save_checkpoint  # noqa: F401
from .trainer import DistributedTrainer  # noqa: F401

__all__ = ["init", "is_initialized", "rank", "size", "local_rank", "local_size", "barrier",
           "allreduce", "allreduce_", "allgather", "broadcast", "broadcast_",
           "broadcast_parameters", "DistributedTrainer", "DistributedError",
           "save_checkpoint", "load_checkpoint"]
