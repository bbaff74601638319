"""The layer contract in ``.importlinter`` holds, covers every module of nbdl,
and fails on an upward import (checked on a copy of the package with one
added, so the real tree never carries a violation)."""
import configparser
import pathlib
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("importlinter")

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".importlinter"

# Runs lint-imports on the nbdl found first on sys.path (an editable install's
# import hook, which would point back at the repository, is set aside).
_LINT = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "")]
sys.path.insert(0, sys.argv[1])
from importlinter.cli import lint_imports
sys.exit(lint_imports(config_filename=sys.argv[2], no_cache=True))
"""


def _lint(src_root, config):
    return subprocess.run([sys.executable, "-c", _LINT, str(src_root), str(config)],
                          capture_output=True, text=True, cwd=str(src_root))


def _layers():
    cp = configparser.ConfigParser()
    cp.read(CONFIG)
    raw = cp["importlinter:contract:layers"]["layers"]
    return [m.strip() for line in raw.strip().splitlines() for m in line.replace(":", "|").split("|")]


def test_contracts_hold():
    r = _lint(ROOT, CONFIG)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Layers import downward only KEPT" in r.stdout
    assert "0 broken" in r.stdout


def test_every_module_is_in_a_layer():
    layered = set(_layers())
    pkg = ROOT / "nbdl"
    tops = {p.stem if p.suffix == ".py" else p.name for p in pkg.iterdir()
            if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").exists()}
    missing = []
    for t in sorted(tops):
        name = f"nbdl.{t}"
        if name == "nbdl.kernels":
            subs = {f"nbdl.kernels.{p.name}" for p in (pkg / "kernels").iterdir()
                    if (p / "__init__.py").exists()}
            missing += sorted(subs - layered)
        elif name not in layered:
            missing.append(name)
    assert not missing, f"add these to a layer in .importlinter: {missing}"


def test_an_upward_import_breaks_the_contract(tmp_path):
    shutil.copytree(ROOT / "nbdl", tmp_path / "nbdl",
                    ignore=shutil.ignore_patterns("__pycache__"))
    with open(tmp_path / "nbdl" / "errors.py", "a") as f:
        f.write("\n\ndef _upward():\n    from .gluon import nn  # noqa: F401\n")
    r = _lint(tmp_path, CONFIG)
    assert r.returncode != 0
    assert "nbdl.errors -> nbdl.gluon" in r.stdout


def test_a_stale_exception_is_reported(tmp_path):
    # The ignore list may only shrink: an ignored import the code no longer
    # has is an error, so a fixed violation must leave the list too.
    cfg = tmp_path / "contracts.ini"
    text = CONFIG.read_text().replace(
        "ignore_imports =", "ignore_imports =\n    nbdl.errors -> nbdl.gluon", 1)
    cfg.write_text(text)
    r = _lint(ROOT, cfg)
    assert r.returncode != 0, r.stdout
