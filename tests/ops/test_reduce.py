"""Reductions (sum, mean, prod, max, min, argmax, argmin) and broadcasts."""
import warnings

import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.executor.interpret import run_op
from nbdl.ops.registry import REQ_ADD, REQ_NULL, get_op
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward, run_symbol)

sym = nbdl.sym
REFS = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min}


def reduce_ref(op, x, axis=None, keepdims=False, exclude=False):
    """MXNet semantics on top of numpy: int or tuple axis, ``exclude``, and
    shape (1,) for a full reduction without keepdims."""
    if axis is None or axis == ():
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis))
        if exclude:
            axes = tuple(i for i in range(x.ndim) if i not in axes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty axis is NaN
        out = REFS[op](x.astype(np.float64), axis=axes, keepdims=keepdims).astype(x.dtype)
    return out.reshape(1) if out.ndim == 0 else out


def _distinct(shape, rng, low=0.5):
    """Values without ties (max/min gradients) and away from zero (prod)."""
    n = int(np.prod(shape))
    return (low + rng.permutation(n) / max(n, 1)).reshape(shape)


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


AXES = [None, (), 0, 1, -1, 3, (0, 2), (1, 3), (0, 3), (1, 2), (0, 1, 2, 3), (-1, 0)]


# ---------------------------------------------------------------- forward

@pytest.mark.parametrize("op", list(REFS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduce_forward_axes(op, dtype, rng):
    x = (rng.uniform(0.5, 1.5, (2, 3, 4, 5))).astype(dtype)
    for axis in AXES:
        for keepdims in (False, True):
            for exclude in (False, True):
                s = getattr(sym, op)(sym.var("x"), axis=axis, keepdims=keepdims, exclude=exclude)
                expect = reduce_ref(op, x, axis, keepdims, exclude)
                assert s.infer_shape(x=x.shape)[1] == [expect.shape], (axis, keepdims, exclude)
                check_symbolic_forward(s, {"x": x}, [expect], **_tol(dtype))


@pytest.mark.parametrize("shape,axis", [((1,), None), ((1,), 0), ((1, 1, 1), 1), ((5,), 0),
                                        ((0, 3), 1), ((0, 3), 0), ((3, 0), 1), ((3, 0), None),
                                        ((2, 1, 3), (0, 1)), ((4, 1), 1)])
@pytest.mark.parametrize("op", list(REFS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduce_forward_small_and_empty(shape, axis, op, dtype, rng):
    x = rng.uniform(0.5, 1.5, shape).astype(dtype)
    for keepdims in (False, True):
        s = getattr(sym, op)(sym.var("x"), axis=axis, keepdims=keepdims)
        try:
            expect = reduce_ref(op, x, axis, keepdims)
        except ValueError:      # numpy's (and MXNet's) refusal: max/min of nothing
            with pytest.raises(nbdl.ShapeError, match=f"{op}: cannot take the {op}imum over a "
                                                      f"zero-size axis"):
                run_symbol(s, {"x": x})
            continue
        out = run_symbol(s, {"x": x})[0][0]
        assert out.shape == expect.shape and out.dtype == dtype
        np.testing.assert_allclose(out, expect, **_tol(dtype))


@pytest.mark.parametrize("shape,axis", [((2, 3, 2, 3, 2, 3), (1, 3, 5)), ((2, 3, 2, 3, 2, 3), (0, 2, 4)),
                                        ((3, 2, 3, 2, 3, 2), (0, 2, 4))])
def test_reduce_six_alternating_groups(shape, axis, rng):
    x = rng.normal(size=shape)
    for op in ("sum", "max"):
        s = getattr(sym, op)(sym.var("x"), axis=axis)
        check_symbolic_forward(s, {"x": x}, [reduce_ref(op, x, axis)], rtol=1e-12, atol=1e-12)


def test_reduce_too_fragmented_raises():
    s = sym.sum(sym.var("x"), axis=(0, 2, 4, 6))
    with pytest.raises(nbdl.ShapeError, match="alternating"):
        s.infer_shape(x=(2,) * 7)
    # Size-1 axes do not count: this one compacts to three groups.
    s = sym.sum(sym.var("x"), axis=(0, 2, 4, 6))
    x = np.random.rand(2, 1, 1, 1, 1, 1, 3)
    check_symbolic_forward(s, {"x": x}, [x.sum(axis=(0, 2, 4, 6))])


def test_sum_float32_accuracy(rng):
    # float64 accumulation: a long float32 sum stays within float32 rounding.
    x = rng.uniform(0, 1, (3, 200000)).astype(np.float32)
    for axis in (1, None):
        s = sym.sum(sym.var("x"), axis=axis)
        expect = np.sum(x.astype(np.float64), axis=axis).astype(np.float32).reshape(-1)
        check_symbolic_forward(s, {"x": x}, [expect], rtol=2e-7, atol=0)
    s = sym.mean(sym.var("x"), axis=0)
    check_symbolic_forward(s, {"x": x.T.copy()}, [x.astype(np.float64).mean(1).astype(np.float32)],
                           rtol=2e-7, atol=0)


def test_max_min_propagate_nan():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
    for op in ("max", "min"):
        for axis in (0, 1, None):
            out = run_symbol(getattr(sym, op)(sym.var("x"), axis=axis), {"x": x})[0][0]
            np.testing.assert_array_equal(out, reduce_ref(op, x, axis))


def test_aliases():
    x = np.arange(6.0).reshape(2, 3)
    check_symbolic_forward(sym.sum_axis(sym.var("x"), axis=1), {"x": x}, [x.sum(1)])
    check_symbolic_forward(sym.max_axis(sym.var("x"), axis=0), {"x": x}, [x.max(0)])
    check_symbolic_forward(sym.min_axis(sym.var("x")), {"x": x}, [np.array([0.0])])
    assert get_op("broadcast_axes") is get_op("broadcast_axis")
    # The fluent Symbol methods reach the same ops.
    check_symbolic_forward(sym.var("x").mean(axis=1, keepdims=True), {"x": x}, [x.mean(1, keepdims=True)])


def test_reduce_attr_strings_and_infer_type():
    s = sym.sum(sym.var("x"), axis="(0, -1)", keepdims="True", exclude="False")
    assert s.infer_shape(x=(2, 3, 4))[1] == [(1, 3, 1)]
    assert s.infer_type(x=np.float64)[1] == [np.float64]


def test_reduce_errors():
    with pytest.raises(nbdl.ShapeError, match="out of range"):
        sym.sum(sym.var("x"), axis=3).infer_shape(x=(2, 3))
    with pytest.raises(nbdl.ShapeError, match="more than once"):
        sym.max(sym.var("x"), axis=(1, -1)).infer_shape(x=(2, 3))
    with pytest.raises(nbdl.AttrError):
        sym.sum(sym.var("x"), keepdims="perhaps")
    with pytest.raises(nbdl.AttrError):
        sym.mean(sym.var("x"), axes=1)
    with pytest.raises(nbdl.AttrError):
        sym.sum(sym.var("x"), axis="one")


# ---------------------------------------------------------------- gradients

@pytest.mark.parametrize("op", list(REFS))
@pytest.mark.parametrize("axis,keepdims,exclude", [(None, False, False), (1, False, False),
                                                   ((0, 2), True, False), (1, False, True),
                                                   (-1, True, False)])
def test_reduce_numeric_gradient(op, axis, keepdims, exclude, rng):
    s = getattr(sym, op)(sym.var("x"), axis=axis, keepdims=keepdims, exclude=exclude)
    check_numeric_gradient(s, {"x": _distinct((2, 3, 2), rng)})


def test_max_gradient_goes_to_every_tie():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])
    g = np.array([10.0, 20.0])
    check_symbolic_backward(sym.max(sym.var("x"), axis=1), {"x": x}, [g],
                            {"x": np.array([[0, 10, 10], [20, 0, 20.0]])})
    check_symbolic_backward(sym.min(sym.var("x"), axis=1), {"x": x}, [g],
                            {"x": np.array([[10, 0, 0], [0, 20, 0.0]])})


def test_mean_and_prod_backward_values(rng):
    x = _distinct((2, 3, 4), rng)
    g = rng.normal(size=(2, 4))
    check_symbolic_backward(sym.mean(sym.var("x"), axis=1), {"x": x}, [g],
                            {"x": np.repeat(g[:, None, :] / 3, 3, axis=1)}, rtol=1e-12)
    p = x.prod(axis=1, keepdims=True)
    check_symbolic_backward(sym.prod(sym.var("x"), axis=1), {"x": x}, [g],
                            {"x": g[:, None, :] * p / x}, rtol=1e-12)


@pytest.mark.parametrize("device", [cpu(), pytest.param(gpu(), marks=pytest.mark.cuda)], ids=["cpu", "gpu"])
def test_reduce_req_add_and_null(device, rng):
    x = rng.normal(size=(2, 3, 4))
    old = rng.normal(size=(2, 4))

    def run(opname, attrs, inputs, out, req):
        op = get_op(opname)
        parsed, _ = op.parse_attrs(attrs)
        dev_out = device.from_numpy(out)
        run_op(op, parsed, [device.from_numpy(a) for a in inputs], [out.shape], [out.dtype], device,
               outputs=[dev_out], req=[req])
        return nbdl.Device.to_numpy(dev_out)

    np.testing.assert_allclose(run("sum", {"axis": 1}, [x], old.copy(), REQ_ADD), old + x.sum(1), rtol=1e-12)
    np.testing.assert_allclose(run("max", {"axis": 1}, [x], old.copy(), REQ_ADD), old + x.max(1), rtol=1e-12)
    np.testing.assert_array_equal(run("mean", {"axis": 1}, [x], old.copy(), REQ_NULL), old)
    dx_old = rng.normal(size=x.shape)
    got = run("_backward_sum", {"axis": 1}, [old, x], dx_old.copy(), REQ_ADD)
    np.testing.assert_allclose(got, dx_old + old[:, None, :], rtol=1e-12)
    y = x.max(1)
    got = run("_backward_max", {"axis": 1}, [old, x, y], dx_old.copy(), REQ_ADD)
    np.testing.assert_allclose(got, dx_old + old[:, None, :] * (x == y[:, None, :]), rtol=1e-12)
    got = run("broadcast_axis", {"axis": 1, "size": 3}, [old[:, None, :]], dx_old.copy(), REQ_ADD)
    np.testing.assert_allclose(got, dx_old + old[:, None, :], rtol=1e-12)
    small_old = rng.normal(size=(2, 1, 4))
    got = run("_broadcast_backward", {}, [x, small_old], small_old.copy(), REQ_ADD)
    np.testing.assert_allclose(got, small_old + x.sum(1, keepdims=True), rtol=1e-12)


# ---------------------------------------------------------------- argmax / argmin

@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_arg_forward(op, dtype, rng):
    x = rng.normal(size=(2, 3, 4)).astype(dtype)
    ref = getattr(np, op)
    for axis in (None, 0, 1, 2, -1):
        for keepdims in (False, True):
            s = getattr(sym, op)(sym.var("x"), axis=axis, keepdims=keepdims)
            if axis is None:
                expect = np.array([ref(x)], dtype).reshape((1,) * 3 if keepdims else (1,))
            else:
                expect = np.expand_dims(ref(x, axis=axis), axis) if keepdims else ref(x, axis=axis)
            out = check_symbolic_forward(s, {"x": x}, [expect.astype(dtype)], rtol=0, atol=0)
            assert out[0].dtype == dtype


def test_arg_ties_nan_and_small_shapes():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 5.0, np.nan, 9.0]], np.float32)
    check_symbolic_forward(sym.argmax(sym.var("x"), axis=1), {"x": x}, [np.array([1.0, 0.0])])
    check_symbolic_forward(sym.argmin(sym.var("x"), axis=1), {"x": x}, [np.array([3.0, 0.0])])
    check_symbolic_forward(sym.argmax(sym.var("x"), axis=0), {"x": x}, [np.array([1.0, 1, 1, 1])])
    check_symbolic_forward(sym.argmax(sym.var("x"), axis=0), {"x": np.ones((1,))}, [np.zeros(1)])
    check_symbolic_forward(sym.argmin(sym.var("x"), axis=1), {"x": np.ones((0, 2))}, [np.zeros((0,))])
    with pytest.raises(nbdl.ShapeError, match="empty"), nbdl.np_shape(True):   # 0 is a size
        sym.argmax(sym.var("x"), axis=1).infer_shape(x=(2, 0))
    with pytest.raises(nbdl.ShapeError, match="out of range"):
        sym.argmax(sym.var("x"), axis=2).infer_shape(x=(2, 3))


