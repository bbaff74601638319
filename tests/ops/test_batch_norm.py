import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.testing import (assert_almost_equal, check_consistency, check_numeric_gradient,
                          check_symbolic_backward, check_symbolic_forward, run_symbol)


# -- numpy references with direct loops ------------------------------------------

def np_channel_stats(x, axis):
    """Per-channel mean and biased variance by explicit loops over the channel slices."""
    x = np.moveaxis(x.astype(np.float64), axis, 0)
    C = x.shape[0]
    mean, var = np.zeros(C), np.zeros(C)
    for c in range(C):
        vals = x[c].ravel()
        mean[c] = sum(vals) / len(vals)
        var[c] = sum((v - mean[c]) ** 2 for v in vals) / len(vals)
    return mean, var


def _bshape(x, axis):
    return [x.shape[i] if i == axis % x.ndim else 1 for i in range(x.ndim)]


def np_batch_norm(x, gamma, beta, mm, mv, train, eps=1e-3, momentum=0.9, fix_gamma=True,
                  use_global_stats=False, axis=1):
    if train and not use_global_stats:
        mean, var = np_channel_stats(x, axis)
        new_mm = mm * momentum + mean * (1 - momentum)
        new_mv = mv * momentum + var * (1 - momentum)
    else:
        mean, var, new_mm, new_mv = mm.astype(np.float64), mv.astype(np.float64), mm, mv
    g = np.ones_like(gamma) if fix_gamma else gamma
    shp = _bshape(x, axis)
    out = (x - mean.reshape(shp)) / np.sqrt(var.reshape(shp) + eps) * g.reshape(shp) \
        + beta.reshape(shp)
    return out, mean, var, new_mm, new_mv


def np_batch_norm_grad(og, x, gamma, mean, var, batch, eps=1e-3, fix_gamma=True, axis=1):
    """Chain rule through xhat, mean and var, written term by term."""
    shp = _bshape(x, axis)
    others = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    m = x.size // x.shape[axis]
    mu, v = mean.reshape(shp), var.reshape(shp)
    std = np.sqrt(v + eps)
    xhat = (x - mu) / std
    g = np.ones_like(gamma) if fix_gamma else gamma
    dgamma = np.zeros_like(gamma) if fix_gamma else (og * xhat).sum(axis=others)
    dbeta = og.sum(axis=others)
    dxhat = og * g.reshape(shp)
    if not batch:
        return dxhat / std, dgamma, dbeta
    dvar = (dxhat * (x - mu) * -0.5 * std ** -3).sum(axis=others, keepdims=True)
    dmean = (-dxhat / std).sum(axis=others, keepdims=True)
    dx = dxhat / std + dvar * 2 * (x - mu) / m + dmean / m
    return dx, dgamma, dbeta


