"""examples/mxnet1x_digits.py, an MXNet 1.x script that imports ``mxnet``, runs
unchanged on nbdl through ``python -m nbdl.mxnet`` (in a fresh process, as a
user runs it)."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mxnet1x_digits.py"


def test_mxnet1x_example_runs_through_the_alias(tmp_path):
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-m", "nbdl.mxnet", str(SCRIPT), "--epochs", "3"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    accs = [float(a) for a in re.findall(r"test accuracy: ([0-9.]+)", out)]
    assert len(accs) == 2, out
    assert min(accs) > 0.85, out
    # Gluon 1.x's prefixed names, as MXNet 1.9.1 gives them for this block
    assert "parameters: mlp_dense0_bias, mlp_dense0_weight, mlp_dense1_bias, mlp_dense1_weight" in out
