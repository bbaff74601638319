"""Unary elementwise ops, Activation, clip, the copies, ElementWiseSum and where."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)

sym = nbdl.sym


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_softrelu(x):
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


# name -> (symbol of x, numpy reference, input range, keep inputs away from 0)
CASES = {
    "negative": (sym.negative, np.negative, (-2, 2), False),
    "abs": (sym.abs, np.abs, (-2, 2), True),
    "exp": (sym.exp, np.exp, (-2, 2), False),
    "log": (sym.log, np.log, (0.2, 3), False),
    "sqrt": (sym.sqrt, np.sqrt, (0.2, 3), False),
    "rsqrt": (sym.rsqrt, lambda x: 1 / np.sqrt(x), (0.2, 3), False),
    "square": (sym.square, np.square, (-2, 2), False),
    "sin": (sym.sin, np.sin, (-3, 3), False),
    "cos": (sym.cos, np.cos, (-3, 3), False),
    "tanh": (sym.tanh, np.tanh, (-3, 3), False),
    "sigmoid": (sym.sigmoid, np_sigmoid, (-4, 4), False),
    "relu": (sym.relu, lambda x: np.maximum(x, 0), (-2, 2), True),
    "softsign": (sym.softsign, lambda x: x / (1 + np.abs(x)), (-2, 2), False),
    "clip": (lambda x: sym.clip(x, a_min=-0.6, a_max=0.7), lambda x: np.clip(x, -0.6, 0.7),
             (-1, 1), False),
    "Activation-relu": (lambda x: sym.Activation(x, act_type="relu"), lambda x: np.maximum(x, 0),
                        (-2, 2), True),
    "Activation-sigmoid": (lambda x: sym.Activation(x, act_type="sigmoid"), np_sigmoid, (-4, 4),
                           False),
    "Activation-tanh": (lambda x: sym.Activation(x, act_type="tanh"), np.tanh, (-3, 3), False),
    "Activation-softrelu": (lambda x: sym.Activation(x, act_type="softrelu"), np_softrelu,
                            (-3, 3), False),
    "Activation-softsign": (lambda x: sym.Activation(x, act_type="softsign"),
                            lambda x: x / (1 + np.abs(x)), (-2, 2), False),
    "BlockGrad": (sym.BlockGrad, lambda x: x, (-2, 2), False),
    "stop_gradient": (sym.stop_gradient, lambda x: x, (-2, 2), False),
    "zeros_like": (sym.zeros_like, np.zeros_like, (-2, 2), False),
    "ones_like": (sym.ones_like, np.ones_like, (-2, 2), False),
}
NO_GRAD = {"BlockGrad", "stop_gradient", "zeros_like", "ones_like"}
SHAPES = [(3, 4), (1,), (0, 3), (2, 1, 3), (2, 3, 1, 2)]


def sample(rng, name, shape, dtype=np.float64):
    _, _, (lo, hi), away = CASES[name]
    x = rng.uniform(lo, hi, shape)
    if away:   # keep |x| >= 0.1 so the kink at 0 is out of a numeric gradient's reach
        x = np.where(np.abs(x) < 0.1, np.sign(x + 1e-3) * 0.1 + x, x)
    if name == "clip":   # and away from the clip bounds
        x = np.where(np.abs(x + 0.6) < 0.05, x + 0.1, x)
        x = np.where(np.abs(x - 0.7) < 0.05, x - 0.1, x)
    return x.astype(dtype)


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(CASES))
def test_forward_grid(name, dtype, shape, rng):
    make, ref, _, _ = CASES[name]
    x = sample(rng, name, shape, dtype)
    outs = check_symbolic_forward(make(sym.var("x")), {"x": x},
                                  [ref(x.astype(np.float64))], **tol(dtype))
    assert outs[0].dtype == dtype and outs[0].shape == shape


@pytest.mark.parametrize("name", [n for n in CASES if n not in NO_GRAD])
def test_numeric_gradient(name, rng):
    make = CASES[name][0]
    check_numeric_gradient(make(sym.var("x")), {"x": sample(rng, name, (2, 3))})


@pytest.mark.parametrize("name", sorted(NO_GRAD))
def test_no_gradient_flows(name, rng):
    x = sample(rng, name, (2, 3))
    check_symbolic_backward(CASES[name][0](sym.var("x")), {"x": x}, [np.ones((2, 3))],
                            {"x": np.zeros((2, 3))})


@pytest.mark.cuda
@pytest.mark.parametrize("name", list(CASES))
def test_cuda_matches_cpu(name, rng):
    x = sample(rng, name, (2, 3), np.float32)
    check_consistency(CASES[name][0](sym.var("x")), {"x": x})


def test_backward_from_output_frees_input():
    """relu/sigmoid/tanh/exp/sqrt gradients read the forward output, not the input."""
    from nbdl.graph.gradient import build_gradient
    from nbdl.ops.ir import make_variable, topo_order
    for make in (sym.relu, sym.sigmoid, sym.tanh, sym.exp, sym.sqrt, sym.rsqrt,
                 lambda v: sym.Activation(v, act_type="softrelu")):
        x = sym.var("x")
        y = make(x)
        head = make_variable("g").output(0)
        (gx,) = build_gradient(y._outputs, [head], x._outputs)
        back = [n for n in topo_order([gx]) if n.op is not None and n is not y._outputs[0].node]
        assert all(e != x._outputs[0] for n in back for e in n.inputs), make


# -- copies with integer dtypes -------------------------------------------------------

@pytest.mark.parametrize("make", [sym.BlockGrad, sym.zeros_like, sym.ones_like, sym.identity])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_copies_accept_integers(make, dtype):
    x = np.arange(6, dtype=dtype).reshape(2, 3)
    expect = {sym.zeros_like: np.zeros_like(x), sym.ones_like: np.ones_like(x)}.get(make, x)
    (out,) = check_symbolic_forward(make(sym.var("x")), {"x": x}, [expect])
    assert out.dtype == dtype


# -- ElementWiseSum / add_n ------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 3), (1,), (0, 2)])
def test_add_n_forward(k, dtype, shape, rng):
    xs = {f"x{i}": rng.uniform(-1, 1, shape).astype(dtype) for i in range(k)}
    s = sym.add_n(*[sym.var(n) for n in xs])
    expect = xs["x0"].copy()
    for i in range(1, k):
        expect = expect + xs[f"x{i}"]
    check_symbolic_forward(s, xs, [expect], **tol(dtype))


def test_add_n_attrs_and_names():
    s = sym.ElementWiseSum(sym.var("a"), sym.var("b"), sym.var("c"), name="total")
    assert s.attr("num_args") == "3"
    assert s.list_arguments() == ["a", "b", "c"]
    assert nbdl.ops.get_op("add_n").list_inputs({"num_args": 2}) == ["arg0", "arg1"]


def test_add_n_gradient(rng):
    a, b = sym.var("a"), sym.var("b")
    check_numeric_gradient(sym.add_n(a, b, a), {"a": rng.rand(2, 3), "b": rng.rand(2, 3)})


@pytest.mark.cuda
def test_add_n_cuda_matches_cpu(rng):
    xs = {n: rng.rand(2, 3).astype(np.float32) for n in "abc"}
    check_consistency(sym.add_n(*[sym.var(n) for n in xs]), xs)


# -- where -------------------------------------------------------------------------------

WHERE_SHAPES = [((2, 3), (2, 3)), ((2,), (2, 3)), ((3,), (3, 2, 2)), ((4,), (4,)),
                ((0,), (0, 3)), ((1,), (1, 2))]


@pytest.mark.parametrize("cshape,shape", WHERE_SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cdtype", [np.float32, np.int32])
def test_where_forward(cshape, shape, dtype, cdtype, rng):
    c = (rng.rand(*cshape) > 0.5).astype(cdtype)
    x, y = rng.rand(*shape).astype(dtype), rng.rand(*shape).astype(dtype)
    cb = c.reshape(cshape + (1,) * (len(shape) - len(cshape))) != 0
    s = sym.where(sym.var("c"), sym.var("x"), sym.var("y"))
    check_symbolic_forward(s, {"c": c, "x": x, "y": y}, [np.where(cb, x, y)])


@pytest.mark.parametrize("cshape,shape", [((2, 3), (2, 3)), ((2,), (2, 3))])
def test_where_gradient(cshape, shape, rng):
    c = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0][:int(np.prod(cshape))]).reshape(cshape)
    s = sym.where(sym.var("c"), sym.var("x"), sym.var("y"))
    grads = check_numeric_gradient(s, {"c": c, "x": rng.rand(*shape), "y": rng.rand(*shape)},
                                   grad_nodes=["x", "y"])
    assert set(grads) == {"x", "y"}


@pytest.mark.cuda
@pytest.mark.parametrize("cshape,shape", [((2, 3), (2, 3)), ((2,), (2, 3))])
def test_where_cuda_matches_cpu(cshape, shape, rng):
    c = (rng.rand(*cshape) > 0.5).astype(np.float32)
    s = sym.where(sym.var("c"), sym.var("x"), sym.var("y"))
    check_consistency(s, {"c": c, "x": rng.rand(*shape).astype(np.float32),
                          "y": rng.rand(*shape).astype(np.float32)})


# -- errors --------------------------------------------------------------------------------

# relu, abs, negative, square, clip... take integers (tests/ops/test_elemwise_int_nan.py)
@pytest.mark.parametrize("make", [sym.exp, sym.sqrt, lambda v: sym.Activation(v, act_type="tanh"),
                                  sym.sigmoid])
def test_integer_input_is_rejected(make):
    with pytest.raises(nbdl.DTypeError, match="int32"):
        check_symbolic_forward(make(sym.var("x")), {"x": np.ones((2, 2), np.int32)}, [None])


def test_attribute_errors():
    with pytest.raises(nbdl.AttrError, match="act_type"):
        sym.Activation(sym.var("x"), act_type="gelu")
    with pytest.raises(nbdl.AttrError, match="a_max"):
        sym.clip(sym.var("x"), a_min=0)


def test_where_shape_errors():
    s = sym.where(sym.var("c"), sym.var("x"), sym.var("y"))
    with pytest.raises(nbdl.ShapeError, match=r"where.*\(3,\).*\(2, 3\)"):
        s.infer_shape(c=(3,), x=(2, 3), y=(2, 3))
    with pytest.raises(nbdl.ShapeError, match=r"where.*\(2, 3\).*\(3, 2\)"):
        s.infer_shape(c=(2, 3), x=(2, 3), y=(3, 2))


def test_add_n_shape_error():
    s = sym.add_n(sym.var("a"), sym.var("b"))
    with pytest.raises(nbdl.ShapeError, match=r"ElementWiseSum.*\(2, 3\).*\(3, 2\)"):
        s.infer_shape(a=(2, 3), b=(3, 2))


def test_unary_infers_both_ways():
    x = sym.var("x")
    y = sym.relu(sym.exp(x))
    args, outs, _ = y.infer_shape(x=(2, 5))
    assert args == [(2, 5)] and outs == [(2, 5)]
    s = sym.where(sym.var("c"), x, sym.var("z"))
    args, outs, _ = s.infer_shape_partial(z=(4, 2))
    assert args == [(), (4, 2), (4, 2)] and outs == [(4, 2)]


def test_attr_strings_are_mxnet_spelling():
    s = sym.clip(sym.var("x"), a_min=0, a_max=1.5)
    assert s.attr("a_min") == "0" and s.attr("a_max") == "1.5"
    assert sym.Activation(sym.var("x"), act_type="relu").attr("act_type") == "relu"


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_elementwise_sum_of_integers(dtype):
    xs = [np.arange(6, dtype=dtype).reshape(2, 3) * (k + 1) - 4 for k in range(3)]
    y = nbdl.sym.ElementWiseSum(*[nbdl.sym.var(f"x{k}") for k in range(3)], num_args=3)
    out = check_symbolic_forward(y, {f"x{k}": x for k, x in enumerate(xs)}, [sum(xs)],
                                 rtol=0, atol=0)[0]
    assert out.dtype == np.dtype(dtype)
    check_consistency(y, {f"x{k}": x for k, x in enumerate(xs)}, grad=False)
