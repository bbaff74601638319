"""``Launch.args``: a prepared launch picks the arrays its kernel takes (an
index may repeat; ``(index, shape)`` is a prefix of that array, ``(i, (0,))``
an empty stand-in for an absent optional input), so that one compiled kernel
serves an op's variants.  Checked on ``pick_args`` itself and on ops that use
it (FullyConnected and Convolution without a bias, SequenceMask without
lengths, ``_backward_sum``), through every runner: eager calls, the executor's
Python loop, the generated native driver and the reference interpreter."""
import numpy as np
import pytest

import nbdl
from nbdl.ops.registry import pick_args


def test_pick_args_indices_repeats_and_prefixes():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(4, dtype=np.float64)
    out = pick_args((1, 0, 1, (0, (2, 2)), (1, (0,))), [a, b])
    assert out[0] is b and out[1] is a and out[2] is b
    np.testing.assert_array_equal(out[3], [[0, 1], [2, 3]])
    assert out[3].base is not None and np.shares_memory(out[3], a)
    assert out[4].shape == (0,) and out[4].dtype == np.float64 and out[4].flags.c_contiguous
    assert pick_args(None, [a, b]) == [a, b]


def _graph():
    x = nbdl.sym.var("x")
    h = nbdl.sym.FullyConnected(x, num_hidden=6, no_bias=True, name="fc0")
    h = nbdl.sym.FullyConnected(h, num_hidden=6, name="fc1")
    c = nbdl.sym.Reshape(h, shape=(4, 1, 2, 3))
    c = nbdl.sym.Convolution(c, kernel=(1, 2), num_filter=2, no_bias=True, name="conv")
    m = nbdl.sym.SequenceMask(nbdl.sym.Reshape(c, shape=(4, 2, 4)), value=0.5)
    return nbdl.sym.sum(m * m, axis=1)


def _run(monkeypatch, driver, engine=None):
    monkeypatch.setenv("NBDL_DRIVER", driver)
    monkeypatch.setenv("NBDL_DRIVER_MIN_STEPS", "1")
    rng = np.random.RandomState(3)
    sym = _graph()
    ex = sym.simple_bind(nbdl.cpu(), x=(4, 5))
    for name, arr in ex.arg_dict.items():
        arr[:] = rng.uniform(-1, 1, arr.shape).astype(np.float32)
    ex.forward(is_train=True)
    ex.backward(nbdl.nd.ones(ex.outputs[0].shape))
    return ([o.asnumpy() for o in ex.outputs]
            + [ex.grad_dict[k].asnumpy() for k in sorted(ex.grad_dict)])


@pytest.mark.parametrize("driver", ["0", "1"])
def test_executor_python_loop_and_native_driver_agree(monkeypatch, driver):
    ref = _run(monkeypatch, "0")
    got = _run(monkeypatch, driver)
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(r, g)


def test_eager_calls_and_interpreter_agree_with_the_executor(monkeypatch):
    from nbdl.testing import check_symbolic_forward
    rng = np.random.RandomState(4)
    x = rng.uniform(-1, 1, (3, 5)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 5)).astype(np.float32)
    eager = nbdl.nd.FullyConnected(nbdl.nd.array(x), nbdl.nd.array(w), num_hidden=4,
                                   no_bias=True).asnumpy()
    np.testing.assert_allclose(eager, x @ w.T, rtol=1e-5, atol=1e-6)
    sym = nbdl.sym.FullyConnected(nbdl.sym.var("x"), nbdl.sym.var("w"), num_hidden=4,
                                  no_bias=True)
    for engine in ("executor", "interpreter"):
        monkeypatch.setenv("NBDL_TEST_ENGINE", engine)
        check_symbolic_forward(sym, {"x": x, "w": w}, [eager], rtol=0, atol=0)


def test_no_bias_equals_a_zero_bias_bitwise():
    rng = np.random.RandomState(5)
    x = nbdl.nd.array(rng.uniform(-1, 1, (2, 3, 6, 6)).astype(np.float32))
    w = nbdl.nd.array(rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32))
    b = nbdl.nd.zeros((4,))
    a = nbdl.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True).asnumpy()
    z = nbdl.nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4).asnumpy()
    np.testing.assert_array_equal(a, z)
    f = nbdl.nd.FullyConnected(x, nbdl.nd.array(rng.rand(4, 108).astype(np.float32)),
                               num_hidden=4, no_bias=True)
    assert f.shape == (2, 4)
