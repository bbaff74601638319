"""Compile a graph's kernels in worker processes while it runs its first time.

A graph's first run on a machine whose Numba cache is empty compiles every
kernel it calls, one after the other, on one core: Numba compiles under a
global lock, so threads cannot share the work.  Processes can, through the
on-disk cache they share.  Before an executor's first run, ``start`` hands
the kernels that are neither compiled in this process nor cached to worker
processes (``python -m nbdl.executor.compile_worker``), which compile them
from the *end* of the schedule (the backward pass first) into the cache,
while this process runs the schedule from its start and compiles what it
reaches first.  Each (kernel, argument types) is claimed once, by whichever
process reaches it first, with an exclusive-create file in a private
directory; when this process reaches a kernel a worker has claimed, it waits
for that worker to finish it and loads it from the cache (the compile hook of
``nbdl.kernels.shared.jit``).  The two meet in the middle: on 2 cores a first
run compiles in about half the time, on more cores in less.

``NBDL_COMPILE_WORKERS`` sets the number of workers: ``auto`` (default) is one
per idle core beyond the one this process uses, at most 4 (``busy_cores``
says how many other processes keep busy), and none on a machine already busy
or for fewer than ``MIN_KERNELS`` kernels; ``0`` turns the pool off.
Workers that fail (an exception, a missing module) cost nothing but their
start: a kernel they did not finish is compiled here, as without a pool.
Only kernels a worker can rebuild are handed out: module-level
``KernelDispatcher`` functions, and generated ones that name their source
(``fn.nbdl_source``).  With each kernel go the callees its compilation
compiles, as the compile plan recorded them (``compile_plan``): every
process claims those through the compile hook too (``compile_claims``), so a
kernel whose call tree is most of the work (a convolution's) is shared
between the cores as well.
"""
import atexit
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from .. import compile_log, config
from . import compile_plan
from .compile_claims import Claims, callee_desc, claim_key, describe
from ..kernels.shared.jit import set_compile_hook

MIN_KERNELS = 6          # fewer: a worker's start (about a second) would not pay

_lock = threading.Lock()
_pools = []


