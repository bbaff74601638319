"""``_nbdl_BatchNorm_apply`` (hidden): BatchNorm's output from saved
statistics, what a memory budget recomputes it with (docs/memory-budget.md).
It has no gradient (it runs only inside a backward pass), and BatchNorm's
dtypes (float32/float64): no float16 or integer case."""
import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.errors import DTypeError, ShapeError
from nbdl.testing import check_consistency, check_symbolic_forward, run_symbol


def apply(**kw):
    v = nbdl.sym.var
    return nbdl.sym._nbdl_BatchNorm_apply(v("x"), v("g"), v("b"), v("mean"), v("invstd"), **kw)


def np_apply(x, g, b, mean, invstd, fix_gamma=True, axis=1):
    shp = [x.shape[i] if i == axis % x.ndim else 1 for i in range(x.ndim)]
    g = np.ones_like(g) if fix_gamma else g
    return (x.astype(np.float64) - mean.reshape(shp)) * invstd.reshape(shp) * g.reshape(shp) \
        + b.reshape(shp)


def inputs(rng, shape, axis, dtype):
    C = shape[axis]
    return {"x": rng.uniform(-2, 2, shape).astype(dtype) + 3,
            "g": rng.uniform(0.5, 1.5, C).astype(dtype), "b": rng.normal(size=C).astype(dtype),
            "mean": rng.normal(size=C).astype(dtype),
            "invstd": rng.uniform(0.5, 2, C).astype(dtype)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((4, 3), 1), ((2, 3, 4), 1), ((3, 2, 5), -1),
                                        ((5, 2), 0), ((1, 1), 1), ((2, 3, 1, 1, 2), 1)])
@pytest.mark.parametrize("fix_gamma", [True, False])
def test_forward_against_numpy(dtype, shape, axis, fix_gamma, rng):
    loc = inputs(rng, shape, axis, dtype)
    want = np_apply(*loc.values(), fix_gamma=fix_gamma, axis=axis).astype(dtype)
    tol = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=1e-5, atol=1e-5)
    check_symbolic_forward(apply(fix_gamma=fix_gamma, axis=axis), loc, [want], **tol)


@pytest.mark.parametrize("kw", [dict(fix_gamma=False), dict(fix_gamma=True, axis=-1),
                                dict(use_global_stats=True, fix_gamma=False)])
@pytest.mark.parametrize("parallel", [False, True])
def test_bitwise_batchnorm_output_from_its_saved_statistics(kw, parallel, monkeypatch, rng):
    if parallel:
        monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    axis = kw.get("axis", 1)
    shape = (4, 3, 5)
    loc = inputs(rng, shape, axis, np.float32)
    x, g, b = loc["x"], loc["g"], loc["b"]
    C = shape[axis]
    aux = {"mm": rng.normal(size=C).astype(np.float32),
           "mv": rng.uniform(0.5, 2, C).astype(np.float32)}
    v = nbdl.sym.var
    bn = nbdl.sym.BatchNorm(v("x"), v("g"), v("b"), v("mm"), v("mv"), output_mean_var=True,
                            eps=1e-3, **kw)
    (out, mean, invstd), _, _ = run_symbol(bn, {"x": x, "g": g, "b": b}, aux, is_train=True)
    apply_kw = {k: kw[k] for k in ("fix_gamma", "axis") if k in kw}
    (again,), _, _ = run_symbol(apply(**apply_kw), {"x": x, "g": g, "b": b, "mean": mean,
                                                    "invstd": invstd}, is_train=True)
    assert again.tobytes() == out.tobytes()


@pytest.mark.cuda
def test_cuda_matches_cpu(rng):
    check_consistency(apply(fix_gamma=False), inputs(rng, (2, 3, 2), 1, np.float32),
                      devices=[cpu(), gpu()], grad=False, rtol=1e-6, atol=1e-6)


def test_shapes_and_dtypes():
    args, outs, _ = apply(axis=-1).infer_shape(x=(2, 3, 4))
    assert args == [(2, 3, 4)] + [(4,)] * 4 and outs == [(2, 3, 4)]
    with pytest.raises(ShapeError, match=r"_nbdl_BatchNorm_apply.*'invstd' has shape \(2,\)"):
        apply().infer_shape(x=(2, 3, 4), invstd=(2,))
    loc = {k: a.astype(np.float16) for k, a in inputs(np.random.RandomState(0), (2, 3), 1,
                                                       np.float32).items()}
    with pytest.raises(DTypeError, match="_nbdl_BatchNorm_apply"):
        run_symbol(apply(), loc, is_train=True)
