"""``_contrib_SyncBatchNorm`` in one process (its cross-rank reduce is then a
no-op): numpy references written here, numeric gradients, CPU vs the CUDA
simulator, MXNet's attributes and errors.  Across ranks it is checked by
tests/distributed/test_mpi_jobs.py (the ``syncbn`` job)."""
import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward, run_symbol)


def sbn(**kw):
    kw.setdefault("key", "sbn0")
    return nbdl.sym.contrib.SyncBatchNorm(nbdl.sym.var("x"), nbdl.sym.var("g"),
                                          nbdl.sym.var("b"), nbdl.sym.var("mm"),
                                          nbdl.sym.var("mv"), **kw)


def inputs(rng, shape, dtype):
    C = shape[1]
    loc = {"x": (rng.uniform(-2, 2, shape) + 3).astype(dtype),
           "g": rng.uniform(0.5, 1.5, C).astype(dtype), "b": rng.normal(size=C).astype(dtype)}
    aux = {"mm": rng.normal(size=C).astype(dtype), "mv": rng.uniform(0.5, 2, C).astype(dtype)}
    return loc, aux


def reference(x, g, b, mm, mv, train, eps=1e-3, momentum=0.9, fix_gamma=True):
    """Output, mean, biased variance and new moving statistics, per channel by loops."""
    C = x.shape[1]
    xs = np.moveaxis(x.astype(np.float64), 1, 0).reshape(C, -1)
    if train:
        mean = np.array([sum(r) / len(r) for r in xs])
        var = np.array([sum((v - m) ** 2 for v in r) / len(r) for r, m in zip(xs, mean)])
        new_mm, new_mv = mm * momentum + mean * (1 - momentum), mv * momentum + var * (1 - momentum)
    else:
        mean, var, new_mm, new_mv = mm.astype(np.float64), mv.astype(np.float64), mm, mv
    shp = [1, C] + [1] * (x.ndim - 2)
    gamma = np.ones(C) if fix_gamma else g
    out = (x - mean.reshape(shp)) / np.sqrt(var.reshape(shp) + eps) * gamma.reshape(shp) \
        + b.reshape(shp)
    return out, mean, var, new_mm, new_mv


def reference_grad(og, x, g, mean, var, eps=1e-3, fix_gamma=False):
    C = x.shape[1]
    shp = [1, C] + [1] * (x.ndim - 2)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    m = x.size // C
    std = np.sqrt(var.reshape(shp) + eps)
    xhat = (x - mean.reshape(shp)) / std
    gamma = np.ones(C) if fix_gamma else g
    dgamma = np.zeros(C) if fix_gamma else (og * xhat).sum(axis=axes)
    dbeta = og.sum(axis=axes)
    dx = gamma.reshape(shp) / std * (og - og.sum(axis=axes, keepdims=True) / m
                                     - xhat * (og * xhat).sum(axis=axes, keepdims=True) / m)
    return dx, dgamma, dbeta


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-4)