def worker_count(n_kernels, cores=None, busy=None):
    """Workers for ``n_kernels`` kernels to compile (see the module docstring).

    Parameters
    ----------
    n_kernels : int
        Distinct (kernel, argument types) pairs left to compile.
    cores : int, optional
        Cores this process may use (default: its CPU affinity).
    busy : float, optional
        Cores other processes keep busy (default: ``busy_cores()``).
    """
    want = config.compile_workers()
    if want == 0 or n_kernels < MIN_KERNELS:
        return 0
    if want is not None:
        return max(0, min(want, n_kernels // 2))
    if cores is None:
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:      # pragma: no cover - not Linux
            cores = os.cpu_count() or 1
    if busy is None:
        busy = busy_cores()
    # this process keeps one core; a worker per further idle core, a core
    # idle for at least half its time counting as idle
    spare = int(cores - busy - 1 + 0.5)
    return max(0, min(4, spare, n_kernels // MIN_KERNELS))


def busy_cores():
    """Cores that other processes keep busy now: the smaller of the 1-minute
    load average and the tasks runnable at this moment that are not this
    process's threads (``/proc/loadavg``'s fourth field, which counts
    threads, less ``_own_running``).  The load average alone lags: it
    still counts, for a minute, a process that just ended (the previous
    command of a script) and, from its first seconds, this process itself,
    which on a 2-core machine was enough to start no worker at all; and
    this process's own threads (a BLAS thread spinning after a product)
    are no other process's work.  The runnable count is the least of up to
    five samples 2 ms apart: a short-lived process (a shell's ``date``)
    runnable at the one moment sampled kept the pool from starting (a
    training step's first run then took 21 s instead of 12)."""
    try:
        others = None
        for i in range(5):
            fields = _loadavg()
            running = int(fields[3].split("/")[0]) - _own_running()
            others = running if others is None else min(others, running)
            if others <= 0:
                break
            time.sleep(0.002)
        return max(0.0, min(float(fields[0]), float(others)))
    except (OSError, ValueError, IndexError):
        try:
            return os.getloadavg()[0]
        except (AttributeError, OSError):   # pragma: no cover - not Unix
            return 0.0


def _loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()


def _own_running():
    """This process's threads that are runnable now (at least 1: the caller)."""
    n = 0
    try:
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            if stat[stat.rindex(")") + 2:].startswith("R"):
                n += 1
    except OSError:
        pass
    return max(1, n)


class Pool:
    """The workers of one ``start`` and the kernels they were handed.

    Parameters
    ----------
    items : list of (dispatcher, tuple of Numba types, description)
        Kernels to compile, in the order this process will run them.
    workers : int
        Worker processes to start.
    callees : list of lists of (description, tuple of Numba types), optional
        For each item, the kernels the compile plan says its compilation
        compiles (``compile_plan``): workers take them too.
    after : list of (description, tuple of Numba types), optional
        Kernels this process is expected to compile after the items
        (``compile_plan.followers``): workers take them last, from the end.
    """

    def __init__(self, items, workers, callees=None, after=()):
        self.dir = tempfile.mkdtemp(prefix="nbdl-compile-")
        self.order = []                         # (fn, sig, key), this process's order
        payload = []
        for i, (fn, sig, desc) in enumerate(items):
            k = claim_key(desc, sig)
            self.order.append((fn, sig, k))
            payload.append((k, desc, sig))
            for cdesc, csig in (callees[i] if callees else ()):
                payload.append((claim_key(cdesc, csig), cdesc, csig))
        payload.reverse()                       # workers start from the end
        # then the expected followers, the last first (this process needs the first first)
        payload += [(claim_key(d, s), d, s) for d, s in reversed(list(after))]
        self.work = [k for k, _, _ in payload]  # the workers' order
        self.claims = Claims(self.dir, self.work)
        self.keys = self.claims.keys
        self.mine = self.claims.mine
        blob = pickle.dumps({"dir": self.dir, "items": payload})
        env = dict(os.environ, NBDL_COMPILE_WORKERS="0")
        self.procs = []
        for _ in range(workers):
            p = subprocess.Popen([sys.executable, "-m", "nbdl.executor.compile_worker"],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, env=env)
            try:
                p.stdin.write(blob)
                p.stdin.close()
            except OSError:                     # pragma: no cover - the worker died at start
                pass
            self.procs.append(p)

    def _take(self, key):
        return self.claims.take(key)

    def _ahead(self, key):
        # while a worker compiles ``key``: compile the next kernels of this
        # process's order that nobody has claimed (they come later in it)
        while self.order and not self.claims.is_done(key):
            fn2, sig2, k2 = self.order.pop(0)
            if k2 != key and self._take(k2):
                try:                            # ahead of need, while the worker works;
                    fn2.compile(sig2)           # the call itself reports a failure
                except Exception:
                    pass

    def claim(self, fn, sig):
        """Called (through the compile hook) before this process compiles
        ``fn`` for ``sig``: claims it (returns what marks it done); or,
        while a worker compiles it, compiles the next kernels nobody has
        claimed (they come later in this process's order) and then waits for
        the worker's."""
        return self.claims.hook(fn, sig, gone=self.finished, meanwhile=self._ahead)

    def finished(self):
        return all(p.poll() is not None for p in self.procs)

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def _hook(fn, sig):
    afters = [a for a in (pool.claim(fn, sig) for pool in list(_pools)) if a is not None]
    if not afters:
        return None

    def after():
        for a in afters:
            a()
    return after


def _close_all():
    with _lock:
        pools = list(_pools)
        _pools.clear()
        set_compile_hook(None)
    for pool in pools:
        pool.close()


def start(calls, training=False):
    """Start workers for the kernels of ``calls`` that need compiling, when
    that pays (``worker_count``).  Returns the ``Pool`` or None.

    Parameters
    ----------
    calls : list of (callable, tuple)
        Kernels and their arguments, in the order they will run (the
        forward pass, then the backward pass).
    training : bool
        ``calls`` are a training graph's: the workers also get, last, the
        kernels the compile plan recorded after such a graph
        (``compile_plan.load_followers``).
    """
    items, seen = [], set()
    for fn, args in calls:
        known = compile_log.lookup(fn, args)
        if known is None:
            continue
        sig, cached = known
        if cached or sig in fn.overloads or (id(fn), sig) in seen:
            continue
        seen.add((id(fn), sig))
        desc = describe(fn)
        if desc is not None:
            items.append((fn, sig, desc))
    plan = compile_plan.load()
    callees = [[(callee_desc(m, n), csig) for m, n, csig in compile_plan.callees(fn, sig, plan)]
               for fn, sig, _ in items]
    workers = worker_count(len(items) + sum(len(c) for c in callees))
    if workers == 0:
        return None
    after = []
    if training:      # the plan keys followers by the graph's first kernel
        for fn, args in calls:
            known = compile_log.lookup(fn, args)
            if known is not None:
                after = compile_plan.followers(fn, known[0])
                break
    pool = Pool(items, workers, callees, after)
    with _lock:
        for old in [p for p in _pools if p.finished()]:
            _pools.remove(old)
            old.close()
        _pools.append(pool)
        set_compile_hook(_hook)
        if len(_pools) == 1 and not getattr(_close_all, "registered", False):
            atexit.register(_close_all)
            _close_all.registered = True
    return pool
