"""Collectives over host (numpy) arrays, each with a watchdog.

Every call is MPI's nonblocking form (``Iallreduce``, ``Ibcast``,
``Ibarrier``, ``Iallgatherv``) waited on by polling ``Test`` with a deadline
of ``NBDL_DIST_TIMEOUT`` seconds: a blocking MPI call cannot be
interrupted, so a rank whose peer died or raised outside a collective would
wait for ever.  Past the deadline the rank aborts the job with a message
saying which collective it was waiting for.  Polling sleeps between tests
(20 us doubling to 1 ms) so a waiting rank leaves the core to the others.
"""
import time

import numpy as np

from .. import config
from .._docs import shared_doc
from .world import DistributedError, init

# dtypes MPI reduces natively (float16 has no standard MPI type)
_REDUCIBLE = {np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64, np.uint8,
                                    np.int8)}


def wait(request, what, world=None):
    """Wait for ``request`` (an ``MPI.Request``); abort the job when it has
    not completed within ``NBDL_DIST_TIMEOUT`` seconds.

    Parameters
    ----------
    request : mpi4py.MPI.Request
        The nonblocking operation.
    what : str
        What it is (named in the abort message).
    world : World, optional
        The job (default: ``init()``).
    """
    if request.Test():
        return
    timeout = config.dist_timeout()
    deadline = time.monotonic() + timeout
    pause = 2e-5
    while not request.Test():
        if time.monotonic() > deadline:
            (world or init()).abort(
                f"{what} did not complete within {timeout:g} s (NBDL_DIST_TIMEOUT): another "
                f"rank has probably died, raised an error, or stopped calling collectives")
        time.sleep(pause)
        pause = min(pause * 2, 1e-3)


class Pending:
    """A started nonblocking collective; ``wait()`` finishes it.

    Parameters
    ----------
    request : mpi4py.MPI.Request
        The request.
    what : str
        What it is (for the watchdog's message).
    world : World
        The job.
    """

    __slots__ = ("request", "what", "world", "done")

    def __init__(self, request, what, world):
        self.request, self.what, self.world = request, what, world
        self.done = False

    def test(self):
        """Whether it has completed (lets MPI progress it)."""
        if not self.done:
            self.done = bool(self.request.Test())
        return self.done

    def wait(self):
        """Block (with the watchdog) until it has completed."""
        if not self.done:
            wait(self.request, self.what, self.world)
            self.done = True


def _job(comm, world):
    """(the World, the communicator: ``comm`` or the world's ``comm``)."""
    w = world or init()
    return w, (comm if comm is not None else w.comm)


# the arguments every collective takes
_JOB = """
what : str
    A name for the watchdog's message.
comm : mpi4py.MPI.Comm, optional
    The communicator (default the world's ``comm``).
world : World, optional
    The job (default ``init()``).
"""


def _check(what, arr):
    if not isinstance(arr, np.ndarray) or not arr.flags.c_contiguous:
        raise DistributedError(f"{what}: expected a C-contiguous numpy array, got "
                               f"{type(arr).__name__}")
    if arr.dtype not in _REDUCIBLE:
        raise DistributedError(f"{what}: dtype {arr.dtype} cannot be reduced by MPI here "
                               f"(float32, float64, int8/32/64, uint8); convert first")


@shared_doc(job=_JOB)
def iallreduce(send, recv=None, what="allreduce", comm=None, world=None):
    """Start summing ``send`` over the ranks into ``recv`` (in place when
    ``recv`` is None); returns a ``Pending``.  Neither buffer may be touched
    until it completes.

    Parameters
    ----------
    send : numpy.ndarray
        This rank's values (C-contiguous).
    recv : numpy.ndarray, optional
        Where the sum goes (same shape and dtype); default ``send`` itself.
    {job}
    """
    w, c = _job(comm, world)
    _check(what, send)
    mpi = w.MPI
    if recv is None:
        req = c.Iallreduce(mpi.IN_PLACE, send, op=mpi.SUM)
    else:
        _check(what, recv)
        if recv.shape != send.shape or recv.dtype != send.dtype:
            raise DistributedError(f"{what}: recv {recv.dtype}{recv.shape} does not match send "
                                   f"{send.dtype}{send.shape}")
        req = c.Iallreduce(send, recv, op=mpi.SUM)
    return Pending(req, what, w)


