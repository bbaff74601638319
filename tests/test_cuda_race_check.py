"""tests/cuda_sim.py's race checker: launches whose threads race on a GPU
fail in the simulator inside ``race_check()``, and correct ones pass (the
simulator alone runs both to the right answer)."""
import numpy as np
import pytest
from numba import config as numba_config
from numba import cuda, float32

from cuda_sim import RaceError, race_check

pytestmark = pytest.mark.skipif(not numba_config.ENABLE_CUDASIM, reason="checks simulated launches")


@cuda.jit
def _plain_sum(a, out):                 # every thread adds into out[0] unguarded
    i = cuda.grid(1)
    if i < a.size:
        out[0] += a[i]


@cuda.jit
def _atomic_sum(a, out):
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.add(out, 0, a[i])


@cuda.jit
def _any_negative(a, flag):              # benign: every writer writes the same 1
    i = cuda.grid(1)
    if i < a.size and a[i] < 0:
        flag[0] = 1


@cuda.jit
def _rotate(a, out, sync):              # reads a neighbour's shared slot
    s = cuda.shared.array(8, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    if sync:
        cuda.syncthreads()
    out[t] = s[(t + 1) % 8]


@cuda.jit
def _reuse(a, out, sync):               # a shared slot rewritten before the others read it
    s = cuda.shared.array(8, float32)
    t = cuda.threadIdx.x
    acc = float32(0)
    for r in range(2):
        s[t] = a[t] + r
        cuda.syncthreads()
        acc += s[(t + 1) % 8]
        if sync:
            cuda.syncthreads()
    out[t] = acc


def test_races_fail_and_correct_kernels_pass():
    a = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    with race_check():
        with pytest.raises(RaceError, match="_plain_sum.*global element"):
            _plain_sum[2, 4](a, out)
        _atomic_sum[2, 4](a, out)
        _any_negative[2, 4](a - 3, out)
        with pytest.raises(RaceError, match="shared element"):
            _rotate[1, 8](a, out, False)
        _rotate[1, 8](a, out, True)
        with pytest.raises(RaceError, match="shared element"):
            _reuse[1, 8](a, out, False)
        _reuse[1, 8](a, out, True)
    _plain_sum[2, 4](a, out)             # outside the block nothing is checked
