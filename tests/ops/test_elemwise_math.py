"""The unary math ops of nbdl.ops.elemwise_math (and softmin), against numpy /
scipy references, MXNet 1.9.1's edge values, numeric gradients and the CUDA
simulator.  One small shape per op: each (op, dtype) is one generated kernel."""
import math

import numpy as np
import pytest
from scipy import special

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)

sym = nbdl.sym
nd = nbdl.nd


def _np_round(x):          # MXNet's round: halves away from zero
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _np_rint(x):           # MXNet's rint: a half goes to the lower integer
    fl, ce = np.floor(x), np.ceil(x)
    return np.where(x - fl <= ce - x, fl, ce)


# name -> (numpy reference, input range); the ranges keep numeric gradients
# away from poles and kinks
DIFF = {
    "tan": (np.tan, (-1.2, 1.2)),
    "arcsin": (np.arcsin, (-0.8, 0.8)),
    "arccos": (np.arccos, (-0.8, 0.8)),
    "arctan": (np.arctan, (-3, 3)),
    "sinh": (np.sinh, (-2, 2)),
    "cosh": (np.cosh, (-2, 2)),
    "arcsinh": (np.arcsinh, (-3, 3)),
    "arccosh": (np.arccosh, (1.2, 4)),
    "arctanh": (np.arctanh, (-0.8, 0.8)),
    "expm1": (np.expm1, (-2, 2)),
    "log1p": (np.log1p, (-0.5, 3)),
    "log2": (np.log2, (0.2, 4)),
    "log10": (np.log10, (0.2, 4)),
    "erf": (special.erf, (-2, 2)),
    "erfinv": (special.erfinv, (-0.9, 0.9)),
    "gamma": (special.gamma, (0.3, 4)),
    "gammaln": (special.gammaln, (0.3, 6)),
    "reciprocal": (np.reciprocal, (0.3, 3)),
    "cbrt": (np.cbrt, (0.2, 8)),
    "rcbrt": (lambda x: 1 / np.cbrt(x), (0.2, 8)),
    "degrees": (np.degrees, (-3, 3)),
    "radians": (np.radians, (-180, 180)),
}
HARD = {"hard_sigmoid": (lambda x: np.clip(0.2 * x + 0.5, 0, 1), (-4, 4))}
EXACT = {
    "sign": np.sign, "round": _np_round, "rint": _np_rint, "fix": np.fix, "trunc": np.trunc,
    "floor": np.floor, "ceil": np.ceil, "logical_not": lambda x: (x == 0).astype(x.dtype),
}
SHAPE = (2, 3)


def sample(rng, name, dtype=np.float64):
    lo, hi = {**DIFF, **HARD}[name][1]
    x = rng.uniform(lo, hi, SHAPE)
    if name == "hard_sigmoid":    # away from the kinks at -2.5 and 2.5
        x = np.where(np.abs(np.abs(x) - 2.5) < 0.1, x * 0.8, x)
    return x.astype(dtype)


def exact_sample(dtype=np.float64):
    """Halves, near-halves, integers, zero and negatives."""
    return np.array([[-2.5, -1.5, -0.5, 0.0, 0.5, 1.5], [2.5, -2.7, 3.2, 0.49999997, -0.51, 7.0]],
                    dtype)


@pytest.mark.cuda
@pytest.mark.parametrize("name", list(DIFF) + list(HARD))
def test_forward_gradient_and_cuda(name, rng):
    ref = {**DIFF, **HARD}[name][0]
    x = sample(rng, name)
    s = getattr(sym, name)(sym.var("x"))
    check_symbolic_forward(s, {"x": x}, [ref(x)], rtol=1e-7, atol=1e-9)
    check_numeric_gradient(s, {"x": x})
    check_consistency(s, {"x": x})


@pytest.mark.parametrize("name", list(DIFF) + list(HARD) + list(EXACT))
def test_float32(name, rng):
    ref = {**DIFF, **HARD, **EXACT}[name]
    ref = ref[0] if isinstance(ref, tuple) else ref
    x = exact_sample(np.float32) if name in EXACT else sample(rng, name, np.float32)
    (out,) = check_symbolic_forward(getattr(sym, name)(sym.var("x")), {"x": x},
                                    [ref(x.astype(np.float64))], rtol=2e-6, atol=1e-6)
    assert out.dtype == np.float32


