"""The MPI world of a distributed nbdl job: one process per rank, started by
``mpiexec`` (or ``python -m nbdl.distributed.launch``), talking through
mpi4py over MPICH.  No transport of nbdl's own.

``init()`` starts MPI (once; a process started without ``mpiexec`` is a job
of one rank) and makes three communicators, duplicates of ``COMM_WORLD``, so
that the collectives of different users never interleave: ``comm`` (kvstore
and Horovod-style calls, barriers, broadcasts), ``grads`` (the gradient
buckets' nonblocking allreduces, which run while backward still runs) and
``sync`` (SyncBatchNorm's statistics, reduced inside backward too).  It
installs a ``sys.excepthook`` that aborts the whole job when a rank raises
(so no rank waits for ever on one that is gone) and, when several ranks
share the machine, pins each rank's threads to its share of the cores
(``pinning``).

mpi4py is optional: importing nbdl never imports it, and asking for a
distributed store or ``nbdl.distributed.init()`` without it raises an
``OptionalDependencyError`` naming ``pip install 'nbdl[distributed]'``.
"""
import os
import sys
import threading
import time
import traceback

from .. import config
from ..errors import NbdlError, OptionalDependencyError

INSTALL = "pip install 'nbdl[distributed]'   (or: pip install mpi4py mpich)"


class DistributedError(NbdlError, RuntimeError):
    """A distributed job that cannot go on: MPI is missing or failed, a rank
    timed out waiting for the others, or ranks disagree (shapes, keys)."""


class World:
    """The ranks of the job, as seen from this process (made by ``init``).

    Parameters
    ----------
    mpi : module
        ``mpi4py.MPI``.
    """

    def __init__(self, mpi):
        self.MPI = mpi
        world = mpi.COMM_WORLD
        self.comm = world.Dup()
        self.grads = world.Dup()
        self.sync = world.Dup()
        self.local = world.Split_type(mpi.COMM_TYPE_SHARED, key=world.Get_rank())
        self.rank = world.Get_rank()
        self.size = world.Get_size()
        self.local_rank = self.local.Get_rank()
        self.local_size = self.local.Get_size()
        self.pinned = None               # the cores this rank runs on, once pinned

    def __repr__(self):
        return (f"<nbdl World rank {self.rank}/{self.size} (local {self.local_rank}/"
                f"{self.local_size})>")

    def abort(self, message, code=1):
        """Print ``message`` on stderr and end every rank of the job
        (``MPI_Abort``); does not return.

        Parameters
        ----------
        message : str
            What went wrong (printed with this rank's number).
        code : int, default 1
            The exit status ``mpiexec`` reports.
        """
        try:
            sys.stderr.write(f"[nbdl rank {self.rank}/{self.size}] {message}\n"
                             f"[nbdl rank {self.rank}/{self.size}] aborting the job "
                             f"(MPI_Abort, status {code})\n")
            sys.stderr.flush()
            # mpiexec (MPICH's hydra) kills the job as soon as the abort
            # reaches it and may exit before it has forwarded what the rank
            # just wrote (measured: the message lost in 2 runs of 6); a pause
            # lets it drain the rank's output first.
            time.sleep(_ABORT_GRACE_S)
        finally:
            self.MPI.COMM_WORLD.Abort(code)


# seconds between writing the abort message and MPI_Abort (see World.abort)
_ABORT_GRACE_S = 0.5

_lock = threading.Lock()
_world = [None]


def mpi_module(what="a distributed kvstore"):
    """``mpi4py.MPI``, imported (and MPI started) on first use.

    Parameters
    ----------
    what : str
        What needs it (named in the error when mpi4py is missing).
    """
    try:
        import mpi4py
    except ImportError:
        raise OptionalDependencyError(f"{what} needs MPI through mpi4py, which is not "
                                      f"installed: {INSTALL}") from None
    if "mpi4py.MPI" not in sys.modules:
        # every MPI call of nbdl comes from the thread that started MPI
        mpi4py.rc.thread_level = "funneled"
    try:
        from mpi4py import MPI
    except ImportError as e:             # mpi4py without an MPI library
        raise OptionalDependencyError(f"{what}: mpi4py is installed but cannot load an MPI "
                                      f"library ({e}); {INSTALL}") from None
    return MPI


def init(what="nbdl.distributed.init()"):
    """The job's ``World``, made on the first call (MPI started, the
    communicators duplicated, the abort-on-error hook installed, threads
    pinned unless ``NBDL_DIST_PIN=0``); later calls return the same one.

    Parameters
    ----------
    what : str
        What asks for it (named in the error when mpi4py is missing).
    """
    w = _world[0]
    if w is not None:
        return w
    with _lock:
        if _world[0] is None:
            mpi = mpi_module(what)
            w = World(mpi)
            _install_excepthook(w)
            if config.dist_pin_threads() and w.local_size > 1:
                from .pinning import pin_threads
                w.pinned = pin_threads(w.local_rank, w.local_size)
            _world[0] = w
    return _world[0]


def world():
    """The ``World`` if ``init`` has run in this process, else None."""
    return _world[0]


def active():
    """Whether this process is a rank of a job of more than one rank."""
    w = _world[0]
    return w is not None and w.size > 1


def _install_excepthook(w):
    """An uncaught exception in the main thread of any rank ends the whole
    job: print it, then ``MPI_Abort``, so that the other ranks, possibly
    waiting in a collective for this one, exit with an error instead of
    hanging (and ``mpiexec`` exits non-zero).  (Other threads keep Python's
    hook: nbdl's background compilations may fail without harm.)"""
    previous = sys.excepthook

    def hook(kind, value, tb):
        if w.size <= 1:
            previous(kind, value, tb)
            return
        text = "".join(traceback.format_exception(kind, value, tb))
        w.abort(f"uncaught {kind.__name__} on rank {w.rank}:\n{text}")

    sys.excepthook = hook


def environment_rank():
    """(rank, size) from the launcher's environment before MPI starts
    (MPICH's ``PMI_RANK``/``PMI_SIZE``, Open MPI's ``OMPI_COMM_WORLD_*``),
    or None outside ``mpiexec``."""
    for r, s in (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")):
        if r in os.environ and s in os.environ:
            try:
                return int(os.environ[r]), int(os.environ[s])
            except ValueError:
                return None
    return None
