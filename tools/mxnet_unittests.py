"""Run Apache MXNet 1.9.1's own unit tests against nbdl through the ``mxnet``
import alias and count, per file, what passes.

MXNet's tests are not part of nbdl: extract them outside the repository first
(``tests/python/common`` too, which their ``common.py`` imports), e.g. from a
clone of apache/mxnet::

    git -C mxnet archive 1.9.1 tests/python/unittest tests/python/common | tar -x -C /tmp/mx191

then::

    python tools/mxnet_unittests.py /tmp/mx191/tests/python/unittest
    python tools/mxnet_unittests.py DIR --python /path/to/mxnet-venv/bin/python --real

(``--real`` runs the same files on a real MXNet for the baseline column).
Each file runs in its own ``pytest`` process (``python -m nbdl.mxnet -m
pytest`` for nbdl), with ``--junitxml`` read back for the counts.  The
tests listed in ``OUT_OF_SCOPE`` (docs/mxnet-compat.md gives the reasons)
run but are not counted.  MXNet's tests need ``nose`` importable
(their ``common.py`` imports ``nose.tools``).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

# The twelve files issue 12 measures, and test_rnn.py (mx.rnn, nbdl.rnn).
FILES = ["test_gluon.py", "test_gluon_rnn.py", "test_gluon_trainer.py", "test_gluon_data.py",
         "test_loss.py", "test_metric.py", "test_optimizer.py", "test_init.py",
         "test_executor.py", "test_symbol.py", "test_autograd.py", "test_ndarray.py",
         "test_rnn.py"]

# Reason classes of issue 12 (docs/mxnet-compat.md, "Out of scope").
SPARSE = "sparse storage"
DOWNLOAD = "downloads"
GPU_ONLY = "GPU-only"
C_API = "MXNet C-API/engine internals"
ENV_VAR = "MXNet-specific environment variables"
# Reason classes added by issue 13 (test_operator.py, test_higher_order_grad.py).
QUANTIZATION = "quantization"
NUMPY_124 = "the test needs NumPy < 1.24"
MXNET_BUG = "the test checks an MXNet 1.9.1 bug"

# ``file::test`` -> reason class: tests whose purpose lies in a class above
# (a test that is only partly sparse stays in scope).
OUT_OF_SCOPE = {
    "test_init.py::test_rsp_const_init": SPARSE,
    "test_autograd.py::test_grad_with_stype": SPARSE,
    "test_autograd.py::test_sparse_dot_grad": SPARSE,
    "test_symbol.py::test_eliminate_common_expr": ENV_VAR,
    "test_optimizer.py::test_sparse_sgd": SPARSE,
    "test_optimizer.py::test_std_sparse_sgd": SPARSE,
    "test_gluon_trainer.py::test_multi_trainer": SPARSE,
    "test_gluon_trainer.py::test_trainer_with_sparse_grad_on_single_context": SPARSE,
    "test_gluon_trainer.py::test_trainer_sparse_save_load": SPARSE,
    "test_gluon_trainer.py::test_trainer_multi_layer_init": SPARSE,
    "test_gluon_trainer.py::test_trainer_sparse_kv": SPARSE,
    "test_gluon_data.py::test_recordimage_dataset": DOWNLOAD,
    "test_gluon_data.py::test_recordimage_dataset_with_data_loader_multiworker": DOWNLOAD,
    "test_gluon_data.py::test_datasets": DOWNLOAD,
    "test_gluon_data.py::test_image_folder_dataset": DOWNLOAD,
    "test_gluon.py::test_sparse_parameter": SPARSE,
    "test_gluon.py::test_parameter_invalid_access": SPARSE,
    "test_gluon.py::test_parameter_row_sparse_data": SPARSE,
    "test_gluon.py::test_sparse_symbol_block": SPARSE,
    "test_gluon.py::test_sparse_hybrid_block": SPARSE,
    "test_gluon.py::test_sparse_hybrid_block_grad": SPARSE,
    "test_gluon.py::test_symbol_block": DOWNLOAD,
    "test_gluon.py::test_export": DOWNLOAD,
    "test_gluon.py::test_import": DOWNLOAD,
    "test_gluon.py::test_save_load": DOWNLOAD,
    "test_gluon.py::test_hybrid_static_memory": DOWNLOAD,
    "test_gluon.py::test_hybrid_static_memory_switching": DOWNLOAD,
    "test_gluon.py::test_hybrid_static_memory_recording": DOWNLOAD,
    # issue 13: test_operator.py, test_ndarray.py, test_higher_order_grad.py
    "test_operator.py::test_quantization_op": QUANTIZATION,
    "test_operator.py::test_monitor_with_variable_input_shape": C_API,   # ctypes NDArrayHandle
    "test_operator.py::test_take": C_API,        # the engine's deferred error (read time)
    "test_operator.py::test_slice_channel": NUMPY_124,      # np.int
    "test_operator.py::test_psroipooling": NUMPY_124,       # np.int
    "test_operator.py::test_crop": NUMPY_124,               # a list of slices as an index
    "test_operator.py::test_slice_axis": NUMPY_124,
    "test_operator.py::test_slice_like": NUMPY_124,
    "test_operator.py::test_flip": NUMPY_124,
    "test_operator.py::test_pick": NUMPY_124,               # a list of arrays as an index
    # np.arange(-100, 100, dtype=np.uint8) raises OverflowError in NumPy 2
    "test_operator.py::test_init": NUMPY_124,
    "test_ndarray.py::test_ndarray_nan_comparison": NUMPY_124,   # np.NaN
    "test_higher_order_grad.py::test_arcsinh": MXNET_BUG,   # the sign of d2/dx2 arcsinh
}


def _counts(xml_path, excluded=()):
    """(passed, failed, errors, skipped, failing test names) from a junit file,
    leaving out the tests named in ``excluded`` (exact names, parameters
    ignored)."""
    root = ET.parse(xml_path).getroot()
    passed = failed = errors = skipped = 0
    failing = []
    for case in root.iter("testcase"):
        if case.get("name", "").split("[")[0] in excluded:
            continue
        kinds = {child.tag for child in case}
        if "skipped" in kinds:
            skipped += 1
        elif "error" in kinds:
            errors += 1
            failing.append(case.get("name"))
        elif "failure" in kinds:
            failed += 1
            failing.append(case.get("name"))
        else:
            passed += 1
    return passed, failed, errors, skipped, failing


def run_file(test_dir, name, python, real, timeout, per_test=None):
    """Run one MXNet test file; returns its counts (see ``_counts``) or None
    when pytest produced no report (a crash or the timeout)."""
    # counted out by exact name when the report is read: pytest's --deselect
    # takes node-id prefixes (test_save_load would drop test_save_load_x too)
    excluded = {k.split("::", 1)[1] for k in OUT_OF_SCOPE if k.startswith(name + "::")}
    with tempfile.TemporaryDirectory() as tmp:
        xml_path = os.path.join(tmp, "report.xml")
        head = [python, "-m", "pytest"] if real else [python, "-m", "nbdl.mxnet", "-m", "pytest"]
        cmd = head + ["-q", "-p", "no:cacheprovider", "--junitxml", xml_path, name]
        if per_test:
            # pytest-timeout: a hung test fails alone instead of losing the file's report
            cmd += [f"--timeout={per_test}"]
        try:
            subprocess.run(cmd, cwd=test_dir, timeout=timeout, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return None
        if not os.path.exists(xml_path):
            return None
        return _counts(xml_path, excluded)


def main(argv=None):
    """Command line: see the module docstring.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default ``sys.argv[1:]``).
    """
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("test_dir", help="MXNet 1.9.1's tests/python/unittest, extracted")
    ap.add_argument("files", nargs="*", default=FILES, help="test files (default: the twelve and test_rnn.py)")
    ap.add_argument("--python", default=sys.executable, help="interpreter to run pytest with")
    ap.add_argument("--real", action="store_true", help="run on a real MXNet (no alias)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per file")
    ap.add_argument("--per-test-timeout", type=float, default=None,
                    help="seconds per test (needs pytest-timeout in that interpreter)")
    ap.add_argument("--failures", action="store_true", help="list the failing tests")
    args = ap.parse_args(argv)
    if not os.path.isfile(os.path.join(args.test_dir, "common.py")):
        ap.error(f"{args.test_dir} does not look like MXNet's tests/python/unittest")
    total_pass = total_cases = 0
    print("| file | passed | in scope | failed | errors | skipped |")
    print("|---|---|---|---|---|---|")
    for name in args.files:
        res = run_file(args.test_dir, name, args.python, args.real, args.timeout,
                       args.per_test_timeout)
        if res is None:
            print(f"| {name} | no report (crash or timeout) | | | | |", flush=True)
            continue
        passed, failed, errors, skipped, failing = res
        cases = passed + failed + errors
        total_pass += passed
        total_cases += cases
        print(f"| {name} | {passed} | {cases} | {failed} | {errors} | {skipped} |", flush=True)
        if args.failures:
            for f in failing:
                print(f"    {name}::{f}", file=sys.stderr)
    share = 100.0 * total_pass / total_cases if total_cases else 0.0
    print(f"| all | {total_pass} | {total_cases} | | | | ({share:.0f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