def _f16_reference(ref, x):
    """float16 kernels compute in float32 and round once to float16."""
    with np.errstate(all="ignore"):
        return ref(x.astype(np.float32)).astype(np.float32).astype(np.float16)


@pytest.mark.cuda
@pytest.mark.parametrize("name", list(DIFF) + list(HARD) + list(EXACT))
def test_float16(name, rng):
    """Storage float16, computed in float32 (MXNet's half_t); CPU vs CUDA too."""
    ref = {**DIFF, **HARD, **EXACT}[name]
    ref = ref[0] if isinstance(ref, tuple) else ref
    x = exact_sample(np.float16) if name in EXACT else sample(rng, name, np.float16)
    s = getattr(sym, name)(sym.var("x"))
    (out,) = check_symbolic_forward(s, {"x": x}, [_f16_reference(ref, x)], rtol=1e-3, atol=1e-3)
    assert out.dtype == np.float16
    check_consistency(s, {"x": x}, grad=False, rtol=1e-3, atol=1e-3)


def test_float16_gradient_and_accumulation(rng):
    x = rng.uniform(0.2, 0.8, SHAPE).astype(np.float16)
    s = sym.arcsin(sym.var("x"))
    xf = x.astype(np.float32)
    check_symbolic_backward(s, {"x": x}, [np.ones(SHAPE, np.float16)],
                            {"x": (1 / np.sqrt(1 - xf * xf)).astype(np.float16)}, rtol=2e-3)


@pytest.mark.parametrize("device", [nbdl.cpu(), pytest.param(nbdl.gpu(), marks=pytest.mark.cuda)], ids=["cpu", "gpu"])
def test_float16_req_add_and_broadcast_layouts(device, rng):
    """REQ_ADD and REQ_NULL on float16 outputs, every broadcast layout, and
    the sums of broadcast gradients."""
    from nbdl.executor.interpret import run_op
    from nbdl.ops.registry import REQ_ADD, REQ_NULL, get_op
    half = np.dtype(np.float16)

    def run(op, arrays, shape, req, base):
        opdef = get_op(op)
        attrs, _ = opdef.parse_attrs({})
        out = [device.from_numpy(base.copy())]
        res = run_op(opdef, attrs, [device.from_numpy(a) for a in arrays], [shape], [half],
                     device, outputs=out, req=[req])
        return res[0] if isinstance(res[0], np.ndarray) else res[0].copy_to_host()

    x = rng.uniform(-2, 2, SHAPE).astype(np.float16)
    base = np.full(SHAPE, 0.25, np.float16)
    added = run("arctan", [x], SHAPE, REQ_ADD, base)
    expect = (np.float32(0.25) + np.arctan(x.astype(np.float32))).astype(np.float16)
    np.testing.assert_allclose(added.astype(np.float32), expect.astype(np.float32), rtol=1e-3)
    np.testing.assert_array_equal(run("arctan", [x], SHAPE, REQ_NULL, base), base)
    for lshape, rshape in [((2, 3), (1, 3)), ((1,), (2, 3)), ((2, 1, 3), (1, 2, 1))]:
        a = rng.uniform(-2, 2, lshape).astype(np.float16)
        b = rng.uniform(-2, 2, rshape).astype(np.float16)
        shape = np.broadcast_shapes(lshape, rshape)
        got = run("broadcast_hypot", [a, b], shape, 1, np.zeros(shape, np.float16))
        ref = np.hypot(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
        np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32), rtol=1e-3)
    # _reduce_sum_like (broadcast gradients): sums in float32, rounded once; REQ_ADD too
    for dshape, lshape in [((2, 3), (1, 3)), ((2, 3), (2, 3)), ((2, 3, 2), (3, 1)), ((2, 3), (1,))]:
        x = rng.uniform(-2, 2, dshape).astype(np.float16)
        like = np.zeros(lshape, np.float16)
        nd_ = len(dshape)
        pad = (1,) * (nd_ - len(lshape)) + lshape
        axes = tuple(i for i in range(nd_) if pad[i] == 1 and dshape[i] != 1)
        total = x.astype(np.float32).sum(axis=axes, keepdims=True).reshape(lshape)
        bases = ((1, np.zeros(lshape, np.float16)), (REQ_ADD, np.full(lshape, 0.5, np.float16)))
        for req, base in bases:
            got = run("_reduce_sum_like", [x, like], lshape, req, base)
            ref = (total + base.astype(np.float32)).astype(np.float16)
            np.testing.assert_allclose(got.astype(np.float32), ref.astype(np.float32),
                                       rtol=2e-3, atol=2e-3, err_msg=f"{dshape} {lshape} {req}")


