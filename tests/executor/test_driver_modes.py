"""When the generated native driver is compiled (NBDL_DRIVER=auto / 1 / 0),
and the compile progress report."""
import time

import numpy as np
import pytest
from numba import njit

import nbdl
from nbdl import compile_log


def _chain(n):
    y = nbdl.sym.var("data")
    for i in range(n):
        y = nbdl.sym.relu(y) if i % 2 else y * 3.0
    return y


def _bind(tmp_path, monkeypatch, mode, after=None, n=12):
    # (each test its own chain length: a driver compiled in this process is reused)
    monkeypatch.setenv("NBDL_CACHE_DIR", str(tmp_path))     # no driver cached yet
    monkeypatch.setenv("NBDL_DRIVER", mode)
    monkeypatch.setenv("NBDL_DRIVER_MIN_STEPS", "1")
    if after is not None:
        monkeypatch.setenv("NBDL_DRIVER_AFTER_RUNS", str(after))
    ex = _chain(n).simple_bind(nbdl.cpu(), grad_req="null", data=(3, 4))
    ex.arg_dict["data"][:] = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    return ex


def test_auto_runs_python_first_then_swaps_in_a_background_driver(tmp_path, monkeypatch):
    ex = _bind(tmp_path, monkeypatch, "auto", after=3)
    ex.forward()
    first = ex.outputs[0].asnumpy().copy()
    assert not ex._runner("fwd_infer").native       # the first call compiles no driver
    for _ in range(2):
        ex.forward()
    deadline = time.time() + 300
    while not ex._runner("fwd_infer").native and time.time() < deadline:
        time.sleep(0.05)
    assert ex._runner("fwd_infer").native
    ex.forward()
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), first)
    # A second executor of the same schedule finds the driver in the cache
    # and uses it from its first run.
    ex2 = _chain(12).simple_bind(nbdl.cpu(), grad_req="null", data=(3, 4))
    ex2.arg_dict["data"][:] = ex.arg_dict["data"]
    ex2.forward()
    assert ex2._runner("fwd_infer").native
    np.testing.assert_array_equal(ex2.outputs[0].asnumpy(), first)


def test_auto_below_the_run_count_stays_in_python(tmp_path, monkeypatch):
    ex = _bind(tmp_path, monkeypatch, "auto", after=1000, n=13)
    for _ in range(5):
        ex.forward()
    assert not ex._runner("fwd_infer").native


@pytest.mark.parametrize("mode,native", [("1", True), ("0", False)])
def test_on_compiles_before_the_first_run_and_off_never(tmp_path, monkeypatch, mode, native):
    n = {"1": 14, "0": 15}[mode]
    ex = _bind(tmp_path, monkeypatch, mode, n=n)
    ex.forward()
    assert ex._runner("fwd_infer").native is native
    x = ex.arg_dict["data"].asnumpy()
    ref = x
    for i in range(n):
        ref = np.maximum(ref, 0) if i % 2 else ref * np.float32(3)
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), ref)


def test_kernel_status_counts_kernels_not_yet_compiled():
    @njit(cache=False)
    def twice(x, out):
        for i in range(x.size):
            out[i] = x[i] * 2

    x, out = np.ones(3, np.float32), np.empty(3, np.float32)
    assert compile_log.kernel_status([(twice, (x, out)), (twice, (x, out))]) == (1, 0)
    twice(x, out)
    assert compile_log.kernel_status([(twice, (x, out))]) == (0, 0)
    # another signature of the same kernel still needs compiling
    assert compile_log.kernel_status([(twice, (x.astype(np.float64), out))]) == (1, 0)


def test_announcement_lines_and_quiet(monkeypatch, caplog):
    fns = []
    for k in range(compile_log.ANNOUNCE_MIN):
        @njit(cache=False)
        def f(x, k=k):
            return x + k
        fns.append(f)
    calls = [(f, (1.0,)) for f in fns]
    monkeypatch.setenv("NBDL_QUIET", "1")
    with caplog.at_level("INFO", logger="nbdl"):
        assert compile_log.announce(calls, "a test graph").count == 0
    assert not caplog.records
    monkeypatch.delenv("NBDL_QUIET")
    with caplog.at_level("INFO", logger="nbdl"):
        note = compile_log.announce(calls, "a test graph")
        for f, args in calls:
            f(*args)
        note.done()
    text = [r.getMessage() for r in caplog.records]
    assert text[0].startswith(f"compiling {compile_log.ANNOUNCE_MIN} kernels for a test graph")
    assert text[1].startswith(f"compiled {compile_log.ANNOUNCE_MIN} kernels in ")
