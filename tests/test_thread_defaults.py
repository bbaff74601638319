"""``import nbdl`` starts Numba's OpenMP threads with a passive wait (and the
spin ``NBDL_OMP_SPINCOUNT`` asks for) but leaves the process environment as
the user had it (nbdl.config.apply_thread_defaults)."""
import ctypes.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# GOMP_SPINCOUNT is what libgomp derived from the wait policy (and spin count)
# it read when it was loaded: 0 passive, 300000 its default, 3e10 active.
PROBE = """
import ctypes, os, subprocess, sys
import nbdl
print("in-process", os.environ.get("OMP_WAIT_POLICY"))
print("spin-env", os.environ.get("GOMP_SPINCOUNT"))
child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('OMP_WAIT_POLICY'))"],
                       stdout=subprocess.PIPE, text=True).stdout.strip()
print("child", child)
import numba
numba.get_num_threads()   # starts the threading layer if nbdl did not
print("layer", numba.threading_layer())
sys.stdout.flush()
ctypes.CDLL("libgomp.so.1").omp_display_env(1)
"""


def _probe(**env):
    e = {k: v for k, v in os.environ.items()
         if k not in ("OMP_WAIT_POLICY", "NBDL_OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER",
                      "GOMP_SPINCOUNT", "NBDL_OMP_SPINCOUNT", "NBDL_THREAD_POOL")}
    e.update(env, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", PROBE], env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, check=True).stdout
    lines = dict(ln.strip().split(None, 1) for ln in out.splitlines()
                 if ln.startswith(("in-process", "spin-env", "child", "layer")))
    spin = [ln.split("=")[1].strip().strip("'") for ln in out.splitlines()
            if "GOMP_SPINCOUNT" in ln]
    return lines, (spin[0] if spin else None)


def _need_libgomp():
    if not ctypes.util.find_library("gomp"):
        pytest.skip("no GNU OpenMP runtime")


def test_policy_applied_but_not_left_in_environment():
    _need_libgomp()
    lines, spin = _probe()
    assert lines["in-process"] == "None" and lines["child"] == "None"
    assert lines["spin-env"] == "None"
    if lines["layer"] == "omp":
        assert spin == "10000"          # one thread pool: passive after a short spin


def test_spin_count_knob_and_users_spin_count():
    _need_libgomp()
    for env in ({"NBDL_THREAD_POOL": "blas"}, {"NBDL_OMP_SPINCOUNT": "0"}):
        lines, spin = _probe(**env)
        assert lines["spin-env"] == "None"
        if lines["layer"] == "omp":
            assert spin == "0", env     # passive: threads sleep between regions at once
    lines, spin = _probe(NBDL_OMP_SPINCOUNT="2500", NBDL_THREAD_POOL="blas")
    assert lines["spin-env"] == "None"
    if lines["layer"] == "omp":
        assert spin == "2500"
    lines, spin = _probe(GOMP_SPINCOUNT="777")
    assert lines["spin-env"] == "777" and lines["in-process"] == "None"
    if lines["layer"] == "omp":
        assert spin == "777"


def test_users_policy_wins_and_stays():
    _need_libgomp()
    lines, spin = _probe(OMP_WAIT_POLICY="ACTIVE")
    assert lines["in-process"] == "ACTIVE" and lines["child"] == "ACTIVE"
    if lines["layer"] == "omp":
        assert spin == "30000000000"


def test_nbdl_knob_picks_the_policy():
    _need_libgomp()
    lines, spin = _probe(NBDL_OMP_WAIT_POLICY="")
    assert lines["in-process"] == "None"
    if lines["layer"] == "omp":
        assert spin == "300000"         # libgomp's own default, untouched