def np_group_norm(x, gamma, beta, groups, eps):
    """Per (n, group) statistics by loops; returns out, mean, var of shape (N, G).
    gamma/beta are per channel (C,) or per group (groups,) (MXNet 1.x)."""
    N, C = x.shape[:2]
    if gamma.shape != (C,):
        gamma = np.array([gamma[c // (C // groups)] for c in range(C)])
    if beta.shape != (C,):
        beta = np.array([beta[c // (C // groups)] for c in range(C)])
    xg = x.astype(np.float64).reshape(N, groups, -1)
    mean, var = np.zeros((N, groups)), np.zeros((N, groups))
    for n in range(N):
        for g in range(groups):
            vals = xg[n, g]
            mean[n, g] = vals.sum() / vals.size
            var[n, g] = ((vals - mean[n, g]) ** 2).sum() / vals.size
    xhat = ((xg - mean[..., None]) / np.sqrt(var[..., None] + eps)).reshape(x.shape)
    shp = [1, C] + [1] * (x.ndim - 2)
    return xhat * gamma.reshape(shp) + beta.reshape(shp), mean, var


def bn(**kw):
    return nbdl.sym.BatchNorm(nbdl.sym.var("x"), nbdl.sym.var("g"), nbdl.sym.var("b"),
                              nbdl.sym.var("mm"), nbdl.sym.var("mv"), **kw)


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-4)


def bn_inputs(rng, shape, axis, dtype):
    C = shape[axis]
    loc = {"x": rng.uniform(-2, 2, shape).astype(dtype) + 3,
           "g": rng.uniform(0.5, 1.5, C).astype(dtype), "b": rng.normal(size=C).astype(dtype)}
    aux = {"mm": rng.normal(size=C).astype(dtype), "mv": rng.uniform(0.5, 2, C).astype(dtype)}
    return loc, aux


GRID = [((4, 3), 1), ((2, 3, 4), 1), ((2, 3, 2, 3), 1), ((3, 2, 5), -1), ((5, 2), 0),
        ((1, 1), 1), ((1, 2, 1), 1), ((2, 3, 1, 1, 2), 1)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", GRID)
@pytest.mark.parametrize("train", [True, False])
def test_forward_grid(dtype, shape, axis, train, rng):
    loc, aux = bn_inputs(rng, shape, axis, dtype)
    kw = dict(axis=axis, fix_gamma=False, eps=1e-3, momentum=0.8)
    out, mean, var, mm, mv = np_batch_norm(loc["x"], loc["g"], loc["b"], aux["mm"], aux["mv"],
                                           train, momentum=0.8, fix_gamma=False, axis=axis)
    outs, _, new_aux = run_symbol(bn(output_mean_var=True, **kw), loc, aux, is_train=train)
    # the third output is the inverse std used (MXNet 1.9.1's CPU operator)
    invstd = 1 / np.sqrt(var + 1e-3)
    for got, want in zip(outs + [new_aux["mm"], new_aux["mv"]], [out, mean, invstd, mm, mv]):
        assert got.dtype == dtype
        assert_almost_equal(got, want, **tol(dtype))
    assert len(run_symbol(bn(**kw), loc, aux)[0]) == 1


@pytest.mark.parametrize("kw", [dict(), dict(fix_gamma=False), dict(use_global_stats=True),
                                dict(fix_gamma=False, use_global_stats=True, eps=0.5)])
def test_attr_semantics(kw, rng):
    loc, aux = bn_inputs(rng, (3, 2, 4), 1, np.float64)
    full = dict(eps=1e-3, fix_gamma=True, use_global_stats=False)
    full.update(kw)
    out, mean, var, mm, mv = np_batch_norm(loc["x"], loc["g"], loc["b"], aux["mm"], aux["mv"],
                                           True, **full)
    outs, _, new_aux = run_symbol(bn(output_mean_var=True, **kw), loc, aux, is_train=True)
    invstd = 1 / np.sqrt(var + full["eps"])
    for got, want in zip(outs + [new_aux["mm"], new_aux["mv"]], [out, mean, invstd, mm, mv]):
        assert_almost_equal(got, want)
    og = rng.normal(size=out.shape)
    dx, dg, db = np_batch_norm_grad(og, loc["x"], loc["g"], mean, var,
                                    not full["use_global_stats"], full["eps"], full["fix_gamma"])
    check_symbolic_backward(bn(**kw), loc, [og], {"x": dx, "g": dg, "b": db}, aux_states=aux)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((4, 3), 1), ((2, 3, 4), -1), ((3, 2, 2, 2), 1)])
def test_backward_formula(dtype, shape, axis, rng):
    loc, aux = bn_inputs(rng, shape, axis, dtype)
    _, mean, var, _, _ = np_batch_norm(loc["x"], loc["g"], loc["b"], aux["mm"], aux["mv"], True,
                                       axis=axis)
    og = rng.normal(size=shape).astype(dtype)
    dx, dg, db = np_batch_norm_grad(og, loc["x"], loc["g"], mean, var, True, fix_gamma=False,
                                    axis=axis)
    check_symbolic_backward(bn(axis=axis, fix_gamma=False), loc, [og],
                            {"x": dx, "g": dg, "b": db}, aux_states=aux, **tol(dtype))


@pytest.mark.parametrize("shape,kw", [((3, 2), dict(fix_gamma=False)),
                                      ((2, 3, 2), dict(fix_gamma=False, eps=0.1)),
                                      ((2, 2, 3), dict(axis=-1, fix_gamma=False)),
                                      ((2, 2, 2), dict(fix_gamma=False, use_global_stats=True))])
def test_numeric_gradient(shape, kw, rng):
    loc, aux = bn_inputs(rng, shape, kw.get("axis", 1), np.float64)
    check_numeric_gradient(bn(**kw), loc, aux_states=aux)


def test_executor_train_updates_aux_in_place(rng):
    data = nbdl.sym.var("data")
    net = nbdl.sym.BatchNorm(data, name="bn", momentum=0.5, fix_gamma=False)
    assert net.list_arguments() == ["data", "bn_gamma", "bn_beta"]
    assert net.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    ex = net.simple_bind(nbdl.cpu(), data=(4, 3, 2))
    x = rng.normal(size=(4, 3, 2)).astype(np.float32) * 2 + 1
    ex.arg_dict["data"][:] = x
    ex.arg_dict["bn_gamma"][:] = np.array([1.0, 2.0, 0.5], np.float32)
    ex.arg_dict["bn_beta"][:] = 0
    mm_arr, mv_arr = ex.aux_dict["bn_moving_mean"], ex.aux_dict["bn_moving_var"]
    mm_arr[:] = 0
    mv_arr[:] = 1
    mean, var = np_channel_stats(x, 1)
    ex.forward(is_train=True)
    # the bound aux arrays themselves were updated
    assert_almost_equal(mm_arr.asnumpy(), 0.5 * mean, rtol=1e-5, atol=1e-6)
    assert_almost_equal(mv_arr.asnumpy(), 0.5 + 0.5 * var, rtol=1e-5, atol=1e-6)
    ex.forward(is_train=True)
    assert_almost_equal(mm_arr.asnumpy(), 0.75 * mean, rtol=1e-5, atol=1e-6)
    ex.backward(nbdl.nd.array(np.ones((4, 3, 2), np.float32)))
    assert_almost_equal(ex.grad_dict["bn_beta"].asnumpy(), np.full(3, 8.0))
    # inference: moving stats normalise, and are left alone
    before = (mm_arr.asnumpy().copy(), mv_arr.asnumpy().copy())
    out = ex.forward(is_train=False)[0].asnumpy()
    want = np_batch_norm(x, np.array([1.0, 2.0, 0.5]), np.zeros(3), before[0], before[1], False,
                         fix_gamma=False)[0]
    assert_almost_equal(out, want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(mm_arr.asnumpy(), before[0])
    assert np.array_equal(mv_arr.asnumpy(), before[1])


def test_eager_autograd_train_and_inference(rng):
    x_np = rng.normal(size=(5, 2, 3)) + 2
    x = nbdl.nd.array(x_np, dtype=np.float64)
    g = nbdl.nd.array(np.array([1.5, 0.5]), dtype=np.float64)
    b = nbdl.nd.array(np.array([0.1, -0.2]), dtype=np.float64)
    mm, mv = nbdl.nd.zeros((2,), dtype=np.float64), nbdl.nd.ones((2,), dtype=np.float64)
    for a in (x, g, b):
        a.attach_grad()
    with nbdl.autograd.record(train_mode=True):
        y = nbdl.nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False)
    out, mean, var, new_mm, new_mv = np_batch_norm(x_np, g.asnumpy(), b.asnumpy(), np.zeros(2),
                                                   np.ones(2), True, fix_gamma=False)
    assert_almost_equal(y.asnumpy(), out)
    assert_almost_equal(mm.asnumpy(), new_mm)
    assert_almost_equal(mv.asnumpy(), new_mv)
    og = rng.normal(size=x_np.shape)
    y.backward(nbdl.nd.array(og, dtype=np.float64))
    dx, dg, db = np_batch_norm_grad(og, x_np, g.asnumpy(), mean, var, True, fix_gamma=False)
    assert_almost_equal(x.grad.asnumpy(), dx)
    assert_almost_equal(g.grad.asnumpy(), dg)
    assert_almost_equal(b.grad.asnumpy(), db)
    with nbdl.autograd.record(train_mode=False):
        y = nbdl.nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False)
    assert_almost_equal(mm.asnumpy(), new_mm)   # untouched in inference
    out = np_batch_norm(x_np, g.asnumpy(), b.asnumpy(), new_mm, new_mv, False, fix_gamma=False)[0]
    assert_almost_equal(y.asnumpy(), out)
    # backward in inference mode (MXNet's backward defaults to train_mode=True)
    y.backward(nbdl.nd.array(og, dtype=np.float64), train_mode=False)
    dx, _, _ = np_batch_norm_grad(og, x_np, g.asnumpy(), new_mm, new_mv, False, fix_gamma=False)
    assert_almost_equal(x.grad.asnumpy(), dx)
    # outside record: inference
    y = nbdl.nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False)
    assert_almost_equal(y.asnumpy(), out)


def test_parallel_variant(monkeypatch, rng):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    loc, aux = bn_inputs(rng, (4, 3, 5), 1, np.float32)
    _, mean, var, _, _ = np_batch_norm(loc["x"], loc["g"], loc["b"], aux["mm"], aux["mv"], True)
    out, _, _, mm, mv = np_batch_norm(loc["x"], loc["g"], loc["b"], aux["mm"], aux["mv"], True)
    outs, _, new_aux = run_symbol(bn(), loc, aux, is_train=True)
    assert_almost_equal(outs[0], out, rtol=1e-4, atol=1e-4)
    assert_almost_equal(new_aux["mv"], mv, rtol=1e-4, atol=1e-5)
    og = rng.normal(size=(4, 3, 5)).astype(np.float32)
    dx, dg, db = np_batch_norm_grad(og, loc["x"], loc["g"], mean, var, True)
    check_symbolic_backward(bn(), loc, [og], {"x": dx, "g": dg, "b": db}, aux_states=aux,
                            rtol=1e-4, atol=1e-4)


def test_large_offset_variance_is_stable():
    x = (1e4 + np.arange(8, dtype=np.float32).reshape(4, 2, 1))
    loc = {"x": x, "g": np.ones(2, np.float32), "b": np.zeros(2, np.float32)}
    aux = {"mm": np.zeros(2, np.float32), "mv": np.ones(2, np.float32)}
    outs, _, _ = run_symbol(bn(output_mean_var=True), loc, aux, is_train=True)
    # variance 5 (the var output holds the inverse std)
    assert_almost_equal(outs[2], np.full(2, 1 / np.sqrt(5.0 + 1e-3)), rtol=1e-5)


@pytest.mark.parametrize("train,use_global_stats", [(True, False), (False, False), (True, True),
                                                    (False, True)])
@pytest.mark.parametrize("fix_gamma", [True, False])
def test_output_mean_var_is_mean_and_inverse_std(train, use_global_stats, fix_gamma):
    """MXNet 1.9.1's CPU BatchNorm (observed with and without MKL-DNN): the
    second output is the mean used and the third 1/sqrt(var + eps) of the
    variance used; batch statistics (biased variance) only in training
    without use_global_stats, the moving ones otherwise; gamma plays no part."""
    x = np.array([[[1.0, 3.0], [0.5, -0.5]], [[2.0, 6.0], [1.5, 2.5]]], np.float32)  # (2, 2, 2)
    eps = 0.01
    loc = {"x": x, "g": np.array([2.0, 0.5], np.float32), "b": np.array([0.1, -0.1], np.float32)}
    aux = {"mm": np.array([0.25, -1.0], np.float32), "mv": np.array([4.0, 0.25], np.float32)}
    outs, _, new_aux = run_symbol(bn(output_mean_var=True, eps=eps, fix_gamma=fix_gamma,
                                     use_global_stats=use_global_stats), loc, aux, is_train=train)
    if train and not use_global_stats:
        # channel 0 holds 1, 3, 2, 6; channel 1 holds 0.5, -0.5, 1.5, 2.5
        mean = np.array([3.0, 1.0])
        var = np.array([(4 + 0 + 1 + 9) / 4, (0.25 + 2.25 + 0.25 + 2.25) / 4])
    else:
        mean, var = np.array([0.25, -1.0]), np.array([4.0, 0.25])
    assert len(outs) == 3
    assert_almost_equal(outs[1], mean, rtol=1e-6, atol=1e-6)
    assert_almost_equal(outs[2], 1 / np.sqrt(var + eps), rtol=1e-6, atol=1e-6)
    gamma = np.ones(2) if fix_gamma else loc["g"]
    want = (x - mean.reshape(1, 2, 1)) / np.sqrt(var.reshape(1, 2, 1) + eps) \
        * gamma.reshape(1, 2, 1) + loc["b"].reshape(1, 2, 1)
    assert_almost_equal(outs[0], want, rtol=1e-5, atol=1e-6)
    # the gradient, which reads the inverse std back, still matches the formula
    # (a backward follows a training forward; with the moving statistics when
    # use_global_stats)
    if train:
        og = np.arange(8, dtype=np.float32).reshape(2, 2, 2) - 3
        dx, dg, db = np_batch_norm_grad(og, x, loc["g"], mean, var, not use_global_stats, eps,
                                        fix_gamma)
        check_symbolic_backward(bn(eps=eps, fix_gamma=fix_gamma,
                                   use_global_stats=use_global_stats),
                                loc, [og], {"x": dx, "g": dg, "b": db}, aux_states=aux,
                                rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.parametrize("kw", [dict(fix_gamma=False), dict(use_global_stats=True)])
def test_cuda_matches_cpu(kw, rng):
    loc, aux = bn_inputs(rng, (2, 3, 2), 1, np.float32)
    check_consistency(bn(output_mean_var=True, **kw), loc, aux_states=aux,
                      devices=[cpu(), gpu()], rtol=1e-5, atol=1e-5)


def test_shape_inference():
    args, outs, auxs = bn(output_mean_var=True).infer_shape(x=(2, 5, 3))
    assert args == [(2, 5, 3), (5,), (5,)] and auxs == [(5,), (5,)]
    assert outs == [(2, 5, 3), (5,), (5,)]
    args, _, auxs = bn(axis=-1).infer_shape(x=(2, 5, 3))
    assert args[1] == (3,) and auxs == [(3,), (3,)]
    args, outs, auxs = bn().infer_shape_partial(g=(4,))
    assert args[2] == (4,) and auxs == [(4,), (4,)] and not outs[0]
    _, touts, _ = bn(output_mean_var=True).infer_type(x=np.float64)
    assert touts == [np.float64] * 3


def test_mxnet_string_attrs():
    s = nbdl.sym.BatchNorm(nbdl.sym.var("data"), name="bn0", eps="2e-05", momentum="0.9",
                           fix_gamma="False", use_global_stats="False", cudnn_off="False",
                           axis="1")
    assert s.list_outputs() == ["bn0_output"]
    args, _, _ = s.infer_shape(data=(1, 4, 2, 2))
    assert args[1] == (4,)


def test_shape_errors():
    with pytest.raises(nbdl.ShapeError, match=r"BatchNorm.*moving_var.*\(3,\).*\(4,\)"):
        bn().infer_shape(x=(2, 4), mv=(3,))
    with pytest.raises(nbdl.ShapeError, match=r"BatchNorm.*axis=3.*\(2, 4\)"):
        bn(axis=3).infer_shape(x=(2, 4))


@pytest.mark.parametrize("attrs,match", [({"eps": -1.0}, "eps"), ({"momentum": "nan"}, "momentum"),
                                         ({"bogus": 1}, "bogus")])
def test_bad_attrs(attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        bn(**attrs)


# -- InstanceNorm / GroupNorm ----------------------------------------------------------

def inorm(**kw):
    return nbdl.sym.InstanceNorm(nbdl.sym.var("x"), nbdl.sym.var("g"), nbdl.sym.var("b"), **kw)


def gnorm(**kw):
    return nbdl.sym.GroupNorm(nbdl.sym.var("x"), nbdl.sym.var("g"), nbdl.sym.var("b"), **kw)


def gn_inputs(rng, shape, dtype, param_size=None):
    C = shape[1] if param_size is None else param_size
    return {"x": rng.uniform(-2, 2, shape).astype(dtype),
            "g": rng.uniform(0.5, 1.5, C).astype(dtype), "b": rng.normal(size=C).astype(dtype)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 3, 4), (1, 2, 3, 2), (2, 1, 1), (3, 2, 5, 1, 2)])
def test_instance_norm_forward(dtype, shape, rng):
    loc = gn_inputs(rng, shape, dtype)
    out, _, _ = np_group_norm(loc["x"], loc["g"], loc["b"], shape[1], 1e-3)
    outs = check_symbolic_forward(inorm(), loc, [out], **tol(dtype))
    assert outs[0].dtype == dtype and len(outs) == 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,groups", [((2, 4, 3), 2), ((1, 6, 2, 2), 3), ((2, 3), 1),
                                          ((2, 2, 1), 2), ((3, 4, 5), 4)])
