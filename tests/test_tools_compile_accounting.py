"""tools/compile_accounting.py: the compile listener counts each compiled
function once per type signature, with its callees' time apart."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("compile_accounting",
                                                  ROOT / "tools" / "compile_accounting.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_counts_compilations_per_signature_with_callees_apart():
    tool = _tool()
    source = (
        "from numba import njit\n"
        "@njit\n"
        "def inner(x):\n"
        "    return x * 2\n"
        "@njit\n"
        "def outer(x):\n"
        "    return inner(x) + 1\n"
        "outer(1); outer(1); outer(1.5)\n")
    cpu, stats = tool.account(source, "acct_case")
    assert stats["__main__.outer"][0] == 2          # int and float signatures
    assert stats["__main__.inner"][0] == 2          # compiled as outer's callee
    assert all(t >= 0 for _, t in stats.values())
    assert sum(t for _, t in stats.values()) <= cpu + 0.05   # self times never overlap


def test_reads_the_cold_start_cases():
    cases = _tool().cold_start_cases()
    assert "mlp_first_step" in cases and "resnet50_first_inference_224" in cases
