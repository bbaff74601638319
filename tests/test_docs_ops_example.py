"""docs/ops.md's "smallest complete op" runs as written: its three code blocks
are written into a temporary package, the op is registered, and it is checked
like any op (numpy reference, REQ_ADD, numeric gradient, CPU vs the CUDA
simulator).  The op is removed from the table afterwards."""
import importlib
import pathlib
import re
import sys

import numpy as np
import pytest

import nbdl
from nbdl.executor.interpret import run_op
from nbdl.ops import REQ_ADD, get_op
from nbdl.ops import registry
from nbdl.testing import check_consistency, check_numeric_gradient

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "ops.md"
NAME = "_example_axpb"


def _blocks():
    text = DOC.read_text()
    found = dict(re.findall(r"```python file=(\w+\.py)\n(.*?)```", text, re.S))
    assert set(found) == {"rules.py", "cpu.py", "cuda.py"}, sorted(found)
    return found


@pytest.fixture(scope="module")
def example_op(tmp_path_factory):
    pkg = tmp_path_factory.mktemp("docs_example") / "example_op"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, code in _blocks().items():
        (pkg / name).write_text(code)
    sys.path.insert(0, str(pkg.parent))
    try:
        importlib.import_module("example_op.rules")
        yield get_op(NAME)
    finally:
        sys.path.remove(str(pkg.parent))
        registry._TABLE.pop(NAME, None)
        for m in [m for m in sys.modules if m == "example_op" or m.startswith("example_op.")]:
            del sys.modules[m]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_example_op_forward_matches_numpy(example_op, dtype):
    x = np.random.RandomState(0).uniform(-2, 2, (3, 5)).astype(dtype)
    sym = nbdl.sym.create(NAME, nbdl.sym.var("x"), alpha=2.5, beta=-1.0)
    ex = sym.bind(nbdl.cpu(), args={"x": nbdl.nd.array(x, dtype=dtype)})
    out = ex.forward()[0].asnumpy()
    assert out.dtype == dtype
    np.testing.assert_allclose(out, dtype(2.5) * x + dtype(-1.0), rtol=1e-6)


def test_example_op_accumulates_under_req_add(example_op):
    x = np.arange(6, dtype=np.float32)
    out = np.full(6, 10.0, np.float32)
    run_op(example_op, example_op.parse_attrs({"alpha": 2.0, "beta": 1.0})[0], [x], [(6,)],
           [np.float32], nbdl.cpu(), outputs=[out], req=[REQ_ADD])
    np.testing.assert_allclose(out, 10.0 + 2.0 * x + 1.0)


@pytest.mark.cuda
def test_example_op_gradient_and_devices(example_op):
    sym = nbdl.sym.create(NAME, nbdl.sym.var("x"), alpha=-0.5, beta=3.0)
    loc = {"x": np.random.RandomState(1).normal(size=(4, 3))}
    check_numeric_gradient(sym, loc)
    check_consistency(sym, loc)


def test_example_op_rejects_mismatched_shapes(example_op):
    attrs = example_op.parse_attrs({})[0]
    assert example_op.infer_shape(attrs, [None], [(2, 3)]) == ([(2, 3)], [(2, 3)])
    with pytest.raises(nbdl.ShapeError, match=r"_example_axpb.*\(2, 3\).*\(3, 2\)"):
        example_op.infer_shape(attrs, [(2, 3)], [(3, 2)])