def test_group_norm_forward(dtype, shape, groups, rng):
    loc = gn_inputs(rng, shape, dtype)
    out, mean, var = np_group_norm(loc["x"], loc["g"], loc["b"], groups, 1e-5)
    outs = check_symbolic_forward(gnorm(num_groups=groups, output_mean_var=True), loc,
                                  [out, mean, np.sqrt(var + 1e-5)], **tol(dtype))
    assert [o.dtype for o in outs] == [dtype] * 3


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,groups", [((2, 4, 3), 2), ((1, 6, 2, 2), 3), ((2, 3), 1),
                                          ((3, 4, 5), 4)])
def test_group_norm_forward_per_group_gamma(dtype, shape, groups, rng):
    """MXNet 1.x's form: gamma/beta of shape (num_groups,), one value per group."""
    loc = gn_inputs(rng, shape, dtype, param_size=groups)
    out, mean, var = np_group_norm(loc["x"], loc["g"], loc["b"], groups, 1e-5)
    outs = check_symbolic_forward(gnorm(num_groups=groups, output_mean_var=True), loc,
                                  [out, mean, np.sqrt(var + 1e-5)], **tol(dtype))
    assert [o.dtype for o in outs] == [dtype] * 3


@pytest.mark.parametrize("sym,shape,params", [(inorm(), (2, 3, 4), None),
                                              (inorm(eps=0.1), (1, 2, 2, 3), None),
                                              (gnorm(num_groups=2), (2, 4, 3), None),
                                              (gnorm(num_groups=1, eps=1e-3), (2, 3, 2), None),
                                              (gnorm(num_groups=2), (2, 4, 3), 2),
                                              (gnorm(num_groups=3, eps=1e-3), (2, 6, 2), 3),
                                              (gnorm(num_groups=1), (2, 3, 2), 1)])
