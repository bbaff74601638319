"""The compile pool (``nbdl.executor.compile_pool``): worker processes compile
a graph's kernels into Numba's on-disk cache beside its first run.  Each case
runs in a fresh process with an empty cache (a warm cache leaves nothing to
compile)."""
import json
import os
import subprocess
import sys

import pytest

from nbdl.executor import compile_claims, compile_pool

_SCRIPT = r"""
import json, sys, numpy as np, nbdl
from nbdl.executor import compile_pool
from nbdl import compile_log
wait = sys.argv[1] == "wait"
x = nbdl.sym.var("x")
y = x
for op in ("exp", "sin", "cos", "tanh", "sigmoid", "square", "abs", "negative", "softsign",
           "arctan"):
    y = getattr(nbdl.sym, op)(y)
y = nbdl.sym.sum(y)
ex = y.simple_bind(nbdl.cpu(), x=(3, 4))
ex.arg_dict["x"][:] = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
pools = []
start = compile_pool.start
def spy(calls, training=False):
    p = start(calls, training)
    pools.append(p)
    if p is not None and wait:
        for proc in p.procs:
            proc.wait()           # let the worker compile everything first
    return p
compile_pool.start = spy
ex.forward(is_train=True)
ex.backward()
pool = pools[0]
kernels = [s.fn for s in ex._sched.fwd_train + ex._sched.backward]
loaded = sum(1 for f in set(kernels) if getattr(f, "stats", None) and f.stats.cache_hits)
print(json.dumps({"pool": pool is not None, "items": len(pool.keys) if pool else 0,
                  "mine": len(pool.mine) if pool else 0, "loaded": loaded,
                  "out": ex.outputs[0].asnumpy().ravel().tolist(),
                  "grad": ex.grad_dict["x"].asnumpy().ravel().tolist()}))
"""


def _run(tmp_path, workers, mode):
    env = dict(os.environ, NBDL_COMPILE_WORKERS=str(workers), NBDL_QUIET="1",
               NUMBA_CACHE_DIR=str(tmp_path / f"numba{workers}{mode}"),
               NBDL_CACHE_DIR=str(tmp_path / f"nbdl{workers}{mode}"), NBDL_DRIVER="0")
    out = subprocess.run([sys.executable, "-c", _SCRIPT, mode], env=env, check=True,
                         capture_output=True, text=True, timeout=900).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_a_worker_compiles_into_the_cache_and_results_are_unchanged(tmp_path):
    alone = _run(tmp_path, 0, "go")
    assert not alone["pool"]
    pooled = _run(tmp_path, 1, "wait")
    assert pooled["pool"] and pooled["items"] >= compile_pool.MIN_KERNELS
    # the worker finished first: this process claimed nothing and loaded the kernels
    assert pooled["mine"] == 0 and pooled["loaded"] >= compile_pool.MIN_KERNELS
    assert pooled["out"] == alone["out"] and pooled["grad"] == alone["grad"]


def test_worker_and_this_process_share_the_work(tmp_path):
    both = _run(tmp_path, 1, "go")
    assert both["pool"]
    assert 0 < both["mine"] <= both["items"]       # this process compiled what it reached first


def test_claims(tmp_path):
    claims = compile_pool.Claims(str(tmp_path), ["k1", "k2"])
    assert claims.take("k1") and claims.take("k1")          # ours, and ours again
    with open(tmp_path / "k2", "w"):
        pass                                                # a worker's claim
    assert not claims.take("k2")
    assert not claims.is_done("k1")
    claims.mark_done("k1")
    assert claims.is_done("k1")


def test_hook_claims_marks_and_waits(tmp_path, monkeypatch):
    """The hook claims a pooled key and marks it done after the compilation;
    a key another process holds is waited for (until done or its claimer is
    gone); anything else is left alone."""
    claims = compile_pool.Claims(str(tmp_path), ["mine", "theirs"])
    keys = {"a": "mine", "b": "theirs", "c": "other", "d": None}
    monkeypatch.setattr(compile_claims, "key_for", lambda fn, sig: keys[fn])
    after = claims.hook("a", ())
    assert after is not None and not claims.is_done("mine")
    after()
    assert claims.is_done("mine")
    assert claims.hook("c", ()) is None and claims.hook("d", ()) is None
    assert not os.path.exists(tmp_path / "other")
    with open(tmp_path / "theirs", "w"):
        pass
    seen = []
    assert claims.hook("b", (), gone=lambda: True, meanwhile=seen.append) is None
    assert seen == ["theirs"]                   # waited, but the claimer was gone


