import os

# CUDA kernels are checked against the CPU ones in Numba's simulator.
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
# Tests of a parallel kernel run it from the first call; the serial twins an
# executor starts with (NBDL_PARALLEL_AFTER_RUNS) have their own tests.
os.environ.setdefault("NBDL_PARALLEL_AFTER_RUNS", "0")
# The test workers already use every core: no compile-pool processes beside
# them (tests/executor/test_compile_pool.py turns the pool on in its own).
os.environ.setdefault("NBDL_COMPILE_WORKERS", "0")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


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