@shared_doc(job=_JOB)
def allreduce(buf, what="allreduce", comm=None, world=None, op="sum"):
    """Sum (or max/min) ``buf`` over the ranks, in place.

    Parameters
    ----------
    buf : numpy.ndarray
        This rank's values; the result replaces them.
    {job}
    op : str, default 'sum'
        ``'sum'``, ``'max'`` or ``'min'``.
    """
    w, c = _job(comm, world)
    _check(what, buf)
    mpi = w.MPI
    ops = {"sum": mpi.SUM, "max": mpi.MAX, "min": mpi.MIN}
    if op not in ops:
        raise DistributedError(f"{what}: op must be one of {sorted(ops)}, got {op!r}")
    wait(c.Iallreduce(mpi.IN_PLACE, buf, op=ops[op]), what, w)
    return buf


@shared_doc(job=_JOB)
def broadcast(buf, root=0, what="broadcast", comm=None, world=None):
    """Copy rank ``root``'s ``buf`` into every rank's ``buf``.

    Parameters
    ----------
    buf : numpy.ndarray
        The values (sent on ``root``, overwritten elsewhere).
    root : int, default 0
        The rank whose values win.
    {job}
    """
    w, c = _job(comm, world)
    if not isinstance(buf, np.ndarray) or not buf.flags.c_contiguous:
        raise DistributedError(f"{what}: expected a C-contiguous numpy array")
    if not 0 <= root < w.size:
        raise DistributedError(f"{what}: root_rank {root} is not a rank of this job of "
                               f"{w.size}")
    wait(c.Ibcast(buf.view(np.uint8).reshape(-1), root=root), what, w)
    return buf


@shared_doc(job=_JOB)
def barrier(what="barrier", comm=None, world=None):
    """Wait until every rank has called ``barrier``.

    Parameters
    ----------
    {job}
    """
    w, c = _job(comm, world)
    wait(c.Ibarrier(), what, w)


def allgather(arr, what="allgather", world=None):
    """Every rank's ``arr`` concatenated along the first axis, in rank order
    (the first dimensions may differ between ranks, the others must not).

    Parameters
    ----------
    arr : numpy.ndarray
        This rank's part (at least one dimension).
    what : str
        A name for the watchdog's message.
    world : World, optional
        The job (default ``init()``).
    """
    w = world or init()
    arr = np.ascontiguousarray(arr)
    if arr.ndim == 0:
        raise DistributedError(f"{what}: cannot gather a 0-d array; give it a first axis")
    head = np.array([arr.shape[0], np.dtype(arr.dtype).num] + list(arr.shape[1:]), np.int64)
    lengths = np.zeros(w.size, np.int64)
    lengths[w.rank] = len(head)
    allreduce(lengths, what, world=w)
    if len(set(lengths.tolist())) != 1:
        raise DistributedError(f"{what}: ranks gather arrays of different numbers of "
                               f"dimensions ({lengths.tolist()})")
    heads = np.zeros((w.size, len(head)), np.int64)
    heads[w.rank] = head
    allreduce(heads, what, world=w)
    if len(set(heads[:, 1].tolist())) != 1 or len({tuple(h[2:]) for h in heads.tolist()}) != 1:
        raise DistributedError(f"{what}: ranks gather arrays whose dtypes or trailing "
                               f"dimensions differ ({heads[:, 1:].tolist()}; rank {w.rank} has "
                               f"{arr.dtype}{arr.shape})")
    row = arr.nbytes // arr.shape[0] if arr.shape[0] else int(np.prod(arr.shape[1:])) * \
        arr.itemsize
    counts = [int(n) * row for n in heads[:, 0]]
    displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
    out = np.empty((int(heads[:, 0].sum()),) + arr.shape[1:], arr.dtype)
    send = arr.view(np.uint8).reshape(-1)
    recv = out.view(np.uint8).reshape(-1)
    wait(w.comm.Iallgatherv(send, [recv, counts, displs, w.MPI.BYTE]), what, w)
    return out


def sum_across_ranks(buf, what="sum across ranks"):
    """Sum ``buf`` (a host array) over the ranks in place when this process
    is a rank of a job of several (``init`` has run), else leave it: what
    SyncBatchNorm's reduce phase calls between its kernels.

    Parameters
    ----------
    buf : numpy.ndarray
        Per-channel partial sums; replaced by the totals.
    what : str
        A name for the watchdog's message.
    """
    from .world import world as _current
    w = _current()
    if w is None or w.size == 1:
        return buf
    return allreduce(buf, what, comm=w.sync, world=w)
