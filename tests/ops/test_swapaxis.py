import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)


def swap(dim1, dim2):
    return nbdl.sym.SwapAxis(nbdl.sym.var("x"), dim1=dim1, dim2=dim2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("shape,d1,d2", [((2, 3), 0, 1), ((2, 3, 4), 0, 2), ((2, 3, 4), -1, 1),
                                         ((2, 3, 4), 1, 1), ((1,), 0, 0), ((3, 0, 2), 0, 1),
                                         ((2, 1, 3, 2), 1, 3)])
def test_forward_grid(dtype, shape, d1, d2, rng):
    x = (rng.uniform(-5, 5, shape) * 10).astype(dtype)
    outs = check_symbolic_forward(swap(d1, d2), {"x": x}, [np.swapaxes(x, d1, d2)])
    assert outs[0].dtype == dtype


def test_backward_and_numeric_gradient(rng):
    x = rng.normal(size=(2, 3, 4))
    og = rng.normal(size=(4, 3, 2))
    check_symbolic_backward(swap(0, 2), {"x": x}, [og], {"x": np.swapaxes(og, 0, 2)})
    check_numeric_gradient(swap(-1, 0), {"x": rng.normal(size=(2, 3))})


def test_alias_and_inference():
    y = nbdl.sym.swapaxes(nbdl.sym.var("x"), dim1=1, dim2=2)
    _, outs, _ = y.infer_shape(x=(2, 3, 5))
    assert outs == [(2, 5, 3)]
    args, _, _ = y.infer_shape_partial()
    assert args == [()]


@pytest.mark.cuda
def test_cuda_matches_cpu(rng):
    check_consistency(swap(0, 2), {"x": rng.normal(size=(2, 3, 2)).astype(np.float32)},
                      devices=[cpu(), gpu()])


def test_dim_out_of_range():
    with pytest.raises(nbdl.ShapeError, match=r"SwapAxis.*dim2=3.*3 dimension"):
        swap(0, 3).infer_shape(x=(2, 3, 4))
