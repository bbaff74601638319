"""L2Normalization and LRN against numpy references."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import check_consistency, check_numeric_gradient, check_symbolic_forward


def np_l2(x, mode, eps=1e-10):
    x = x.astype(np.float64)
    if mode == "instance":
        axes = tuple(range(1, x.ndim))
    elif mode == "channel":
        axes = (1,)
    else:
        axes = tuple(range(2, x.ndim))
    norm = np.sqrt(np.sum(x * x, axis=axes, keepdims=True) + eps)
    return x / norm, norm


def np_lrn(x, alpha, beta, knorm, nsize):
    x = x.astype(np.float64)
    c = x.shape[1]
    sq = x * x
    s = np.zeros_like(x)
    for i in range(c):
        lo, hi = max(0, i - nsize // 2), min(c, i + nsize // 2 + 1)
        s[:, i] = sq[:, lo:hi].sum(axis=1)
    t = knorm + alpha / nsize * s
    return x * t ** -beta, t


def l2(**kw):
    return nbdl.sym.L2Normalization(nbdl.sym.var("data"), **kw)


@pytest.mark.cuda
@pytest.mark.parametrize("mode,shape", [("instance", (3, 4)), ("instance", (2, 3, 2)),
                                        ("channel", (2, 3, 2, 2)), ("spatial", (2, 3, 4))])
def test_l2_normalization(mode, shape, rng):
    x = rng.uniform(-1, 1, shape).astype(np.float32)
    y = l2(mode=mode, eps=1e-6)
    out, _ = np_l2(x, mode, 1e-6)
    check_symbolic_forward(y, {"data": x}, [out], rtol=1e-5, atol=1e-6)
    check_numeric_gradient(y, {"data": x})
    check_consistency(y, {"data": x})


def test_l2_norm_output_shapes():
    for mode, want in [("instance", (2,)), ("channel", (2, 1, 4, 5)), ("spatial", (2, 3))]:
        y = nbdl.sym.L2Normalization(nbdl.sym.var("data"), mode=mode)
        assert y.list_outputs() == [y.name + "_output"]
        _, outs, _ = y.infer_shape(data=(2, 3, 4, 5))
        assert outs == [(2, 3, 4, 5)]
        from nbdl.ops.nn_normalization import l2_norm_shape
        assert l2_norm_shape({"mode": mode}, (2, 3, 4, 5)) == want


def test_l2_nd_float64_default_eps(rng):
    x = rng.uniform(-1, 1, (2, 5))
    out = nbdl.nd.L2Normalization(nbdl.nd.array(x, dtype=np.float64))
    assert out.dtype == np.float64
    assert np.allclose(out.asnumpy(), np_l2(x, "instance")[0], rtol=1e-12)


def test_l2_errors():
    with pytest.raises(nbdl.ShapeError, match="L2Normalization.*at least 3"):
        l2(mode="channel").infer_shape(data=(2, 3))
    with pytest.raises(nbdl.errors.AttrError):
        l2(mode="bogus")


@pytest.mark.cuda
@pytest.mark.parametrize("nsize", [1, 3])
def test_lrn(nsize, rng):
    x = rng.uniform(-1, 1, (2, 4, 2, 3)).astype(np.float32)
    kw = dict(alpha=0.3, beta=0.75, knorm=1.5, nsize=nsize)
    y = nbdl.sym.LRN(nbdl.sym.var("data"), **kw)
    out, _ = np_lrn(x, **kw)
    check_symbolic_forward(y, {"data": x}, [out], rtol=1e-5, atol=1e-6)
    check_numeric_gradient(y, {"data": x})
    check_consistency(y, {"data": x})


def test_lrn_defaults_nd(rng):
    x = rng.uniform(-1, 1, (1, 5, 2, 2)).astype(np.float32)
    out = nbdl.nd.LRN(nbdl.nd.array(x), nsize=5)
    assert np.allclose(out.asnumpy(), np_lrn(x, 1e-4, 0.75, 2.0, 5)[0], rtol=1e-5)


def test_lrn_errors():
    with pytest.raises(nbdl.errors.AttrError, match="LRN.*odd"):
        nbdl.sym.LRN(nbdl.sym.var("data"), nsize=2)
    with pytest.raises(nbdl.ShapeError, match="LRN.*4-D"):
        nbdl.sym.LRN(nbdl.sym.var("data"), nsize=3).infer_shape(data=(2, 3, 4))
