"""``python -m nbdl.precompile``: the workload list, one workload run, and a
wrong name refused with the known names."""
import pytest

from nbdl import precompile


def test_list_names_every_workload(capsys):
    assert precompile.main(["--list"]) == 0
    out = capsys.readouterr().out.split()
    assert out == list(precompile.WORKLOADS)
    assert {"mlp", "resnet18_v1", "resnet50_v1", "rnn"} <= set(out)


def test_one_workload_in_process(capsys):
    assert precompile.main(["mlp", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "mlp" in out and "done in" in out


def test_unknown_workload_is_refused(capsys):
    with pytest.raises(SystemExit):
        precompile.main(["resnet9000"])
    assert "unknown workload(s) resnet9000" in capsys.readouterr().err
