"""An executor starts with the serial twins of parallel kernels that are not
compiled yet (``NBDL_PARALLEL_AFTER_RUNS``) and swaps in the parallel ones,
compiled in the background, after that many runs; results match a numpy
reference before and after the swap."""
import time

import numba
import numpy as np
import pytest

import nbdl
from nbdl import compile_log
from nbdl.ops.registry import serial_twin

pytestmark = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two threads")


def _kernels(ex, which="fwd_train"):
    return [fn for fn, _ in ex._runner(which).calls]


def _wait_swap(ex, which, old, timeout=300):
    end = time.monotonic() + timeout
    while ex._runners.get(which) is old and time.monotonic() < end:
        time.sleep(0.05)
    assert ex._runners.get(which) is not old, "the parallel kernels were never swapped in"


def _as_if_uncompiled(monkeypatch):
    # Whether a kernel is compiled depends on what ran before in this process
    # and on the on-disk cache; the tests make every kernel look new.
    monkeypatch.setattr(compile_log, "compiled_or_cached", lambda fn, args: False)


def _pool_net():
    x = nbdl.sym.var("x")
    y = nbdl.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    return nbdl.sym.softmax(nbdl.sym.flatten(y) * 2.0, name="out")


def _reference(a):
    p = a.reshape(a.shape[0], a.shape[1], a.shape[2] // 2, 2, a.shape[3] // 2, 2).max(axis=(3, 5))
    z = p.reshape(a.shape[0], -1) * 2.0
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_serial_first_then_parallel(monkeypatch):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    monkeypatch.setenv("NBDL_PARALLEL_AFTER_RUNS", "2")
    monkeypatch.setenv("NBDL_DRIVER", "0")
    _as_if_uncompiled(monkeypatch)
    a = np.random.RandomState(0).rand(3, 4, 8, 8).astype(np.float32)
    ex = _pool_net().simple_bind(nbdl.cpu(), x=a.shape, grad_req="null")
    ex.arg_dict["x"][:] = a
    first = ex._runner("fwd_infer")
    kernels = [fn for fn, _ in first.calls]
    planned = [s.fn for s in ex._sched.fwd_infer]
    twins = [serial_twin(fn) for fn in planned]
    assert any(k is not p for k, p in zip(kernels, planned))
    assert all(k is t for k, p, t in zip(kernels, planned, twins) if k is not p)
    for _ in range(2):
        ex.forward(is_train=False)
        np.testing.assert_allclose(ex.outputs[0].asnumpy(), _reference(a), rtol=1e-6)
    _wait_swap(ex, "fwd_infer", first)
    assert [fn for fn, _ in ex._runner("fwd_infer").calls] == planned
    ex.forward(is_train=False)
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), _reference(a), rtol=1e-6)


def test_after_runs_zero_runs_the_parallel_kernels_at_once(monkeypatch):
    monkeypatch.setenv("NBDL_PARALLEL_MIN", "1")
    monkeypatch.setenv("NBDL_PARALLEL_AFTER_RUNS", "0")
    monkeypatch.setenv("NBDL_DRIVER", "0")
    ex = _pool_net().simple_bind(nbdl.cpu(), x=(2, 3, 8, 8), grad_req="null")
    assert _kernels(ex, "fwd_infer") == [s.fn for s in ex._sched.fwd_infer]
    assert any(serial_twin(s.fn) is not None for s in ex._sched.fwd_infer)


