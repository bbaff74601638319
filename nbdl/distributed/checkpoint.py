"""Checkpoints of a distributed job: rank 0 writes, every rank waits for
the files, every rank reads them back, so that a restarted job resumes with
the same parameters and optimizer states (update counts, momentum) on every
rank, bit for bit."""
import numpy as np

from .. import collective
from ..errors import NbdlError


def _names(prefix, epoch):
    return f"{prefix}-{int(epoch):04d}.params", f"{prefix}-{int(epoch):04d}.states"


def _on_store(trainer):
    """Whether the trainer's optimizer states live in a distributed kvstore
    (whose ``save_optimizer_states`` is itself collective: rank 0 writes)."""
    trainer._prepare()
    kv = trainer._kvstore
    return bool(trainer._update_on_kvstore and getattr(kv, "distributed", False))


def save_checkpoint(prefix, block, trainer=None, epoch=0):
    """Write ``block``'s parameters (``<prefix>-<epoch>.params``) and the
    trainer's states (``<prefix>-<epoch>.states``) from rank 0, then wait
    until every rank gets here; every rank must call it.  Returns the two
    file names.

    Parameters
    ----------
    prefix : str
        Path prefix of the files (on a file system every rank can read).
    block : Block
        The network.
    trainer : Trainer, optional
        Its optimizer states are saved too.
    epoch : int, default 0
        Numbers the files.
    """
    w = collective.init("save_checkpoint")
    params, states = _names(prefix, epoch)
    on_store = trainer is not None and _on_store(trainer)
    error = None
    if w.rank == 0:
        try:
            block.save_parameters(params)
            if trainer is not None and not on_store:
                trainer.save_states(states)
        except Exception as e:        # the others must not wait for ever
            error = e
    if on_store:
        trainer.save_states(states)   # collective: rank 0 writes, all wait
    failed = np.array([0 if error is None else 1], np.int64)
    collective.allreduce(failed, "save_checkpoint", world=w)
    if error is not None:
        raise error
    if failed[0]:
        raise NbdlError(f"save_checkpoint({prefix!r}): rank 0 could not write the checkpoint "
                        f"(see its error)")
    return params, states


def load_checkpoint(prefix, block, trainer=None, epoch=0):
    """Load what ``save_checkpoint`` wrote into ``block`` (and ``trainer``)
    on every rank, after a barrier; every rank must call it.

    Parameters
    ----------
    prefix : str
        Path prefix given to ``save_checkpoint``.
    block : Block
        The network (initialized or not).
    trainer : Trainer, optional
        Gets the saved optimizer states.
    epoch : int, default 0
        Which checkpoint.
    """
    w = collective.init("load_checkpoint")
    params, states = _names(prefix, epoch)
    collective.barrier("load_checkpoint", world=w)
    block.load_parameters(params)
    if trainer is not None:
        trainer.load_states(states)
    return params, states