def test_arg_has_no_gradient():
    s = sym.argmax(sym.var("x"), axis=0)
    node = s._outputs[0].node
    assert node.op.gradient(node, [node.output(0)]) == [None]


# ---------------------------------------------------------------- broadcast_to / broadcast_axis

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ishape,target,expect_shape", [((1, 3, 1), (2, 0, 4), (2, 3, 4)),
                                                        ((2, 1), (2, 5), (2, 5)), ((1,), (3,), (3,)),
                                                        ((3,), (3,), (3,)), ((1, 1), (0, 0), (1, 1)),
                                                        ((2, 1), (2, 0), (2, 1)), ((1, 3), (4, 3), (4, 3)),
                                                        ((1, 2, 1, 3), (4, 2, 5, 3), (4, 2, 5, 3)),
                                                        ((2, 1, 3, 1), (2, 4, 3, 5), (2, 4, 3, 5))])
def test_broadcast_to_forward(dtype, ishape, target, expect_shape, rng):
    x = rng.normal(size=ishape).astype(dtype)
    s = sym.broadcast_to(sym.var("x"), shape=target)
    check_symbolic_forward(s, {"x": x}, [np.broadcast_to(x, expect_shape)], rtol=0, atol=0)


def test_broadcast_to_empty(rng):
    x = rng.normal(size=(1, 3))
    check_symbolic_forward(sym.broadcast_to(sym.var("x"), shape=(0, 3)), {"x": x}, [x])
    x = rng.normal(size=(0, 1))
    check_symbolic_forward(sym.broadcast_to(sym.var("x"), shape=(0, 4)), {"x": x}, [np.zeros((0, 4))])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_broadcast_axis_forward(dtype, rng):
    x = rng.normal(size=(1, 3, 1)).astype(dtype)
    for axis, size, shape in [((0, 2), (2, 4), (2, 3, 4)), (-1, 5, (1, 3, 5)), (0, 1, (1, 3, 1)),
                              ((), (), (1, 3, 1))]:
        for name in ("broadcast_axis", "broadcast_axes"):
            s = getattr(sym, name)(sym.var("x"), axis=axis, size=size)
            check_symbolic_forward(s, {"x": x}, [np.broadcast_to(x, shape)], rtol=0, atol=0)


