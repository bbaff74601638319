"""``nbdl.viz.plot_memory``: an executor's arena as a picture (matplotlib)."""
import sys

import pytest

import nbdl
from nbdl.errors import OptionalDependencyError


def _executor(budget=None):
    h = nbdl.sym.var("data")
    for i in range(3):
        h = nbdl.sym.FullyConnected(h, num_hidden=32, name=f"fc{i}")
        h = nbdl.sym.BatchNorm(h, name=f"bn{i}")
        h = nbdl.sym.Activation(h, act_type="tanh", name=f"act{i}")
    h = nbdl.sym.LinearRegressionOutput(h, name="l2")
    return h.simple_bind(nbdl.cpu(), memory_budget=budget, data=(16, 8))


def test_plot_memory_draws_every_entry_and_marks_the_recomputed(tmp_path):
    pytest.importorskip("matplotlib")
    base = _executor().memory_plan.arena_bytes
    ex = _executor(budget=base * 3 // 4)
    plan = ex.memory_plan
    assert plan.budget.recompute_steps
    path = tmp_path / "arena.png"
    fig = nbdl.viz.plot_memory(ex, str(path))
    assert path.stat().st_size > 1000
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    ax = fig.axes[0]
    drawn = sum(len(c.get_paths()) for c in ax.collections)
    sized = [e for e in plan.offsets if plan.request.nbytes[e] and e not in plan.request.unwritten]
    assert drawn == len(sized)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"recomputed ({len(plan.budget.recomputed)})" in labels
    assert any(t.startswith("budget ") for t in labels)
    assert ax.get_ylim()[1] >= plan.budget.unbudgeted_bytes / 2**20
    # a plan alone (no forward/backward boundary) draws too
    other = _executor().memory_plan
    fig = nbdl.viz.plot_memory(other, title="plain")
    assert fig.axes[0].get_title() == "plain"
    assert fig.axes[0].get_xlim() == (-0.5, len(other.request.steps) - 0.5)


def test_plot_memory_without_matplotlib_says_how_to_install_it(monkeypatch):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.collections",
                 "matplotlib.patches", "matplotlib.lines"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(OptionalDependencyError, match=r"pip install nbdl\[plot\]"):
        nbdl.viz.plot_memory(_executor())