def test_norm_numeric_gradient(sym, shape, params, rng):
    check_numeric_gradient(sym, gn_inputs(rng, shape, np.float64, param_size=params))


def test_group_norm_backward_formula(rng):
    """GroupNorm gradients via per-group LayerNorm algebra written out."""
    shape, G, eps = (2, 4, 3), 2, 1e-5
    loc = gn_inputs(rng, shape, np.float64)
    og = rng.normal(size=shape)
    x, gamma = loc["x"], loc["g"]
    _, mean, var = np_group_norm(x, gamma, loc["b"], G, eps)
    xg = x.reshape(2, G, -1)
    std = np.sqrt(var + eps)[..., None]
    xhat = (xg - mean[..., None]) / std
    dxhat = (og * gamma.reshape(1, 4, 1)).reshape(2, G, -1)
    m = xg.shape[-1]
    dx = (dxhat - dxhat.mean(-1, keepdims=True)
          - xhat * (dxhat * xhat).mean(-1, keepdims=True)) / std
    dg = (og * xhat.reshape(shape)).sum(axis=(0, 2))
    db = og.sum(axis=(0, 2))
    assert m == 6
    check_symbolic_backward(gnorm(num_groups=G), loc, [og],
                            {"x": dx.reshape(shape), "g": dg, "b": db})
    # per-group gamma/beta (MXNet 1.x): one scale per group; their gradients
    # sum the per-channel ones over each group's channels
    gamma_g = np.array([0.5, 2.0])
    loc_g = {"x": x, "g": gamma_g, "b": np.array([0.25, -1.0])}
    dxhat = (og * np.repeat(gamma_g, 2).reshape(1, 4, 1)).reshape(2, G, -1)
    dx = (dxhat - dxhat.mean(-1, keepdims=True)
          - xhat * (dxhat * xhat).mean(-1, keepdims=True)) / std
    check_symbolic_backward(gnorm(num_groups=G), loc_g, [og],
                            {"x": dx.reshape(shape), "g": dg.reshape(G, 2).sum(1),
                             "b": db.reshape(G, 2).sum(1)})


