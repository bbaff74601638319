"""One rule picks a kernel's parallel variant (``kernels/cpu/_parallel.py``):
never on one thread (``NBDL_NUM_THREADS=1`` or ``NUMBA_NUM_THREADS=1``), else
from ``NBDL_PARALLEL_MIN`` elements."""
import os
import subprocess
import sys

import numba
import pytest

from nbdl.kernels.cpu import _parallel

_PROBE = """
import numpy as np, nbdl
from nbdl.kernels.cpu import _parallel, pooling, convolution
from nbdl.ops.registry import get_op
print(_parallel.threads(), _parallel.use_parallel(10 ** 9))
x = nbdl.nd.array(np.random.rand(2, 3, 16, 16).astype(np.float32))
y = nbdl.nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max")
w = nbdl.nd.array(np.random.rand(4, 3, 3, 3).astype(np.float32))
z = nbdl.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True)
import numba
par = [d.py_func.__name__ for d in (pooling.max_clamped_forward_parallel,
       convolution.conv_forward_parallel) if d.overloads]
print(par)
"""


def _probe(**env):
    e = dict(os.environ, NBDL_PARALLEL_MIN="1", NBDL_CONV_PARALLEL_MIN_FLOPS="0", **env)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=e, check=True,
                         capture_output=True, text=True).stdout.split("\n")
    return out[0], out[1]


@pytest.mark.parametrize("var", ["NBDL_NUM_THREADS", "NUMBA_NUM_THREADS"])
def test_one_thread_never_picks_a_parallel_variant(var):
    head, compiled = _probe(**{var: "1"})
    assert head == "1 False"
    assert compiled == "[]"


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two threads")
def test_two_threads_pick_the_parallel_variants():
    head, compiled = _probe(NBDL_NUM_THREADS="2")
    assert head == "2 True"
    assert compiled == "['max_clamped_forward_parallel', 'conv_forward_parallel']"


def test_threshold(monkeypatch):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1000")
    if _parallel.threads() > 1:
        assert _parallel.use_parallel(1000) and not _parallel.use_parallel(999)
    else:
        assert not _parallel.use_parallel(10 ** 9)
