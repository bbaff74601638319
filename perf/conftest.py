"""Benchmarks time steady state: a schedule that can run through a native
driver gets it before the first round (``NBDL_DRIVER=1``), not after 200 runs
in a background thread as by default, and its parallel kernels from the first
run (``NBDL_PARALLEL_AFTER_RUNS=0``), not their serial twins for three runs
and a swap in the middle of the rounds; unless the command sets either."""
import os

import pytest


@pytest.fixture(autouse=True)
def _steady_state_kernels(monkeypatch):
    if "NBDL_DRIVER" not in os.environ:
        monkeypatch.setenv("NBDL_DRIVER", "1")
    if "NBDL_PARALLEL_AFTER_RUNS" not in os.environ:
        monkeypatch.setenv("NBDL_PARALLEL_AFTER_RUNS", "0")