def test_broadcast_numeric_gradient(rng):
    x = rng.normal(size=(1, 3, 1))
    check_numeric_gradient(sym.broadcast_to(sym.var("x"), shape=(2, 3, 4)), {"x": x})
    check_numeric_gradient(sym.broadcast_axis(sym.var("x"), axis=(0, 2), size=(2, 2)), {"x": x})
    check_numeric_gradient(sym.broadcast_axis(sym.var("x"), axis=2, size=3),
                           {"x": rng.normal(size=(2, 3, 1))})


def test_broadcast_errors():
    with pytest.raises(nbdl.ShapeError) as e:
        sym.broadcast_to(sym.var("x"), shape=(4, 3)).infer_shape(x=(2, 3))
    assert "broadcast_to" in str(e.value) and "(2, 3)" in str(e.value) and "(4, 3)" in str(e.value)
    with pytest.raises(nbdl.ShapeError, match="ranks"):
        sym.broadcast_to(sym.var("x"), shape=(2, 3, 4)).infer_shape(x=(3, 4))
    with pytest.raises(nbdl.ShapeError, match="size-1"):
        sym.broadcast_axis(sym.var("x"), axis=0, size=4).infer_shape(x=(2, 3))
    with pytest.raises(nbdl.ShapeError, match="same length"):
        sym.broadcast_axis(sym.var("x"), axis=(0, 1), size=4).infer_shape(x=(1, 1))
    with pytest.raises(nbdl.AttrError):
        sym.broadcast_to(sym.var("x"), shape="big")


