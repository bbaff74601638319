import math
import re

import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.ops import get_op
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward, run_symbol)

ALPHA, LAM = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_erf = np.vectorize(math.erf, otypes=[np.float64])


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_act(act, x, slope=0.25, beta=1.0):
    x = x.astype(np.float64)
    if act == "leaky":
        return np.where(x > 0, x, slope * x)
    if act == "elu":
        return np.where(x > 0, x, slope * (np.exp(x) - 1))
    if act == "selu":
        return LAM * np.where(x > 0, x, ALPHA * (np.exp(x) - 1))
    if act == "gelu":
        return 0.5 * x * (1 + _erf(x / np.sqrt(2)))
    if act == "gelu_tanh":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    if act == "swish":
        return x * np_sigmoid(beta * x)
    if act == "log_sigmoid":
        return np.log(np_sigmoid(x))
    if act == "mish":
        return x * np.tanh(np.log1p(np.exp(x)))
    raise ValueError(act)


def np_act_grad(act, x, og, slope=0.25, beta=1.0, h=1e-6):
    """Reference derivative by central differences of the float64 reference."""
    x = x.astype(np.float64)
    d = (np_act(act, x + h, slope, beta) - np_act(act, x - h, slope, beta)) / (2 * h)
    return og * d


def np_prelu(x, gamma, expanded=None):
    """PReLU with gamma reshaped to ``expanded`` (by default (C,) on axis 1, or (1,))."""
    if expanded is None:
        expanded = [1] * x.ndim
        if gamma.size > 1:
            expanded[1] = gamma.size
    g = gamma.reshape(expanded)
    return np.where(x > 0, x, g * x)


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)


def sym_of(act, **kw):
    x = nbdl.sym.var("x")
    if act in ("swish", "log_sigmoid", "mish", "silu"):
        return getattr(nbdl.sym, act)(x, **kw)
    return nbdl.sym.LeakyReLU(x, act_type=act, **kw)


LEAKY = ["leaky", "elu", "selu", "gelu", "gelu_tanh"]
ALL = LEAKY + ["swish", "log_sigmoid", "mish"]


def away_from_zero(rng, shape, dtype=np.float64):
    x = rng.uniform(0.2, 2.5, shape) * rng.choice([-1, 1], shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (2, 3, 4), (1,), (1, 1), (0, 3)])
@pytest.mark.parametrize("act", ALL)
def test_forward_grid(act, shape, dtype, rng):
    x = rng.uniform(-4, 4, shape).astype(dtype)
    outs = check_symbolic_forward(sym_of(act), {"x": x}, [np_act(act, x)], **tol(dtype))
    assert outs[0].dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("act", ALL)