@pytest.mark.parametrize("value, expect", [("0", 0), ("2", 2), ("auto", None), ("x", None)])
def test_knob(monkeypatch, value, expect):
    monkeypatch.setenv("NBDL_COMPILE_WORKERS", value)
    from nbdl import config
    assert config.compile_workers() == expect
    if expect == 0:
        assert compile_pool.worker_count(100) == 0
    if expect == 2:
        assert compile_pool.worker_count(100) == 2 and compile_pool.worker_count(3) == 0


@pytest.mark.parametrize("cores, busy, expect", [
    (2, 0.0, 1), (2, 0.4, 1), (2, 0.6, 0), (2, 2.0, 0),   # one core is this process's
    (8, 0.0, 4), (8, 4.6, 2), (8, 7.0, 0), (1, 0.0, 0)])
def test_auto_workers(monkeypatch, cores, busy, expect):
    monkeypatch.setenv("NBDL_COMPILE_WORKERS", "auto")
    assert compile_pool.worker_count(100, cores=cores, busy=busy) == expect
    assert compile_pool.worker_count(compile_pool.MIN_KERNELS - 1, cores=cores, busy=busy) == 0


def test_own_threads_are_not_another_process_s_work():
    """A thread of this process computing (a BLAS product, which releases
    the GIL) is runnable, and ``busy_cores`` must not take it for another
    process: the pool started no worker when a BLAS thread of its own was
    spinning at that moment."""
    import threading
    import numpy as np
    a = np.ones((400, 400))
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            a.dot(a)

    t = threading.Thread(target=spin)
    t.start()
    try:
        seen = max(compile_pool._own_running() for _ in range(200))
    finally:
        stop.set()
        t.join()
    assert seen >= 2
    assert compile_pool._own_running() >= 1


def test_busy_cores_takes_the_least_of_a_few_samples(monkeypatch):
    """A process runnable for a moment (a shell command) must not keep the
    pool from starting: the runnable count is sampled a few times."""
    samples = iter(["0.9 0.5 0.4 3/200 1", "0.9 0.5 0.4 2/200 1", "0.9 0.5 0.4 1/200 1"])
    monkeypatch.setattr(compile_pool, "_loadavg", lambda: next(samples).split())
    monkeypatch.setattr(compile_pool, "_own_running", lambda: 1)
    assert compile_pool.busy_cores() == 0.0
    steady = "1.7 1.5 1.4 3/200 1".split()
    monkeypatch.setattr(compile_pool, "_loadavg", lambda: steady)
    assert compile_pool.busy_cores() == 1.7          # two others, the load says 1.7


def test_busy_cores_reads_the_machine():
    busy = compile_pool.busy_cores()
    assert isinstance(busy, float) and busy >= 0.0


def test_lookup_folds_star_args_as_numba_compiles_them():
    """A ``*args`` kernel (Concat's) is compiled for its folded types: the
    signature the pool hands a worker (or compiles ahead) must be those."""
    import numpy as np
    from nbdl import compile_log
    from nbdl.kernels.cpu.shape import concat_kernel
    a, b = np.ones((2, 3), np.float32), np.ones((2, 1), np.float32)
    out = np.zeros((2, 4), np.float32)
    sig, _ = compile_log.lookup(concat_kernel, (a, b, out, 1))
    assert len(sig) == 1                        # one StarArgTuple
    concat_kernel.compile(sig)                  # what the pool does with it
    concat_kernel(a, b, out, 1)
    assert sig in concat_kernel.overloads and out.sum() == 8


def test_a_failed_compile_ahead_of_need_is_not_the_callers(tmp_path, monkeypatch):
    class Broken:
        def compile(self, sig):
            raise TypeError("cannot compile this ahead")

    pool = compile_pool.Pool.__new__(compile_pool.Pool)
    pool.dir, pool.procs = str(tmp_path), []
    pool.claims = compile_pool.Claims(str(tmp_path), ["k1", "k2"])
    pool.keys, pool.mine = pool.claims.keys, pool.claims.mine
    fn, sig = object(), ("sig",)
    monkeypatch.setattr(compile_claims, "key_for", lambda f, s: "k1" if f is fn else None)
    pool.order = [(Broken(), ("other",), "k2")]
    with open(tmp_path / "k1", "w"):
        pass                                    # a worker compiles fn
    monkeypatch.setattr(compile_claims, "WAIT_LIMIT", 0.05)
    assert pool.claim(fn, sig) is None          # compiles k2 ahead: fails, silently
    assert "k2" in pool.mine and not pool.order
