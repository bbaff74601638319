"""The compile plan (``nbdl.executor.compile_plan``): the callees each kernel
compiles, recorded ahead of time, so that the compile pool's workers can
compile them while this process types the caller."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from numba.core import types

from nbdl.executor import compile_plan
from nbdl.kernels.shared.jit import njit, set_compile_hook

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("ty", [
    types.float32, types.float64, types.int32, types.int64, types.uint8, types.boolean,
    types.complex64, types.none,
    types.Array(types.float32, 2, "C"), types.Array(types.int32, 1, "A", readonly=True),
    types.Array(types.float64, 5, "F", aligned=False),
    types.UniTuple(types.int64, 15), types.Tuple([types.int64, types.float32, types.boolean]),
    types.UniTuple(types.UniTuple(types.intp, 2), 3)])
def test_types_read_back_as_written(ty):
    enc = compile_plan.encode_type(ty)
    assert enc is not None
    assert json.loads(json.dumps(enc)) == enc
    assert compile_plan.decode_type(json.loads(json.dumps(enc))) == ty


def test_types_outside_the_vocabulary():
    assert compile_plan.encode_type(types.literal(3)) is None
    assert compile_plan.encode_type(types.unicode_type) is None
    assert compile_plan.encode_sig((types.int64, types.unicode_type)) is None
    for bad in ("float128", "unicode_type", ["array"], ["tuple", 3], 7, ["nope", 1]):
        with pytest.raises((ValueError, TypeError)):
            compile_plan.decode_type(bad)


@njit
def _leaf(x, n):
    return x[:n].sum()


@njit
def _middle(x, n):
    return _leaf(x, n) + _leaf(x, 1)


@njit
def _top(x, n):
    return _middle(x, n) * 2


def test_recorder_lists_callees_in_the_order_compiled():
    rec = compile_plan.Recorder()
    old = set_compile_hook(rec)
    try:
        assert _top(np.arange(5, dtype=np.float32), 3) == 6.0     # (0+1+2 + 0) * 2
    finally:
        set_compile_hook(old)
    sig = (types.Array(types.float32, 1, "C"), types.int64)
    key = compile_plan.key_of(_top, sig)
    assert list(rec.plan) == [key]
    names = [name for _, name, _ in rec.plan[key]]
    assert names == ["_middle", "_leaf"]         # one entry per (callee, types)
    assert all(m == __name__ for m, _, _ in rec.plan[key])
    assert compile_plan.callees(_top, sig, rec.plan) == [
        (__name__, "_middle", sig), (__name__, "_leaf", sig)]


def test_the_packaged_plan_names_kernels_that_exist():
    """Every kernel the shipped plan names (as a key, a callee or a follower)
    is still a module-level kernel of that name: a renamed or removed one
    means the plan is stale (rerun ``tools/compile_plan.py``)."""
    import importlib

    def kernel(module, name):
        fn = getattr(importlib.import_module(module), name, None)
        assert hasattr(fn, "compile"), f"{module}.{name}: rerun tools/compile_plan.py"

    plan = compile_plan.load(compile_plan.PLAN_FILE)
    followers = compile_plan.load_followers(compile_plan.PLAN_FILE)
    assert plan and followers, "nbdl/executor/compile_plan.json is missing or empty"
    for key, nested in list(plan.items()) + [(k, []) for k in followers]:
        module, name = key.split("(")[0].split(":")
        if not module.endswith("._elemwise_gen"):   # generated kernels are not module attributes
            kernel(module, name)
        for module, name, enc in nested:
            kernel(module, name)
            assert compile_plan.encode_sig(compile_plan.decode_sig(enc)) == enc
    for entries in followers.values():
        for (module, builder, args), enc in entries:
            if builder is None:
                kernel(module, args)
            compile_plan.decode_sig(enc)


def test_unreadable_plans_are_empty(tmp_path):
    bad = tmp_path / "plan.json"
    bad.write_text("{not json")
    assert compile_plan.load(str(bad)) == {}
    bad.write_text('{"plan": [1, 2]}')
    assert compile_plan.load(str(bad)) == {}
    assert compile_plan.load(str(tmp_path / "missing.json")) == {}


# A graph of FullyConnected and five elementwise ops (a pool needs >= 6
# kernels), bound with gradients, in a fresh process with an empty cache;
# ``record`` runs it under a ``Recorder`` (plan to argv[2], no pool: a pool's
# hook would replace the recorder), ``pool`` with one worker that is let
# compile everything before this process runs (``compile_pool.start`` spied on).
_GRAPH = r"""
import json, os, sys, numpy as np, nbdl
from nbdl.executor import compile_pool, compile_plan
from nbdl.kernels.shared.jit import set_compile_hook
mode, path = sys.argv[1], sys.argv[2]
x = nbdl.sym.var("x")
y = nbdl.sym.FullyConnected(x, num_hidden=5, name="fc")
for op in ("exp", "sin", "cos", "tanh", "square"):
    y = getattr(nbdl.sym, op)(y)
