"""After bind, forward and backward allocate no array memory.

Two counters: tracemalloc's peak (numpy buffers and Python objects), and
Numba's NRT allocation count.  Numba wraps each array passed in from Python
in a small NRT header (one NRT allocation, no data), so the NRT count per
iteration must equal exactly the number of arrays the runners hand over;
any array a kernel or driver allocated would add to it."""
import tracemalloc

import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

import nbdl


def mlp():
    x = nbdl.sym.var("data")
    x = nbdl.sym.Activation(nbdl.sym.FullyConnected(x, num_hidden=64, name="fc1"), act_type="relu")
    x = nbdl.sym.Activation(nbdl.sym.FullyConnected(x, num_hidden=64, name="fc2"), act_type="relu")
    x = nbdl.sym.FullyConnected(x, num_hidden=10, name="fc3")
    return nbdl.sym.SoftmaxOutput(x, name="softmax")


@pytest.mark.parametrize("driver", ["1", "0"])
def test_training_iterations_allocate_nothing(driver, monkeypatch):
    monkeypatch.setenv("NBDL_DRIVER", driver)
    monkeypatch.setenv("NBDL_DRIVER_MIN_STEPS", "1")
    ex = mlp().simple_bind(nbdl.cpu(), data=(32, 20))
    rng = np.random.RandomState(0)
    for name, arr in ex.arg_dict.items():
        if name != "softmax_label":
            arr[:] = rng.uniform(-0.1, 0.1, arr.shape).astype(np.float32)
    ex.arg_dict["softmax_label"][:] = rng.randint(0, 10, 32).astype(np.float32)
    for _ in range(3):  # warm up: compile kernels / drivers
        ex.forward(is_train=True)
        ex.backward()
    _nrt_python.memsys_enable_stats()
    nrt_before = rtsys.get_allocation_stats()
    tracemalloc.start()
    ex.forward(is_train=True)
    ex.backward()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    for _ in range(100):
        ex.forward(is_train=True)
        ex.backward()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    nrt_after = rtsys.get_allocation_stats()
    # The smallest array of this model is 32x10 float32 = 1280 bytes: any
    # array allocated in the loop would lift the peak past this bound.
    assert peak - base < 1024, peak - base
    per_iter = ex._runner("fwd_train").boxed_arrays + ex._runner("backward").boxed_arrays
    assert ex._runner("backward").native == (driver == "1")
    assert nrt_after.alloc - nrt_before.alloc == 101 * per_iter, (nrt_before, nrt_after, per_iter)
