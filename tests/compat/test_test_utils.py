"""``nbdl.test_utils``: MXNet 1.x's helper names, signatures and semantics,
checked against numpy computed here."""
import os
import sys

import numpy as np
import pytest

import nbdl
from nbdl import test_utils as tu
from nbdl.errors import ArgumentError


# -- assert_almost_equal / almost_equal / same ------------------------------------------

def test_assert_almost_equal_broadcasts_like_numpy():
    a = np.arange(6.0).reshape(2, 3)
    tu.assert_almost_equal(a, a[0:1] + np.array([[0.0], [3.0]]))
    tu.assert_almost_equal(np.full((2, 3), 2.0), 2.0)         # scalar against an array
    with pytest.raises(AssertionError, match=r"a.shape = \(2, 3\) and b.shape = \(3,\)"):
        tu.assert_almost_equal(a, a[0], use_broadcast=False)
    with pytest.raises(AssertionError, match=r"shape \(2, 3\) and b of shape \(2,\) cannot be broadcast"):
        tu.assert_almost_equal(a, np.zeros(2))


def test_assert_almost_equal_message_names_location_and_mismatch_share():
    a = np.zeros((4, 5))
    b = a.copy()
    b[1, 2] = 3.0
    b[3, 4] = 1.0
    with pytest.raises(AssertionError) as e:
        tu.assert_almost_equal(a, b, rtol=1e-5, atol=1e-3, names=("mine", "ref"))
    msg = str(e.value)
    assert "exceeds tolerance rtol=1.000000e-05, atol=1.000000e-03 (mismatch 10.000000%)" in msg
    assert "Location of maximum error: (1, 2), mine=0.00000000, ref=3.00000000" in msg
    # both mismatches listed, worst first
    assert msg.index("(1, 2), mine") < msg.index("(3, 4), mine")
    assert " mine: array(" in msg and " ref: array(" in msg
    # the error value is |a-b| / (atol + rtol|b|) at the worst place
    assert f"Error {3.0 / (1e-3 + 1e-5 * 3.0):f}" in msg


def test_assert_almost_equal_counts_at_least_when_capped():
    a, b = np.zeros(100), np.ones(100)
    with pytest.raises(AssertionError, match=r"mismatch at least 11.000000%"):
        tu.assert_almost_equal(a, b, mismatches=(3, 10))
    with pytest.raises(AssertionError, match=r"mismatch 100.000000%"):
        tu.assert_almost_equal(a, b, mismatches=(3, 0))


def test_assert_almost_equal_nan_handling():
    a = np.array([1.0, np.nan, 3.0])
    tu.assert_almost_equal(a, a.copy(), equal_nan=True)
    with pytest.raises(AssertionError, match="Location of maximum error: \\(1,\\)"):
        tu.assert_almost_equal(a, a.copy())
    tu.assert_almost_equal_ignore_nan(a, np.array([1.0, 7.0, 3.0]))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_ignore_nan(a, np.array([1.0, 7.0, 4.0]))


def test_default_tolerances_follow_the_less_precise_operand():
    x32 = np.ones(3, np.float32)
    tu.assert_almost_equal(x32, x32 + 5e-4)                 # float32: atol 1e-3
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(x32.astype(np.float64), x32.astype(np.float64) + 5e-4)
    tu.assert_almost_equal(x32.astype(np.float16), x32 + 0.05)    # float16: atol 1e-1
    assert tu.get_tols(x32, np.ones(3), None, None) == (1e-4, 1e-3)
    assert tu.get_tols(x32, x32, {np.float32: 0.5}, 0.25) == (0.5, 0.25)
    assert tu.default_rtols()[np.dtype(np.int32)] == 0
    assert tu.get_rtol() == 1e-5 and tu.get_atol(None, np.float32) == 1e-3 and tu.get_etol() == 0
    assert tu.default_numeric_eps()[np.dtype(np.float32)] == 1.0 / 2 ** 9
    with pytest.raises(AssertionError):                      # integers compare exactly
        tu.assert_almost_equal(np.array([1, 2]), np.array([1, 3]))


def test_nd_arrays_and_bools():
    a = nbdl.nd.array(np.arange(4, dtype=np.float32))
    tu.assert_almost_equal(a, np.arange(4.0))
    tu.assert_almost_equal(a, a)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(a, np.arange(4.0) + 1)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([True, False]), np.array([True, True]))
    assert tu.effective_dtype(a) == np.float32


