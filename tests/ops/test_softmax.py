import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.registry import REQ_ADD, REQ_WRITE, Call, get_op
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward)


def np_softmax(x, axis=-1, temperature=None):
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x.copy()
    t = 1.0 if temperature is None else temperature
    z = x / t
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1, temperature=None):
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x.copy()
    t = 1.0 if temperature is None else temperature
    z = x / t
    m = z.max(axis=axis, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=axis, keepdims=True))


def np_softmax_grad(og, y, axis, temperature=None):
    t = 1.0 if temperature is None else temperature
    return y * (og - (og * y).sum(axis=axis, keepdims=True)) / t


def np_log_softmax_grad(og, y, axis, temperature=None):
    t = 1.0 if temperature is None else temperature
    return (og - np.exp(y) * og.sum(axis=axis, keepdims=True)) / t


OPS = {"softmax": (np_softmax, np_softmax_grad),
       "log_softmax": (np_log_softmax, np_log_softmax_grad)}


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((3, 4), -1), ((3, 4), 0), ((1,), 0), ((2, 1, 3), 1),
                                        ((2, 3, 4), 1), ((2, 3, 4), -3), ((0, 3), -1),
                                        ((2, 0), -1), ((2, 0, 3), 1)])
def test_forward_grid(op, dtype, shape, axis, rng):
    x = rng.uniform(-3, 3, shape).astype(dtype)
    y = getattr(nbdl.sym, op)(nbdl.sym.var("x"), axis=axis)
    outs = check_symbolic_forward(y, {"x": x}, [OPS[op][0](x, axis)], **tol(dtype))
    assert outs[0].dtype == dtype


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_formula(op, dtype, rng):
    x = rng.uniform(-2, 2, (3, 4, 2)).astype(dtype)
    og = rng.normal(size=x.shape).astype(dtype)
    y = getattr(nbdl.sym, op)(nbdl.sym.var("x"), axis=1, temperature=0.7)
    ref, ref_grad = OPS[op]
    out = ref(x, 1, 0.7)
    check_symbolic_backward(y, {"x": x}, [og], {"x": ref_grad(og, out, 1, 0.7)}, **tol(dtype))


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis,temperature", [(-1, None), (0, None), (1, 2.5), (1, -0.5)])
def test_numeric_gradient(op, axis, temperature, rng):
    x = rng.uniform(-1, 1, (2, 3, 2))
    y = getattr(nbdl.sym, op)(nbdl.sym.var("x"), axis=axis, temperature=temperature)
    check_numeric_gradient(y, {"x": x})


@pytest.mark.parametrize("temperature", [None, 3.0])
def test_temperature_forward(temperature, rng):
    x = rng.uniform(-2, 2, (4, 5))
    y = nbdl.sym.softmax(nbdl.sym.var("x"), temperature=temperature)
    check_symbolic_forward(y, {"x": x}, [np_softmax(x, -1, temperature)])


def test_numerically_stable():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]], dtype=np.float32)
    for op in ("softmax", "log_softmax"):
        y = getattr(nbdl.sym, op)(nbdl.sym.var("x"))
        out = check_symbolic_forward(y, {"x": x}, [OPS[op][0](x)], rtol=1e-5, atol=1e-5)
        assert np.all(np.isfinite(out[0]))


def test_shape_and_type_inference():
    y = nbdl.sym.log_softmax(nbdl.sym.var("x"), axis=0)
    args, outs, _ = y.infer_shape(x=(2, 5))
    assert args == [(2, 5)] and outs == [(2, 5)]
    _, touts, _ = y.infer_type(x=np.float64)
    assert touts == [np.float64]


def _prepare(opname, attrs, shapes, dtype, req):
    op = get_op(opname)
    parsed, _ = op.parse_attrs(attrs)
    n_out = 1
    call = Call(op, parsed, list(shapes), [np.dtype(dtype)] * len(shapes),
                [shapes[0]] * n_out, [np.dtype(dtype)] * n_out, req=[req])
    return op.prepare(call)


