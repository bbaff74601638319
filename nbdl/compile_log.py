"""Progress lines for compilations a user would otherwise wait on in silence.

Numba compiles a kernel the first time it is called with new argument types;
on a machine whose cache is empty the first run of a graph can compile dozens
of kernels.  Before such a run the executor asks ``kernel_status`` which of
its kernels still need compiling and, when there are enough of them to take
seconds, logs one line before and one after on the ``nbdl.compile`` logger:

    nbdl: compiling 37 kernels for the graph of 'resnetv10_dense0_fwd' (forward, training) ...
    nbdl: compiled 37 kernels in 12.4 s (cached for the next process)

``NBDL_QUIET=1`` or ``logging.getLogger("nbdl.compile").setLevel(logging.WARNING)``
silences them.  When the program configured no logging at all, a handler
printing to stderr is attached to the ``nbdl.compile`` logger on first use
(which then does not propagate); otherwise the lines go wherever the
program's logging sends INFO records."""
import atexit
import inspect
import logging
import sys
import threading
import time

import numpy as np

from . import config

_log = logging.getLogger("nbdl.compile")
ANNOUNCE_MIN = 4          # kernels to compile before a line is worth printing (about 2 s)
_handler = None


def _ensure_handler():
    # Only the compile logger gets a handler of its own (not all of "nbdl":
    # other nbdl loggers, e.g. the lr schedulers', stay silent unless the
    # program configures logging, as in MXNet).
    global _handler
    if _handler is None and not _log.handlers and not logging.getLogger().handlers:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("nbdl: %(message)s"))
        _log.addHandler(_handler)
        _log.propagate = False
        if _log.level == logging.NOTSET:
            _log.setLevel(logging.INFO)


def _index_has(disp, sig):
    """Whether Numba's on-disk cache holds ``disp`` compiled for ``sig`` on
    this CPU (the index key names the CPU and its features)."""
    cache = getattr(disp, "_cache", None)
    try:
        key = cache._index_key(sig, disp.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:     # no cache (cache=False), or Numba's internals moved
        return False


def lookup(fn, args):
    """``(signature, in_cache)`` of Numba CPU dispatcher ``fn`` called with
    ``args``: the Numba signature (folded for a ``*args`` kernel, as Numba
    compiles it), and whether the on-disk cache holds code for it on this
    CPU; None for anything else (a Python launcher, a CUDA kernel,
    arguments Numba cannot type).  Memoized per (kernel, cheap argument
    types): a schedule of 40,000 steps has a handful of distinct kernel
    signatures, typeof costs ~10 us an array and reading the cache index ~1 ms."""
    if not hasattr(fn, "overloads") or not hasattr(fn, "py_func"):
        return None
    quick = (fn,) + tuple(_quick_type(a) for a in args)
    known = _looked_up.get(quick, False)
    if known is False:
        from numba import typeof
        try:
            sig = tuple(typeof(a) for a in args)
            if fn.py_func.__code__.co_flags & inspect.CO_VARARGS:
                # Numba compiles ``f(*args)`` for the folded types (a
                # StarArgTuple): ``fn.compile`` of the flat ones fails
                sig = tuple(fn.fold_argument_types(sig, {})[1])
        except Exception:
            known = None
        else:
            known = (sig, _index_has(fn, sig))
        _looked_up[quick] = known
    return known


_looked_up = {}


def compiled_or_cached(fn, args):
    """Whether calling Numba dispatcher ``fn`` with ``args`` needs no
    compilation: compiled in this process, or in the on-disk cache for this
    CPU.  True for anything that is not a Numba CPU dispatcher."""
    known = lookup(fn, args)
    return known is None or known[1] or known[0] in fn.overloads


_background = []


def in_background(work, name):
    """Run ``work()`` in a daemon thread (background compilation).  At exit,
    threads still running are joined (up to 120 s in all) rather than LLVM
    being torn down under a compiling thread; a failure is logged at debug
    level.

    Parameters
    ----------
    work : callable
        What to run.
    name : str
        The thread's name (``nbdl-driver``, ``nbdl-parallel``).
    """
    def run():
        try:
            work()
        except Exception as e:          # pragma: no cover - depends on Numba
            _log.debug("%s: background compilation failed: %s", name, e)
    t = threading.Thread(target=run, name=name, daemon=True)
    _background.append(t)
    if len(_background) == 1:
        atexit.register(_join_background)
    t.start()
    return t


def _join_background(timeout=120.0):
    end = time.monotonic() + timeout
    for t in _background:
        t.join(max(0.0, end - time.monotonic()))


def kernel_status(calls):
    """``calls``: ``(fn, args)`` pairs.  Returns ``(to_compile, from_cache)``,
    the numbers of distinct (kernel, signature) pairs not yet compiled in this
    process that must be compiled, and that the on-disk cache will supply."""
    seen, compile_n, cached_n = set(), 0, 0
    for fn, args in calls:
        known = lookup(fn, args)
        if known is None:
            continue          # a Python launcher or a CUDA kernel: not counted
        sig, in_cache = known
        key = (id(fn), sig)
        if key in seen or sig in fn.overloads:
            continue
        seen.add(key)
        if in_cache:
            cached_n += 1
        else:
            compile_n += 1
    return compile_n, cached_n


def _quick_type(a):
    if isinstance(a, np.ndarray):
        f = a.flags
        return (a.dtype.num, a.ndim, f.c_contiguous, f.f_contiguous, f.writeable, f.aligned)
    return type(a)


class Announcement:
    """What ``announce`` printed; ``done()`` prints the closing line.

    Parameters
    ----------
    count : int
        Kernels announced (0: nothing was printed, ``done`` prints nothing).
    t0 : float
        ``time.perf_counter()`` when the announcement was made.
    """

    def __init__(self, count, t0):
        self.count = count
        self.t0 = t0

    def done(self):
        if self.count:
            _log.info("compiled %d kernels in %.1f s (cached for the next process)",
                      self.count, time.perf_counter() - self.t0)


def announce(calls, what):
    """Log a line before the first run of ``calls`` when at least
    ``ANNOUNCE_MIN`` kernels must be compiled; returns an ``Announcement``.

    Parameters
    ----------
    calls : list of (callable, tuple)
        The kernels and the arguments they will be called with.
    what : str
        What is being run, for the message ("the graph of 'fc2_output' (backward)").
    """
    if config.quiet():
        return Announcement(0, 0.0)
    _ensure_handler()
    if not _log.isEnabledFor(logging.INFO):
        return Announcement(0, 0.0)
    n, cached = kernel_status(calls)
    if n < ANNOUNCE_MIN:
        return Announcement(0, 0.0)
    more = f", {cached} more from the cache" if cached else ""
    _log.info("compiling %d kernels for %s%s ...", n, what, more)
    return Announcement(n, time.perf_counter())


def info(msg, *args):
    """One progress line on the ``nbdl.compile`` logger (unless quiet)."""
    if config.quiet():
        return
    _ensure_handler()
    _log.info(msg, *args)