def test_almost_equal_and_same():
    a = np.arange(1.0, 7.0).reshape(2, 3)
    assert tu.almost_equal(a, a + 1e-6)            # default rtol 1e-5 (float64's)
    assert not tu.almost_equal(a, a + 1e-4)
    assert not tu.almost_equal(np.zeros(2), np.full(2, 1e-7))     # atol 1e-20
    assert tu.almost_equal(np.zeros(2), np.full(2, 1e-7), atol=1e-6)
    assert tu.almost_equal(a, a[0:1] + np.array([[0.0], [3.0]]))
    assert not tu.almost_equal(a, np.zeros(2))
    with pytest.raises(AssertionError):
        tu.almost_equal(a, a[0], use_broadcast=False)
    assert tu.same(a, a.copy()) and not tu.same(a, a + 1) and not tu.same(a, a[0])
    assert tu.same(nbdl.nd.array(a), a)


# -- random helpers ----------------------------------------------------------------

def test_random_shapes_and_arrays():
    np.random.seed(3)
    for _ in range(20):
        s2, s3, sn = tu.rand_shape_2d(4, 5), tu.rand_shape_3d(2, 3, 4), tu.rand_shape_nd(4, dim=3)
        assert len(s2) == 2 and 1 <= s2[0] <= 4 and 1 <= s2[1] <= 5
        assert len(s3) == 3 and all(1 <= d <= m for d, m in zip(s3, (2, 3, 4)))
        assert len(sn) == 4 and all(1 <= d <= 3 for d in sn)
    zs = [tu.rand_shape_nd(3, dim=1, allow_zero_size=True) for _ in range(30)]
    assert any(0 in s for s in zs)
    one = tu.random_arrays((2, 3))
    a, b, c = tu.random_arrays((2, 3), (4,), ())
    assert one.shape == (2, 3) and one.dtype == np.float32
    assert a.shape == (2, 3) and b.shape == (4,) and c.shape == () and c.dtype == np.float32
    nd = tu.rand_ndarray((3, 2), dtype=np.float64)
    assert isinstance(nd, nbdl.NDArray) and nd.shape == (3, 2) and nd.dtype == np.float64
    with pytest.raises(ArgumentError, match="stype='csr'.*dense"):
        tu.rand_ndarray((3, 2), stype="csr")
    pop = list(range(10))
    pick = tu.random_sample(pop, 4)
    assert len(pick) == 4 and len(set(pick)) == 4 and set(pick) <= set(pop) and pop == list(range(10))
    with pytest.raises(ArgumentError, match="k=11"):
        tu.random_sample(pop, 11)


