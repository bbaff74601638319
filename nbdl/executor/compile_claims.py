"""Claims on (kernel, argument types) shared by the processes of one compile
pool (``compile_pool`` on the side of the process that runs the graph,
``compile_worker`` on the workers' side): which process compiles a kernel,
and when it has finished, through exclusive-create files in the pool's
directory; and how a worker rebuilds a kernel it is handed (``describe``)."""
import hashlib
import json
import os
import sys
import time

from ..kernels.shared.jit import KernelDispatcher, callee_of

WAIT_LIMIT = 600.0       # seconds to wait for a claimed kernel before compiling it here


def describe(fn):
    """How a worker process rebuilds dispatcher ``fn``: ``(module, builder,
    args)`` (``builder(*args)`` returns it; builder None: ``args`` is the
    function's name in the module), or None when it cannot."""
    src = getattr(fn, "nbdl_source", None)
    if src is not None:
        return src
    if not isinstance(fn, KernelDispatcher):
        return None
    f = fn.py_func
    public = getattr(fn, "public", fn)          # a callee twin's kernel
    mod = sys.modules.get(f.__module__)
    if mod is None or "." in f.__qualname__ or getattr(mod, f.__qualname__, None) is not public:
        return None
    if public is not fn:
        if public.inlined:          # small, compiled for each caller's flags: not shared
            return None
        return callee_desc(f.__module__, f.__qualname__)
    return (f.__module__, None, f.__qualname__)


def callee_desc(module, name):
    """``describe``'s description of the callee twin of kernel ``name`` of
    ``module`` (``KernelDispatcher.callee``: what a kernel's compilation
    compiles for the kernels it calls)."""
    return (callee_of.__module__, callee_of.__name__, (module, name))


def claim_key(desc, sig):
    """The claim (a file name) of ``describe``'s ``desc`` compiled for the
    argument types ``sig``."""
    # JSON, not pickle: a description read back from the compile plan has
    # lists where ``describe`` has tuples, and the two must give one key
    blob = json.dumps([desc, str(tuple(sig))], default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:24]


def key_for(fn, sig):
    """The claim key of dispatcher ``fn`` compiled for ``sig`` (None when a
    worker could not rebuild ``fn``)."""
    desc = describe(fn)
    return None if desc is None else claim_key(desc, sig)


class Claims:
    """Claims on (kernel, argument types) keys, shared by the processes of one
    pool through a directory: a key is claimed by creating the file named
    after it (exclusively: one process wins) and done once ``<key>.done``
    exists.  A claim that is not done is a compilation under way, and its
    process is inside it: a process waiting for one is never waited for by
    the claimer in turn (the claimer would have to be compiling a kernel that
    calls the waiter's, which calls the claimer's).

    Parameters
    ----------
    root : str
        The pool's directory.
    keys : iterable of str
        The keys handed out; compilations of anything else are not claimed.
    """

    def __init__(self, root, keys):
        self.dir = root
        self.keys = set(keys)
        self.mine = set()                       # keys this process claimed

    def take(self, key):
        """Claim ``key``; True if this process holds it (now or before)."""
        if key in self.mine:
            return True
        try:
            os.close(os.open(os.path.join(self.dir, key), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        self.mine.add(key)
        return True

    def is_done(self, key):
        """Whether ``key``'s compilation has ended (in any process)."""
        return os.path.exists(os.path.join(self.dir, key + ".done"))

    def mark_done(self, key):
        """Mark ``key``'s compilation ended (the code is in the on-disk cache,
        or the compilation failed and a waiter will try it itself)."""
        try:
            os.close(os.open(os.path.join(self.dir, key + ".done"), os.O_CREAT | os.O_WRONLY))
        except OSError:                         # the pool is gone
            pass

    def wait(self, key, gone=lambda: False):
        """Wait until ``key`` is done, ``gone()`` says its claimer cannot
        finish it, or ``WAIT_LIMIT`` seconds have passed."""
        end = time.monotonic() + WAIT_LIMIT
        while not self.is_done(key) and time.monotonic() < end and not gone():
            time.sleep(0.005)

    def hook(self, fn, sig, gone=lambda: False, meanwhile=None):
        """The compile hook's work for this pool: a key of the pool that
        nobody holds is claimed and the returned callable marks it done
        when the compilation ends; one another process holds is waited for
        (``meanwhile(key)`` first, if given), after which the compilation
        loads it from the on-disk cache."""
        if not self.keys:
            return None
        key = key_for(fn, sig)
        if key is None or key not in self.keys:
            return None
        if self.take(key):
            if self.is_done(key):
                return None
            return lambda: self.mark_done(key)
        if meanwhile is not None:
            meanwhile(key)
        self.wait(key, gone)
        return None


__all__ = ["describe", "claim_key", "key_for", "Claims", "WAIT_LIMIT"]
