"""The executor examples an MXNet user knows, run as written."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import assert_almost_equal


def test_mul_bound_with_dict():
    A = nbdl.sym.Variable("A")
    B = nbdl.sym.Variable("B")
    C = A * B
    a = nbdl.nd.ones((3, 4)) * 2
    b = nbdl.nd.ones((3, 4)) * 3
    ex = C.bind(nbdl.cpu(), args={"A": a, "B": b})
    ex.forward()
    assert_almost_equal(ex.outputs[0].asnumpy(), np.full((3, 4), 6.0, np.float32))


@pytest.mark.parametrize("op,grads", [
    ("+", lambda l, r, g: (g, g)),
    ("-", lambda l, r, g: (g, -g)),
    ("*", lambda l, r, g: (g * r, g * l)),
    ("/", lambda l, r, g: (g / r, -g * l / (r * r))),
])
def test_four_arithmetic_gradients_with_list_args(op, grads):
    rng = np.random.RandomState(0)
    lhs, rhs = nbdl.sym.Variable("lhs"), nbdl.sym.Variable("rhs")
    out = {"+": lhs + rhs, "-": lhs - rhs, "*": lhs * rhs, "/": lhs / rhs}[op]
    l_np = rng.uniform(1, 2, (4, 5)).astype(np.float32)
    r_np = rng.uniform(1, 2, (4, 5)).astype(np.float32)
    g_np = rng.uniform(-1, 1, (4, 5)).astype(np.float32)
    l_grad, r_grad = nbdl.nd.empty((4, 5)), nbdl.nd.empty((4, 5))
    ex = out.bind(nbdl.cpu(), args=[nbdl.nd.array(l_np), nbdl.nd.array(r_np)],
                  args_grad=[l_grad, r_grad])
    ex.forward(is_train=True)
    ref = {"+": l_np + r_np, "-": l_np - r_np, "*": l_np * r_np, "/": l_np / r_np}[op]
    assert_almost_equal(ex.outputs[0].asnumpy(), ref, rtol=1e-6)
    ex.backward(out_grads=nbdl.nd.array(g_np))
    el, er = grads(l_np, r_np, g_np)
    assert_almost_equal(l_grad.asnumpy(), el, rtol=1e-5, atol=1e-6)
    assert_almost_equal(r_grad.asnumpy(), er, rtol=1e-5, atol=1e-6)


def test_grad_req_add_accumulates():
    lhs, rhs = nbdl.sym.Variable("lhs"), nbdl.sym.Variable("rhs")
    out = lhs * rhs
    l_np = np.arange(6, dtype=np.float32).reshape(2, 3)
    r_np = np.full((2, 3), 2.0, np.float32)
    l_grad = nbdl.nd.ones((2, 3))
    r_grad = nbdl.nd.zeros((2, 3))
    ex = out.bind(nbdl.cpu(), args={"lhs": nbdl.nd.array(l_np), "rhs": nbdl.nd.array(r_np)},
                  args_grad={"lhs": l_grad, "rhs": r_grad}, grad_req="add")
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward(out_grads=nbdl.nd.ones((2, 3)))
    assert_almost_equal(l_grad.asnumpy(), 1 + 2 * r_np)
    assert_almost_equal(r_grad.asnumpy(), 2 * l_np)


def test_forward_injects_data_by_name():
    x = nbdl.sym.Variable("x")
    y = x * 2 + 1
    ex = y.simple_bind(nbdl.cpu(), x=(2, 2))
    out = ex.forward(x=np.array([[1, 2], [3, 4]], np.float32))
    assert_almost_equal(out[0].asnumpy(), np.array([[3, 5], [7, 9]], np.float32))
    out = ex.forward(x=nbdl.nd.array([[0, 0], [1, 1]]))
    assert_almost_equal(out[0].asnumpy(), np.array([[1, 1], [3, 3]], np.float32))


def test_print_executor_of_plus_scalar():
    x = nbdl.sym.Variable("x")
    y = x + 1
    ex = y.bind(nbdl.cpu(), args={"x": nbdl.nd.ones((2, 3))})
    text = str(ex)
    assert "Symbol Outputs:" in text
    assert "Variable:x" in text
    assert f"Op:_plus_scalar, Name={y.name}" in text
    assert "Attrs:\n\tscalar=1\n" in text
    assert "MB allocated" in text and "TempSpace resource requested" in text
    assert text == nbdl.debug_str(ex)
    assert f"{ex.memory_plan.arena_bytes} bytes planned" in text


def test_grad_req_dict_and_constants():
    a, b = nbdl.sym.var("a"), nbdl.sym.var("b")
    y = a * b
    b_grad = nbdl.nd.zeros((2,))
    ex = y.bind(nbdl.cpu(), args={"a": nbdl.nd.ones((2,)), "b": nbdl.nd.ones((2,)) * 3},
                args_grad={"a": nbdl.nd.zeros((2,)), "b": b_grad},
                grad_req={"a": nbdl.GRAD_WRITE})
    ex.forward(is_train=True)
    ex.backward(nbdl.nd.ones((2,)))
    assert_almost_equal(ex.grad_dict["a"].asnumpy(), np.full(2, 3, np.float32))
    assert "b" not in ex.grad_dict          # 'null' (unlisted): no gradient, as in MXNet
    assert_almost_equal(b_grad.asnumpy(), np.zeros(2, np.float32))


def test_missing_gradient_array_means_null():
    a, b = nbdl.sym.var("a"), nbdl.sym.var("b")
    ex = (a + b).bind(nbdl.cpu(), args=[nbdl.nd.ones((2,)), nbdl.nd.ones((2,))],
                      args_grad=[None, nbdl.nd.zeros((2,))])
    assert ex.grad_arrays[0] is None
    ex.forward(is_train=True)
    ex.backward(nbdl.nd.ones((2,)))
    assert_almost_equal(ex.grad_arrays[1].asnumpy(), np.ones(2, np.float32))


def test_dicts_and_outputs():
    data = nbdl.sym.var("data")
    fc = nbdl.sym.FullyConnected(data, num_hidden=3, name="fc")
    ex = fc.simple_bind(nbdl.cpu(), data=(2, 4))
    assert list(ex.arg_dict) == ["data", "fc_weight", "fc_bias"]
    assert list(ex.grad_dict) == ["data", "fc_weight", "fc_bias"]   # as MXNet: data too
    ex = fc.simple_bind(nbdl.cpu(), grad_req={"fc_weight": "write", "fc_bias": "write"}, data=(2, 4))
    assert list(ex.grad_dict) == ["fc_weight", "fc_bias"]
    assert list(ex.output_dict) == ["fc_output"]
    assert ex.aux_dict == {}
    assert ex.arg_dict["fc_weight"].shape == (3, 4)


def test_copy_params_from_and_reshape_share_parameters():
    data = nbdl.sym.var("data")
    fc = nbdl.sym.FullyConnected(data, num_hidden=3, name="fc")
    ex = fc.simple_bind(nbdl.cpu(), data=(2, 4))
    w = np.random.RandomState(0).rand(3, 4).astype(np.float32)
    ex.copy_params_from({"fc_weight": w, "fc_bias": np.ones(3, np.float32)})
    x = np.random.RandomState(1).rand(5, 4).astype(np.float32)
    ex2 = ex.reshape(allow_up_sizing=True, data=(5, 4))
    assert ex2.arg_dict["fc_weight"] is ex.arg_dict["fc_weight"]
    out = ex2.forward(data=x)[0].asnumpy()
    assert_almost_equal(out, x @ w.T + 1, rtol=1e-5)
    with pytest.raises(nbdl.BindError, match="nope"):
        ex.copy_params_from({"nope": np.ones(1)})
    ex.copy_params_from({"nope": np.ones(1)}, allow_extra_params=True)


def test_copy_params_from_is_all_or_nothing():
    data = nbdl.sym.var("data")
    fc = nbdl.sym.FullyConnected(data, num_hidden=3, name="fc")
    ex = fc.simple_bind(nbdl.cpu(), data=(2, 4))
    before = ex.arg_dict["fc_weight"].asnumpy().copy()
    with pytest.raises(nbdl.ShapeError, match="fc_bias"):
        ex.copy_params_from({"fc_weight": np.ones((3, 4), np.float32), "fc_bias": np.ones(4, np.float32)})
    assert_almost_equal(ex.arg_dict["fc_weight"].asnumpy(), before)


def test_monitor_all_names_inputs_as_mxnet():
    # before each step: a variable input by its own name, then every input as
    # <node>_<input name> (input<i> for ops MXNet registers without names)
    data = nbdl.sym.var("data")
    y = nbdl.sym.Activation(nbdl.sym.FullyConnected(data, num_hidden=2, name="fc"),
                            act_type="relu", name="act")
    ex = y.simple_bind(nbdl.cpu(), grad_req="null", data=(1, 3))
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append(name), monitor_all=True)
    ex.forward()
    assert seen == ["data", "fc_data", "fc_weight", "fc_weight", "fc_bias", "fc_bias",
                    "fc_output", "act_input0", "act_output"]
    seen.clear()
    ex.set_monitor_callback(lambda name, arr: seen.append(name))
    ex.forward()
    assert seen == ["fc_output", "act_output"]


def test_simple_bind_dtypes_as_mxnet():
    """Without a type_dict every argument not declared with a dtype is
    float32 (MXNet's simple_bind); a declared dtype is kept; with a
    type_dict the others are inferred from it."""
    x, w = nbdl.sym.var("x"), nbdl.sym.var("w", dtype="float64")
    ex = (x * 2).simple_bind(nbdl.cpu(), x=(2, 3))
    assert ex.arg_dict["x"].dtype == np.float32
    ex = (w * 2).simple_bind(nbdl.cpu(), w=(2, 3))
    assert ex.arg_dict["w"].dtype == np.float64 and ex.outputs[0].dtype == np.float64
    # x is float32 without a type_dict: x + w (float64) is a conflict, as in MXNet
    with pytest.raises(nbdl.errors.DTypeError, match="float64"):
        (x + w).simple_bind(nbdl.cpu(), x=(2, 3), w=(2, 3))
    # with one, x's dtype is inferred from w's
    ex = (x + w).simple_bind(nbdl.cpu(), x=(2, 3), w=(2, 3), type_dict={})
    assert ex.arg_dict["x"].dtype == np.float64
    ex = (x + nbdl.sym.var("v")).simple_bind(nbdl.cpu(), x=(2, 3), v=(2, 3),
                                             type_dict={"v": np.float16})
    assert ex.arg_dict["x"].dtype == np.float16
