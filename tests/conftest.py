import ctypes
import os


def _real_gpu_present():
    """Whether the CUDA driver sees a GPU (asked through libcuda directly, so
    that Numba is not imported before its simulator switch is settled)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return lib.cuInit(0) == 0 and lib.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


# The tests marked `cuda` (CPU-vs-CUDA checks, executors and blocks on
# nbdl.gpu(0)) run on a real GPU when NBDL_TEST_CUDA=1 and one is present;
# otherwise CUDA kernels run in Numba's simulator, as in CI.
REAL_GPU = os.environ.get("NBDL_TEST_CUDA", "0") == "1" and _real_gpu_present()
if REAL_GPU:
    os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
else:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
# Tests of a parallel kernel run it from the first call; the serial twins an
# executor starts with (NBDL_PARALLEL_AFTER_RUNS) have their own tests.
os.environ.setdefault("NBDL_PARALLEL_AFTER_RUNS", "0")
# The test workers already use every core: no compile-pool processes beside
# them (tests/executor/test_compile_pool.py turns the pool on in its own).
os.environ.setdefault("NBDL_COMPILE_WORKERS", "0")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import nbdl.device  # noqa: E402

_gpu_used = [False]
_device_cuda = nbdl.device._cuda


def _cuda_seen(dev):
    _gpu_used[0] = True
    return _device_cuda(dev)


# Every road from nbdl to numba.cuda passes nbdl.device._cuda: a test that
# reaches it is a CUDA check and must carry the `cuda` marker, and a test that
# carries the marker must reach it, so `pytest -m cuda` selects exactly the
# CUDA checks (what perf/gpu_check.sh runs on a GPU).
nbdl.device._cuda = _cuda_seen


def pytest_report_header(config):
    where = "a real GPU (NBDL_TEST_CUDA=1)" if REAL_GPU else "Numba's CUDA simulator"
    return f"nbdl: tests marked cuda run on {where}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    _gpu_used[0] = False
    return (yield)


# NBDL_SIM_RACECHECK=1: every CUDA check runs its simulated launches under
# cuda_sim.race_check(), which fails a launch whose threads race.
RACECHECK = os.environ.get("NBDL_SIM_RACECHECK", "0") == "1" and not REAL_GPU


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    marked = item.get_closest_marker("cuda") is not None
    if RACECHECK and marked:
        from cuda_sim import race_check
        with race_check():
            result = yield
    else:
        result = yield
    if _gpu_used[0] and not marked:
        raise AssertionError(f"{item.nodeid} runs CUDA code (nbdl.gpu): mark it @pytest.mark.cuda "
                             "(or mark its gpu parameter) so that `pytest -m cuda` selects it")
    if marked and not _gpu_used[0]:
        raise AssertionError(f"{item.nodeid} is marked cuda but never used a GPU device: "
                             "drop the marker (or mark only its gpu parameter)")
    return result


# NBDL_SIM_RECORD_LAUNCHES=<file>: every simulated launch's kernel and argument
# types are written there at the end (tools/cuda_compile_check.py).
_recording = []


def pytest_configure(config):
    # The warning filter is added here, not in pyproject's ini: pytest
    # resolves an ini filter's category when it reads its configuration,
    # before this file runs, and importing numba then fixed
    # NUMBA_ENABLE_CUDASIM before the lines at the top set it (the `cuda`
    # tests then found no device in a run whose caches were warm).
    config.addinivalue_line("filterwarnings", "error::numba.core.errors.NumbaIRAssumptionWarning")
    path = os.environ.get("NBDL_SIM_RECORD_LAUNCHES")
    if path and not REAL_GPU:
        from cuda_sim import record_launches
        ctx = record_launches({})
        _recording.append((path, ctx, ctx.__enter__()))


def pytest_unconfigure(config):
    if _recording:
        import pickle
        path, ctx, launches = _recording.pop()
        ctx.__exit__(None, None, None)
        with open(path, "wb") as f:
            pickle.dump(launches, f)


@pytest.fixture
def rng():
    return np.random.RandomState(0)


@pytest.fixture
def two_threads():
    """Numba's thread count set to 2 for the test (parallel kernel variants
    run with a slice a thread), restored after."""
    import numba
    prev = numba.get_num_threads()
    numba.set_num_threads(2)
    yield
    numba.set_num_threads(prev)