@pytest.mark.cuda
@pytest.mark.parametrize("sym,shape,params", [(inorm(), (2, 2, 3), None),
                                              (gnorm(num_groups=2), (1, 4, 2), None),
                                              (gnorm(num_groups=2), (2, 4, 2), 2)])
def test_norm_cuda_matches_cpu(sym, shape, params, rng):
    check_consistency(sym, gn_inputs(rng, shape, np.float32, param_size=params),
                      devices=[cpu(), gpu()], rtol=1e-5, atol=1e-5)


# -- the CPU kernels' two loop shapes against numpy, every flag ---------------------

# channel runs (inner) of 1 to 16 values take per-position sums, longer ones
# per-channel sums; an empty batch; a single channel
KERNEL_SHAPES = [(5, 3, 1), (4, 6, 3), (2, 7, 16), (3, 2, 17), (2, 3, 40), (0, 3, 2), (3, 1, 4)]


def _bn_ref_forward(x, gamma, beta, mm, mv, saved, stats, eps, mom, fix_gamma):
    """(out before ReLU, mean, inv std, var, new mm, new mv) in float64."""
    from nbdl.kernels.shared.batch_norm import STATS_BATCH, STATS_SAVED
    x = x.astype(np.float64)
    if stats == STATS_BATCH:
        n = x.shape[0] * x.shape[2]
        m = x.mean(axis=(0, 2)) if n else np.zeros(x.shape[1])
        v = x.var(axis=(0, 2)) if n else np.zeros(x.shape[1])
        inv = 1 / np.sqrt(v + eps)
        if n:
            mm, mv = mm * mom + m * (1 - mom), mv * mom + v * (1 - mom)
    elif stats == STATS_SAVED:
        m, inv, v = saved[0].astype(np.float64), saved[1].astype(np.float64), None
    else:
        m, v = mm.astype(np.float64), mv.astype(np.float64)
        inv = 1 / np.sqrt(v + eps)
    g = np.ones_like(gamma) if fix_gamma else gamma
    out = (x - m[None, :, None]) * (inv * g)[None, :, None] + beta[None, :, None]
    return out, m, inv, v, mm, mv


@pytest.mark.parametrize("shape", KERNEL_SHAPES)
def test_cpu_forward_kernel_against_numpy(shape, rng):
    """``bn_forward`` (memory order, per-position or per-channel sums, 1 to 3
    blocks of channels, more blocks than channels too) for every statistics
    mode, ReLU, BatchNorm_v1's stored variance, fix_gamma and request; the
    parallel compilation gives the serial one's bits for the same blocks."""
    from nbdl.kernels.cpu import batch_norm as B
    from nbdl.kernels.shared.batch_norm import STATS_BATCH, STATS_MOVING, STATS_SAVED
    from nbdl.ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE
    f32 = np.float32
    o, c, i = shape
    x = (rng.normal(size=shape) * 3 + 50).astype(f32)      # a mean far from 0
    gamma, beta = rng.uniform(0.5, 1.5, c).astype(f32), rng.normal(size=c).astype(f32)
    mm0, mv0 = rng.normal(size=c).astype(f32), rng.uniform(0.5, 2, c).astype(f32)
    inv_m = f32(1 / (o * i)) if o * i else f32(0)
    eps, mom = 1e-3, 0.9
    for stats in (STATS_MOVING, STATS_BATCH, STATS_SAVED):
        for relu, store_var, fix_gamma in ((False, False, False), (True, True, True)):
            want, m, inv, v, new_mm, new_mv = _bn_ref_forward(
                x, gamma, beta, mm0, mv0, (mm0, mv0), stats, eps, mom, fix_gamma)
            if relu:
                want = np.maximum(want, 0)
            for req in (REQ_WRITE, REQ_ADD, REQ_NULL):
                r_stat = REQ_NULL if stats == STATS_SAVED else req
                base = {REQ_WRITE: 0, REQ_ADD: 0.5, REQ_NULL: 0.5}[req]
                for nt in (1, 2, 3):
                    mm, mv = mm0.copy(), mv0.copy()
                    out = np.full(shape, 0.5, f32)
                    mean, var = (mm, mv) if stats == STATS_SAVED else \
                        (np.full(c, 0.5, f32), np.full(c, 0.5, f32))
                    B.bn_forward(x, gamma, beta, mm, mv, out, mean, var,
                                 np.full(B.bn_temp(shape), np.nan, f32), f32(eps), f32(mom),
                                 f32(1), inv_m, fix_gamma, stats, store_var, relu, req, r_stat,
                                 r_stat, nt)
                    tol = dict(rtol=1e-4, atol=1e-4)
                    np.testing.assert_allclose(out, want + base if req != REQ_NULL else
                                               np.full(shape, 0.5), **tol)
                    if stats == STATS_SAVED:
                        continue
                    for got, ref in ((mean, m), (var, v if store_var else inv)):
                        np.testing.assert_allclose(got, ref + base if req != REQ_NULL else
                                                   np.full(c, 0.5), **tol)
                    np.testing.assert_allclose(mm, new_mm, **tol)
                    np.testing.assert_allclose(mv, new_mv, **tol)
    runs = []
    for fn in (B.bn_forward, B.bn_forward_parallel):
        out, mean, var = np.zeros(shape, f32), np.zeros(c, f32), np.zeros(c, f32)
        fn(x, gamma, beta, mm0.copy(), mv0.copy(), out, mean, var,
           np.zeros(B.bn_temp(shape), f32), f32(eps), f32(mom), f32(1), inv_m, False,
           STATS_BATCH, False, False, REQ_WRITE, REQ_WRITE, REQ_WRITE, 2)
        runs.append((out, mean, var))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("shape", KERNEL_SHAPES)
