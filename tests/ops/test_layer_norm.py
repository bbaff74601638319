import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE, Call, get_op
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward)


def param_shape(shape, axis):
    return [1 if i != axis % len(shape) else d for i, d in enumerate(shape)]


def np_layer_norm(x, gamma, beta, axis=-1, eps=1e-5):
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axis, keepdims=True)
    std = np.sqrt(x64.var(axis=axis, keepdims=True) + eps)
    shp = param_shape(x.shape, axis)
    out = (x64 - mean) / std * gamma.reshape(shp) + beta.reshape(shp)
    return out, mean, std


def np_layer_norm_grad(og, x, gamma, axis=-1, eps=1e-5):
    """Gradients written from the chain rule on xhat (independent of the kernels' algebra)."""
    x64, og64 = x.astype(np.float64), og.astype(np.float64)
    n = x.shape[axis]
    shp = param_shape(x.shape, axis)
    mean = x64.mean(axis=axis, keepdims=True)
    std = np.sqrt(x64.var(axis=axis, keepdims=True) + eps)
    xhat = (x64 - mean) / std
    others = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    dgamma = (og64 * xhat).sum(axis=others)
    dbeta = og64.sum(axis=others)
    dxhat = og64 * gamma.reshape(shp)
    dvar = (dxhat * (x64 - mean) * -0.5 * std ** -3).sum(axis=axis, keepdims=True)
    dmean = (-dxhat / std).sum(axis=axis, keepdims=True)
    dx = dxhat / std + dvar * 2 * (x64 - mean) / n + dmean / n
    return dx, dgamma, dbeta


def ln(**kw):
    return nbdl.sym.LayerNorm(nbdl.sym.var("x"), nbdl.sym.var("g"), nbdl.sym.var("b"), **kw)


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-4)


def inputs(rng, shape, axis, dtype):
    n = shape[axis]
    return {"x": rng.uniform(-2, 2, shape).astype(dtype),
            "g": rng.uniform(0.5, 1.5, (n,)).astype(dtype),
            "b": rng.normal(size=(n,)).astype(dtype)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((1,), 0),
                                        ((2, 1), -1), ((5, 2, 1), 0), ((0, 3), -1),
                                        ((2, 0, 3), -1)])
def test_forward_grid(dtype, shape, axis, rng):
    loc = inputs(rng, shape, axis, dtype)
    out, mean, std = np_layer_norm(loc["x"], loc["g"], loc["b"], axis)
    outs = check_symbolic_forward(ln(axis=axis, output_mean_var=True), loc, [out, mean, std],
                                  **tol(dtype))
    assert all(o.dtype == dtype for o in outs)
    single = check_symbolic_forward(ln(axis=axis), loc, [out], **tol(dtype))
    assert len(single) == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((2, 3, 4), 1), ((4, 3), 0)])
def test_backward_formula(dtype, shape, axis, rng):
    loc = inputs(rng, shape, axis, dtype)
    og = rng.normal(size=shape).astype(dtype)
    dx, dg, db = np_layer_norm_grad(og, loc["x"], loc["g"], axis)
    check_symbolic_backward(ln(axis=axis), loc, [og], {"x": dx, "g": dg, "b": db}, **tol(dtype))


@pytest.mark.parametrize("shape,axis,eps", [((2, 4), -1, 1e-5), ((3, 2, 2), 1, 0.1),
                                            ((3, 2), 0, 1e-3)])
def test_numeric_gradient(shape, axis, eps, rng):
    check_numeric_gradient(ln(axis=axis, eps=eps), inputs(rng, shape, axis, np.float64))


def test_eps_and_constant_rows(rng):
    x = np.full((2, 3), 7.0)
    loc = {"x": x, "g": np.ones(3), "b": np.arange(3.0)}
    out, _, std = np_layer_norm(x, loc["g"], loc["b"], eps=0.25)
    check_symbolic_forward(ln(eps=0.25, output_mean_var=True), loc,
                           [out, np.full((2, 1), 7.0), std])
    assert np.allclose(std, 0.5)


def test_inference():
    args, outs, _ = ln(axis=1, output_mean_var=True).infer_shape(x=(2, 5, 3))
    assert args == [(2, 5, 3), (5,), (5,)] and outs == [(2, 5, 3), (2, 1, 3), (2, 1, 3)]
    assert len(ln().list_outputs()) == 1
    assert len(ln(output_mean_var=True).list_outputs()) == 3
    _, touts, _ = ln(output_mean_var=True).infer_type(x=np.float64)
    assert touts == [np.float64] * 3


def test_default_variable_names():
    y = nbdl.sym.LayerNorm(nbdl.sym.var("data"), name="ln1")
    assert y.list_arguments() == ["data", "ln1_gamma", "ln1_beta"]


