"""The planner may share memory, never change results: on random graphs the
planned executor is bitwise identical to NBDL_PLANNER=naive and to the
reference interpreter, and every plan passes the independent verifier."""
import os
from contextlib import contextmanager

import numpy as np
from hypothesis import HealthCheck, given, settings

import nbdl
from nbdl.testing import assert_plan_valid, run_symbol

from random_graphs import random_symbol


@contextmanager
def env(**kv):
    old = {k: os.environ.get(k) for k in kv}
    os.environ.update({k: str(v) for k, v in kv.items()})
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run(sym, shapes, seed, grad_req="write"):
    rng = np.random.RandomState(seed)
    if grad_req == "random":
        # some arguments without gradients: their gradient outputs become
        # REQ_NULL and share offset 0 with everything in planned runs
        grad_req = {k: ("null" if rng.rand() < 0.4 else "write") for k in sorted(shapes)}
    args = {k: nbdl.nd.array(rng.uniform(-1, 1, s).astype(np.float32)) for k, s in shapes.items()}
    grads = {k: nbdl.nd.array(rng.uniform(-1, 1, s).astype(np.float32)) for k, s in shapes.items()}
    ex = sym.bind(nbdl.cpu(), args=args, args_grad=grads, grad_req=grad_req)
    assert_plan_valid(ex.memory_plan)
    outs = [o.asnumpy().copy() for o in ex.forward(is_train=True)]
    heads = [rng.uniform(-1, 1, o.shape).astype(np.float32) for o in outs]
    ex.backward([nbdl.nd.array(h) for h in heads])
    return outs, {k: g.asnumpy().copy() for k, g in ex.grad_dict.items()}, heads, args, ex


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(random_symbol(), )
def test_planned_equals_naive_bitwise(case):
    sym, shapes = case
    with env(NBDL_DRIVER="0"):
        o1, g1, _, _, ex = run(sym, shapes, 1, "random")
        with env(NBDL_PLANNER="naive"):
            o2, g2, _, _, ex_naive = run(sym, shapes, 1, "random")
    stats = ex.memory_plan.stats
    assert stats.planned_bytes <= stats.naive_bytes
    assert stats.planned_bytes <= stats.mxnet_pool_bytes
    assert ex_naive.memory_plan.stats.planned_bytes == ex_naive.memory_plan.stats.naive_bytes
    for a, b in zip(o1, o2):
        assert a.tobytes() == b.tobytes()
    for k in g1:
        assert g1[k].tobytes() == g2[k].tobytes(), k


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(random_symbol(max_ops=8))
def test_executor_matches_reference_interpreter(case):
    sym, shapes = case
    with env(NBDL_DRIVER="0"):
        outs, grads, heads, args, _ = run(sym, shapes, 2)
    ref_outs, ref_grads, _ = run_symbol(sym, {k: v.asnumpy() for k, v in args.items()},
                                        out_grads=heads, is_train=True, engine="interpreter")
    for a, b in zip(outs, ref_outs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for k in grads:
        np.testing.assert_allclose(grads[k], ref_grads[k], rtol=1e-5, atol=1e-5)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(random_symbol(max_ops=12))
def test_native_driver_matches_python_loop_bitwise(case):
    sym, shapes = case
    with env(NBDL_DRIVER="1", NBDL_DRIVER_MIN_STEPS="1"):
        o1, g1, _, _, _ = run(sym, shapes, 3)
    with env(NBDL_DRIVER="0"):
        o2, g2, _, _, _ = run(sym, shapes, 3)
    for a, b in zip(o1, o2):
        assert a.tobytes() == b.tobytes()
    for k in g1:
        assert g1[k].tobytes() == g2[k].tobytes()
