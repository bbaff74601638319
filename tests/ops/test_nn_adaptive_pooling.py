"""_contrib_AdaptiveAvgPooling2D against a numpy reference."""
import math

import numpy as np
import pytest

import nbdl
from nbdl.testing import check_consistency, check_numeric_gradient, check_symbolic_forward


def np_adaptive_avg(x, oh, ow):
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        h0, h1 = math.floor(i * h / oh), math.ceil((i + 1) * h / oh)
        for j in range(ow):
            w0, w1 = math.floor(j * w / ow), math.ceil((j + 1) * w / ow)
            out[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return out


@pytest.mark.cuda
@pytest.mark.parametrize("output_size,hw", [((), (1, 1)), (2, (2, 2)), ((3, 2), (3, 2))])
def test_adaptive_avg_pooling(output_size, hw, rng):
    x = rng.uniform(-1, 1, (2, 2, 5, 4)).astype(np.float32)
    y = nbdl.sym.contrib.AdaptiveAvgPooling2D(nbdl.sym.var("data"), output_size=output_size)
    check_symbolic_forward(y, {"data": x}, [np_adaptive_avg(x, *hw)], rtol=1e-5, atol=1e-6)
    check_numeric_gradient(y, {"data": x})
    check_consistency(y, {"data": x})


def test_adaptive_avg_upsamples_and_nd(rng):
    x = rng.uniform(-1, 1, (1, 1, 2, 3))
    out = nbdl.nd.contrib.AdaptiveAvgPooling2D(nbdl.nd.array(x, dtype=np.float64),
                                               output_size=(4, 5))
    assert out.dtype == np.float64
    assert np.allclose(out.asnumpy(), np_adaptive_avg(x, 4, 5))


def test_adaptive_avg_errors():
    y = nbdl.sym.contrib.AdaptiveAvgPooling2D(nbdl.sym.var("data"), output_size=(2, 2))
    with pytest.raises(nbdl.ShapeError, match="AdaptiveAvgPooling2D.*4-D"):
        y.infer_shape(data=(2, 3, 4))
    y = nbdl.sym.contrib.AdaptiveAvgPooling2D(nbdl.sym.var("data"), output_size=(2, 2, 2))
    with pytest.raises(nbdl.ShapeError, match="output_size"):
        y.infer_shape(data=(2, 3, 4, 4))