# ---------------------------------------------------------------- cpu vs cuda (simulator)

@pytest.mark.cuda
@pytest.mark.parametrize("op", list(REFS))
def test_reduce_cuda_matches_cpu(op, rng):
    x = _distinct((2, 3, 2), rng).astype(np.float32)
    for axis, keepdims in ((None, False), (1, True), ((0, 2), False), (-1, False)):
        s = getattr(sym, op)(sym.var("x"), axis=axis, keepdims=keepdims)
        check_consistency(s, {"x": x}, rtol=1e-5, atol=1e-6)


@pytest.mark.cuda
def test_arg_and_broadcast_cuda_match_cpu(rng):
    x = rng.normal(size=(2, 3, 2))
    for op in ("argmax", "argmin"):
        for axis in (None, 1):
            check_consistency(getattr(sym, op)(sym.var("x"), axis=axis), {"x": x}, grad=False)
    y = rng.normal(size=(2, 1, 3))
    check_consistency(sym.broadcast_to(sym.var("x"), shape=(2, 2, 3)), {"x": y})
    check_consistency(sym.broadcast_axis(sym.var("x"), axis=(1,), size=(2,)), {"x": y})


@pytest.mark.parametrize("op", ["sum", "mean", "prod", "max", "min"])
def test_integer_reductions_as_mxnet(op):
    # accumulated exactly, cast once: a mean truncates toward zero
    x = np.arange(-7, 17).reshape(4, 6).astype(np.int32)
    s = getattr(sym, op)(sym.var("x"), axis=1)
    ref = np.trunc(x.mean(axis=1)) if op == "mean" else getattr(np, op)(x.astype(np.int64), axis=1)
    out = check_symbolic_forward(s, {"x": x}, [ref.astype(np.int32)])[0]
    assert out.dtype == np.int32
