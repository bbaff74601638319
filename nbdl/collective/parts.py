"""Which part of a data set this rank reads (``num_parts`` / ``part_index``
of the samplers and iterators).  Left unset, they are the job's world size
and rank once a distributed store or ``nbdl.distributed.init()`` has started
the job, else one part."""
import numbers

import numpy as np

from ..errors import ArgumentError
from .world import world


def resolve_parts(num_parts, part_index, what):
    """``(num_parts, part_index)``, defaults filled in and checked.

    Parameters
    ----------
    num_parts : int or None
        How many parts the data is split into (None: the world size, or 1).
    part_index : int or None
        Which part this process reads (None: its rank, or 0).
    what : str
        The caller, named in errors.
    """
    w = world()
    if num_parts is None:
        num_parts = w.size if w is not None else 1
    if part_index is None:
        part_index = w.rank if w is not None and num_parts == w.size else 0
    for arg, value, low in (("num_parts", num_parts, 1), ("part_index", part_index, 0)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ArgumentError(f"{what}: {arg} must be an int >= {low}, got {value!r}")
    if part_index >= num_parts:
        raise ArgumentError(f"{what}: part_index must be < num_parts, got part_index="
                            f"{part_index}, num_parts={num_parts}")
    return int(num_parts), int(part_index)


def shard_indices(order, num_parts, part_index):
    """The indices of ``order`` (an int array, or a count: ``arange``) that
    part ``part_index`` of ``num_parts`` reads: every ``num_parts``-th one
    starting at ``part_index``, after the order is padded by wrapping around
    to a multiple of ``num_parts``, so that every part has the same length
    (``ceil(n / num_parts)``) and ranks run the same number of batches.

    Parameters
    ----------
    order : numpy.ndarray or int
        The indices of one pass, or their count.
    num_parts : int
        How many parts.
    part_index : int
        Which part.
    """
    order = np.arange(order) if isinstance(order, numbers.Integral) else np.asarray(order)
    n = len(order)
    if num_parts == 1 or n == 0:
        return order
    per = -(-n // num_parts)
    padded = np.resize(order, per * num_parts)      # wraps around
    return padded[part_index::num_parts]