@pytest.mark.cuda
@pytest.mark.parametrize("name", list(EXACT))
def test_zero_gradient_ops(name):
    x = exact_sample()
    s = getattr(sym, name)(sym.var("x"))
    check_symbolic_forward(s, {"x": x}, [EXACT[name](x)])
    check_symbolic_backward(s, {"x": x}, [np.ones(x.shape)], {"x": np.zeros(x.shape)})
    check_consistency(s, {"x": x}, grad=False)


@pytest.mark.parametrize("dtype", [np.int32, np.int8])
@pytest.mark.parametrize("name", list(EXACT))
def test_zero_gradient_ops_on_integers(name, dtype):
    x = np.array([[-3, -1, 0], [1, 2, 7]], dtype)
    expect = np.sign(x) if name == "sign" else ((x == 0) * 1 if name == "logical_not" else x)
    (out,) = check_symbolic_forward(getattr(sym, name)(sym.var("x")), {"x": x},
                                    [expect.astype(dtype)])
    assert out.dtype == dtype


def test_mxnet_edge_values():
    """What MXNet 1.9.1 gives (checked on the real one) at poles and NaN."""
    nan, inf = math.nan, math.inf
    cases = [
        ("erfinv", [1, -1, 0.5, 2, nan], [inf, -inf, special.erfinv(0.5), nan, nan]),
        ("gamma", [0.5, 3, -1.5, 0, -1], [math.sqrt(math.pi), 2, special.gamma(-1.5), inf, nan]),
        ("gammaln", [0.5, 3, -1.5, -1], [special.gammaln(0.5), math.log(2),
                                         special.gammaln(-1.5), inf]),
        ("rcbrt", [8, -8, 0], [0.5, -0.5, inf]),
        ("sign", [nan, -0.0, -3], [0, 0, -1]),
        ("logical_not", [0, 2, nan], [1, 0, 0]),
        ("arccos", [2], [nan]),
    ]
    for name, x, expect in cases:
        out = getattr(nd, name)(nd.array(x, dtype="float64")).asnumpy()
        np.testing.assert_allclose(out, expect, rtol=1e-7, err_msg=name)


def test_erfinv_accuracy_float32_grid():
    """erfinv against scipy to float32 precision over (-1, 1), near +-1 too."""
    y = np.concatenate([np.linspace(-1, 1, 4001)[1:-1], 1 - np.logspace(-7, -1, 40),
                        -1 + np.logspace(-7, -1, 40)]).astype(np.float32)
    out = nd.erfinv(nd.array(y)).asnumpy()
    ref = special.erfinv(y.astype(np.float64))
    np.testing.assert_allclose(out, ref, rtol=3e-7, atol=1e-7)
    out64 = nd.erfinv(nd.array(y.astype(np.float64), dtype="float64")).asnumpy()
    np.testing.assert_allclose(out64, ref, rtol=1e-9, atol=1e-12)


def test_gamma_gradient_uses_digamma():
    x = np.array([0.5, 3.0, -1.5, 7.25])
    for name, grad in (("gamma", special.gamma(x) * special.digamma(x)),
                       ("gammaln", special.digamma(x))):
        check_symbolic_backward(getattr(sym, name)(sym.var("x")), {"x": x}, [np.ones(4)],
                                {"x": grad}, rtol=1e-8)


def test_hard_sigmoid_attrs_and_gradient_edges():
    x = np.array([-3.0, -1.0, 0.0, 1.0, 1.5])
    s = sym.hard_sigmoid(sym.var("x"), alpha=0.5, beta=0.25)
    assert s.attr("alpha") == "0.5"
    check_symbolic_forward(s, {"x": x}, [np.clip(0.5 * x + 0.25, 0, 1)])
    # the slope is passed strictly inside (0, 1): 0 at -0.5 and 1.5, as MXNet
    check_symbolic_backward(s, {"x": np.array([-0.5, 0.0, 1.5])}, [np.ones(3)],
                            {"x": np.array([0.0, 0.5, 0.0])})


