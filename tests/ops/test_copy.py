import numpy as np
import pytest

import nbdl
from nbdl.testing import check_consistency, check_numeric_gradient, check_symbolic_forward


@pytest.mark.parametrize("shape", [(3, 4), (1,), (0, 3), (2, 1, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_copy_forward(shape, dtype):
    x = np.random.uniform(-1, 1, shape).astype(dtype)
    y = nbdl.sym._copy(nbdl.sym.var("x"))
    check_symbolic_forward(y, {"x": x}, [x.copy()])


def test_copy_gradient():
    y = nbdl.sym.identity(nbdl.sym.var("x"))
    check_numeric_gradient(y, {"x": np.random.rand(2, 3)})


@pytest.mark.cuda
def test_copy_cuda_matches_cpu():
    y = nbdl.sym._copy(nbdl.sym.var("x"))
    check_consistency(y, {"x": np.random.rand(2, 3).astype(np.float32)})
