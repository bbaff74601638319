import re

import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.indexing import IndexOutOfRange
from nbdl.ops.registry import REQ_ADD, Call, get_op
from nbdl.testing import (assert_almost_equal, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward, run_symbol)


def cpu_gpu_agree(sym, location, wrt, rtol=1e-5, atol=1e-6, seed=0):
    """Outputs and the gradients of ``wrt`` agree between cpu and the CUDA simulator."""
    rng = np.random.RandomState(seed)
    outs, _, _ = run_symbol(sym, location, device=cpu())
    ogs = [rng.normal(size=o.shape).astype(o.dtype) for o in outs] if wrt else None
    res = [run_symbol(sym, location, out_grads=ogs, grad_nodes=wrt, device=d, is_train=True)
           for d in (cpu(), gpu())]
    for a, b in zip(res[0][0], res[1][0]):
        assert_almost_equal(b, a, rtol, atol, names=("gpu output", "cpu output"))
    for k in wrt:
        assert_almost_equal(res[1][1][k], res[0][1][k], rtol, atol, names=("gpu grad", "cpu grad"))


def trunc_int(a):
    return np.trunc(np.asarray(a, dtype=np.float64)).astype(np.int64)


def fix(j, n, mode):
    if mode == "wrap":
        return np.mod(j, n)
    if mode == "raise":
        return np.where(j < 0, j + n, j)
    return np.clip(j, 0, n - 1)


# -- one_hot -------------------------------------------------------------------------

def np_one_hot(idx, depth, on=1.0, off=0.0, dtype=np.float32):
    j = trunc_int(idx)
    out = np.full(j.shape + (depth,), off, dtype=dtype)
    valid = (j >= 0) & (j < depth)
    out[valid, j[valid]] = on
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8"])
@pytest.mark.parametrize("idx_dtype", [np.float32, np.int32, np.int64])
@pytest.mark.parametrize("shape", [(5,), (2, 3), (1,), (0,), (2, 0)])
def test_one_hot_forward(dtype, idx_dtype, shape, rng):
    idx = rng.randint(-1, 6, shape).astype(idx_dtype)  # -1 and 5 are out of range
    off = -1 if dtype != "uint8" else 7
    y = nbdl.sym.one_hot(nbdl.sym.var("i"), depth=5, on_value=3, off_value=off, dtype=dtype)
    outs = check_symbolic_forward(y, {"i": idx}, [np_one_hot(idx, 5, 3, off, dtype)])
    assert outs[0].dtype == np.dtype(dtype)


def test_one_hot_float_indices_truncate():
    idx = np.array([0.9, 2.5, -0.5, 3.99])
    check_symbolic_forward(nbdl.sym.one_hot(nbdl.sym.var("i"), depth=4), {"i": idx},
                           [np_one_hot(idx, 4)])


def test_one_hot_inference_and_no_gradient():
    y = nbdl.sym.one_hot(nbdl.sym.var("i"), depth=7, dtype="int32")
    args, outs, _ = y.infer_shape(i=(2, 3))
    assert outs == [(2, 3, 7)]
    _, touts, _ = y.infer_type(i=np.int64)
    assert touts == [np.int32]
    assert get_op("one_hot").gradient is None


def test_one_hot_depth_zero():
    check_symbolic_forward(nbdl.sym.one_hot(nbdl.sym.var("i"), depth=0), {"i": np.array([0, 1])},
                           [np.zeros((2, 0), np.float32)])


@pytest.mark.parametrize("attrs,match", [({"depth": -1}, "depth"), ({}, "depth"),
                                         ({"depth": 3, "dtype": "complex64"}, "dtype")])
