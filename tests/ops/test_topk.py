import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward, run_symbol)


def np_order(x, axis, is_ascend):
    """Positions in result order: stable, largest first unless ascending."""
    return np.argsort(x if is_ascend else -x, axis=axis, kind="stable")


def np_topk(x, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype=np.float32):
    shape = x.shape
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    n = x.shape[axis]
    k = n if k < 1 else k
    pos = np.take(np_order(x, axis, is_ascend), np.arange(k), axis=axis)
    vals = np.take_along_axis(x, pos, axis=axis)
    if ret_typ == "indices":
        return [pos.astype(dtype)]
    if ret_typ == "value":
        return [vals]
    if ret_typ == "both":
        return [vals, pos.astype(dtype)]
    mask = np.zeros_like(x)
    np.put_along_axis(mask, pos, 1, axis=axis)
    return [mask.reshape(shape)]


def topk(**kw):
    # ``create`` drops attributes passed as None (they mean "the default"), so
    # axis=None (the flattened array, not the default -1) is spelled as in
    # -symbol.json files.
    if "axis" in kw and kw["axis"] is None:
        kw["axis"] = "None"
    return nbdl.sym.topk(nbdl.sym.var("x"), **kw)


def distinct(rng, shape, dtype):
    """Values without ties (so any correct sort agrees with the reference)."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) * 0.5 - n / 4).astype(dtype)


@pytest.mark.parametrize("ret_typ", ["indices", "value", "both", "mask"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis,k", [((3, 5), -1, 2), ((3, 5), 0, 3), ((2, 4, 3), 1, 1),
                                          ((2, 4, 3), None, 5), ((4,), 0, 0), ((1,), 0, 1),
                                          ((0, 3), -1, 2), ((2, 3), -1, 3)])
@pytest.mark.parametrize("is_ascend", [False, True])
def test_forward_grid(ret_typ, dtype, shape, axis, k, is_ascend, rng):
    x = distinct(rng, shape, dtype)
    want = np_topk(x, axis, k, ret_typ, is_ascend)
    outs = check_symbolic_forward(topk(axis=axis, k=k, ret_typ=ret_typ, is_ascend=is_ascend),
                                  {"x": x}, want)
    assert len(outs) == len(want)
    assert [o.dtype for o in outs] == [w.dtype for w in want]


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64", "uint8"])
def test_index_dtype(dtype, rng):
    x = distinct(rng, (2, 6), np.float32)
    outs = check_symbolic_forward(topk(k=3, dtype=dtype), {"x": x},
                                  np_topk(x, -1, 3, dtype=np.dtype(dtype)))
    assert outs[0].dtype == np.dtype(dtype)


def test_ties_keep_position_order_and_nan_is_largest():
    x = np.array([[1.0, 3.0, 3.0, np.nan, 1.0]], dtype=np.float32)
    check_symbolic_forward(topk(k=5), {"x": x}, [np.array([[3, 1, 2, 0, 4]], np.float32)])
    check_symbolic_forward(topk(k=5, is_ascend=True), {"x": x},
                           [np.array([[0, 4, 1, 2, 3]], np.float32)])


def test_long_row_sort(rng):
    """Rows longer than a few merge widths, with many ties."""
    x = rng.randint(0, 20, (3, 300)).astype(np.float64)
    for asc in (False, True):
        check_symbolic_forward(topk(k=0, is_ascend=asc, ret_typ="both"), {"x": x},
                               np_topk(x, -1, 0, "both", asc))


@pytest.mark.parametrize("ret_typ,axis,k", [("value", -1, 2), ("both", 0, 2), ("value", None, 3)])
def test_backward_scatter(ret_typ, axis, k, rng):
    x = distinct(rng, (3, 4), np.float64)
    vals = np_topk(x, axis, k, "value")[0]
    og = rng.normal(size=vals.shape)
    ax = 0 if axis is None else axis
    flat = x.reshape(-1) if axis is None else x
    pos = np.take(np_order(flat, ax, False), np.arange(k), axis=ax)
    grad = np.zeros_like(flat)
    np.put_along_axis(grad, pos, og, axis=ax)
    out_grads = [og] + ([np.zeros(vals.shape)] if ret_typ == "both" else [])
    check_symbolic_backward(topk(axis=axis, k=k, ret_typ=ret_typ), {"x": x}, out_grads,
                            {"x": grad.reshape(x.shape)})


@pytest.mark.parametrize("ret_typ", ["indices", "mask"])
def test_no_gradient_through_positions(ret_typ, rng):
    x = distinct(rng, (2, 3), np.float64)
    og = rng.normal(size=np_topk(x, -1, 2, ret_typ)[0].shape)
    check_symbolic_backward(topk(k=2, ret_typ=ret_typ), {"x": x}, [og], {"x": np.zeros((2, 3))})


def test_numeric_gradient(rng):
    x = distinct(rng, (3, 4), np.float64) * 0.1
    check_numeric_gradient(topk(k=2, ret_typ="value", axis=0), {"x": x})


def test_inference():
    args, outs, _ = topk(k=2, axis=1, ret_typ="both").infer_shape(x=(3, 5, 2))
    assert outs == [(3, 2, 2), (3, 2, 2)]
    _, outs, _ = topk(k=2, ret_typ="mask").infer_shape(x=(3, 5))
    assert outs == [(3, 5)]
    _, outs, _ = topk(k=4, axis=None).infer_shape(x=(3, 5))
    assert outs == [(4,)]
    _, touts, _ = topk(ret_typ="both", dtype="int32").infer_type(x=np.float64)
    assert touts == [np.float64, np.int32]
    assert len(topk(ret_typ="value").list_outputs()) == 1   # positions are hidden


@pytest.mark.cuda
@pytest.mark.parametrize("ret_typ", ["indices", "value", "both", "mask"])
def test_cuda_matches_cpu(ret_typ, rng):
    x = distinct(rng, (2, 5, 3), np.float32)
    check_consistency(topk(axis=1, k=3, ret_typ=ret_typ), {"x": x}, devices=[cpu(), gpu()])


@pytest.mark.cuda
@pytest.mark.parametrize("is_ascend", [False, True])
def test_cuda_ties_and_nan(is_ascend):
    x = np.array([[2.0, 1.0, 2.0, 0.0], [np.nan, 1.0, 1.0, 5.0]], dtype=np.float32)
    y = topk(k=4, ret_typ="both", is_ascend=is_ascend)
    # NaN ranks above every number; equal values keep their position order
    want = [np.array([[3, 1, 0, 2], [1, 2, 3, 0]] if is_ascend else [[0, 2, 1, 3], [0, 3, 1, 2]],
                     dtype=np.float32)]
    for dev in (cpu(), gpu()):
        outs, _, _ = run_symbol(y, {"x": x}, device=dev)
        assert_almost_equal(outs[1], want[0], names=(f"{dev} positions", "numpy"))
        assert_almost_equal(outs[0], np.take_along_axis(x, want[0].astype(int), -1),
                            equal_nan=True, names=(f"{dev} values", "numpy"))


def test_k_too_large():
    with pytest.raises(nbdl.ShapeError, match=r"topk.*k=6.*\(2, 5\)"):
        topk(k=6).infer_shape(x=(2, 5))


def test_axis_out_of_range():
    with pytest.raises(nbdl.ShapeError, match=r"topk.*axis=2"):
        topk(axis=2).infer_shape(x=(2, 5))


@pytest.mark.parametrize("attrs,match", [({"ret_typ": "values"}, "ret_typ"),
                                         ({"dtype": "int8"}, "dtype"),
                                         ({"k": "two"}, "k")])
def test_bad_attrs(attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        topk(**attrs)


def test_integer_data_rejected():
    with pytest.raises(nbdl.DTypeError, match="topk"):
        topk().infer_type(x=np.int8)