def test_spellings():
    x = nd.array([0.5, 0.25])
    np.testing.assert_allclose(x.arcsin().asnumpy(), np.arcsin([0.5, 0.25]), rtol=1e-6)
    np.testing.assert_allclose(nbdl.np.arctanh(x).asnumpy(), np.arctanh([0.5, 0.25]), rtol=1e-6)
    np.testing.assert_allclose(nbdl.np.deg2rad(x).asnumpy(), np.deg2rad([0.5, 0.25]), rtol=1e-6)
    np.testing.assert_allclose(nbdl.npx.erfinv(x).asnumpy(), special.erfinv([0.5, 0.25]),
                               rtol=1e-6)
    assert nbdl.np.sign(-2.0).asnumpy() == -1.0
    s = nbdl.npx.gammaln(sym.var("x"))
    assert s.list_outputs() == [f"{s.name}_output"]
    assert sym._npx_erf(sym.var("x")) is not None


def test_integer_input_rejected_where_mxnet_semantics_are_float():
    with pytest.raises(nbdl.DTypeError, match="erf.*int32"):
        nd.erf(nd.array([1, 2], dtype="int32"))


# -- softmin ------------------------------------------------------------------------------

def np_softmin(x, axis=-1, t=1.0):
    e = np.exp(-(x - x.min(axis=axis, keepdims=True)) / t)
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.cuda
@pytest.mark.parametrize("axis,t", [(-1, None), (0, 2.0)])
def test_softmin(axis, t, rng):
    x = rng.uniform(-2, 2, SHAPE)
    s = sym.softmin(sym.var("x"), axis=axis, temperature=t)
    check_symbolic_forward(s, {"x": x}, [np_softmin(x, axis, t or 1.0)], rtol=1e-10)
    check_numeric_gradient(s, {"x": x})
    check_consistency(s, {"x": x})


@pytest.mark.cuda
def test_float16_broadcast_gradient(rng):
    a = rng.uniform(0.5, 2, (2, 3)).astype(np.float16)
    b = rng.uniform(0.5, 2, (1, 3)).astype(np.float16)
    s = sym.broadcast_mul(sym.var("a"), sym.var("b"))
    af, bf = a.astype(np.float32), b.astype(np.float32)
    check_symbolic_backward(s, {"a": a, "b": b}, [np.ones((2, 3), np.float16)],
                            {"a": np.broadcast_to(bf, (2, 3)).astype(np.float16),
                             "b": af.sum(axis=0, keepdims=True).astype(np.float16)},
                            rtol=2e-3, atol=2e-3)
    check_consistency(s, {"a": a, "b": b}, rtol=3e-3, atol=3e-3)


@pytest.mark.cuda
def test_float16_graph_with_sums_and_copies():
    """A float16 input used three times: the gradient is an ElementWiseSum in
    float16; more than 8 inputs sum in passes; the copies take float16."""
    x = np.array([[0.5, 1.0, 2.0]], np.float16)
    xf = x.astype(np.float32)
    a = sym.var("a")
    s = sym.add_n(sym.exp(a), sym.sin(a), a)
    check_symbolic_forward(s, {"a": x}, [(np.exp(xf) + np.sin(xf) + xf).astype(np.float16)],
                           rtol=2e-3)
    check_symbolic_backward(s, {"a": x}, [np.ones(x.shape, np.float16)],
                            {"a": (np.exp(xf) + np.cos(xf) + 1).astype(np.float16)}, rtol=2e-3)
    check_consistency(s, {"a": x}, rtol=2e-3, atol=2e-3)
    xs = {f"x{i}": np.full((2,), i, np.float16) for i in range(10)}
    many = sym.add_n(*[sym.var(k) for k in xs])
    check_symbolic_forward(many, xs, [np.full((2,), 45, np.float16)])
    check_consistency(many, xs)
    for make, expect in ((sym.identity, x), (sym.zeros_like, x * 0), (sym.ones_like, x * 0 + 1),
                         (sym.BlockGrad, x)):
        (out,) = check_symbolic_forward(make(sym.var("x")), {"x": x}, [expect])
        assert out.dtype == np.float16
