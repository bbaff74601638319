"""Graphs far larger than a model's: long chains and very wide sums bind, run
and differentiate with no recursion limit and no kernel per input (correctness
only; bind time is measured in perf/)."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import assert_almost_equal

STEP = np.float32(1.0001)


def _chain(n):
    x = nbdl.sym.var("data")
    y = x
    for i in range(n):
        y = nbdl.sym.relu(y) if i % 2 else y * float(STEP)
    return y


@pytest.mark.parametrize("grad_req", ["null", "write"])
def test_chain_of_20000_nodes(grad_req):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (4, 8)).astype(np.float32)
    ex = _chain(20000).simple_bind(nbdl.cpu(), grad_req=grad_req, data=x.shape)
    ex.forward(is_train=grad_req != "null", data=x)
    ref = x.copy()
    for i in range(20000):
        ref = np.maximum(ref, np.float32(0)) if i % 2 else ref * STEP
    assert_almost_equal(ex.outputs[0].asnumpy(), ref, rtol=1e-5, atol=0)
    if grad_req == "write":
        g = rng.uniform(-1, 1, x.shape).astype(np.float32)
        ex.backward(out_grads=nbdl.nd.array(g))
        gref = np.where(x > 0, g * STEP ** np.float32(10000), np.float32(0))
        assert_almost_equal(ex.grad_dict["data"].asnumpy(), gref, rtol=1e-4, atol=0)


def test_add_n_over_10000_inputs():
    rng = np.random.RandomState(1)
    n = 10000
    xs = [nbdl.sym.var(f"x{i}") for i in range(n)]
    vals = rng.uniform(-1, 1, (n, 3, 2)).astype(np.float32)
    ex = nbdl.sym.add_n(*xs).bind(nbdl.cpu(), args={f"x{i}": nbdl.nd.array(vals[i])
                                                     for i in range(n)})
    ex.forward()
    ref = vals[0].copy()
    for i in range(1, n):        # left to right, as MXNet sums
        ref = ref + vals[i]
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), ref)


@pytest.mark.parametrize("k", [9, 16, 23])
@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_wide_sum_written_and_accumulated(k, grad_req):
    """A sum wider than one generated loop, as the gradient of a variable used
    ``k`` times: written, and accumulated into an existing gradient."""
    rng = np.random.RandomState(k)
    x = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    w = [rng.uniform(-1, 1, (5, 3)).astype(np.float32) for _ in range(k)]
    data = nbdl.sym.var("data")
    ws = [nbdl.sym.var(f"w{i}") for i in range(k)]
    out = nbdl.sym.add_n(*[data * wi for wi in ws])
    args = {"data": nbdl.nd.array(x), **{f"w{i}": nbdl.nd.array(w[i]) for i in range(k)}}
    start = rng.uniform(-1, 1, x.shape).astype(np.float32)
    grad = nbdl.nd.array(start)
    ex = out.bind(nbdl.cpu(), args=args, args_grad={"data": grad},
                  grad_req={"data": grad_req, **{f"w{i}": "null" for i in range(k)}})
    ex.forward(is_train=True)
    fwd = x * w[0]
    for i in range(1, k):
        fwd = fwd + x * w[i]
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), fwd)
    g = rng.uniform(-1, 1, x.shape).astype(np.float32)
    ex.backward(out_grads=nbdl.nd.array(g))
    total = g * w[0]
    for i in range(1, k):
        total = total + g * w[i]
    expect = total if grad_req == "write" else start + total
    # (the gradient pass may order the contributions differently)
    assert_almost_equal(grad.asnumpy(), expect, rtol=1e-6, atol=1e-6)


def test_bind_leaves_the_collector_as_it_found_it():
    """Bind runs with the cyclic collector off and moves what it made to the
    oldest generation on the way out: the collector is on again afterwards
    (off if it was off), objects the caller froze stay frozen, and a dropped
    executor's gradient graph is freed at once, with no collection (each
    node and its cached output entries were a reference cycle)."""
    import gc
    import weakref
    sym = _chain(50)
    assert gc.isenabled()
    ex = sym.simple_bind(nbdl.cpu(), grad_req="write", data=(2, 3))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    nodes = [weakref.ref(n) for n in ex._bg.bwd_nodes]
    assert len(nodes) == 50
    gc.disable()
    try:
        del ex
        assert all(n() is None for n in nodes)
    finally:
        gc.enable()
    keep = [[i] for i in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        sym.simple_bind(nbdl.cpu(), grad_req="write", data=(2, 3))
        assert gc.get_freeze_count() == frozen and gc.isenabled()
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        sym.simple_bind(nbdl.cpu(), grad_req="write", data=(2, 3))
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert len(keep) == 100


def test_eager_add_n_over_many_arrays():
    rng = np.random.RandomState(2)
    vals = rng.uniform(-1, 1, (30, 7)).astype(np.float32)
    out = nbdl.nd.add_n(*[nbdl.nd.array(v) for v in vals])
    ref = vals[0].copy()
    for v in vals[1:]:
        ref = ref + v
    np.testing.assert_array_equal(out.asnumpy(), ref)


@pytest.mark.cuda
@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_wide_sum_on_gpu_matches_cpu(grad_req):
    """The CUDA kernels sum in the same passes (CUDA simulator in this suite)."""
    k = 19
    rng = np.random.RandomState(3)
    vals = {f"x{i}": rng.uniform(-1, 1, (2, 3)).astype(np.float32) for i in range(k)}
    start = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    g = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    x = nbdl.sym.var("data")
    out = nbdl.sym.add_n(*[x * nbdl.sym.var(n) for n in vals])
    results = []
    for dev in (nbdl.cpu(), nbdl.gpu(0)):
        args = {"data": nbdl.nd.array(start * 2, ctx=dev),
                **{n: nbdl.nd.array(v, ctx=dev) for n, v in vals.items()}}
        grad = nbdl.nd.array(start, ctx=dev)
        ex = out.bind(dev, args=args, args_grad={"data": grad},
                      grad_req={"data": grad_req, **{n: "null" for n in vals}})
        ex.forward(is_train=True)
        ex.backward(out_grads=nbdl.nd.array(g, ctx=dev))
        results.append((ex.outputs[0].asnumpy(), grad.asnumpy()))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    assert_almost_equal(results[1][1], results[0][1], rtol=1e-6, atol=1e-6)
