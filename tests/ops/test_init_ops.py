"""The fill ops _zeros, _ones, _full, _arange, _eye (what sym.zeros & co.
build): numpy references, dtypes, shape from the consumer, CPU vs the CUDA
simulator, MXNet -symbol.json nodes, and errors."""
import numpy as np
import pytest

import nbdl
from nbdl.errors import AttrError, DTypeError, ShapeError
from nbdl.ops.registry import get_op
from nbdl.testing import check_consistency, check_numeric_gradient, check_symbolic_forward

S = nbdl.sym


def np_arange(start, stop=None, step=1.0, repeat=1, dtype=np.float32):
    return np.repeat(np.arange(start, stop, step), repeat).astype(dtype)


CASES = [
    (lambda: S.zeros((2, 3)), np.zeros((2, 3), np.float32)),
    (lambda: S.ones((4,), dtype="int32"), np.ones(4, np.int32)),
    (lambda: S.ones((3,), dtype="bool"), np.ones(3, bool)),
    (lambda: S.full((2, 2), 3.5, dtype="float64"), np.full((2, 2), 3.5)),
    (lambda: S._full(shape=(3,), value=-2, dtype="int64"), np.full(3, -2, np.int64)),
    (lambda: S.arange(2, 10, 3, repeat=2), np_arange(2, 10, 3, repeat=2)),
    (lambda: S.arange(5, dtype="int64"), np_arange(5, dtype=np.int64)),
    (lambda: S._arange(start=1.0, stop=-1.0, step=-0.5), np_arange(1.0, -1.0, -0.5)),
    (lambda: S.arange(0, 0), np_arange(0, 0)),
    (lambda: S.eye(3, 4, 1), np.eye(3, 4, 1, dtype=np.float32)),
    (lambda: S._eye(N=3, k=-2, dtype="uint8"), np.eye(3, k=-2, dtype=np.uint8)),
    (lambda: S.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32)),
    (lambda: S._linspace(start=-2, stop=3, num=7, endpoint=False, dtype="int32"),
     (-2 + np.arange(7) * (5 / 7)).astype(np.int32)),   # float64 values cast once, as MXNet
    (lambda: S.linspace(1, 2, 1), np.array([1.0], np.float32)),
    (lambda: S.linspace(0, 1, 0), np.zeros(0, np.float32)),
    (lambda: S.zeros((2,), dtype="float16"), np.zeros(2, np.float16)),
    (lambda: S.linspace(0, 1, 4, dtype="float16"), np.linspace(0, 1, 4).astype(np.float16)),
    (lambda: S.eye(2, dtype="float16"), np.eye(2, dtype=np.float16)),
]


@pytest.mark.parametrize("k", range(len(CASES)))
def test_forward_against_numpy(k):
    make, want = CASES[k]
    out = check_symbolic_forward(make(), {}, [want])
    assert out[0].dtype == want.dtype


@pytest.mark.cuda
@pytest.mark.parametrize("k", [0, 3, 5, 9, 11, 15])
def test_cpu_matches_cuda_simulator(k):
    check_consistency(CASES[k][0](), {}, grad=False)


def test_shape_from_the_consumer_and_gradient_through_a_sum():
    x = S.var("x")
    y = x * 2.0 + S.zeros(()) + S.ones(())
    assert y.infer_shape(x=(2, 3))[1] == [(2, 3)]
    check_symbolic_forward(y, {"x": np.ones((2, 3), np.float32)}, [np.full((2, 3), 3.0)])
    y64 = x * 2.0 + S.zeros((), dtype="float64")
    check_numeric_gradient(y64, {"x": np.random.RandomState(0).randn(2, 3)})
    r = S.elemwise_add(x, S._arange(start=0, infer_range=True))
    assert r.infer_shape(x=(4,))[1] == [(4,)]


def test_mxnet_json_nodes_load():
    doc = """{"nodes": [{"op": "_zeros", "name": "_zeros0", "attrs": {"dtype": "float32",
              "shape": "(2, 3)"}, "inputs": []},
              {"op": "_arange", "name": "_arange0", "attrs": {"start": "1", "stop": "4",
               "step": "1.0", "repeat": "1", "infer_range": "False", "dtype": "float32"},
               "inputs": []}],
              "arg_nodes": [], "node_row_ptr": [0, 1, 2], "heads": [[0, 0, 0], [1, 0, 0]],
              "attrs": {"mxnet_version": ["int", 10901]}}"""
    sym = S.load_json(doc)
    check_symbolic_forward(sym, {}, [np.zeros((2, 3), np.float32), np.arange(1, 4, dtype=np.float32)])


def test_errors_name_the_op():
    with pytest.raises(AttrError, match="_arange: step must not be 0"):
        S.arange(0, 3, 0).infer_shape()
    with pytest.raises(ShapeError, match="_eye"):
        S._eye(N=-1).infer_shape()
    with pytest.raises(ShapeError, match=r"_linspace: num=-1"):
        S.linspace(0, 1, -1).infer_shape()
    with pytest.raises(DTypeError, match=r"_zeros: output dtype float64 differs"):
        get_op("_zeros").infer_type({"dtype": "float32"}, [], [np.float64])


def test_a_zero_dim_is_unknown_outside_numpy_shape_mode():
    """MXNet 1.x's ``zeros(shape=(0, H))`` (mx.rnn's begin states): the 0 is
    found from the consumers, even behind a FullyConnected; in NumPy-shape
    mode it is a size."""
    x = S.var("x")
    direct = x + S.zeros((0, 3))
    assert direct.infer_shape(x=(2, 3))[1] == [(2, 3)]
    h = S.FullyConnected(S.uniform(shape=(0, 4), name="h0"), num_hidden=3, name="h2h")
    behind = S.FullyConnected(x, num_hidden=3, name="i2h") + h
    args, outs, _ = behind.infer_shape(x=(5, 7))
    assert outs == [(5, 3)] and dict(zip(behind.list_arguments(), args))["h2h_weight"] == (3, 4)
    check_symbolic_forward(direct, {"x": np.ones((2, 3), np.float32)}, [np.ones((2, 3))])
    with nbdl.np_shape(True):
        assert S.zeros((0, 3)).infer_shape()[1] == [(0, 3)]
        with pytest.raises(ShapeError):
            direct.infer_shape(x=(2, 3))
    with pytest.raises(ShapeError, match=r"\(2, 4\).*\(\?, 3\)"):
        (S.var("y") + S.zeros((0, 3))).infer_shape(y=(2, 4))
    # -1 is unknown in both modes; an eager call needs every dim
    assert S.ones(shape=(2, -1)).infer_shape_partial()[1] == [(2, 0)]
    with nbdl.np_shape(True):
        assert S.ones(shape=(2, -1)).infer_shape_partial()[1] == [(2, -1)]
    with pytest.raises(ShapeError, match=r"_ones: output shapes \(2, \?\) have unknown"):
        nbdl.nd._ones(shape=(2, -1))