ex = y.simple_bind(nbdl.cpu(), x=(4, 3), grad_req="write")
for name, arr in ex.arg_dict.items():
    arr[:] = np.linspace(-1, 1, arr.size, dtype=np.float32).reshape(arr.shape)
pools = []
rec = compile_plan.Recorder()
start = compile_pool.start
def spy(calls, training=False):
    if mode == "record":
        rec.graph_started(calls)
        return None
    p = start(calls, training)
    pools.append(p)
    if p is not None:
        for proc in p.procs:
            proc.wait()           # the worker compiles everything first
    return p
compile_pool.start = spy
if mode == "record":
    set_compile_hook(rec)
"""

_POOLED = _GRAPH + r"""
ex.forward()
if mode == "record":
    set_compile_hook(None)
    json.dump({"plan": rec.plan}, open(path, "w"))
    print(json.dumps({"out": ex.outputs[0].asnumpy().ravel().tolist()}))
    sys.exit()
pool = pools[0]
from nbdl.kernels.cpu import matrix
callee_keys = [k for k in pool.keys if k not in {k2 for _, _, k2 in pool.order}]
done = sum(os.path.exists(os.path.join(pool.dir, k + ".done")) for k in callee_keys)
print(json.dumps({"items": len(pool.keys), "callees": len(callee_keys), "done": done,
                  "mine": len(pool.mine),
                  "loaded": sum(matrix.fc_forward.stats.cache_hits.values()),
                  "out": ex.outputs[0].asnumpy().ravel().tolist()}))