def _call(opname, shapes, n_out, req, dtype, attrs=None, device=None):
    op = get_op(opname)
    parsed, _ = op.parse_attrs(attrs or {})
    ins, outs = op.infer_shape(parsed, list(shapes), [None] * n_out)
    return op, Call(op, parsed, ins, [np.dtype(dtype)] * len(ins), outs,
                    [np.dtype(dtype)] * n_out, req=list(req), device=device)


def _run(launch, *arrays):
    views = launch.views or [None] * len(arrays)
    launch.fn(*[a if v is None else a.reshape(v) for a, v in zip(arrays, views)], *launch.scalars)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
def test_req_null_and_add(device, rng):
    """Null outputs are left untouched (the planner gives them no storage of
    their own); add accumulates, per output."""
    dev = cpu() if device == "cpu" else gpu()
    x = rng.normal(size=(3, 4))
    g, b = rng.uniform(0.5, 1.5, 4), rng.normal(size=4)
    out, mean, std = np_layer_norm(x, g, b)
    op, call = _call("LayerNorm", [(3, 4), None, None], 3, [REQ_ADD, REQ_NULL, REQ_WRITE],
                     np.float64, device=dev)
    bufs = [np.ones((3, 4)), np.full((3, 1), -9.0), np.zeros((3, 1))]
    arrays = [dev.from_numpy(a) for a in (x, g, b)] + [dev.from_numpy(a) for a in bufs]
    _run(op.prepare(call), *arrays)
    host = [dev.to_numpy(a) for a in arrays[3:]]
    assert_almost_equal(host[0], out + 1)
    assert np.all(host[1] == -9.0)
    assert_almost_equal(host[2], std)

    og = rng.normal(size=(3, 4))
    dx, dg, db = np_layer_norm_grad(og, x, g)
    op, call = _call("_backward_LayerNorm", [(3, 4), (3, 4), (4,), (3, 1), (3, 1)], 3,
                     [REQ_NULL, REQ_ADD, REQ_WRITE], np.float64, device=dev)
    bufs = [np.full((3, 4), -9.0), np.ones(4), np.zeros(4)]
    arrays = [dev.from_numpy(a) for a in (og, x, g, mean, std)] + [dev.from_numpy(a) for a in bufs]
    _run(op.prepare(call), *arrays)
    host = [dev.to_numpy(a) for a in arrays[5:]]
    assert np.all(host[0] == -9.0)
    assert_almost_equal(host[1], dg + 1)
    assert_almost_equal(host[2], db)


def test_parallel_variant(monkeypatch, rng):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    loc = inputs(rng, (4, 3, 5), 1, np.float32)
    og = rng.normal(size=(4, 3, 5)).astype(np.float32)
    out, _, _ = np_layer_norm(loc["x"], loc["g"], loc["b"], 1)
    check_symbolic_forward(ln(axis=1), loc, [out], rtol=1e-4, atol=1e-5)
    dx, dg, db = np_layer_norm_grad(og, loc["x"], loc["g"], 1)
    check_symbolic_backward(ln(axis=1), loc, [og], {"x": dx, "g": dg, "b": db},
                            rtol=1e-4, atol=1e-4)


@pytest.mark.cuda
@pytest.mark.parametrize("shape,axis", [((2, 3), -1), ((2, 3, 2), 1)])
def test_cuda_matches_cpu(shape, axis, rng):
    check_consistency(ln(axis=axis, output_mean_var=True), inputs(rng, shape, axis, np.float32),
                      devices=[cpu(), gpu()], rtol=1e-5, atol=1e-5)


@pytest.mark.cuda
def test_cuda_empty(rng):
    check_consistency(ln(), inputs(rng, (0, 3), -1, np.float32), grad=False)


def test_float32_stays_float32(rng):
    loc = inputs(rng, (2, 3), -1, np.float32)
    outs = check_symbolic_forward(ln(output_mean_var=True), loc,
                                  list(np_layer_norm(loc["x"], loc["g"], loc["b"])),
                                  rtol=1e-4, atol=1e-4)
    assert [o.dtype for o in outs] == [np.float32] * 3


def test_gamma_shape_mismatch():
    with pytest.raises(nbdl.ShapeError, match=r"LayerNorm.*gamma.*\(3,\).*\(4,\)"):
        ln().infer_shape(x=(2, 4), g=(3,))


def test_axis_out_of_range():
    with pytest.raises(nbdl.ShapeError, match=r"LayerNorm.*axis=2.*\(2, 4\)"):
        ln(axis=2).infer_shape(x=(2, 4))


@pytest.mark.parametrize("attrs,match", [({"eps": -1.0}, "eps"), ({"eps": float("nan")}, "eps"),
                                         ({"axis": "last"}, "axis"), ({"bogus": 1}, "bogus")])
def test_bad_attrs(attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        ln(**attrs)


def test_integer_data_rejected():
    with pytest.raises(nbdl.DTypeError, match="LayerNorm"):
        check_symbolic_forward(ln(), {"x": np.ones((2, 3), np.int32), "g": np.ones(3, np.int32),
                                      "b": np.ones(3, np.int32)}, [np.ones((2, 3))])
