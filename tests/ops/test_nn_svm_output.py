"""SVMOutput against a numpy reference of MXNet's L1-/L2-SVM gradients."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import check_consistency, check_symbolic_backward, check_symbolic_forward


def np_svm_grad(x, label, margin, coef, linear):
    x = x.astype(np.float64)
    g = np.zeros_like(x)
    for n in range(x.shape[0]):
        y = int(label[n])
        for k in range(x.shape[1]):
            if k == y:
                if margin > x[n, k]:
                    g[n, k] = -coef if linear else -2 * coef * (margin - x[n, k])
            elif margin > -x[n, k]:
                g[n, k] = coef if linear else 2 * coef * (margin + x[n, k])
    return g


def svm(**kw):
    return nbdl.sym.SVMOutput(nbdl.sym.var("data"), nbdl.sym.var("label"), **kw)


@pytest.mark.parametrize("kw", [{}, {"use_linear": True},
                                {"margin": 0.5, "regularization_coefficient": 0.3}])
@pytest.mark.parametrize("dtype", [pytest.param(np.float32, marks=pytest.mark.cuda), np.float64])
def test_svm_output(kw, dtype, rng):
    x = rng.uniform(-2, 2, (5, 4)).astype(dtype)
    label = rng.randint(0, 4, (5,)).astype(dtype)
    y = svm(**kw)
    loc = {"data": x, "label": label}
    check_symbolic_forward(y, loc, [x])
    want = np_svm_grad(x, label, kw.get("margin", 1.0), kw.get("regularization_coefficient", 1.0),
                       kw.get("use_linear", False))
    # the head gradient is ignored
    og = rng.normal(size=x.shape).astype(dtype)
    check_symbolic_backward(y, loc, [og], {"data": want}, rtol=1e-5, atol=1e-6)
    if dtype == np.float32:
        check_consistency(y, loc)


def test_svm_output_shapes_and_int_label():
    y = svm()
    args, outs, _ = y.infer_shape(data=(3, 5))
    assert args == [(3, 5), (3,)] and outs == [(3, 5)]
    x = nbdl.nd.array(np.array([[2.0, -2.0], [0.0, 0.5]], np.float32))
    out = nbdl.nd.SVMOutput(x, nbdl.nd.array(np.array([0, 1], np.int32), dtype=np.int32))
    assert np.all(out.asnumpy() == x.asnumpy())
    with pytest.raises(nbdl.ShapeError, match="SVMOutput.*label shape"):
        y.infer_shape(data=(3, 5), label=(5,))
