"""mod / hypot / logical ops in their broadcast, same-shape and scalar forms,
integer dtypes, NaN propagation of relu / maximum / minimum (values checked
on MXNet 1.9.1), and the nd. / sym. binary functions taking scalars."""
import math

import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward, run_symbol)

sym = nbdl.sym
nd = nbdl.nd
nan = math.nan


def np_mod(a, b):
    """MXNet's mod: numpy's (sign of the divisor), 0 for a zero divisor."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b == 0, 0, np.mod(a, np.where(b == 0, 1, b))).astype(np.result_type(a, b))


def _logical(f):
    return lambda a, b: f(a != 0, b != 0).astype(np.result_type(a, b))


BINARY = {
    "mod": np_mod,
    "hypot": np.hypot,
    "logical_and": _logical(np.logical_and),
    "logical_or": _logical(np.logical_or),
    "logical_xor": _logical(np.logical_xor),
}
DIFFERENTIABLE = ("mod", "hypot")


def operands(rng, lshape, rshape, dtype=np.float64):
    a = rng.uniform(-3, 3, lshape)
    b = rng.uniform(0.5, 2, rshape) * np.where(rng.rand(*rshape) > 0.5, 1, -1)
    a = np.where(rng.rand(*lshape) > 0.7, 0, a)      # zeros for the logical ops
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.cuda
@pytest.mark.parametrize("name", list(BINARY))
def test_broadcast_and_same_shape_forms(name, rng):
    a, b = operands(rng, (2, 3), (1, 3))
    s = getattr(sym, f"broadcast_{name}")(sym.var("a"), sym.var("b"))
    check_symbolic_forward(s, {"a": a, "b": b}, [BINARY[name](a, b)], rtol=1e-10)
    bb = np.broadcast_to(b, a.shape).copy()
    same = getattr(sym, f"_{name}")(sym.var("a"), sym.var("b"))
    check_symbolic_forward(same, {"a": a, "b": bb}, [BINARY[name](a, bb)], rtol=1e-10)
    if name in DIFFERENTIABLE:
        # a / b away from the integers, where mod jumps
        a = np.array([[0.7, -1.3, 2.6], [1.7, -0.4, 3.3]])
        b = np.array([[0.9, -1.1, 1.25]])
        check_numeric_gradient(s, {"a": a, "b": b})
        check_numeric_gradient(same, {"a": a, "b": np.broadcast_to(b, a.shape).copy()})
    else:
        check_symbolic_backward(s, {"a": a, "b": b}, [np.ones(a.shape)],
                                {"a": np.zeros(a.shape), "b": np.zeros(b.shape)})
    check_consistency(s, {"a": a, "b": b}, grad=name in DIFFERENTIABLE)


def test_mod_matches_mxnet_values():
    a = np.array([7.5, -7.5, 7.5, -7.5, 1.0, -1.0])
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.0, 0.0])
    s = sym.broadcast_mod(sym.var("a"), sym.var("b"))
    check_symbolic_forward(s, {"a": a, "b": b}, [np.array([1.5, 0.5, -0.5, -1.5, 0, 0])])
    # d/db = -floor(a / b) (-inf where b is 0), as MXNet
    check_symbolic_backward(s, {"a": a[:4], "b": b[:4]}, [np.ones(4)],
                            {"a": np.ones(4), "b": np.array([-3.0, 4.0, 4.0, -3.0])})
    hyp = sym.broadcast_hypot(sym.var("a"), sym.var("b"))
    check_symbolic_forward(hyp, {"a": np.array([3.0]), "b": np.array([4.0])}, [np.array([5.0])])


SCALAR = {
    "_mod_scalar": (lambda x, s: np_mod(x, np.full_like(x, s)), 1.5),
    "_rmod_scalar": (lambda x, s: np_mod(np.full_like(x, s), x), 5.5),
    "_hypot_scalar": (lambda x, s: np.hypot(x, s), 2.0),
    "_logical_and_scalar": (lambda x, s: ((x != 0) & (s != 0)).astype(x.dtype), 3.0),
    "_logical_or_scalar": (lambda x, s: ((x != 0) | (s != 0)).astype(x.dtype), 0.0),
    "_logical_xor_scalar": (lambda x, s: ((x != 0) ^ (s != 0)).astype(x.dtype), 3.0),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", list(SCALAR))
def test_scalar_forms(name, rng):
    ref, sc = SCALAR[name]
    # x / scalar and scalar / x away from the integers; a zero for the logical ops
    x = np.array([[0.7, -1.3, 2.6], [0.0 if "logical" in name else 0.3, 3.7, -2.2]])
    s = getattr(sym, name)(sym.var("x"), scalar=sc)
    check_symbolic_forward(s, {"x": x}, [ref(x, sc)], rtol=1e-10)
    if "logical" in name:
        check_symbolic_backward(s, {"x": x}, [np.ones(x.shape)], {"x": np.zeros(x.shape)})
    else:
        check_numeric_gradient(s, {"x": x})
    check_consistency(s, {"x": x}, grad="logical" not in name)


def test_scalar_aliases_and_symbol_operators(rng):
    x = np.array([[0.7, -1.3], [2.6, -3.1]])
    v = sym.var("x")
    check_symbolic_forward(sym._ModScalar(v, scalar=2), {"x": x}, [np.mod(x, 2)])
    check_symbolic_forward(v % 2, {"x": x}, [np.mod(x, 2)])
    check_symbolic_forward(3 % v, {"x": x}, [np.mod(3, x)])
    check_symbolic_forward(sym._HypotScalar(v, scalar=2), {"x": x}, [np.hypot(x, 2)])
    w = sym.var("y")
    y = rng.uniform(0.5, 2, x.shape)
    assert (v % w).list_outputs()[0].startswith("_mod")
    check_symbolic_forward(v % w, {"x": x, "y": y}, [np.mod(x, y)])
    check_symbolic_forward(sym._Logical_And(v, w), {"x": x, "y": y * 0}, [np.zeros(x.shape)])


# -- integers ------------------------------------------------------------------------------

INT_DTYPES = [np.int32, np.int64, np.uint8, np.int8]


def _wrap(values, dtype):
    return np.asarray(values).astype(np.int64).astype(dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_arithmetic_and_comparisons(dtype):
    signed = np.dtype(dtype).kind == "i"
    a = np.array([7, -7, 5, 0, 100, -3] if signed else [7, 9, 5, 0, 100, 200], dtype)
    b = np.array([2, 2, -3, 4, 3, 1] if signed else [2, 2, 3, 4, 3, 1], dtype)
    ai, bi = a.astype(np.int64), b.astype(np.int64)
    trunc_div = np.where(bi == 0, 0, np.trunc(ai / np.where(bi == 0, 1, bi))).astype(np.int64)
    cases = {
        "elemwise_add": ai + bi, "elemwise_sub": ai - bi, "elemwise_mul": ai * bi,
        "elemwise_div": trunc_div, "broadcast_mod": np.mod(ai, bi),
        "broadcast_maximum": np.maximum(ai, bi), "broadcast_minimum": np.minimum(ai, bi),
        "broadcast_power": ai ** np.abs(bi) if not signed else None,
        "broadcast_greater": (ai > bi) * 1, "broadcast_equal": (ai == bi) * 1,
        "broadcast_logical_xor": ((ai != 0) ^ (bi != 0)) * 1,
        "broadcast_hypot": np.trunc(np.hypot(ai, bi)),
    }
    for name, expect in cases.items():
        if expect is None:
            continue
        (out,) = check_symbolic_forward(getattr(sym, name)(sym.var("a"), sym.var("b")),
                                        {"a": a, "b": b}, [_wrap(expect, dtype)], rtol=0, atol=0)
        assert out.dtype == dtype, name


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_scalar_ops_truncate_the_scalar(dtype):
    """int array (op) 2.5 uses 2, as MXNet (``int32 * 2.5`` is ``int32 * 2``)."""
    signed = np.dtype(dtype).kind == "i"
    x = np.array([1, 2, 7, -7] if signed else [1, 2, 7, 250], dtype)
    xi = x.astype(np.int64)
    cases = [
        ("_mul_scalar", 2.5, xi * 2), ("_plus_scalar", 2.5, xi + 2), ("_minus_scalar", 2.5, xi - 2),
        ("_div_scalar", 2, np.trunc(xi / 2)), ("_rdiv_scalar", 7, np.trunc(7 / xi)),
        ("_mod_scalar", 3, np.mod(xi, 3)), ("_greater_scalar", 1.5, (xi > 1) * 1),
        ("_maximum_scalar", 2, np.maximum(xi, 2)), ("_power_scalar", 2, xi ** 2),
        ("_rminus_scalar", 5, 5 - xi), ("_div_scalar", 0, np.zeros(4)),
    ]
    for name, sc, expect in cases:
        (out,) = check_symbolic_forward(getattr(sym, name)(sym.var("x"), scalar=sc), {"x": x},
                                        [_wrap(expect, dtype)], rtol=0, atol=0)
        assert out.dtype == dtype, name


def test_integer_eager_operators_and_unary():
    x = nd.array([1, 2], dtype="int32")
    for got, expect in [(x * 2, [2, 4]), (x * 2.5, [2, 4]), (x + 2.5, [3, 4]), (x / 2, [0, 1]),
                        (nd.array([-7, 7], dtype="int32") / 2, [-3, 3]), (x ** 2, [1, 4]),
                        (7 / x, [7, 3]), (2 ** x, [2, 4]), (x > 1.5, [0, 1]), (-x, [-1, -2]),
                        (nd.relu(nd.array([-1, 2], dtype="int32")), [0, 2]),
                        (nd.abs(nd.array([-3, 2], dtype="int32")), [3, 2]),
                        (nd.clip(nd.array([2, 1, 5], dtype="int32"), 1.5, 3.5), [2, 1, 3]),
                        (nd.square(nd.array([3, -2], dtype="int64")), [9, 4])]:
        assert got.dtype == np.int32 or got.dtype == np.int64
        np.testing.assert_array_equal(got.asnumpy(), expect)
    # wrap-around, as MXNet's uint8 / int8 arithmetic
    np.testing.assert_array_equal((nd.array([100, 200], dtype="uint8") * 2).asnumpy(), [200, 144])
    np.testing.assert_array_equal(nd.negative(nd.array([3, 1], dtype="uint8")).asnumpy(),
                                  [253, 255])


@pytest.mark.cuda
def test_integer_cuda_matches_cpu():
    a = np.array([[7, -7, 5], [0, 100, -3]], np.int32)
    b = np.array([[2, 2, -3]], np.int32)
    for op in ("broadcast_mod", "broadcast_div", "broadcast_maximum"):
        check_consistency(getattr(sym, op)(sym.var("a"), sym.var("b")), {"a": a, "b": b},
                          grad=False)
    check_consistency(sym._div_scalar(sym.var("a"), scalar=2.5), {"a": a}, grad=False)


def test_integer_scalar_errors():
    with pytest.raises(nbdl.ArgumentError, match=r"_mul_scalar.*scalar=nan.*int32"):
        nd.array([1, 2], dtype="int32") * nan
    with pytest.raises(nbdl.DTypeError, match="int32"):
        nd.exp(nd.array([1, 2], dtype="int32"))


# -- NaN semantics (MXNet 1.9.1) -------------------------------------------------------------

DEVICES = [nbdl.cpu(), nbdl.gpu()]   # the GPU in the CUDA simulator


def nan_forward(s, location, expect):
    for dev in DEVICES:
        outs, _, _ = run_symbol(s, location, None, device=dev)
        np.testing.assert_array_equal(outs[0], expect, err_msg=str(dev))


def nan_backward(s, location, expect):
    n = next(iter(location.values())).shape
    for dev in DEVICES:
        _, grads, _ = run_symbol(s, location, None, out_grads=[np.ones(n)],
                                 grad_nodes=list(expect), device=dev)
        for k, v in expect.items():
            np.testing.assert_array_equal(grads[k], v, err_msg=f"{k} on {dev}")


@pytest.mark.cuda
def test_relu_propagates_nan_but_activation_does_not():
    x = np.array([nan, -1.0, 0.0, 1.0])
    nan_forward(sym.relu(sym.var("x")), {"x": x}, np.array([nan, 0, 0, 1]))
    nan_backward(sym.relu(sym.var("x")), {"x": x}, {"x": np.array([nan, 0, 0, 1])})
    act = sym.Activation(sym.var("x"), act_type="relu")
    check_symbolic_forward(act, {"x": x}, [np.array([0, 0, 0, 1.0])])
    check_symbolic_backward(act, {"x": x}, [np.ones(4)], {"x": np.array([0, 0, 0, 1.0])})
    check_consistency(sym.relu(sym.var("x")), {"x": x[1:].astype(np.float32)})


@pytest.mark.cuda
def test_maximum_minimum_propagate_nan():
    a = np.array([nan, 0.0, 1.0, 1.0, nan])
    b = np.array([0.0, nan, 1.0, 0.0, nan])
    mx = sym.broadcast_maximum(sym.var("a"), sym.var("b"))
    mn = sym.broadcast_minimum(sym.var("a"), sym.var("b"))
    nan_forward(mx, {"a": a, "b": b}, np.array([nan, nan, 1, 1, nan]))
    nan_forward(mn, {"a": a, "b": b}, np.array([nan, nan, 1, 0, nan]))
    # MXNet's gradient masks: lhs gets a >= b (a <= b), rhs a < b (a > b): NaN goes nowhere
    check_symbolic_backward(mx, {"a": a, "b": b}, [np.ones(5)],
                            {"a": np.array([0, 0, 1, 1, 0.0]), "b": np.zeros(5)})
    check_symbolic_backward(mn, {"a": a, "b": b}, [np.ones(5)],
                            {"a": np.array([0, 0, 1, 0, 0.0]), "b": np.array([0, 0, 0, 1, 0.0])})
    same = sym._maximum(sym.var("a"), sym.var("b"))
    nan_forward(same, {"a": a, "b": b}, np.array([nan, nan, 1, 1, nan]))
    check_consistency(mx, {"a": a[2:4].astype(np.float32), "b": b[2:4].astype(np.float32)})


@pytest.mark.cuda
def test_scalar_maximum_minimum_propagate_nan():
    x = np.array([nan, 0.0, 1.0, -1.0])
    s = sym._maximum_scalar(sym.var("x"), scalar=0)
    nan_forward(s, {"x": x}, np.array([nan, 0, 1, 0]))
    nan_backward(s, {"x": x}, {"x": np.array([0, 1, 1, 0.0])})
    nan_forward(sym._minimum_scalar(sym.var("x"), scalar=0), {"x": x}, np.array([nan, 0, 0, -1]))
    np.testing.assert_array_equal(nd.maximum(nd.array([1.0]), nan).asnumpy(), [nan])


# -- nd. / sym. functions ------------------------------------------------------------------

def test_nd_binary_functions_take_scalars_on_either_side():
    a, b = nd.array([1.0, 5.0]), nd.array([3.0, 2.0])
    cases = [(nd.maximum(a, b), [3, 5]), (nd.maximum(a, 2), [2, 5]), (nd.maximum(2, b), [3, 2]),
             (nd.minimum(2, b), [2, 2]), (nd.power(2, a), [2, 32]), (nd.power(a, 2), [1, 25]),
             (nd.power(a, b), [1, 25]), (nd.modulo(5, b), [2, 1]), (nd.modulo(a, 3), [1, 2]),
             (nd.hypot(nd.array([3.0]), 4), [5]), (nd.subtract(1, a), [0, -4]),
             (nd.divide(10, a), [10, 2]), (nd.greater(a, 2), [0, 1]), (nd.lesser(2, a), [0, 1]),
             (nd.logical_and(a, nd.array([0.0, 1.0])), [0, 1]),
             (nd.maximum(nd.array([[1.0], [4.0]]), nd.array([2.0, 3.0])), [[2, 3], [4, 4]])]
    for got, expect in cases:
        np.testing.assert_allclose(got.asnumpy(), expect)
    assert nd.maximum(2, 3) == 3 and nd.modulo(5, 3) == 2 and nd.power(2, 3) == 8
    with pytest.raises(nbdl.ArgumentError, match="nd.maximum"):
        nd.maximum("a", a)


def test_sym_binary_functions_make_mxnet_nodes():
    x, y = sym.var("x"), sym.var("y")
    a, b = np.array([1.0, 5.0]), np.array([3.0, 2.0])
    for s, op, expect in [(sym.maximum(x, y), "_maximum", np.maximum(a, b)),
                          (sym.minimum(x, 2), "_minimum_scalar", np.minimum(a, 2)),
                          (sym.power(2, x), "_rpower_scalar", 2 ** a),
                          (sym.pow(x, y), "_power", a ** b),
                          (sym.hypot(x, y), "_hypot", np.hypot(a, b)),
                          (x ** y, "_power", a ** b)]:
        assert s.get_internals().list_outputs()[-1].startswith(op), op
        args = {k: v for k, v in (("x", a), ("y", b)) if k in s.list_arguments()}
        check_symbolic_forward(s, args, [expect])
    assert sym.maximum(2, 3) == 3
    with pytest.raises(nbdl.ShapeError, match="_power"):
        (x ** y).infer_shape(x=(2, 3), y=(3,))


# -- float16 -----------------------------------------------------------------------------------

@pytest.mark.cuda
def test_float16_binary_and_scalar_forms(rng):
    """float16 storage, float32 arithmetic rounded once, the scalar rounded to float16."""
    a = rng.uniform(-3, 3, (2, 3)).astype(np.float16)
    b = rng.uniform(0.5, 2, (1, 3)).astype(np.float16)
    af, bf = a.astype(np.float32), b.astype(np.float32)
    for s, expect in [
            (sym.broadcast_mod(sym.var("a"), sym.var("b")), np.mod(af, bf)),
            (sym.broadcast_maximum(sym.var("a"), sym.var("b")), np.maximum(af, bf)),
            (sym.broadcast_logical_or(sym.var("a"), sym.var("b")), np.ones((2, 3))),
            (sym._rmod_scalar(sym.var("a"), scalar=2.5), np.mod(2.5, af)),
            (sym._mul_scalar(sym.var("a"), scalar=0.1), af * np.float32(np.float16(0.1)))]:
        args = {k: v for k, v in (("a", a), ("b", b)) if k in s.list_arguments()}
        (out,) = check_symbolic_forward(s, args, [expect.astype(np.float16)], rtol=1e-3, atol=1e-3)
        assert out.dtype == np.float16
        check_consistency(s, args, grad=False, rtol=1e-3, atol=1e-3)


SAME_SHAPE = {
    "_equal": lambda a, b: (a == b).astype(a.dtype),
    "_not_equal": lambda a, b: (a != b).astype(a.dtype),
    "_greater": lambda a, b: (a > b).astype(a.dtype),
    "_greater_equal": lambda a, b: (a >= b).astype(a.dtype),
    "_lesser": lambda a, b: (a < b).astype(a.dtype),
    "_lesser_equal": lambda a, b: (a <= b).astype(a.dtype),
    "_maximum": np.maximum,
    "_minimum": np.minimum,
    "_logical_and": _logical(np.logical_and),
    "_logical_or": _logical(np.logical_or),
    "_logical_xor": _logical(np.logical_xor),
    "broadcast_logical_and": _logical(np.logical_and),
}


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("name", list(SAME_SHAPE))
def test_same_shape_comparison_and_logical_ops(name, dtype):
    a = np.array([[0, 1, 2], [3, -1, 0]], dtype)
    b = np.array([[0, 2, 1], [3, 0, -2]], dtype)
    got = getattr(nd, name)(nd.array(a, dtype=dtype), nd.array(b, dtype=dtype)).asnumpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, SAME_SHAPE[name](a, b))
