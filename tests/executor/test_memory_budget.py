"""Executors under a memory budget: the arena fits, the plan passes
``check_plan``, and outputs, gradients and aux states are bitwise those of the
same executor without a budget (random graphs, Dropout and BatchNorm, a
hybridized block); a budget below what the graph can meet is an error that
names the smallest one that works."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import nbdl
from nbdl.errors import ArgumentError, MemoryBudgetError
from nbdl.planner import check_plan
from nbdl.testing import assert_plan_valid

from random_graphs import random_symbol
from test_planned_vs_naive import env


def _fill(ex, seed):
    rng = np.random.RandomState(seed)
    for a in ex.arg_dict.values():
        a[:] = rng.uniform(-1, 1, a.shape).astype(np.float32)
    for a in ex.aux_dict.values():
        a[:] = rng.uniform(0.5, 1.5, a.shape).astype(np.float32)


def _step(ex, seed=0):
    """One training step from fixed values and random state: outputs,
    gradients and aux states as bytes."""
    _fill(ex, seed)
    nbdl.random.seed(seed)
    outs = [o.asnumpy().tobytes() for o in ex.forward(is_train=True)]
    ex.backward()
    return (outs, {k: g.asnumpy().tobytes() for k, g in ex.grad_dict.items()},
            {k: a.asnumpy().tobytes() for k, a in ex.aux_dict.items()})


def _smallest(sym, **kw):
    """The smallest budget nbdl meets for ``sym`` (from the error a 1-byte
    budget gives)."""
    with pytest.raises(MemoryBudgetError) as err:
        sym.simple_bind(nbdl.cpu(), memory_budget=1, **kw)
    assert f"{err.value.smallest:,} bytes" in str(err.value)
    return err.value.smallest


def _budgeted(sym, budget, **kw):
    ex = sym.simple_bind(nbdl.cpu(), memory_budget=budget, **kw)
    plan = ex.memory_plan
    assert check_plan(plan) == []
    assert plan.arena_bytes <= budget
    assert plan.budget is not None and plan.budget.budget == budget
    return ex


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(random_symbol(max_ops=12))
def test_random_graphs_with_a_budget_are_bitwise_unchanged(case):
    sym, shapes = case
    with env(NBDL_DRIVER="0"):
        ex = sym.simple_bind(nbdl.cpu(), **shapes)
        want = _step(ex)
        base = ex.memory_plan.arena_bytes
        smallest = _smallest(sym, **shapes)
        assert smallest <= base
        for budget in sorted({smallest, (smallest + base) // 2}):
            exb = _budgeted(sym, budget, **shapes)
            assert _step(exb) == want
            if budget < base:
                assert exb.memory_plan.budget.recompute_steps
                assert exb.memory_plan.budget.unbudgeted_bytes == base
        with env(NBDL_PLANNER="naive"):
            naive = sym.simple_bind(nbdl.cpu(), memory_budget=smallest, **shapes)
            assert_plan_valid(naive.memory_plan)
            assert _step(naive) == want


def _conv_bn_dropout():
    h = nbdl.sym.var("data")
    for i in range(4):
        h = nbdl.sym.Convolution(h, num_filter=8, kernel=(3, 3), pad=(1, 1), name=f"c{i}")
        h = nbdl.sym.BatchNorm(h, fix_gamma=i % 2 == 0, name=f"bn{i}")
        h = nbdl.sym.Activation(h, act_type="relu", name=f"r{i}")
        if i == 1:
            h = nbdl.sym.Dropout(h, p=0.3, name="drop")
    h = nbdl.sym.FullyConnected(h, num_hidden=5, name="fc")
    return nbdl.sym.SoftmaxOutput(h, name="sm")


def test_dropout_and_batchnorm_recompute_bitwise_without_a_second_update():
    sym, shapes = _conv_bn_dropout(), {"data": (4, 3, 12, 12)}
    ex = sym.simple_bind(nbdl.cpu(), **shapes)
    want = _step(ex)
    base = ex.memory_plan.arena_bytes
    smallest = _smallest(sym, **shapes)
    seen = set()
    for budget in (smallest, (smallest + base) // 2):
        exb = _budgeted(sym, budget, **shapes)
        plan = exb.memory_plan
        ops = [exb._sched.nodes[k].op.name for k in plan.budget.recompute_steps]
        seen.update(ops)
        assert "BatchNorm" not in ops and "Dropout" not in ops   # never re-run as such
        # outputs, gradients and the moving statistics (updated once, in the
        # forward) are bitwise the unbudgeted executor's; the mask is the one
        # the forward drew
        assert _step(exb) == want
        text = nbdl.debug_str(exb)
        assert f"Memory budget {budget:,} bytes" in text and "recomputed" in text
    assert {"_nbdl_BatchNorm_apply", "_backward_Dropout"} <= seen


def test_a_budget_too_small_names_the_smallest_that_works():
    sym, shapes = _conv_bn_dropout(), {"data": (4, 3, 12, 12)}
    smallest = _smallest(sym, **shapes)
    with pytest.raises(MemoryBudgetError, match=f"smallest budget nbdl's planner meets is "
                                                f"{smallest:,} bytes"):
        sym.simple_bind(nbdl.cpu(), memory_budget=smallest - 1, **shapes)
    _budgeted(sym, smallest, **shapes)
    # without a backward pass nothing can be recomputed: the smallest is the plan
    ex = sym.simple_bind(nbdl.cpu(), grad_req="null", **shapes)
    assert _smallest(sym, grad_req="null", **shapes) == ex.memory_plan.arena_bytes


def test_budget_spellings_the_environment_and_reshape(monkeypatch):
    sym, shapes = _conv_bn_dropout(), {"data": (4, 3, 12, 12)}
    base = sym.simple_bind(nbdl.cpu(), **shapes).memory_plan.arena_bytes
    kib = base // 1024 - 8
    ex = _budgeted(sym, kib * 1024, **shapes)
    assert sym.simple_bind(nbdl.cpu(), memory_budget=f"{kib}KB", **shapes).memory_plan \
        .arena_bytes == ex.memory_plan.arena_bytes
    monkeypatch.setenv("NBDL_MEMORY_BUDGET", f"{kib} KiB")
    from_env = sym.simple_bind(nbdl.cpu(), **shapes)
    assert from_env.memory_plan.budget.budget == kib * 1024
    smaller = from_env.reshape(partial_shaping=True, data=(2, 3, 12, 12))
    assert smaller.memory_plan.budget.budget == kib * 1024
    assert check_plan(smaller.memory_plan) == []
    monkeypatch.setenv("NBDL_MEMORY_BUDGET", "lots")
    with pytest.raises(ArgumentError, match="NBDL_MEMORY_BUDGET"):
        sym.simple_bind(nbdl.cpu(), **shapes)
    for bad in (0, -3, "1.5XB", True):
        with pytest.raises(ArgumentError, match="memory_budget"):
            sym.simple_bind(nbdl.cpu(), memory_budget=bad, **shapes)


def test_bind_with_a_budget():
    sym, shapes = _conv_bn_dropout(), {"data": (4, 3, 12, 12)}
    ref = sym.simple_bind(nbdl.cpu(), **shapes)
    want = _step(ref)
    args = {k: nbdl.nd.zeros(a.shape) for k, a in ref.arg_dict.items()}
    grads = {k: nbdl.nd.zeros(a.shape) for k, a in ref.arg_dict.items()}
    aux = {k: nbdl.nd.zeros(a.shape) for k, a in ref.aux_dict.items()}
    budget = ref.memory_plan.arena_bytes * 9 // 10
    ex = sym.bind(nbdl.cpu(), args, args_grad=grads, aux_states=aux, memory_budget=budget)
    assert ex.memory_plan.arena_bytes <= budget and ex.memory_plan.budget.recompute_steps
    assert _step(ex) == want


class _Net(nbdl.gluon.nn.HybridSequential):
    def __init__(self):
        super().__init__()
        for k in range(3):
            self.add(nbdl.gluon.nn.Dense(16, in_units=16 if k else 12),
                     nbdl.gluon.nn.BatchNorm(in_channels=16), nbdl.gluon.nn.Activation("relu"))
        self.add(nbdl.gluon.nn.Dropout(0.25), nbdl.gluon.nn.Dense(4, in_units=16))


def _gluon_step(net, x):
    nbdl.random.seed(7)
    with nbdl.autograd.record():
        loss = (net(x) ** 2).sum()
    loss.backward()
    return ({k: p.grad().asnumpy().tobytes() for k, p in net.collect_params().items()
             if p.grad_req != "null"},
            {k: p.data().asnumpy().tobytes() for k, p in net.collect_params().items()})


def test_hybridize_with_a_budget():
    x = nbdl.nd.array(np.random.RandomState(0).uniform(-1, 1, (8, 12)).astype(np.float32))
    nets = []
    for budget in (None, 1):
        nbdl.random.seed(0)
        net = _Net()
        net.initialize()
        net.hybridize(memory_budget=budget)
        nets.append(net)
    for p, q in zip(nets[0].collect_params().values(), nets[1].collect_params().values()):
        q.set_data(p.data())
    want = _gluon_step(nets[0], x)
    with pytest.raises(MemoryBudgetError) as err:
        _gluon_step(nets[1], x)
    base = nets[0]._cached_op.executors()[0].memory_plan.arena_bytes
    budget = (err.value.smallest + base) // 2
    nets[1].hybridize(memory_budget=f"{budget}B")
    assert _gluon_step(nets[1], x) == want
    (ex,) = nets[1]._cached_op.executors()
    assert ex.memory_plan.arena_bytes <= budget and ex.memory_plan.budget.recompute_steps
    assert check_plan(ex.memory_plan) == []


@pytest.mark.parametrize("name, size", [("resnet18_v1", 32), ("mobilenetv2_0.25", 32),
                                        ("vgg11", 32)])
def test_zoo_models_with_a_budget_are_bitwise_unchanged(name, size, monkeypatch):
    # as tests/gluon/test_model_zoo.py: small inputs, schedules run from Python
    monkeypatch.setenv("NBDL_DRIVER", "0")
    from nbdl.gluon.model_zoo.vision import get_model
    x = nbdl.nd.array(np.random.RandomState(1).uniform(-1, 1, (2, 3, size, size))
                      .astype(np.float32))
    nbdl.random.seed(0)
    net = get_model(name)
    net.initialize(nbdl.initializer.Xavier(magnitude=2))
    net.hybridize()
    net(x)                                   # deferred shapes
    params = {k: p.data().asnumpy() for k, p in net.collect_params().items()}

    def step(budget):
        for k, p in net.collect_params().items():
            p.set_data(nbdl.nd.array(params[k]))
        net.hybridize(memory_budget=budget)
        grads, data = _gluon_step(net, x)
        return (grads, data), net._cached_op.executors()[0]

    want, ex = step(None)
    base = ex.memory_plan.arena_bytes
    with pytest.raises(MemoryBudgetError) as err:
        step(1)
    smallest = err.value.smallest
    assert smallest < base
    for budget in (smallest, (smallest + base) // 2):
        got, ex = step(budget)
        plan = ex.memory_plan
        assert check_plan(plan) == [] and plan.arena_bytes <= budget
        assert plan.budget.recompute_steps and plan.budget.extra_flops > 0
        assert got == want, name


def test_dropout_whose_mask_nobody_reads_is_kept():
    # no gradient flows back through the Dropout: its mask is never written
    # (req null), so its output cannot be made again from it
    h = nbdl.sym.Dropout(nbdl.sym.var("data"), p=0.5, name="drop")
    h = nbdl.sym.FullyConnected(h, num_hidden=64, name="fc0")
    h = nbdl.sym.Activation(h, act_type="tanh", name="act")
    h = nbdl.sym.FullyConnected(h, num_hidden=4, name="fc1")
    sym = nbdl.sym.LinearRegressionOutput(h, name="l2")
    shapes = {"data": (16, 32)}
    reqs = {"data": "null", "fc0_weight": "write", "fc0_bias": "write", "fc1_weight": "write",
            "fc1_bias": "write", "l2_label": "null"}
    want = _step(sym.simple_bind(nbdl.cpu(), grad_req=reqs, **shapes))
    smallest = _smallest(sym, grad_req=reqs, **shapes)
    ex = _budgeted(sym, smallest, grad_req=reqs, **shapes)
    names = [ex._sched.nodes[k].op.name for k in ex.memory_plan.budget.recompute_steps]
    assert "_backward_Dropout" not in names
    assert _step(ex) == want
