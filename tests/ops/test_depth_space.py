import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)


def np_depth_to_space(x, b):
    n, c, h, w = x.shape
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def np_space_to_depth(x, b):
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


def d2s(b):
    return nbdl.sym.depth_to_space(nbdl.sym.var("x"), block_size=b)


def s2d(b):
    return nbdl.sym.space_to_depth(nbdl.sym.var("x"), block_size=b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,b", [((1, 4, 2, 3), 2), ((2, 18, 2, 1), 3), ((1, 1, 1, 1), 1),
                                     ((2, 8, 1, 1), 2)])
def test_depth_to_space_grid(shape, b, dtype, rng):
    x = rng.normal(size=shape).astype(dtype)
    y = np_depth_to_space(x, b)
    outs = check_symbolic_forward(d2s(b), {"x": x}, [y])
    assert outs[0].dtype == dtype
    og = rng.normal(size=y.shape).astype(dtype)
    check_symbolic_backward(d2s(b), {"x": x}, [og], {"x": np_space_to_depth(og, b)})


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,b", [((1, 1, 4, 6), 2), ((2, 2, 3, 3), 3), ((1, 1, 1, 1), 1)])
def test_space_to_depth_grid(shape, b, dtype, rng):
    x = rng.normal(size=shape).astype(dtype)
    y = np_space_to_depth(x, b)
    outs = check_symbolic_forward(s2d(b), {"x": x}, [y])
    assert outs[0].dtype == dtype
    og = rng.normal(size=y.shape).astype(dtype)
    check_symbolic_backward(s2d(b), {"x": x}, [og], {"x": np_depth_to_space(og, b)})


def test_round_trip_and_dcr_order():
    x = np.arange(16.0).reshape(1, 4, 2, 2)
    y = check_symbolic_forward(d2s(2), {"x": x}, [np_depth_to_space(x, 2)])[0]
    # DCR: output (0, 0, 0, 1) comes from input channel 1 at (0, 0)
    assert y[0, 0, 0, 1] == x[0, 1, 0, 0]
    check_symbolic_forward(nbdl.sym.space_to_depth(d2s(2), block_size=2), {"x": x}, [x])


def test_numeric_gradient(rng):
    check_numeric_gradient(d2s(2), {"x": rng.normal(size=(1, 4, 2, 1))})
    check_numeric_gradient(s2d(2), {"x": rng.normal(size=(1, 1, 2, 4))})


def test_inference_both_ways():
    _, outs, _ = d2s(2).infer_shape(x=(2, 8, 3, 4))
    assert outs == [(2, 2, 6, 8)]
    _, outs, _ = s2d(2).infer_shape(x=(2, 2, 6, 8))
    assert outs == [(2, 8, 3, 4)]
    from nbdl.ops import get_op
    ins, _ = get_op("depth_to_space").infer_shape({"block_size": 2}, [None], [(2, 2, 6, 8)])
    assert ins == [(2, 8, 3, 4)]


@pytest.mark.parametrize("sym,shape,match", [
    (d2s(2), (1, 6, 2, 2), r"depth_to_space.*6.*\(1, 6, 2, 2\).*4"),
    (d2s(2), (6, 2, 2), r"depth_to_space.*4-D.*\(6, 2, 2\)"),
    (s2d(2), (1, 1, 3, 4), r"space_to_depth.*\(1, 1, 3, 4\).*block_size=2"),
    # zero-size dimensions are refused, as MXNet 1.9.1 does
    (d2s(2), (0, 4, 2, 2), r"depth_to_space.*non-zero.*\(0, 4, 2, 2\)"),
    (d2s(2), (1, 4, 0, 2), r"depth_to_space.*non-zero"),
    (s2d(2), (0, 2, 2, 2), r"space_to_depth.*non-zero"),
])
def test_shape_errors(sym, shape, match):
    with pytest.raises(nbdl.ShapeError, match=match), nbdl.np_shape(True):   # 0 is a size
        sym.infer_shape(x=shape)


@pytest.mark.parametrize("op", ["depth_to_space", "space_to_depth"])
def test_bad_block_size(op):
    with pytest.raises(nbdl.AttrError, match="block_size"):
        getattr(nbdl.sym, op)(nbdl.sym.var("x"), block_size=0)
    with pytest.raises(nbdl.AttrError, match="block_size"):
        getattr(nbdl.sym, op)(nbdl.sym.var("x"))


def test_parallel_variant(monkeypatch, rng):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    x = rng.normal(size=(2, 8, 2, 3)).astype(np.float32)
    check_symbolic_forward(d2s(2), {"x": x}, [np_depth_to_space(x, 2)])
    y = np_depth_to_space(x, 2)
    check_symbolic_forward(s2d(2), {"x": y}, [x])


@pytest.mark.cuda
def test_cuda_matches_cpu(rng):
    check_consistency(d2s(2), {"x": rng.normal(size=(1, 4, 2, 1)).astype(np.float32)},
                      devices=[cpu(), gpu()])
    check_consistency(s2d(2), {"x": rng.normal(size=(1, 1, 2, 4)).astype(np.float32)},
                      devices=[cpu(), gpu()])


def test_block_size_by_position_as_mxnet(rng):
    # MXNet's generated signature is (data, block_size): a trailing number is the attribute
    x = rng.normal(size=(1, 4, 2, 3))
    for op, ref in (("depth_to_space", np_depth_to_space), ("space_to_depth", None)):
        if ref is None:
            x = rng.normal(size=(1, 1, 4, 6))
            ref = np_space_to_depth
        y = getattr(nbdl.sym, op)(nbdl.sym.var("x"), 2)
        assert y.list_attr() == {"block_size": "2"}
        check_symbolic_forward(y, {"x": x}, [ref(x, 2)])
        np.testing.assert_allclose(getattr(nbdl.nd, op)(nbdl.nd.array(x), 2).asnumpy(),
                                   ref(x, 2).astype(np.float32), rtol=1e-6)
