"""Same-shape (elemwise_*) and broadcasting (broadcast_*) binary ops, and the
hidden _reduce_sum_like their gradients use."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_backward,
                          check_symbolic_forward)

sym = nbdl.sym


def _cmp(f):
    return lambda a, b: f(a, b).astype(np.result_type(a, b))


# op -> (numpy reference, lhs range, rhs range)
ARITH = {
    "add": (np.add, (-2, 2), (-2, 2)),
    "sub": (np.subtract, (-2, 2), (-2, 2)),
    "mul": (np.multiply, (-2, 2), (-2, 2)),
    "div": (np.divide, (-2, 2), (0.5, 2)),
}
BROADCAST = {f"broadcast_{k}": v for k, v in ARITH.items()}
BROADCAST.update({
    "broadcast_maximum": (np.maximum, (-2, 2), (-2, 2)),
    "broadcast_minimum": (np.minimum, (-2, 2), (-2, 2)),
    "broadcast_power": (np.power, (0.5, 2), (-1.5, 1.5)),
    "broadcast_equal": (_cmp(np.equal), (-2, 2), (-2, 2)),
    "broadcast_not_equal": (_cmp(np.not_equal), (-2, 2), (-2, 2)),
    "broadcast_greater": (_cmp(np.greater), (-2, 2), (-2, 2)),
    "broadcast_greater_equal": (_cmp(np.greater_equal), (-2, 2), (-2, 2)),
    "broadcast_lesser": (_cmp(np.less), (-2, 2), (-2, 2)),
    "broadcast_lesser_equal": (_cmp(np.less_equal), (-2, 2), (-2, 2)),
})
COMPARISONS = {k for k in BROADCAST if k.endswith(("equal", "greater", "lesser"))}

# lhs shape, rhs shape: same, scalar-like, row, column, 3-D/4-D mixes, empty
PAIRS = [((3, 4), (3, 4)), ((1,), (2, 3)), ((2, 3), (1, 1)), ((2, 3), (3,)), ((2, 3), (2, 1)),
         ((2, 1), (1, 3)), ((2, 3, 4), (3, 1)), ((2, 1, 4), (1, 3, 1)), ((2, 3, 4, 5), (1, 3, 1, 1)),
         ((2, 1, 3, 1), (1, 2, 1, 3)), ((0, 3), (1, 3)), ((0, 3), (0, 3)), ((1,), (1,))]


def operands(rng, ranges, lshape, rshape, dtype=np.float64, ties=False):
    (l0, l1), (r0, r1) = ranges
    a = rng.uniform(l0, l1, lshape).astype(dtype)
    b = rng.uniform(r0, r1, rshape).astype(dtype)
    if ties:   # comparisons: make some elements equal (exactly representable values)
        a = np.round(a * 2) / 2
        b = np.round(b * 2) / 2
    return a, b


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)


# -- elemwise_* ------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 4), (1,), (0, 3), (2, 1, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", list(ARITH))
def test_elemwise_forward_grid(op, dtype, shape, rng):
    ref, *ranges = ARITH[op]
    a, b = operands(rng, ranges, shape, shape, dtype)
    s = getattr(sym, f"elemwise_{op}")(sym.var("a"), sym.var("b"))
    (out,) = check_symbolic_forward(s, {"a": a, "b": b}, [ref(a, b)], **tol(dtype))
    assert out.dtype == dtype


@pytest.mark.parametrize("alias,op", [("_plus", "add"), ("_Plus", "add"), ("_minus", "sub"),
                                      ("_Minus", "sub"), ("_mul", "mul"), ("_Mul", "mul"),
                                      ("_div", "div"), ("_Div", "div")])
def test_elemwise_aliases(alias, op, rng):
    a, b = operands(rng, ARITH[op][1:], (2, 2), (2, 2))
    s = getattr(sym, alias)(sym.var("a"), sym.var("b"))
    check_symbolic_forward(s, {"a": a, "b": b}, [ARITH[op][0](a, b)])


def test_symbol_arithmetic_uses_elemwise_ops(rng):
    a, b = rng.uniform(0.5, 2, (2, 3)), rng.uniform(0.5, 2, (2, 3))
    x, y = sym.var("x"), sym.var("y")
    s = (x + y) * x / y - y
    check_symbolic_forward(s, {"x": a, "y": b}, [(a + b) * a / b - b])
    check_numeric_gradient(s, {"x": a, "y": b})


@pytest.mark.parametrize("op", list(ARITH))
def test_elemwise_gradient(op, rng):
    a, b = operands(rng, ARITH[op][1:], (2, 3), (2, 3))
    s = getattr(sym, f"elemwise_{op}")(sym.var("a"), sym.var("b"))
    check_numeric_gradient(s, {"a": a, "b": b})


@pytest.mark.cuda
@pytest.mark.parametrize("op", list(ARITH))
def test_elemwise_cuda_matches_cpu(op, rng):
    a, b = operands(rng, ARITH[op][1:], (2, 3), (2, 3), np.float32)
    check_consistency(getattr(sym, f"elemwise_{op}")(sym.var("a"), sym.var("b")), {"a": a, "b": b})


def test_elemwise_shape_error():
    s = sym.elemwise_add(sym.var("a"), sym.var("b"))
    with pytest.raises(nbdl.ShapeError, match=r"elemwise_add.*\(2, 3\).*\(3, 2\)"):
        s.infer_shape(a=(2, 3), b=(3, 2))
    with pytest.raises(nbdl.ShapeError, match=r"elemwise_mul.*\(1, 3\).*\(3,\)"):
        sym.elemwise_mul(sym.var("a"), sym.var("b")).infer_shape(a=(1, 3), b=(3,))


def test_elemwise_infers_both_ways():
    s = sym.elemwise_sub(sym.var("a"), sym.var("b"))
    args, outs, _ = s.infer_shape(b=(4, 1))
    assert args == [(4, 1), (4, 1)] and outs == [(4, 1)]


# -- broadcast_* ----------------------------------------------------------------------------

@pytest.mark.parametrize("lshape,rshape", PAIRS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", list(BROADCAST))
def test_broadcast_forward_grid(op, dtype, lshape, rshape, rng):
    ref, *ranges = BROADCAST[op]
    a, b = operands(rng, ranges, lshape, rshape, dtype, ties=op in COMPARISONS)
    s = getattr(sym, op)(sym.var("a"), sym.var("b"))
    expect = ref(a.astype(np.float64), b.astype(np.float64))
    (out,) = check_symbolic_forward(s, {"a": a, "b": b}, [expect], **tol(dtype))
    assert out.dtype == dtype and out.shape == expect.shape


@pytest.mark.parametrize("alias,op", [("broadcast_plus", np.add), ("broadcast_minus", np.subtract)])
def test_broadcast_aliases(alias, op, rng):
    a, b = rng.rand(2, 3), rng.rand(3)
    check_symbolic_forward(getattr(sym, alias)(sym.var("a"), sym.var("b")), {"a": a, "b": b},
                           [op(a, b)])


GRAD_PAIRS = [((2, 3), (2, 3)), ((2, 3), (1, 3)), ((3, 1), (1, 2)), ((1,), (2, 3)),
              ((2, 3, 2), (3, 1))]


@pytest.mark.parametrize("lshape,rshape", GRAD_PAIRS)
@pytest.mark.parametrize("op", [k for k in BROADCAST if k not in COMPARISONS])
def test_broadcast_gradient(op, lshape, rshape, rng):
    a, b = operands(rng, BROADCAST[op][1:], lshape, rshape)
    check_numeric_gradient(getattr(sym, op)(sym.var("a"), sym.var("b")), {"a": a, "b": b})


@pytest.mark.parametrize("op", sorted(COMPARISONS))
def test_comparison_has_zero_gradient(op, rng):
    a, b = rng.rand(2, 3), rng.rand(3)
    check_symbolic_backward(getattr(sym, op)(sym.var("a"), sym.var("b")), {"a": a, "b": b},
                            [np.ones((2, 3))], {"a": np.zeros((2, 3)), "b": np.zeros(3)})


@pytest.mark.cuda
@pytest.mark.parametrize("op", list(BROADCAST))
def test_broadcast_cuda_matches_cpu(op, rng):
    a, b = operands(rng, BROADCAST[op][1:], (2, 1, 3), (1, 2, 1), np.float32,
                    ties=op in COMPARISONS)
    check_consistency(getattr(sym, op)(sym.var("a"), sym.var("b")), {"a": a, "b": b})


@pytest.mark.cuda
@pytest.mark.parametrize("lshape,rshape", [((1,), (2, 3)), ((2, 3), (1,)), ((2, 3), (2, 3)),
                                           ((2, 3, 2), (3, 1))])
def test_broadcast_layouts_cuda_matches_cpu(lshape, rshape, rng):
    a, b = rng.uniform(0.5, 2, lshape).astype(np.float32), rng.uniform(0.5, 2, rshape).astype(np.float32)
    check_consistency(sym.broadcast_div(sym.var("a"), sym.var("b")), {"a": a, "b": b})


def test_broadcast_shape_errors():
    s = sym.broadcast_add(sym.var("a"), sym.var("b"))
    with pytest.raises(nbdl.ShapeError, match=r"broadcast_add.*\(2, 3\).*\(4,\)"):
        s.infer_shape(a=(2, 3), b=(4,))
    with pytest.raises(nbdl.ShapeError, match=r"broadcast_mul.*\(0, 3\).*\(2, 3\)"), \
            nbdl.np_shape(True):
        sym.broadcast_mul(sym.var("a"), sym.var("b")).infer_shape(a=(0, 3), b=(2, 3))


def test_broadcast_too_many_alternations_is_an_error():
    shape_a, shape_b = (2, 1) * 4, (1, 2) * 4
    s = sym.broadcast_add(sym.var("a"), sym.var("b"))
    with pytest.raises(nbdl.ShapeError, match="broadcast_add"):
        check_symbolic_forward(s, {"a": np.ones(shape_a), "b": np.ones(shape_b)}, [None])


def test_broadcast_inference_is_partial():
    s = sym.broadcast_add(sym.var("a"), sym.var("b"))
    args, outs, _ = s.infer_shape_partial(a=(2, 3))
    assert args == [(2, 3), ()] and outs == [()]
    args, outs, _ = s.infer_shape(a=(2, 1, 3), b=(4, 1))
    assert outs == [(2, 4, 3)]


def test_dtype_mismatch_and_integer_inputs():
    s = sym.broadcast_add(sym.var("a"), sym.var("b"))
    with pytest.raises(nbdl.DTypeError, match="broadcast_add.*float32.*float64"):
        s.infer_type(a=np.float32, b=np.float64)
    # integers and float16 are computed (tests/ops/test_elemwise_int_nan.py); bool is not
    (out,) = check_symbolic_forward(s, {"a": np.ones((2, 2), np.int64),
                                        "b": np.ones(2, np.int64)}, [np.full((2, 2), 2)])
    assert out.dtype == np.int64
    with pytest.raises(nbdl.DTypeError, match="bool"):
        check_symbolic_forward(sym.elemwise_add(sym.var("a"), sym.var("b")),
                               {"a": np.ones(2, np.bool_), "b": np.ones(2, np.bool_)}, [None])


def test_pow_operator_is_power(rng):
    """``x ** y`` on Symbols is MXNet's same-shape ``_power`` (``broadcast_power``
    broadcasts)."""
    a, b = rng.uniform(0.5, 2, (2, 3)), rng.uniform(-1, 1, (2, 3))
    x, y = sym.var("x"), sym.var("y")
    check_symbolic_forward(x ** y, {"x": a, "y": b}, [a ** b])
    check_symbolic_forward(sym.broadcast_power(x, y), {"x": a, "y": b[0]}, [a ** b[0]])


# -- _reduce_sum_like ------------------------------------------------------------------------

REDUCE = [((2, 3), (2, 3)), ((2, 3), (1, 3)), ((2, 3), (3,)), ((2, 3), (2, 1)), ((2, 3), (1,)),
          ((2, 3, 4), (3, 1)), ((2, 3, 4, 5), (1, 3, 1, 1)), ((2, 3, 4, 5), (2, 1, 4, 1)),
          ((3, 4), (1, 1)), ((0, 3), (1, 3)), ((0, 3), (0, 1)), ((2, 1, 3), (1, 1, 3))]


def np_sum_like(x, shape):
    nd = x.ndim
    padded = (1,) * (nd - len(shape)) + tuple(shape)
    axes = tuple(i for i in range(nd) if padded[i] == 1 and x.shape[i] != 1)
    return x.sum(axis=axes, keepdims=True).reshape(shape)


@pytest.mark.parametrize("dshape,lshape", REDUCE)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduce_sum_like_forward(dshape, lshape, dtype, rng):
    x = rng.uniform(-1, 1, dshape).astype(dtype)
    like = np.zeros(lshape, dtype)
    s = sym._reduce_sum_like(sym.var("x"), sym.var("like"))
    (out,) = check_symbolic_forward(s, {"x": x, "like": like}, [np_sum_like(x, lshape)],
                                    **tol(dtype))
    assert out.dtype == dtype


def test_reduce_sum_like_gradient(rng):
    s = sym._reduce_sum_like(sym.var("x"), sym.var("like"))
    check_numeric_gradient(s, {"x": rng.rand(2, 3, 2), "like": np.zeros((3, 1))}, grad_nodes=["x"])


@pytest.mark.cuda
@pytest.mark.parametrize("dshape,lshape", [((2, 3), (1, 3)), ((2, 3), (2, 3)), ((2, 3, 2), (1,)),
                                           ((2, 3, 2), (2, 1, 2))])
def test_reduce_sum_like_cuda_matches_cpu(dshape, lshape, rng):
    s = sym._reduce_sum_like(sym.var("x"), sym.var("like"))
    check_consistency(s, {"x": rng.rand(*dshape).astype(np.float32),
                          "like": np.zeros(lshape, np.float32)}, grad=False)


def test_reduce_sum_like_shape_rules():
    s = sym._reduce_sum_like(sym.var("x"), sym.var("like"))
    with pytest.raises(nbdl.ShapeError, match=r"_reduce_sum_like.*\(2, 3\).*\(2, 2\)"):
        s.infer_shape(x=(2, 3), like=(2, 2))
    args, outs, _ = s.infer_shape(x=(2, 3), like=(1, 3))
    assert outs == [(1, 3)]


def test_integer_mod_has_no_gradient_as_mxnet():
    # MXNet's mod_grad / mod_rgrad are 0 for integer dtypes (1 and -floor(a / b) otherwise)
    a, b = nbdl.sym.var("a"), nbdl.sym.var("b")
    c = nbdl.sym.broadcast_mod(nbdl.sym.cast(a, dtype="int32"), nbdl.sym.cast(b, dtype="int32"))
    av, bv = np.array([[5.0, 6, 7], [8, 9, 10]]), np.array([[2.0, 3, 4]])
    check_symbolic_backward(c, {"a": av, "b": bv}, [np.ones((2, 3), np.int32)],
                            {"a": np.zeros((2, 3)), "b": np.zeros((1, 3))})
    check_symbolic_backward(nbdl.sym.broadcast_mod(a, b), {"a": av, "b": bv}, [np.ones((2, 3))],
                            {"a": np.ones((2, 3)), "b": -np.floor(av / bv).sum(axis=0, keepdims=True)})