def _run(launch, *arrays):
    views = launch.views or [None] * len(arrays)
    args = [a if v is None else a.reshape(v) for a, v in zip(arrays, views)]
    launch.fn(*args, *launch.scalars)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_inplace_forward(op, axis, rng):
    """The declared (0, 0) inplace pair: output buffer == input buffer."""
    x = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
    buf = x.copy()
    _run(_prepare(op, {"axis": axis}, [x.shape], np.float32, REQ_WRITE), buf, buf)
    assert_almost_equal(buf, OPS[op][0](x, axis), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_backward_inplace_and_add(op, rng):
    x = rng.uniform(-2, 2, (3, 4))
    out = OPS[op][0](x)
    og = rng.normal(size=x.shape)
    want = OPS[op][1](og, out, -1)
    # inplace: the gradient overwrites out_grad
    buf = og.copy()
    _run(_prepare(f"_backward_{op}", {}, [x.shape, x.shape], np.float64, REQ_WRITE), buf, out, buf)
    assert_almost_equal(buf, want)
    # req add accumulates
    acc = np.ones_like(x)
    _run(_prepare(f"_backward_{op}", {}, [x.shape, x.shape], np.float64, REQ_ADD), og, out, acc)
    assert_almost_equal(acc, want + 1)


def test_parallel_variant(monkeypatch, rng):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    x = rng.uniform(-2, 2, (5, 3, 2)).astype(np.float32)
    og = rng.normal(size=x.shape).astype(np.float32)
    y = nbdl.sym.softmax(nbdl.sym.var("x"), axis=1)
    out = np_softmax(x, 1)
    check_symbolic_forward(y, {"x": x}, [out], rtol=1e-5, atol=1e-6)
    check_symbolic_backward(y, {"x": x}, [og], {"x": np_softmax_grad(og, out, 1)},
                            rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis,temperature", [(1, None), (-1, 2.0)])
def test_cuda_matches_cpu(op, axis, temperature, rng):
    y = getattr(nbdl.sym, op)(nbdl.sym.var("x"), axis=axis, temperature=temperature)
    check_consistency(y, {"x": rng.uniform(-2, 2, (2, 3, 2)).astype(np.float32)},
                      devices=[cpu(), gpu()], rtol=1e-5, atol=1e-6)


@pytest.mark.cuda
def test_cuda_empty_and_single(rng):
    for shape in [(0, 3), (1,)]:
        y = nbdl.sym.softmax(nbdl.sym.var("x"))
        check_consistency(y, {"x": rng.uniform(size=shape).astype(np.float32)}, grad=False)


def test_axis_out_of_range():
    y = nbdl.sym.softmax(nbdl.sym.var("x"), axis=2)
    with pytest.raises(nbdl.ShapeError, match=r"softmax.*axis=2.*\(3, 4\)"):
        y.infer_shape(x=(3, 4))


@pytest.mark.parametrize("attrs,match", [
    ({"temperature": 0.0}, "temperature"),
    ({"dtype": "int8"}, "dtype"),
    ({"axis": "last"}, "axis"),
    ({"bogus": 1}, "bogus"),
])
def test_bad_attrs(attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        nbdl.sym.softmax(nbdl.sym.var("x"), **attrs)


def test_integer_input_rejected():
    y = nbdl.sym.softmax(nbdl.sym.var("x"))
    with pytest.raises(nbdl.DTypeError, match="softmax"):
        check_symbolic_forward(y, {"x": np.arange(6).reshape(2, 3)}, [np.zeros((2, 3))])


def test_dtype_attr_accepted(rng):
    x = rng.uniform(size=(2, 3)).astype(np.float32)
    y = nbdl.sym.softmax(nbdl.sym.var("x"), dtype="float32")
    check_symbolic_forward(y, {"x": x}, [np_softmax(x)], rtol=1e-5, atol=1e-6)


def np_masked(x, length, log, axis=1):
    """Each row over its first ``length`` entries along ``axis``, 0 elsewhere."""
    xm = np.moveaxis(x, axis, -1)
    out = np.zeros_like(xm, dtype=np.float64)
    for idx in np.ndindex(*length.shape):
        n = int(length[idx])
        if n:
            row = np_softmax(xm[idx][:n])
            out[idx][:n] = np.log(row) if log else row
    return np.moveaxis(out, -1, axis)


@pytest.mark.cuda
@pytest.mark.parametrize("op,log", [("softmax", False), ("log_softmax", True)])
@pytest.mark.parametrize("axis", [1, -1])
def test_use_length_masks_each_row(op, log, axis, rng):
    x = rng.uniform(-2, 2, (3, 5, 4))
    ax = axis % 3
    lshape = tuple(d for i, d in enumerate(x.shape) if i != ax)
    length = rng.randint(0, x.shape[ax] + 1, lshape).astype(np.int32)
    y = getattr(nbdl.sym, op)(nbdl.sym.var("data"), nbdl.sym.var("length"), axis=axis,
                              use_length=True)
    assert y.list_arguments() == ["data", "length"]
    assert y.infer_shape(data=x.shape)[0] == [x.shape, lshape]
    want = np_masked(x, length, log, ax)
    check_symbolic_forward(y, {"data": x, "length": length}, [want])
    check_numeric_gradient(y, {"data": x, "length": length}, grad_nodes=["data"])
    og = rng.normal(size=x.shape)
    check_symbolic_backward(y, {"data": x, "length": length}, [og],
                            {"data": _masked_grad(want, og, length, log, ax)})
    check_consistency(y, {"data": x.astype(np.float32), "length": length})


def _masked_grad(out, og, length, log, axis):
    o, g = np.moveaxis(out, axis, -1), np.moveaxis(og, axis, -1)
    grad = np.zeros_like(o)
    for idx in np.ndindex(*length.shape):
        n = int(length[idx])
        if log:
            grad[idx][:n] = g[idx][:n] - np.exp(o[idx][:n]) * g[idx][:n].sum()
        else:
            grad[idx][:n] = o[idx][:n] * (g[idx][:n] - (g[idx][:n] * o[idx][:n]).sum())
    return np.moveaxis(grad, -1, axis)


def test_use_length_shape_errors():
    y = nbdl.sym.softmax(nbdl.sym.var("data"), nbdl.sym.var("length"), axis=1, use_length=True)
    with pytest.raises(nbdl.ShapeError, match=r"softmax: length has shape \(3, 3\), expected "
                                              r"\(3, 4\)"):
        y.infer_shape(data=(3, 5, 4), length=(3, 3))