"""


def _run_graph(script, mode, plan, cache):
    """``script`` (``_GRAPH`` and a tail) in a fresh process, ``mode``
    'record' or 'pool', caches under ``cache``; its last line, parsed."""
    env = dict(os.environ, NBDL_COMPILE_WORKERS="0" if mode == "record" else "1",
               NBDL_QUIET="1", NBDL_DRIVER="0", NBDL_NUM_THREADS="1",
               NUMBA_CACHE_DIR=str(cache / "numba"), NBDL_CACHE_DIR=str(cache / "nbdl"),
               NBDL_COMPILE_PLAN=str(plan), PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", script, mode, str(plan)], env=env,
                         check=True, capture_output=True, text=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_workers_compile_the_callees_the_plan_names(tmp_path):
    plan = tmp_path / "plan.json"
    recorded = _run_graph(_POOLED, "record", plan, tmp_path / "a")
    names = [n for v in compile_plan.load(str(plan)).values() for _, n, _ in v]
    assert "gemm_c" in names and "_add_bias_rows" in names
    pooled = _run_graph(_POOLED, "pool", plan, tmp_path / "b")
    assert pooled["callees"] >= 2               # the kernels' callees were handed out ...
    assert pooled["done"] == pooled["callees"]  # ... and compiled by the worker,
    assert pooled["mine"] == 0                  # none here:
    assert pooled["loaded"] >= 1                # fc_forward came from the cache
    assert pooled["out"] == recorded["out"]


@njit
def _graph_kernel(x):
    return x + 1.0


@njit
def _eager_a(x):
    return x * 2.0


@njit
def _eager_b(x):
    return x - 1.0


def test_recorder_lists_what_follows_a_training_graph():
    from numba import typeof
    a = np.ones(3)
    rec = compile_plan.Recorder()
    old = set_compile_hook(rec)
    try:
        _eager_b(np.ones(2, np.float32))          # before the graph: not a follower
        rec.graph_started([(_graph_kernel, (a,))])
        _graph_kernel(a)                            # the graph's own kernel: not one either
        _eager_a(a)
        _eager_b(a)
        _eager_a(a)
    finally:
        set_compile_hook(old)
    sig = (typeof(a),)
    table = rec.followers()
    key = compile_plan.key_of(_graph_kernel, sig)
    assert list(table) == [key]
    assert [d[2] for d, _ in table[key]] == ["_eager_a", "_eager_b"]
    table = json.loads(json.dumps(table))          # as the file holds it
    assert compile_plan.followers(_graph_kernel, sig, table) == [
        ((__name__, None, "_eager_a"), sig), ((__name__, None, "_eager_b"), sig)]


def test_pool_hands_out_followers_last(tmp_path):
    from nbdl.executor import compile_pool
    from nbdl.executor.compile_claims import claim_key
    sig = (types.float64,)
    item = (_graph_kernel, sig, (__name__, None, "_graph_kernel"))
    callee = ((__name__, None, "_eager_b"), sig)
    after = [((__name__, None, "_eager_a"), sig), ((__name__, None, "_leaf"), sig)]
    pool = compile_pool.Pool([item], 0, [[callee]], after)
    try:
        assert pool.work == [claim_key(*callee), claim_key(item[2], sig),
                             claim_key(*after[1]), claim_key(*after[0])]
        assert [k for _, _, k in pool.order] == [claim_key(item[2], sig)]
    finally:
        pool.close()


_TRAINED = _GRAPH + r"""
ex.forward(is_train=True)
ex.backward()
after = nbdl.nd.softmax(ex.outputs[0]).asnumpy()   # an eager call after the graph
if mode == "record":
    set_compile_hook(None)
    json.dump({"plan": rec.plan, "followers": rec.followers()}, open(path, "w"))
    print(json.dumps({"after": after.ravel().tolist()}))
    sys.exit()
pool = pools[0]
from nbdl.executor.compile_claims import claim_key
table = compile_plan.load_followers(path)
keys = [claim_key(d, compile_plan.decode_sig(e)) for v in table.values() for d, e in v]
print(json.dumps({"after": after.ravel().tolist(), "n_follow": len(keys),
                  "handed": [k in pool.work for k in keys],
                  "done": [os.path.exists(os.path.join(pool.dir, k + ".done")) for k in keys],
                  "mine": [k in pool.mine for k in keys]}))
"""


def test_workers_compile_what_follows_a_training_graph(tmp_path):
    plan = tmp_path / "plan.json"
    recorded = _run_graph(_TRAINED, "record", plan, tmp_path / "a")
    table = compile_plan.load_followers(str(plan))
    names = [d[2][0] if d[1] else d[2] for v in table.values() for d, _ in v]
    assert "softmax_forward" in names, names
    pooled = _run_graph(_TRAINED, "pool", plan, tmp_path / "b")
    assert pooled["n_follow"] >= 1
    # the eager kernels went to the worker, which compiled them; this process did not
    assert all(pooled["handed"]) and all(pooled["done"]) and not any(pooled["mine"])
    assert pooled["after"] == recorded["after"]


def test_only_the_packaged_plan_may_name_generated_followers(tmp_path):
    """A generated kernel is described by its source, which a worker would
    compile: a plan file from elsewhere keeps only named kernels."""
    sig = [["array", "float32", 1, "C", True, True]]
    entries = [[["m", None, "named"], sig], [["m", "from_source", ["gen", "import os"]], sig]]
    other = tmp_path / "plan.json"
    other.write_text(json.dumps({"plan": {}, "followers": {"k": entries}}))
    assert compile_plan.load_followers(str(other)) == {"k": entries[:1]}
    packaged = compile_plan.load_followers(compile_plan.PLAN_FILE)
    assert any(d[1] == "from_source" for v in packaged.values() for d, _ in v)
