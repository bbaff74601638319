"""Per-op dispatch cost in a static graph: a chain of 100 tiny elementwise
ops (a (4,)-element float32 tensor) bound once; the figure per op is the
forward time / 100.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf --benchmark-only
"""
import numpy as np
import pytest

import nbdl
from workloads import N_OPS, chain_symbol


@pytest.mark.parametrize("driver", ["native", "python"])
def test_chain_100_tiny_ops(benchmark, driver, monkeypatch):
    monkeypatch.setenv("NBDL_DRIVER", "1" if driver == "native" else "0")
    ex = chain_symbol().bind(nbdl.cpu(), args={"x": nbdl.nd.array(np.arange(4, dtype=np.float32))},
                      grad_req="null")
    ex.forward()
    assert ex._runner("fwd_infer").native == (driver == "native")
    benchmark(ex.forward)
    benchmark.extra_info["us_per_op"] = benchmark.stats.stats.median * 1e6 / N_OPS