def test_cpu_backward_kernel_against_numpy(shape, rng):
    """``bn_backward``: the data, gamma and beta gradients with batch or
    global statistics, BatchNorm_v1's stored variance, ReLU's mask,
    fix_gamma, every request, 1 to 3 blocks; the parallel compilation gives
    the serial one's bits."""
    from nbdl.kernels.cpu import batch_norm as B
    from nbdl.ops.registry import REQ_ADD, REQ_NULL, REQ_WRITE
    f32 = np.float32
    o, c, i = shape
    x = (rng.normal(size=shape) * 3 + 50).astype(f32)
    og = rng.normal(size=shape).astype(f32)
    y = rng.normal(size=shape).astype(f32)                  # ReLU's mask: y > 0
    gamma = rng.uniform(0.5, 1.5, c).astype(f32)
    mean = (x.mean(axis=(0, 2)) if o * i else np.zeros(c)).astype(f32)
    st = rng.uniform(0.5, 2, c).astype(f32)
    n = o * i
    inv_m = f32(1 / n) if n else f32(0)
    eps = 1e-3
    for use_batch, stored_var, relu, fix_gamma in ((True, False, False, False),
                                                   (True, True, True, True),
                                                   (False, False, True, False)):
        inv = 1 / np.sqrt(st.astype(np.float64) + eps) if stored_var else st.astype(np.float64)
        g = og.astype(np.float64) * ((y > 0) if relu else 1)
        xhat = (x - mean[None, :, None].astype(np.float64)) * inv[None, :, None]
        sb, sg = g.sum(axis=(0, 2)), (g * xhat).sum(axis=(0, 2))
        gm = np.ones(c) if fix_gamma else gamma.astype(np.float64)
        if use_batch and n:
            want_dx = (g - (sb / n)[None, :, None] - xhat * (sg / n)[None, :, None]) * \
                (gm * inv)[None, :, None]
        else:
            want_dx = g * (gm * inv)[None, :, None]
        want = (want_dx, np.zeros(c) if fix_gamma else sg, sb)
        for req in (REQ_WRITE, REQ_ADD, REQ_NULL):
            base = {REQ_WRITE: 0, REQ_ADD: 0.5, REQ_NULL: 0.5}[req]
            for nt in (1, 2, 3):
                got = (np.full(shape, 0.5, f32), np.full(c, 0.5, f32), np.full(c, 0.5, f32))
                B.bn_backward(og, x, gamma, mean, st, y, *got,
                              np.full(B.bn_temp(shape), np.nan, f32), f32(eps), f32(1), inv_m,
                              fix_gamma, use_batch, stored_var, relu, req, req, req, nt)
                for a, w in zip(got, want):
                    np.testing.assert_allclose(a, w + base if req != REQ_NULL else
                                               np.full(a.shape, 0.5), rtol=1e-4, atol=1e-4)
    runs = []
    for fn in (B.bn_backward, B.bn_backward_parallel):
        got = (np.zeros(shape, f32), np.zeros(c, f32), np.zeros(c, f32))
        fn(og, x, gamma, mean, st, og, *got, np.zeros(B.bn_temp(shape), f32), f32(eps),
           f32(1), inv_m, False, True, False, False, REQ_WRITE, REQ_WRITE, REQ_WRITE, 2)
        runs.append(got)
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_batch_norm_scratch_follows_the_channel_runs():
    """The bind gives BatchNorm's kernels per-position scratch ``(4, C *
    inner)`` for runs of up to 16 values (dense-layer outputs, small maps)
    and per-channel scratch ``(4, C)`` for longer ones."""
    for shape, temp in (((8, 6), (4, 6)), ((4, 6, 3, 3), (4, 54)), ((2, 3, 4, 4), (4, 48)),
                        ((2, 3, 5, 4), (4, 3))):
        ex = nbdl.sym.BatchNorm(nbdl.sym.var("x"), name="bn").simple_bind(
            cpu(), x=shape, grad_req="write")
        temps = [a.shape for p in ex._sched.fwd_train + ex._sched.backward for a in p.args
                 if getattr(a, "ndim", 0) == 2 and a.shape[0] == 4]
        assert temps == [temp, temp], (shape, temps)


def test_norm_parallel_variant(monkeypatch, rng):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    for params in (None, 2):
        loc = gn_inputs(rng, (2, 4, 3), np.float64, param_size=params)
        out, _, _ = np_group_norm(loc["x"], loc["g"], loc["b"], 2, 1e-5)
        check_symbolic_forward(gnorm(num_groups=2), loc, [out])
        check_numeric_gradient(gnorm(num_groups=2), loc)


def test_norm_inference_and_errors():
    args, outs, _ = gnorm(num_groups=2, output_mean_var=True).infer_shape(x=(3, 4, 5))
    assert args == [(3, 4, 5), (4,), (4,)] and outs == [(3, 4, 5), (3, 2), (3, 2)]
    args, outs, _ = inorm().infer_shape(x=(3, 4, 5))
    assert args[1] == (4,) and outs == [(3, 4, 5)]
    with pytest.raises(nbdl.ShapeError, match=r"GroupNorm.*num_groups=3.*\(2, 4, 5\)"):
        gnorm(num_groups=3).infer_shape(x=(2, 4, 5))
    with pytest.raises(nbdl.ShapeError, match=r"InstanceNorm.*\(2, 4\)"):
        inorm().infer_shape(x=(2, 4))
    with pytest.raises(nbdl.ShapeError, match=r"InstanceNorm.*gamma.*\(3,\).*\(4,\)"):
        inorm().infer_shape(x=(2, 4, 5), g=(3,))
    with pytest.raises(nbdl.AttrError, match="num_groups"):
        gnorm(num_groups=0)
    # gamma/beta per channel (C,) or per group (num_groups,), the same form for both
    args, _, _ = gnorm(num_groups=2).infer_shape(x=(3, 4, 5), g=(2,))
    assert args == [(3, 4, 5), (2,), (2,)]
    args, _, _ = gnorm(num_groups=2).infer_shape(x=(3, 4, 5), b=(4,))
    assert args == [(3, 4, 5), (4,), (4,)]
    with pytest.raises(nbdl.ShapeError, match=r"GroupNorm.*'gamma'.*\(3,\).*\(4,\) or \(2,\)"):
        gnorm(num_groups=2).infer_shape(x=(3, 4, 5), g=(3,))
    with pytest.raises(nbdl.ShapeError, match=r"GroupNorm.*both.*gamma \(2,\), beta \(4,\)"):
        gnorm(num_groups=2).infer_shape(x=(3, 4, 5), g=(2,), b=(4,))
    with pytest.raises(nbdl.ShapeError, match=r"InstanceNorm.*'beta'.*\(2,\), expected \(4,\);"):
        inorm().infer_shape(x=(2, 4, 5), b=(2,))


