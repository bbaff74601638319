"""Benchmarks time steady state: a schedule that can run through a native
driver gets it before the first round (``NBDL_DRIVER=1``), not after 200 runs
in a background thread as by default, unless the command sets NBDL_DRIVER."""
import os

import pytest


@pytest.fixture(autouse=True)
def _driver_before_first_run(monkeypatch):
    if "NBDL_DRIVER" not in os.environ:
        monkeypatch.setenv("NBDL_DRIVER", "1")