SHAPES = [(4, 3), (2, 3, 4), (2, 3, 2, 3), (1, 1), (3, 2, 1, 1, 2)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("train", [True, False])
def test_forward_and_moving_statistics(dtype, shape, train, rng):
    loc, aux = inputs(rng, shape, dtype)
    out, mean, var, new_mm, new_mv = reference(loc["x"], loc["g"], loc["b"], aux["mm"],
                                               aux["mv"], train, fix_gamma=False)
    outs, _, aux_after = run_symbol(sbn(fix_gamma=False, output_mean_var=True), loc, aux,
                                   is_train=train)
    for got, want in zip(outs, (out, mean, var)):
        np.testing.assert_allclose(got, want, **tol(dtype))
    np.testing.assert_allclose(aux_after["mm"], new_mm, **tol(dtype))
    np.testing.assert_allclose(aux_after["mv"], new_mv, **tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES[:3])
def test_backward_formula(dtype, shape, rng):
    loc, aux = inputs(rng, shape, dtype)
    _, mean, var, _, _ = reference(loc["x"], loc["g"], loc["b"], aux["mm"], aux["mv"], True)
    og = rng.normal(size=shape).astype(dtype)
    dx, dg, db = reference_grad(og, loc["x"], loc["g"], mean, var)
    check_symbolic_backward(sbn(fix_gamma=False), loc, [og], {"x": dx, "g": dg, "b": db},
                            aux_states=aux, **tol(dtype))


def test_equals_batch_norm(rng):
    loc, aux = inputs(rng, (3, 4, 2, 2), np.float32)
    bn = nbdl.sym.BatchNorm(nbdl.sym.var("x"), nbdl.sym.var("g"), nbdl.sym.var("b"),
                            nbdl.sym.var("mm"), nbdl.sym.var("mv"), fix_gamma=False, eps=1e-5)
    want, _, want_aux = run_symbol(bn, loc, dict(aux), is_train=True)
    got, _, got_aux = run_symbol(sbn(fix_gamma=False, eps=1e-5), loc, dict(aux), is_train=True)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    for k in ("mm", "mv"):
        np.testing.assert_allclose(got_aux[k], want_aux[k], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kw", [dict(fix_gamma=False), dict(fix_gamma=True, eps=0.1),
                                dict(fix_gamma=False, use_global_stats=True)])
def test_numeric_gradient(kw, rng):
    loc, aux = inputs(rng, (3, 2, 2), np.float64)
    check_numeric_gradient(sbn(**kw), loc, aux_states=aux)


def test_inference_uses_moving_statistics(rng):
    loc, aux = inputs(rng, (2, 3, 2), np.float32)
    out = reference(loc["x"], loc["g"], loc["b"], aux["mm"], aux["mv"], False)[0]
    check_symbolic_forward(sbn(), loc, [out], aux_states=aux, rtol=1e-5, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.parametrize("kw", [dict(fix_gamma=False), dict(use_global_stats=True)])
def test_cuda_matches_cpu(kw, rng):
    loc, aux = inputs(rng, (2, 3, 2), np.float32)
    check_consistency(sbn(output_mean_var=True, **kw), loc, aux_states=aux,
                      devices=[cpu(), gpu()], rtol=1e-5, atol=1e-5)


def test_mxnet_attributes_and_shapes():
    s = nbdl.sym.contrib.SyncBatchNorm(nbdl.sym.var("data"), name="sbn", eps="1e-5",
                                       momentum="0.9", fix_gamma="False", ndev="4", key="sbn_")
    assert s.list_outputs() == ["sbn_output"]
    assert s.list_arguments() == ["data", "sbn_gamma", "sbn_beta"]
    assert s.list_auxiliary_states() == ["sbn_moving_mean", "sbn_moving_var"]
    args, outs, auxs = s.infer_shape(data=(2, 5, 3))
    assert args[1:] == [(5,), (5,)] and auxs == [(5,), (5,)] and outs == [(2, 5, 3)]
    again = nbdl.sym.load_json(s.tojson())
    assert again.attr_dict()["sbn"]["ndev"] == "4"


def test_errors():
    with pytest.raises(nbdl.ShapeError, match=r"_contrib_SyncBatchNorm.*moving_var.*\(3,\).*\(4,\)"):
        sbn().infer_shape(x=(2, 4), mv=(3,))
    with pytest.raises(nbdl.ShapeError, match=r"_contrib_SyncBatchNorm.*at least 2 dim"):
        sbn().infer_shape(x=(4,))
    with pytest.raises(nbdl.AttrError, match="eps"):
        sbn(eps=-1.0)
    with pytest.raises(nbdl.AttrError, match="key"):
        nbdl.sym.contrib.SyncBatchNorm(nbdl.sym.var("x"))
    with pytest.raises(nbdl.DTypeError, match="_contrib_SyncBatchNorm"):
        run_symbol(sbn(), {"x": np.ones((2, 3), np.int32), "g": np.ones(3, np.int32),
                           "b": np.ones(3, np.int32)},
                   {"mm": np.ones(3, np.int32), "mv": np.ones(3, np.int32)}, is_train=True)