# MXNet 1.9.1's export of HybridSequential(Conv2D(4, kernel_size=1, in_channels=3),
# GroupNorm(num_groups=2)) (Gluon 1.x's GroupNorm has per-group gamma/beta)
MXNET_GROUPNORM_JSON = """{
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "conv0_weight", "attrs": {"__dtype__": "0", "__lr_mult__": "1.0",
      "__shape__": "(4, 3, 1, 1)", "__storage_type__": "0", "__wd_mult__": "1.0"}, "inputs": []},
    {"op": "null", "name": "conv0_bias", "attrs": {"__dtype__": "0", "__init__": "zeros",
      "__lr_mult__": "1.0", "__shape__": "(4,)", "__storage_type__": "0", "__wd_mult__": "1.0"},
      "inputs": []},
    {"op": "Convolution", "name": "conv0_fwd", "attrs": {"dilate": "(1, 1)", "kernel": "(1, 1)",
      "layout": "NCHW", "no_bias": "False", "num_filter": "4", "num_group": "1",
      "pad": "(0, 0)", "stride": "(1, 1)"}, "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    {"op": "null", "name": "groupnorm0_gamma", "attrs": {"__dtype__": "0", "__init__": "ones",
      "__lr_mult__": "1.0", "__shape__": "(2,)", "__storage_type__": "0", "__wd_mult__": "1.0"},
      "inputs": []},
    {"op": "null", "name": "groupnorm0_beta", "attrs": {"__dtype__": "0", "__init__": "zeros",
      "__lr_mult__": "1.0", "__shape__": "(2,)", "__storage_type__": "0", "__wd_mult__": "1.0"},
      "inputs": []},
    {"op": "GroupNorm", "name": "groupnorm0_groupnorm0", "attrs": {"eps": "1e-05",
      "num_groups": "2"}, "inputs": [[3, 0, 0], [4, 0, 0], [5, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 2, 4, 5],
  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 9],
  "heads": [[6, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10901]}
}"""


def test_group_norm_loads_mxnet1_symbol_and_params(tmp_path, rng):
    from nbdl.gluon import SymbolBlock
    (tmp_path / "net-symbol.json").write_text(MXNET_GROUPNORM_JSON)
    w = rng.normal(size=(4, 3, 1, 1)).astype(np.float32)
    bias = rng.normal(size=4).astype(np.float32)
    gamma, beta = np.array([1.5, 0.5], np.float32), np.array([0.25, -1.0], np.float32)
    nbdl.nd.save(str(tmp_path / "net-0000.params"),
                 {"arg:conv0_weight": nbdl.nd.array(w), "arg:conv0_bias": nbdl.nd.array(bias),
                  "arg:groupnorm0_gamma": nbdl.nd.array(gamma),
                  "arg:groupnorm0_beta": nbdl.nd.array(beta)})
    net = SymbolBlock.imports(str(tmp_path / "net-symbol.json"), ["data"],
                              str(tmp_path / "net-0000.params"))
    x = rng.uniform(-1, 1, (2, 3, 2, 2)).astype(np.float32)
    conv = np.zeros((2, 4, 2, 2))
    for n in range(2):
        for o in range(4):
            conv[n, o] = bias[o] + sum(w[o, i, 0, 0] * x[n, i] for i in range(3))
    want, _, _ = np_group_norm(conv, gamma.astype(np.float64), beta.astype(np.float64), 2, 1e-5)
    xd = nbdl.nd.array(x)
    assert_almost_equal(net(xd).asnumpy(), want, rtol=1e-4, atol=1e-5)
    # training: the per-group gamma/beta get per-group gradients
    og = rng.normal(size=(2, 4, 2, 2)).astype(np.float32)
    with nbdl.autograd.record():
        y = net(xd)
    y.backward(nbdl.nd.array(og))
    params = net.collect_params()
    _, mean, var = np_group_norm(conv, gamma, beta, 2, 1e-5)
    xhat = ((conv.reshape(2, 2, -1) - mean[..., None])
            / np.sqrt(var[..., None] + 1e-5)).reshape(2, 4, 2, 2)
    assert params["groupnorm0_gamma"].grad().shape == (2,)
    assert_almost_equal(params["groupnorm0_gamma"].grad().asnumpy(),
                        (og * xhat).sum(axis=(0, 2, 3)).reshape(2, 2).sum(1), rtol=1e-4, atol=1e-4)
    assert_almost_equal(params["groupnorm0_beta"].grad().asnumpy(),
                        og.sum(axis=(0, 2, 3)).reshape(2, 2).sum(1), rtol=1e-4, atol=1e-4)
    # the symbol API infers the per-group shape from the file's __shape__ hints
    sym = nbdl.sym.load(str(tmp_path / "net-symbol.json"))
    args, _, _ = sym.infer_shape(data=(2, 3, 2, 2))
    assert dict(zip(sym.list_arguments(), args))["groupnorm0_gamma"] == (2,)


@pytest.mark.parametrize("op,kw", [("BatchNorm", {"fix_gamma": False}), ("InstanceNorm", {}),
                                   ("GroupNorm", {"num_groups": 2})])