# ---------------------------------------------------------------- nansum, nanprod

def _with_nans(rng):
    x = rng.uniform(0.5, 1.5, (2, 3, 4))
    x[0, 1, 2] = np.nan
    x[1, :, 3] = np.nan       # a whole reduced column of NaN: sum 0, product 1
    return x


@pytest.mark.cuda
@pytest.mark.parametrize("op,ref", [("nansum", np.nansum), ("nanprod", np.nanprod)])
@pytest.mark.parametrize("axis,keepdims,exclude", [(None, False, False), (1, False, False),
                                                   ((0, 2), True, False), (1, False, True)])
def test_nan_reductions(op, ref, axis, keepdims, exclude, rng):
    x = _with_nans(rng)
    axes = (tuple(range(3)) if axis is None else (axis,) if isinstance(axis, int) else axis)
    if exclude:
        axes = tuple(i for i in range(3) if i not in axes)
    want = np.asarray(ref(x, axis=axes, keepdims=keepdims)).reshape(
        reduce_ref("sum", np.zeros(x.shape), axis, keepdims, exclude).shape)
    y = getattr(sym, op)(sym.var("x"), axis=axis, keepdims=keepdims, exclude=exclude)
    check_symbolic_forward(y, {"x": x}, [want], rtol=1e-12, atol=1e-12)
    g = rng.normal(size=want.shape)
    gb = np.broadcast_to(g.reshape(np.asarray(ref(x, axis=axes, keepdims=True)).shape), x.shape)
    if op == "nansum":
        grad = np.where(np.isnan(x), 0, gb)
    else:
        out_b = np.asarray(ref(x, axis=axes, keepdims=True))
        grad = np.where(np.isnan(x), 0, gb * out_b / x)
    check_symbolic_backward(y, {"x": x}, [g], {"x": grad}, rtol=1e-10, atol=1e-12)
    check_numeric_gradient(y, {"x": np.nan_to_num(x, nan=1.0)})
    check_consistency(y, {"x": x.astype(np.float32)})


def test_reduce_kernel_choice():
    """sum and mean run the sum's own kernel (a first call compiles only
    that loop); the other reductions share the kernel of the seven others."""
    from nbdl.kernels.cpu import reduce as kr
    from nbdl.ops.reduce import OP_CODES, OP_MAX, OP_SUM
    for tail in (True, False):
        assert kr.reduce_kernel(tail, OP_SUM).py_func.__name__.endswith("_sum")
        assert kr.reduce_kernel(tail, OP_MAX) is kr.reduce_kernel(tail, OP_CODES["prod"])
        assert not kr.reduce_kernel(tail, OP_MAX).py_func.__name__.endswith("_sum")