@pytest.mark.parametrize("mode", ["chunks", "split", "tiles"])
def test_convolution_serial_twin_in_the_parallel_plans_scratch(monkeypatch, mode):
    # The serial convolution runs with the temps sized for the parallel plan.
    monkeypatch.setenv("NBDL_CONV_PARALLEL_MIN_FLOPS", "0")
    monkeypatch.setenv("NBDL_CONV_CHUNK_MIN_COLS", "16" if mode == "chunks" else "100000")
    if mode == "tiles":     # forward: runs of (image, 40-column tile) pairs
        monkeypatch.setenv("NBDL_CONV_BLOCK_COLS", "40")
    monkeypatch.setenv("NBDL_PARALLEL_AFTER_RUNS", "1000")
    monkeypatch.setenv("NBDL_DRIVER", "0")
    _as_if_uncompiled(monkeypatch)
    rs = np.random.RandomState(1)
    x = rs.rand(4, 3, 9, 9).astype(np.float32)
    w = rs.rand(5, 3, 3, 3).astype(np.float32)
    b = rs.rand(5).astype(np.float32)
    og = rs.rand(4, 5, 9, 9).astype(np.float32)
    sym = nbdl.sym.Convolution(nbdl.sym.var("x"), nbdl.sym.var("w"), nbdl.sym.var("b"),
                               kernel=(3, 3), pad=(1, 1), num_filter=5, name="c")
    ex = sym.simple_bind(nbdl.cpu(), x=x.shape, w=w.shape, b=b.shape)
    for k, v in (("x", x), ("w", w), ("b", b)):
        ex.arg_dict[k][:] = v
    ex.forward(is_train=True)
    ex.backward([nbdl.nd.array(og)])
    runs = {wh: [fn.py_func.__name__ for fn, _ in ex._runner(wh).calls]
            for wh in ("fwd_train", "backward")}
    planned = [s.fn.py_func.__name__ for s in ex._sched.fwd_train + ex._sched.backward]
    assert any("parallel" in n for n in planned)
    ran = [n for n in runs["fwd_train"] + runs["backward"] if n.startswith("conv_")]
    assert ran and not any("parallel" in n for n in ran), ran
    # reference: direct convolution in numpy
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, :, i:i + 9, j:j + 9] for i in range(3) for j in range(3)], axis=2)
    y = np.einsum("ncKhw,fcK->nfhw", cols, w.reshape(5, 3, 9)) + b[None, :, None, None]
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), y, rtol=1e-4, atol=1e-4)
    dw = np.einsum("nfhw,ncKhw->fcK", og, cols).reshape(w.shape)
    np.testing.assert_allclose(ex.grad_dict["w"].asnumpy(), dw, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(ex.grad_dict["b"].asnumpy(), og.sum(axis=(0, 2, 3)), rtol=1e-4)
    dcols = np.einsum("nfhw,fcK->ncKhw", og, w.reshape(5, 3, 9))
    dxp = np.zeros_like(xp)
    for K, (i, j) in enumerate((i, j) for i in range(3) for j in range(3)):
        dxp[:, :, i:i + 9, j:j + 9] += dcols[:, :, K]
    np.testing.assert_allclose(ex.grad_dict["x"].asnumpy(), dxp[:, :, 1:-1, 1:-1],
                               rtol=1e-4, atol=1e-3)


def test_winograd_layer_falls_back_to_im2col_until_compiled(monkeypatch):
    """A Winograd convolution not compiled yet runs its launch's fallback
    (im2col + GEMM over the same arrays, through its serial twin when that
    is not compiled either: an executor bound with NBDL_CONV_WINOGRAD=0's
    result, to the twins' rounding) for the first NBDL_PARALLEL_AFTER_RUNS
    runs, then the Winograd kernel, compiled in the background;
    NBDL_PARALLEL_AFTER_RUNS=0 runs it at once."""
    from nbdl.kernels.cpu.conv_winograd import wino_forward, wino_forward_parallel
    monkeypatch.setenv("NBDL_DRIVER", "0")
    x = nbdl.sym.var("x")
    c = nbdl.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=32, name="c")
    y = nbdl.sym.Activation(nbdl.sym.BatchNorm(c, name="bn"), act_type="relu")
    rng = np.random.RandomState(0)
    a = rng.uniform(-1, 1, (1, 32, 28, 28)).astype(np.float32)
    params = {"c_weight": rng.uniform(-1, 1, (32, 32, 3, 3)).astype(np.float32),
              "c_bias": rng.uniform(-1, 1, 32).astype(np.float32),
              "bn_gamma": rng.uniform(0.5, 1.5, 32).astype(np.float32),
              "bn_beta": rng.uniform(-1, 1, 32).astype(np.float32)}

    def bind():
        ex = y.simple_bind(nbdl.cpu(), x=a.shape, grad_req="null")
        ex.copy_params_from({k: nbdl.nd.array(v) for k, v in params.items()})
        ex.arg_dict["x"][:] = a
        return ex

    monkeypatch.setenv("NBDL_CONV_WINOGRAD", "0")
    plain = bind().forward(is_train=False)[0].asnumpy()
    monkeypatch.setenv("NBDL_CONV_WINOGRAD", "1")
    monkeypatch.setenv("NBDL_PARALLEL_AFTER_RUNS", "0")
    at_once = bind()
    assert _kernels(at_once, "fwd_infer")[0] in (wino_forward, wino_forward_parallel)
    wino = at_once.forward(is_train=False)[0].asnumpy()
    assert np.abs(wino - plain).max() <= 1e-5 * np.abs(plain).max()

    monkeypatch.setenv("NBDL_PARALLEL_AFTER_RUNS", "2")
    _as_if_uncompiled(monkeypatch)
    ex = bind()
    step = ex._sched.fwd_infer[0]
    assert step.fn in (wino_forward, wino_forward_parallel) and step.fallback is not None
    first = ex._runner("fwd_infer")
    assert first.calls[0][1] is step.fallback.args
    assert first.calls[0][0] in (step.fallback.fn, serial_twin(step.fallback.fn))
    scale = np.abs(plain).max()
    for _ in range(2):
        got = ex.forward(is_train=False)[0].asnumpy()
        assert np.abs(got - plain).max() <= 1e-5 * scale
    _wait_swap(ex, "fwd_infer", first)
    assert ex._runner("fwd_infer").calls[0] == (step.fn, step.args)
    np.testing.assert_array_equal(ex.forward(is_train=False)[0].asnumpy(), wino)