def test_backward_formula(act, dtype, rng):
    x = away_from_zero(rng, (3, 5), dtype)
    og = rng.normal(size=(3, 5)).astype(dtype)
    check_symbolic_backward(sym_of(act), {"x": x}, [og], {"x": np_act_grad(act, x, og)},
                            rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("act,kw", [("leaky", {"slope": 0.1}), ("elu", {"slope": 1.5}),
                                    ("selu", {}), ("gelu", {}), ("gelu_tanh", {}),
                                    ("swish", {"beta": 1.7}), ("log_sigmoid", {}), ("mish", {})])
def test_numeric_gradient(act, kw, rng):
    check_numeric_gradient(sym_of(act, **kw), {"x": away_from_zero(rng, (2, 3))})


@pytest.mark.parametrize("act,kw,ref", [("leaky", {"slope": 0.1}, {"slope": 0.1}),
                                        ("elu", {"slope": 2.0}, {"slope": 2.0}),
                                        ("swish", {"beta": 0.5}, {"beta": 0.5}),
                                        ("silu", {}, {})])
def test_attrs(act, kw, ref, rng):
    x = rng.uniform(-3, 3, (4, 3))
    name = "swish" if act == "silu" else act
    check_symbolic_forward(sym_of(act, **kw), {"x": x}, [np_act(name, x, **ref)])


def test_extreme_values_finite():
    x = np.array([-100.0, -30.0, 30.0, 100.0], np.float32)
    for act in ALL:
        out, _, _ = run_symbol(sym_of(act), {"x": x})
        assert np.all(np.isfinite(out[0])), act
        assert np.allclose(out[0], np_act(act, x), rtol=1e-5, atol=1e-5), act


def test_defaults():
    y = nbdl.sym.LeakyReLU(nbdl.sym.var("data"))
    x = np.array([-2.0, 3.0])
    check_symbolic_forward(y, {"data": x}, [[-0.5, 3.0]])
    assert y.list_arguments() == ["data"]


# -- prelu -----------------------------------------------------------------------------------

def prelu(**kw):
    return nbdl.sym.LeakyReLU(nbdl.sym.var("x"), nbdl.sym.var("g"), act_type="prelu", **kw)


# (data shape, gamma shape, gamma as MXNet broadcasts it): gamma's axes are laid
# from its last one on data axes 1 then 0, an extent that is not the data's (and
# not 1) skipping to the axis before
PRELU_CASES = [((2, 3, 4), (3,), (1, 3, 1)), ((2, 3), (3,), (1, 3)),
               ((2, 3, 2, 2), (1,), (1, 1, 1, 1)), ((1, 1), (1,), (1, 1)), ((4,), (1,), (1,)),
               ((0, 3), (3,), (1, 3)), ((2, 3, 4), (2, 3), (2, 3, 1)),
               ((2, 3, 2, 2), (2, 1), (2, 1, 1, 1)), ((2, 3, 4), (1, 3), (1, 3, 1)),
               ((2, 3, 4), (2,), (2, 1, 1)), ((3, 3, 2), (3,), (1, 3, 1)), ((2, 3), (2, 3), (2, 3)),
               ((4,), (4,), (4,)), ((2, 3, 4), (1, 1), (1, 1, 1))]


def prelu_grads(x, g, expanded, og):
    """dx and dgamma of PReLU: dgamma sums og * x (x <= 0) over the broadcast axes."""
    gb = np.broadcast_to(g.reshape(expanded), x.shape)
    dx = np.where(x > 0, og, og * gb)
    contrib = np.where(x > 0, 0, og * x)
    axes = tuple(i for i, e in enumerate(expanded) if e == 1)
    return dx, contrib.sum(axis=axes, keepdims=True).reshape(g.shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,gshape,expanded", PRELU_CASES)
def test_prelu_forward_backward(shape, gshape, expanded, dtype, rng):
    x = rng.uniform(-2, 2, shape).astype(dtype)
    g = rng.uniform(0.05, 0.5, gshape).astype(dtype)
    outs = check_symbolic_forward(prelu(), {"x": x, "g": g}, [np_prelu(x, g, expanded)],
                                  **tol(dtype))
    assert outs[0].dtype == dtype
    og = rng.normal(size=shape).astype(dtype)
    dx, dg = prelu_grads(x, g, expanded, og)
    check_symbolic_backward(prelu(), {"x": x, "g": g}, [og], {"x": dx, "g": dg}, **tol(dtype))


@pytest.mark.parametrize("shape,gshape", [((2, 3, 4), (2, 3)), ((2, 3, 4), (2,)),
                                          ((3, 2), (3, 2))])
def test_prelu_broadcast_gamma_numeric_gradient(shape, gshape, rng):
    loc = {"x": away_from_zero(rng, shape), "g": rng.uniform(0.1, 0.5, gshape)}
    check_numeric_gradient(prelu(), loc)


def test_prelu_float16_is_float32_rounded_once(rng):
    # float16 through the float32 kernel: every output and gradient equals the
    # float32 call on the same (float16-valued) numbers, rounded once
    x = rng.uniform(-2, 2, (2, 3, 4)).astype(np.float16)
    g = rng.uniform(0.05, 0.5, (2, 3)).astype(np.float16)
    og = rng.normal(size=(2, 3, 4)).astype(np.float16)
    got = {}
    for dt in (np.float16, np.float32):
        args = [nbdl.nd.array(v, dtype=dt) for v in (x, g)]
        for a in args:
            a.attach_grad()
        with nbdl.autograd.record():
            y = nbdl.nd.LeakyReLU(*args, act_type="prelu")
        y.backward(nbdl.nd.array(og, dtype=dt))
        got[dt] = [y.asnumpy()] + [a.grad.asnumpy() for a in args]
    for h, f in zip(got[np.float16], got[np.float32]):
        assert h.dtype == np.float16
        np.testing.assert_array_equal(h, f.astype(np.float16))
    np.testing.assert_allclose(got[np.float32][0],
                               np_prelu(x.astype(np.float64), g.astype(np.float64), (2, 3, 1)),
                               rtol=1e-6)


@pytest.mark.parametrize("gshape", [(3,), (1,)])
def test_prelu_numeric_gradient(gshape, rng):
    loc = {"x": away_from_zero(rng, (2, 3, 2)), "g": rng.uniform(0.1, 0.5, gshape)}
    check_numeric_gradient(prelu(), loc)


def test_prelu_inference_and_names():
    y = nbdl.sym.LeakyReLU(nbdl.sym.var("data"), act_type="prelu", name="act")
    assert y.list_arguments() == ["data", "act_gamma"]
    args, outs, _ = y.infer_shape(data=(2, 5, 3))
    assert args == [(2, 5, 3), (5,)] and outs == [(2, 5, 3)]
    args, _, _ = y.infer_shape(data=(2, 5, 3), act_gamma=(1,))
    assert args[1] == (1,)


@pytest.mark.parametrize("gshape", [(4,), (3, 1), (1, 1, 1), (2, 3, 5)])
def test_prelu_gamma_shape_error(gshape):
    # gamma must broadcast over data axes 0 and 1 as MXNet's expand_shape does
    with pytest.raises(nbdl.ShapeError, match=r"LeakyReLU.*gamma.*%s.*\(2, 3, 5\)"
                       % re.escape(str(gshape))):
        prelu().infer_shape(x=(2, 3, 5), g=gshape)



def test_output_shape_mismatch():
    with pytest.raises(nbdl.ShapeError, match=r"LeakyReLU.*output.*\(3, 2\).*\(2, 3\)"):
        get_op("LeakyReLU").infer_shape({"act_type": "prelu"}, [(2, 3), None], [(3, 2)])


@pytest.mark.parametrize("attrs,match", [({"act_type": "rrelu"}, "rrelu"),
                                         ({"act_type": "bogus"}, "act_type"),
                                         ({"slope": "steep"}, "slope")])
def test_bad_attrs(attrs, match):
    with pytest.raises(nbdl.AttrError, match=match):
        nbdl.sym.LeakyReLU(nbdl.sym.var("x"), **attrs)


def test_swish_bad_attr():
    with pytest.raises(nbdl.AttrError, match="beta"):
        nbdl.sym.swish(nbdl.sym.var("x"), beta="big")


def test_imperative_and_autograd(rng):
    x = nbdl.nd.array(rng.uniform(-2, 2, (2, 3)))
    x.attach_grad()
    with nbdl.autograd.record():
        y = nbdl.nd.LeakyReLU(x, act_type="gelu")
    y.backward()
    xn = x.asnumpy()
    assert np.allclose(y.asnumpy(), np_act("gelu", xn))
    assert np.allclose(x.grad.asnumpy(), np_act_grad("gelu", xn, np.ones_like(xn)), atol=1e-6)


@pytest.mark.cuda
@pytest.mark.parametrize("act", ALL)
def test_cuda_matches_cpu(act, rng):
    check_consistency(sym_of(act), {"x": away_from_zero(rng, (2, 3), np.float32)},
                      devices=[cpu(), gpu()], rtol=1e-5, atol=1e-6)


@pytest.mark.cuda
@pytest.mark.parametrize("gshape", [(3,), (1,), (2, 3), (2, 1)])
def test_cuda_prelu(gshape, rng):
    loc = {"x": rng.uniform(-2, 2, (2, 3, 2)).astype(np.float32),
           "g": rng.uniform(0.1, 0.5, gshape).astype(np.float32)}
    check_consistency(prelu(), loc, devices=[cpu(), gpu()], rtol=1e-5, atol=1e-6)


@pytest.mark.cuda
def test_cuda_empty(rng):
    check_consistency(sym_of("gelu"), {"x": np.zeros((0, 3), np.float32)}, grad=False)


def test_parallel_variant(monkeypatch, rng):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    x = away_from_zero(rng, (3, 4, 5), np.float32)
    g = rng.uniform(0.1, 0.5, (4,)).astype(np.float32)
    check_symbolic_forward(prelu(), {"x": x, "g": g}, [np_prelu(x, g)], rtol=1e-5, atol=1e-6)
    check_symbolic_forward(sym_of("mish"), {"x": x}, [np_act("mish", x)], rtol=1e-5, atol=1e-6)
