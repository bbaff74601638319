"""tools/cuda_compile_check.py: launches recorded in the simulator are typed
and lowered for a real GPU (compute capability 9.0) without one, and a
kernel that only the simulator accepts (an atomic add on float16, which
Numba's CUDA target does not provide) is reported."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from numba import config as numba_config
from numba import cuda

import nbdl

from cuda_sim import record_launches

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "cuda_compile_check.py")

# made the way nbdl's generated kernels are (source run in a namespace), so
# the recorder describes it by value
_SOURCE = '''
def scatter_add(out, values, index):
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(out, index[i], values[i])
'''


@pytest.mark.skipif(not numba_config.ENABLE_CUDASIM, reason="records simulated launches")
def test_the_check_types_what_the_simulator_ran(tmp_path):
    """A kernel the simulator runs for float32 and float16 arrays alike."""
    ns = {"cuda": cuda, "__name__": "generated_for_the_test"}
    exec(_SOURCE, ns)
    kernel = cuda.jit(ns["scatter_add"])
    index = np.array([0, 1, 0], np.int64)
    launches = {}
    with record_launches(launches):
        for dt in (np.float32, np.float16):     # the simulator runs both
            out = np.zeros(2, dt)
            kernel[1, 4](out, np.ones(3, dt), index)
            assert out.tolist() == [2, 1]
    assert len(launches) == 2
    run = _check(tmp_path, launches)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "2 (kernel, signature) pairs compiled" in run.stdout and "1 failed" in run.stdout
    failed = [line for line in run.stdout.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and "float16" in failed[0] and "float32" not in failed[0], run.stdout


def _check(tmp_path, launches):
    path = tmp_path / "launches.pkl"
    path.write_bytes(pickle.dumps(launches))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    return subprocess.run([sys.executable, TOOL, "check", str(path)], capture_output=True,
                          text=True, env=env, timeout=600)


@pytest.mark.cuda
@pytest.mark.skipif(not numba_config.ENABLE_CUDASIM, reason="records simulated launches")
def test_rounding_kernels_compile_for_the_gpu(tmp_path):
    """np.floor/ceil/trunc/cbrt in the elementwise kernels: numba-cuda types
    them but had no CUDA loops (a GPU-only compile error until
    nbdl/kernels/cuda/_ufuncs.py registered them)."""
    x = nbdl.nd.array(np.array([-1.5, 0.25, 8.0], np.float32), ctx=nbdl.gpu(0))
    launches = {}
    with record_launches(launches):
        for name in ("floor", "ceil", "trunc", "cbrt", "rcbrt"):
            getattr(nbdl.nd, name)(x).asnumpy()
    run = _check(tmp_path, launches)
    assert run.returncode == 0 and "0 failed" in run.stdout, run.stdout + run.stderr