def test_np_reduce_matches_numpy():
    x = np.random.RandomState(0).rand(2, 3, 4)
    np.testing.assert_allclose(tu.np_reduce(x, (0, 2), True, np.sum), x.sum(axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(tu.np_reduce(x, 1, False, np.max), x.max(axis=1))
    np.testing.assert_allclose(tu.np_reduce(x, None, False, np.sum), x.sum())
    np.testing.assert_allclose(tu.np_reduce(x, -1, True, np.min), x.min(axis=-1, keepdims=True))


# -- context, environment, stderr, exceptions ------------------------------------

def test_default_context_and_set_default_context():
    assert tu.default_context() == nbdl.cpu()
    try:
        tu.set_default_context(nbdl.cpu(1))
        assert tu.default_context() == nbdl.cpu(1) and nbdl.current_context() == nbdl.cpu(1)
    finally:
        tu.set_default_context(nbdl.cpu(0))
    assert tu.default_context() == nbdl.cpu(0)
    assert tu.default_dtype() is np.float32


def test_environment_sets_and_restores():
    os.environ["NBDL_TU_A"] = "old"
    os.environ.pop("NBDL_TU_B", None)
    with tu.environment({"NBDL_TU_A": "new", "NBDL_TU_B": "set"}):
        assert os.environ["NBDL_TU_A"] == "new" and os.environ["NBDL_TU_B"] == "set"
    assert os.environ["NBDL_TU_A"] == "old" and "NBDL_TU_B" not in os.environ
    with pytest.raises(RuntimeError):
        with tu.environment("NBDL_TU_A", None):
            assert "NBDL_TU_A" not in os.environ
            raise RuntimeError("body failed")
    assert os.environ.pop("NBDL_TU_A") == "old"
    with pytest.raises(ArgumentError, match="expected \\(name, value\\) or one dict"):
        with tu.environment("A", "1", "2"):
            pass
    with pytest.raises(ArgumentError, match="must be str"):
        with tu.environment("NBDL_TU_A", 1):
            pass


def test_discard_stderr_silences_file_descriptor_2(capfd):
    with tu.discard_stderr():
        os.write(2, b"hidden\n")
        print("also hidden", file=sys.stderr)
    os.write(2, b"shown\n")
    err = capfd.readouterr().err
    assert "hidden" not in err and "shown" in err


def test_assert_exception():
    tu.assert_exception(int, ValueError, "x")
    with pytest.raises(AssertionError, match="did not raise ValueError"):
        tu.assert_exception(int, ValueError, "3")
    with pytest.raises(TypeError):        # another exception is not swallowed
        tu.assert_exception(int, ValueError, object())


def test_use_np_is_the_util_decorator():
    assert tu.use_np is nbdl.util.use_np

    @tu.use_np
    def f():
        return nbdl.util.is_np_shape(), nbdl.util.is_np_array()
    assert f() == (True, True)
    assert not nbdl.util.is_np_array()


# -- symbol checks ---------------------------------------------------------------

def _fc():
    data = nbdl.sym.var("data")
    return nbdl.sym.FullyConnected(data, num_hidden=3, name="fc")


def test_check_symbolic_forward_and_backward_against_numpy():
    rng = np.random.RandomState(0)
    x, w, b = rng.rand(4, 5), rng.rand(3, 5), rng.rand(3)
    sym = _fc()
    y = x.dot(w.T) + b
    outs = tu.check_symbolic_forward(sym, [x, w, b], [y])
    assert isinstance(outs[0], nbdl.NDArray) and outs[0].dtype == np.float32
    tu.check_symbolic_forward(sym, {"data": x, "fc_weight": w, "fc_bias": b}, {"fc_output": y},
                              dtype=np.float64, rtol=1e-12, atol=1e-12)
    with pytest.raises(AssertionError, match="EXPECTED_fc_output"):
        tu.check_symbolic_forward(sym, [x, w, b], [y + 1])
    g = rng.rand(4, 3)
    expected = {"data": g.dot(w), "fc_weight": g.T.dot(x), "fc_bias": g.sum(0)}
    grads = tu.check_symbolic_backward(sym, [x, w, b], [g], expected)
    np.testing.assert_allclose(grads["fc_bias"].asnumpy(), g.sum(0), rtol=1e-5)
    # 'add' accumulates onto the (random) starting gradient, 'null' leaves it alone
    tu.check_symbolic_backward(sym, [x, w, b], [g], expected,
                               grad_req={"data": "add", "fc_weight": "null", "fc_bias": "write"})
    with pytest.raises(AssertionError, match="BACKWARD_fc_weight"):
        tu.check_symbolic_backward(sym, [x, w, b], [g], {"fc_weight": g.T.dot(x) * 2})
    # head gradients past the outputs are ignored, as MXNet's executor does
    tu.check_symbolic_backward(sym, [x, w, b], [g, np.ones(3)], expected)


def test_symbolic_checks_refuse_bad_input():
    sym = _fc()
    x = np.ones((2, 5))
    with pytest.raises(ArgumentError, match="location has 1 arrays for 3 names"):
        tu.check_symbolic_forward(sym, [x], [x])
    with pytest.raises(ArgumentError, match="keys of location"):
        tu.check_symbolic_forward(sym, {"data": x}, [x])
    with pytest.raises(ArgumentError, match="dtype=.*int32"):
        tu.check_symbolic_forward(sym, [x, np.ones((3, 5)), np.ones(3)], [x], dtype=np.int32)
    with pytest.raises(ArgumentError, match="grad_req 'sum'"):
        tu.check_symbolic_backward(sym, [x, np.ones((3, 5)), np.ones(3)], [np.ones((2, 3))],
                                   {"data": x}, grad_req="sum")
    with pytest.raises(ArgumentError, match="not arguments"):
        tu.check_symbolic_backward(sym, [x, np.ones((3, 5)), np.ones(3)], [np.ones((2, 3))],
                                   {"nope": x})


def test_check_numeric_gradient():
    rng = np.random.RandomState(1)
    x, y = nbdl.sym.var("x"), nbdl.sym.var("y")
    sym = nbdl.sym.tanh(x) * y
    loc = [rng.rand(2, 3), rng.rand(2, 3)]
    tu.check_numeric_gradient(sym, loc, rtol=1e-2, atol=1e-3)
    tu.check_numeric_gradient(sym, loc, dtype=np.float64, rtol=1e-6, atol=1e-8)
    tu.check_numeric_gradient(sym, loc, grad_nodes={"x": "write", "y": "add"}, rtol=1e-2, atol=1e-3)
    tu.check_numeric_gradient(sym, loc, grad_nodes={"x": "null"}, rtol=1e-2, atol=1e-3)
    with pytest.raises(ArgumentError, match="too small"):
        tu.check_numeric_gradient(sym, loc, numeric_eps=1e-7)
    # a wrong gradient rule is caught: BlockGrad's gradient is zero, not the identity
    wrong = nbdl.sym.BlockGrad(x) * y
    with pytest.raises(AssertionError, match="NUMERICAL_x"):
        tu.check_numeric_gradient(wrong, loc, rtol=1e-2, atol=1e-3)


def test_check_consistency_across_dtypes():
    sym = _fc()
    ctx_list = [{"ctx": nbdl.cpu(), "data": (4, 5), "type_dict": {"data": np.float64}},
                {"ctx": nbdl.cpu(), "data": (4, 5), "type_dict": {"data": np.float32}}]
    rng = np.random.RandomState(0)
    args = {"data": rng.rand(4, 5), "fc_weight": rng.rand(3, 5), "fc_bias": rng.rand(3)}
    gt = tu.check_consistency(sym, ctx_list, arg_params=dict(args))
    y = args["data"].dot(args["fc_weight"].T) + args["fc_bias"]
    assert gt["fc_output"].dtype == np.float64
    np.testing.assert_allclose(gt["fc_output"], y, rtol=1e-12)
    # the head gradient is the first configuration's output (cast to float32)
    head = y.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(gt["fc_bias"], head.sum(0), rtol=1e-6)
    np.testing.assert_allclose(gt["data"], head.dot(args["fc_weight"]), rtol=1e-6)
    np.random.seed(0)
    gt = tu.check_consistency(sym, ctx_list)         # random inputs
    bad_truth = {k: np.asarray(v) + 1 for k, v in gt.items()}
    with pytest.raises(AssertionError):
        tu.check_consistency(sym, ctx_list, ground_truth=bad_truth)
    assert tu.check_consistency(sym, ctx_list, ground_truth=bad_truth, raise_on_err=False)
    with pytest.raises(ArgumentError, match="at least two"):
        tu.check_consistency(sym, ctx_list[:1])


def test_compare_optimizer():
    sgd = nbdl.optimizer.SGD
    tu.compare_optimizer(sgd(learning_rate=0.1, momentum=0.9), sgd(learning_rate=0.1, momentum=0.9),
                         (3, 4), np.float32)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(sgd(learning_rate=0.1), sgd(learning_rate=0.2), (3, 4), np.float32)
    with pytest.raises(ArgumentError, match="dense"):
        tu.compare_optimizer(sgd(), sgd(), (3, 4), np.float32, w_stype="row_sparse")


@pytest.mark.cuda
def test_checks_run_on_the_gpu_device():
    """cpu against gpu(0) (Numba's CUDA simulator in the test suite)."""
    if nbdl.context.num_gpus() == 0:
        pytest.skip("no CUDA device or simulator")
    x = np.random.RandomState(2).rand(2, 3)
    sym = nbdl.sym.tanh(nbdl.sym.var("x"))
    outs = tu.check_symbolic_forward(sym, [x], [np.tanh(x)], ctx=nbdl.gpu(0))
    assert outs[0].device == nbdl.gpu(0)
    tu.check_symbolic_backward(sym, [x], [np.ones_like(x)], [1 - np.tanh(x) ** 2], ctx=nbdl.gpu(0))
    ctx_list = [{"ctx": nbdl.cpu(), "x": (2, 3)}, {"ctx": nbdl.gpu(0), "x": (2, 3)}]
    gt = tu.check_consistency(sym, ctx_list, arg_params={"x": x})
    np.testing.assert_allclose(gt[sym.list_outputs()[0]], np.tanh(x), rtol=1e-6)
    with pytest.raises(AssertionError):
        tu.check_consistency(sym, ctx_list, arg_params={"x": x},
                             ground_truth={sym.list_outputs()[0]: np.tanh(x) + 1})


def test_star_import_brings_mxnets_module_names():
    names = {}
    exec("from nbdl.test_utils import *", names)
    assert names["mx"] is nbdl and names["np"] is np and names["array"] is nbdl.nd.array
    assert names["Symbol"] is nbdl.sym.Symbol and names["default_context"] is tu.default_context
    assert names["assert_almost_equal"] is tu.assert_almost_equal and "os" in names


def test_smaller_helpers():
    a = np.array([1.0, 2.0, np.nan])
    tu.assert_allclose(a, a.copy())                     # NaNs equal, as numpy's
    with pytest.raises(AssertionError):
        tu.assert_allclose(a, a * (1 + 1e-6))           # rtol 1e-7
    x = np.zeros(100)
    y = x.copy()
    y[:3] = 1.0
    tu.assert_almost_equal_with_err(x, y, etol=0.05)    # 3% mismatching is tolerated
    with pytest.raises(AssertionError, match="mismatch 3.000000%"):
        tu.assert_almost_equal_with_err(x, y, etol=0.02)
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 2
    flaky()
    assert len(calls) == 2

    @tu.retry(2)
    def always():
        raise AssertionError("no")
    with pytest.raises(AssertionError, match="no"):
        always()
    with pytest.raises(ArgumentError, match="positive int"):
        tu.retry(0)
    d = nbdl.sym.var("d")
    out = tu.simple_forward(d * 2.0 + 1.0, d=np.arange(3.0))
    np.testing.assert_allclose(out, [1.0, 3.0, 5.0])
    assert tu.same_symbol_structure(nbdl.sym.tanh(d), nbdl.sym.tanh(nbdl.sym.var("e")))
    assert not tu.same_symbol_structure(nbdl.sym.tanh(d), nbdl.sym.sigmoid(d))
    g = np.random.RandomState(0).rand(2, 3, 4)
    np.testing.assert_allclose(tu.collapse_sum_like(g, (3, 1)), g.sum(axis=(0, 2)).reshape(3, 1))
    np.testing.assert_allclose(tu.collapse_sum_like(g, (2, 3, 4)), g)
    assert tu.collapse_sum_like(g, (0, 4)).shape == (0, 4)
    with pytest.raises(ArgumentError, match="does not broadcast"):
        tu.collapse_sum_like(g, (2, 4))
    assert list(tu.list_gpus()) == list(range(nbdl.context.num_gpus()))
    x0, y0 = tu.rand_coord_2d(2, 3, 5, 6)
    assert (x0, y0) == (2, 5)


def test_symbolic_checks_without_head_gradients_and_with_asnumpy_dtype():
    x = np.random.RandomState(4).rand(3, 2)
    v = nbdl.sym.var("x")
    loss = nbdl.sym.sum(v * v)
    # no out_grads: backward from a head gradient of ones
    tu.check_symbolic_backward(loss, [x], None, [2 * x])
    # 'asnumpy' keeps each input's dtype (float64 here, so tolerances are float64's)
    outs = tu.check_symbolic_forward(v * 3.0, [x], [3 * x], dtype="asnumpy")
    assert outs[0].dtype == np.float64
    with pytest.raises(AssertionError):
        tu.check_symbolic_forward(v * 3.0, [x], [3 * x + 1e-6], dtype="asnumpy", rtol=1e-9, atol=0)


def test_numeric_gradient_of_arrays_not_in_c_order():
    # the finite differences perturb the values themselves, not a copy
    x = np.asfortranarray(np.random.RandomState(0).uniform(-1, 1, (3, 4)))
    w = np.copy(np.swapaxes(np.random.RandomState(1).uniform(-1, 1, (4, 2)), 0, 1), order="K")
    s = nbdl.sym.dot(nbdl.sym.var("x"), nbdl.sym.var("w"), transpose_b=True)
    tu.check_numeric_gradient(s, [x, w], dtype=np.float64)
