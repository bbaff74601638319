"""docs/ops.md's table of MXNet 1.9.1 operators is generated from the op table
(tools/op_status.py) and must match it."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def load_tool():
    spec = importlib.util.spec_from_file_location("op_status", ROOT / "tools" / "op_status.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_tables_match_the_code():
    tool = load_tool()
    for path, text, new in tool.pages():
        assert new == text, f"{path.name}'s generated table is stale: run python tools/op_status.py"


def test_status_reads_the_op_table():
    tool = load_tool()
    assert tool.status("FullyConnected") == ("supported", "FullyConnected")
    assert tool.status("add_n") == ("supported", "ElementWiseSum")   # an alias
    assert tool.status("_contrib_quantize_v2")[0] == "out of scope"
    assert tool.status("no_such_op_anywhere") == ("not yet", "")
    names = tool.mxnet_operators()
    assert len(names) == len(set(names)) == 404 and "Convolution" in names


def test_splice_replaces_only_the_section():
    tool = load_tool()
    doc = "# t\n\nintro\n"
    once = tool.splice(doc, tool.render(["FullyConnected"]))
    assert once.startswith(doc.rstrip("\n")) and once.count(tool.BEGIN) == 1
    twice = tool.splice(once + "\nafter\n", tool.render(["FullyConnected", "add_n"]))
    assert twice.count(tool.BEGIN) == 1 and twice.endswith("\nafter\n")
    assert "`add_n` | supported | `ElementWiseSum`" in twice