def test_one_hot_bad_attrs(attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        nbdl.sym.one_hot(nbdl.sym.var("i"), **attrs)


@pytest.mark.cuda
def test_one_hot_cuda_matches_cpu():
    cpu_gpu_agree(nbdl.sym.one_hot(nbdl.sym.var("i"), depth=4, on_value=2.0),
                  {"i": np.array([[0, 3, 5], [-1, 2, 1]], dtype=np.int32)}, [])


# -- pick --------------------------------------------------------------------------------

def np_pick(x, idx, axis, keepdims=False, mode="clip"):
    axis = axis % x.ndim
    j = fix(trunc_int(idx), x.shape[axis], mode)
    if not keepdims:
        j = np.expand_dims(j, axis)
    out = np.take_along_axis(x, j, axis=axis)
    return out if keepdims else np.squeeze(out, axis)


def np_pick_grad(x, idx, og, axis, keepdims=False, mode="clip"):
    axis = axis % x.ndim
    j = fix(trunc_int(idx), x.shape[axis], mode)
    if not keepdims:
        j = np.expand_dims(j, axis)
        og = np.expand_dims(og, axis)
    g = np.zeros_like(x)
    np.put_along_axis(g, j, og, axis=axis)
    return g


def pick(**attrs):
    return nbdl.sym.pick(nbdl.sym.var("x"), nbdl.sym.var("i"), **attrs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("idx_dtype", [np.float32, np.int32, np.int64])
@pytest.mark.parametrize("shape,axis", [((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((1, 1), 0),
                                        ((0, 3), 1), ((3, 1), -1)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_pick_forward(dtype, idx_dtype, shape, axis, keepdims, mode, rng):
    x = rng.uniform(-1, 1, shape).astype(dtype)
    y = pick(axis=axis, keepdims=keepdims, mode=mode)
    with nbdl.np_shape(True):       # a 0 dim is a size, not unknown
        ishape = y.infer_shape(x=shape)[0][1]
    n = shape[axis]
    idx = rng.randint(-n - 1, n + 2, ishape).astype(idx_dtype)
    check_symbolic_forward(y, {"x": x, "i": idx}, [np_pick(x, idx, axis, keepdims, mode)])


@pytest.mark.parametrize("axis,keepdims,mode", [(-1, False, "clip"), (0, True, "wrap"),
                                                (1, False, "wrap")])
def test_pick_gradient(axis, keepdims, mode, rng):
    x = rng.uniform(-1, 1, (2, 3, 2))
    y = pick(axis=axis, keepdims=keepdims, mode=mode)
    ishape = y.infer_shape(x=x.shape)[0][1]
    n = x.shape[axis]
    idx = rng.randint(-n, 2 * n, ishape).astype(np.float64)
    check_numeric_gradient(y, {"x": x, "i": idx}, grad_nodes=["x"])
    og = rng.normal(size=ishape)
    check_symbolic_backward(y, {"x": x, "i": idx}, [og],
                            {"x": np_pick_grad(x, idx, og, axis, keepdims, mode)})


def test_pick_backward_req_add(rng):
    op = get_op("_backward_pick")
    attrs, _ = op.parse_attrs({"axis": 1})
    og = rng.normal(size=(3,))
    idx = np.array([0, 3, 1])
    call = Call(op, attrs, [(3,), (3,), (3, 4)], [np.dtype(np.float64), np.dtype(np.int64),
                np.dtype(np.float64)], [(3, 4)], [np.dtype(np.float64)], req=[REQ_ADD])
    launch = op.prepare(call)
    grad = np.ones((3, 4))
    arrays = [og, idx, np.empty((3, 4)), grad]
    launch.fn(*[a.reshape(v) if v else a for a, v in zip(arrays, launch.views)], *launch.scalars)
    want = np.ones((3, 4))
    want[[0, 1, 2], [0, 3, 1]] += og
    assert_almost_equal(grad, want)


def test_pick_shape_inference():
    args, outs, _ = pick(axis=1, keepdims=True).infer_shape(x=(2, 5, 3))
    assert args == [(2, 5, 3), (2, 1, 3)] and outs == [(2, 1, 3)]
    args, outs, _ = pick(axis=1).infer_shape(x=(2, 5, 3))
    assert args == [(2, 5, 3), (2, 3)] and outs == [(2, 3)]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("ishape", [(4,), (4, 1)])
def test_pick_index_either_form(keepdims, ishape, rng):
    """As MXNet: an index of data's rank is in keepdims form, otherwise reduced
    (Gluon's loss picks a (n,) label with keepdims=True)."""
    x = rng.uniform(size=(4, 3))
    idx = rng.randint(0, 3, ishape).astype(np.float32)
    y = pick(axis=-1, keepdims=keepdims)
    want = np_pick(x, idx.reshape(4), -1)
    want = want.reshape(4, 1) if keepdims else want
    check_symbolic_forward(y, {"x": x, "i": idx}, [want])
    og = rng.normal(size=want.shape)
    check_symbolic_backward(y, {"x": x, "i": idx}, [og],
                            {"x": np_pick_grad(x, idx.reshape(4), og.reshape(4), -1)})


@pytest.mark.parametrize("ishape", [(3,), (4, 2), (2, 2)])
def test_pick_index_shape_mismatch(ishape):
    pat = r"pick.*index shape " + re.escape(str(ishape)) + r".*\(4, 5\)"
    with pytest.raises(nbdl.ShapeError, match=pat):
        pick().infer_shape(x=(4, 5), i=ishape)


def test_pick_axis_errors():
    with pytest.raises(nbdl.ShapeError, match=r"pick.*axis=2"):
        pick(axis=2).infer_shape(x=(2, 5))
    with pytest.raises(nbdl.AttrError, match="axis=None"):
        pick(axis="None")  # (a Python None is dropped: the default applies)
    with pytest.raises(nbdl.AttrError, match="mode"):
        pick(mode="raise")
    with pytest.raises(nbdl.ShapeError, match="length 0"), nbdl.np_shape(True):
        pick(axis=0).infer_shape(x=(0, 3))


@pytest.mark.cuda
@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_pick_cuda_matches_cpu(mode, rng):
    cpu_gpu_agree(pick(axis=1, mode=mode),
                  {"x": rng.uniform(size=(2, 3, 2)).astype(np.float32),
                   "i": np.array([[0, 4], [-1, 2]], dtype=np.float32)}, ["x"])


# -- take --------------------------------------------------------------------------------

def take(**attrs):
    return nbdl.sym.take(nbdl.sym.var("a"), nbdl.sym.var("i"), **attrs)


def np_take(a, idx, axis, mode):
    j = fix(trunc_int(idx), a.shape[axis], mode)
    return np.take(a, j, axis=axis)


def np_take_grad(a, idx, og, axis, mode):
    axis = axis % a.ndim
    j = fix(trunc_int(idx), a.shape[axis], mode).reshape(-1)
    g = np.zeros(a.shape)
    gm = np.moveaxis(g, axis, 0)
    og = og.reshape(a.shape[:axis] + (j.size,) + a.shape[axis + 1:])
    ogm = np.moveaxis(og, axis, 0)
    for t, jj in enumerate(j):
        gm[jj] += ogm[t]
    return g


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("idx_dtype", [np.float64, np.int32])
@pytest.mark.parametrize("shape,ishape,axis", [((5, 3), (4,), 0), ((5, 3), (2, 2), 1),
                                               ((2, 3, 4), (3,), -1), ((1,), (2,), 0),
                                               ((4, 2), (0,), 0), ((0, 2), (3,), 1)])
@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_forward(dtype, idx_dtype, shape, ishape, axis, mode, rng):
    a = rng.uniform(-1, 1, shape).astype(dtype)
    n = shape[axis]
    idx = rng.randint(-n - 2, n + 3, ishape).astype(idx_dtype)
    check_symbolic_forward(take(axis=axis, mode=mode), {"a": a, "i": idx},
                           [np_take(a, idx, axis, mode)])


def test_take_raise_mode(rng):
    a = rng.uniform(size=(4, 3))
    y = take(mode="raise")
    ok = np.array([0, 3, -4, -1])
    check_symbolic_forward(y, {"a": a, "i": ok}, [np.take(a, ok, axis=0)])
    for bad in (np.array([0, 4]), np.array([-5.0])):
        with pytest.raises(IndexOutOfRange, match="out of range"):
            check_symbolic_forward(y, {"a": a, "i": bad}, [np.zeros((bad.size, 3))])
    assert issubclass(IndexOutOfRange, (nbdl.NbdlError, IndexError))


@pytest.mark.parametrize("axis,mode", [(0, "clip"), (1, "wrap"), (-1, "raise")])
def test_take_gradient(axis, mode, rng):
    a = rng.uniform(-1, 1, (3, 4))
    n = a.shape[axis]
    # repeated indices accumulate
    idx = np.array([[0, 2], [2, n - 1]]) if mode == "raise" else np.array([[0, -1], [n + 1, 0]])
    y = take(axis=axis, mode=mode)
    check_numeric_gradient(y, {"a": a, "i": idx.astype(np.float64)}, grad_nodes=["a"])
    oshape = y.infer_shape(a=a.shape, i=idx.shape)[1][0]
    og = rng.normal(size=oshape)
    check_symbolic_backward(y, {"a": a, "i": idx}, [og],
                            {"a": np_take_grad(a, idx, og, axis, mode)})


def test_take_shape_inference():
    args, outs, _ = take(axis=1).infer_shape(a=(2, 5, 3), i=(4, 6))
    assert outs == [(2, 4, 6, 3)]
    # indices from a and the output
    from nbdl.graph.infer import infer_shapes
    from nbdl.ops.ir import topo_order
    y = take(axis=1)
    node = y._outputs[0].node
    table = infer_shapes(topo_order(y._outputs), {node.inputs[0]: (2, 5, 3),
                                                  node.output(0): (2, 7, 3)})
    assert table[node.inputs[1]] == (7,)


def test_take_shape_errors():
    with pytest.raises(nbdl.ShapeError, match=r"take.*axis=2.*\(2, 5\)"):
        take(axis=2).infer_shape(a=(2, 5), i=(3,))
    with pytest.raises(nbdl.ShapeError, match=r"take.*length 0"), nbdl.np_shape(True):
        take().infer_shape(a=(0, 5), i=(3,))
    with pytest.raises(nbdl.AttrError, match="mode"):
        take(mode="nearest")


@pytest.mark.cuda
@pytest.mark.parametrize("mode", ["clip", "wrap", "raise"])
def test_take_cuda_matches_cpu(mode, rng):
    idx = np.array([[0, 2], [2, -1]], dtype=np.int32)
    if mode != "raise":
        idx[1, 1] = 7
    cpu_gpu_agree(take(axis=1, mode=mode), {"a": rng.uniform(size=(2, 3)).astype(np.float32),
                                            "i": idx}, ["a"])


@pytest.mark.cuda
def test_take_cuda_raise():
    with pytest.raises(IndexOutOfRange):
        run_symbol(take(mode="raise"), {"a": np.ones((2, 2), np.float32),
                                        "i": np.array([2.0], np.float32)}, device=gpu())
