"""Distributed training under ``mpiexec -n 2``: each test starts an MPI job
of ``mpi_jobs.py`` (beside this file) and checks its exit status and output.

mpi4py and MPICH are part of the ``test`` extra, so CI has them: a missing
``mpiexec`` or mpi4py fails these tests (it does not skip them), with the
command to install them.  The faults tests bound the time a broken job may
take by the subprocess timeout."""
import os
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = os.path.join(HERE, "mpi_jobs.py")
INSTALL = "pip install 'nbdl[distributed]' (mpi4py and mpich)"


def mpiexec():
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.isfile(here) else shutil.which("mpiexec")
    if found is None:
        pytest.fail(f"no mpiexec beside {sys.executable} or on PATH: {INSTALL}")
    return found


def test_mpi4py_is_installed():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.fail(f"mpi4py is missing: {INSTALL}")


def run_job(args, timeout, env=None, launcher=False):
    """(exit status, output, seconds) of a 2-rank job of ``mpi_jobs.py args``."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    if launcher:
        cmd = [sys.executable, "-m", "nbdl.distributed.launch", "-n", "2", JOBS] + args
    else:
        cmd = [mpiexec(), "-n", "2", sys.executable, JOBS] + args
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=full_env, timeout=timeout, text=True, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the job did not end within {timeout} s: {' '.join(cmd)}\n{e.output}")
    return proc.returncode, proc.stdout, time.monotonic() - t0


def test_training_module_collectives_syncbn_checkpoint_under_two_ranks(tmp_path):
    # through the launcher: python -m nbdl.distributed.launch -n 2 mpi_jobs.py ...
    names = ["collectives", "broadcast", "train", "module", "syncbn", "checkpoint"]
    code, out, _ = run_job(names, timeout=900, env={"NBDL_TEST_TMP": str(tmp_path)},
                           launcher=True)
    assert code == 0, out
    for name in names:
        assert f"ok {name}" in out, out


def test_a_rank_that_raises_ends_the_job_with_an_error():
    code, out, _ = run_job(["raise"], timeout=600)
    assert code != 0, out
    assert "rank 1 fails on purpose" in out and "aborting the job" in out, out
    assert "should not get here" not in out, out


def test_a_rank_that_stops_talking_is_caught_by_the_watchdog():
    code, out, _ = run_job(["hang"], timeout=300, env={"NBDL_DIST_TIMEOUT": "5"})
    assert code != 0, out
    assert "nbdl.distributed.barrier() did not complete within 5 s" in out, out
    assert "should not get here" not in out, out