def test_norm_output_takes_its_input_buffer(op, kw):
    """An intermediate input (here 2*x) is dead after the norm, so the planner
    gives the norm's output the same bytes; the result must not change.  In
    training the gradient still reads the input, so there it must not alias."""
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, (3, 4, 5)).astype(np.float64)
    gamma = rng.uniform(0.5, 1.5, 4)
    beta = rng.uniform(-0.5, 0.5, 4)
    data = nbdl.sym.var("data")
    sym = getattr(nbdl.sym, op)(data * 2, nbdl.sym.var("gamma"), nbdl.sym.var("beta"),
                                name="norm", **kw)
    loc = {"data": x, "gamma": gamma, "beta": beta}
    aux = {"norm_moving_mean": np.zeros(4), "norm_moving_var": np.ones(4)} if op == "BatchNorm" else None
    y = 2 * x
    if op == "BatchNorm":          # inference: the moving statistics (0, 1)
        ref = y / np.sqrt(1 + 1e-3) * gamma[None, :, None] + beta[None, :, None]
    else:
        g = kw.get("num_groups", 4)
        yy = y.reshape(3, g, -1)
        eps = 1e-5 if op == "GroupNorm" else 1e-3
        norm = ((yy - yy.mean(-1, keepdims=True)) / np.sqrt(yy.var(-1, keepdims=True) + eps))
        ref = norm.reshape(y.shape) * gamma[None, :, None] + beta[None, :, None]
    shapes = {k: v.shape for k, v in loc.items()}
    ex = sym.simple_bind(cpu(), grad_req="null", type_dict={k: np.float64 for k in loc}, **shapes)
    table = nbdl.debug_str(ex)
    assert "(inplace " in table and "norm_output (inplace" in table, table
    nbdl.testing.assert_plan_valid(ex.memory_plan)
    for k, v in (aux or {}).items():
        ex.aux_dict[k][:] = v
    out = ex.forward(is_train=False, **loc)[0].asnumpy()
    assert_almost_equal(out, ref, rtol=1e-10, atol=1e-12)
    check_numeric_gradient(sym, loc, aux_states=aux)


# -- BatchNorm_v1, _contrib_BatchNormWithReLU, float16 ------------------------------------

def bn_variant(op, **kw):
    return getattr(nbdl.sym, op)(nbdl.sym.var("x"), nbdl.sym.var("g"), nbdl.sym.var("b"),
                                 nbdl.sym.var("mm"), nbdl.sym.var("mv"), **kw)


@pytest.mark.parametrize("fix_gamma", [True, False])
@pytest.mark.parametrize("train", [True, False])
def test_batch_norm_v1_outputs_the_variance(fix_gamma, train, rng):
    loc, aux = bn_inputs(rng, (2, 3, 2, 2), 1, np.float64)
    out, mean, var, mm, mv = np_batch_norm(loc["x"], loc["g"], loc["b"], aux["mm"], aux["mv"],
                                           train, fix_gamma=fix_gamma)
    sym = bn_variant("BatchNorm_v1", fix_gamma=fix_gamma, output_mean_var=True)
    assert sym.list_outputs()[2].endswith("_var") and "axis" not in sym.list_attr()
    outs, _, aux_out = run_symbol(sym, loc, aux, is_train=train)
    assert_almost_equal(outs[0], out, **tol(np.float64))
    assert_almost_equal(outs[1], mean, **tol(np.float64))
    assert_almost_equal(outs[2], var, **tol(np.float64))      # BatchNorm's holds 1/sqrt(var+eps)
    if train:      # the gradient reads the variance back (BatchNorm's the inverse std)
        og = rng.normal(size=out.shape)
        dx, dg, db = np_batch_norm_grad(og, loc["x"], loc["g"], mean, var, True,
                                        fix_gamma=fix_gamma)
        check_symbolic_backward(bn_variant("BatchNorm_v1", fix_gamma=fix_gamma), loc, [og],
                                {"x": dx, "g": dg, "b": db}, aux_states=aux,
                                **tol(np.float64))


@pytest.mark.cuda
def test_batch_norm_with_relu(rng):
    loc, aux = bn_inputs(rng, (2, 3, 2, 2), 1, np.float64)
    loc["x"] -= 3                       # about half the outputs negative
    out = np_batch_norm(loc["x"], loc["g"], loc["b"], aux["mm"], aux["mv"], True,
                        fix_gamma=False)
    sym = bn_variant("_contrib_BatchNormWithReLU", fix_gamma=False)
    assert len(sym.list_outputs()) == 1
    check_symbolic_forward(sym, loc, [np.maximum(out[0], 0)], aux_states=aux, is_train=True,
                           **tol(np.float64))
    og = rng.normal(size=out[0].shape)
    dx, dg, db = np_batch_norm_grad(og * (out[0] > 0), loc["x"], loc["g"], out[1], out[2], True,
                                    fix_gamma=False)
    check_symbolic_backward(sym, loc, [og], {"x": dx, "g": dg, "b": db}, aux_states=aux,
                            is_train=True, **tol(np.float64))
    away = np.abs(out[0]) > 1e-2
    assert away.all()                  # no output on the kink: the numeric gradient is smooth
    check_numeric_gradient(sym, loc, aux)
    f32 = {k: v.astype(np.float32) for k, v in loc.items()}
    a32 = {k: v.astype(np.float32) for k, v in aux.items()}
    check_consistency(sym, f32, aux_states=a32, rtol=1e-4, atol=1e-4)
    check_consistency(bn_variant("BatchNorm_v1", fix_gamma=False, output_mean_var=True), f32,
                      aux_states=a32, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["BatchNorm", "BatchNorm_v1", "_contrib_BatchNormWithReLU"])
def test_float16_data_float32_parameters(op, rng):
    """MXNet's type rule: float16 data, float32 gamma/beta/moving statistics."""
    loc, aux = bn_inputs(rng, (2, 3, 4), 1, np.float32)
    sym = bn_variant(op, fix_gamma=False)
    args, outs, auxt = sym.infer_type(x=np.float16)
    assert args == [np.float16, np.float32, np.float32] and auxt == [np.float32] * 2
    assert outs[0] == np.float16
    half = dict(loc, x=loc["x"].astype(np.float16))
    got, _, _ = run_symbol(sym, half, dict(aux), is_train=True)
    want, _, _ = run_symbol(sym, dict(loc, x=half["x"].astype(np.float32)), dict(aux),
                            is_train=True)
    assert got[0].dtype == np.float16
    assert_almost_equal(got[0].astype(np.float32), want[0], rtol=2e-3, atol=2e-3)
