"""Memory budgets on random schedules: every budgeted plan fits and passes
``check_plan``, and running it (values simulated in the planned arena) gives
every original step the inputs it had without recompute."""
from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbdl.errors import MemoryBudgetError
from nbdl.planner import PlanRequest, Step, check_plan, plan
from nbdl.planner.recompute import (BudgetRequest, Recompute, RecomputeStep, _Budget,
                                    fit_budget, smallest_plan)

from test_planner_random import schedules

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def _rules(req, n_forward, seed):
    """A rule for most forward steps (re-run the step, a random cost); some
    steps have none, as random ops."""
    rnd = random.Random(seed)
    rules = {}
    for k in range(n_forward):
        s = req.steps[k]
        writes = [w for w in s.writes if w not in req.external]
        if rnd.random() < 0.15 or len(writes) != len(s.writes):
            continue
        reads = list(s.reads)
        rules[k] = Recompute(reads, writes, [req.nbytes[t] for t in s.temps],
                             [(reads.index(i), writes.index(o)) for i, o in s.inplace],
                             rnd.choice([1, 10, 1000]) * max(1, sum(req.nbytes[w] for w in writes)))
    return rules


def _budget_request(req, data):
    n_forward = data.draw(st.integers(0, len(req.steps)))
    rules = _rules(req, n_forward, data.draw(st.integers(0, 2**31)))
    return BudgetRequest(req, n_forward, rules, budget=0)


def _values(request, order=None, offsets=None, arena_bytes=0):
    """Run ``request`` symbolically: a step's outputs are hashes of its inputs
    (and of the original step it is, so a recompute step reproduces its
    forward step's values).  With ``offsets`` the values live in an arena of
    ``arena_bytes`` (one cell per byte): a read of bytes another entry has
    overwritten fails.  Returns, per original step, the values it read."""
    value = {e: hash(("ext", e)) for e in request.external}
    arena = np.zeros(max(arena_bytes, 1), np.int64) if offsets is not None else None
    seen = {}
    for s, st_ in enumerate(request.steps):
        item = order[s] if order is not None else s
        k = item.step if isinstance(item, RecomputeStep) else item
        ins = []
        for r in st_.reads:
            v = value[r]
            if arena is not None and r in offsets and request.nbytes[r]:
                cells = arena[offsets[r]:offsets[r] + request.nbytes[r]]
                assert (cells == v).all(), f"step {s} reads entry {r} after it was overwritten"
            ins.append(v)
        if not isinstance(item, RecomputeStep):
            seen[k] = ins
        made = item.copies if isinstance(item, RecomputeStep) else None
        original = request.steps[s].writes if made is None else list(made)
        for pos, (w, o) in enumerate(zip(st_.writes, original)):
            v = hash((k, o, tuple(ins)))
            value[w] = v
            if arena is not None and w in offsets and w not in request.unwritten \
                    and request.nbytes[w]:
                arena[offsets[w]:offsets[w] + request.nbytes[w]] = v
        for t in st_.temps:
            if arena is not None and request.nbytes[t]:
                arena[offsets[t]:offsets[t] + request.nbytes[t]] = hash(("temp", t))
    return seen


def _check_budgeted(breq, bp):
    p = bp.plan
    assert check_plan(p) == []
    assert p.arena_bytes <= breq.budget
    assert p.budget.extra_flops == sum(breq.recompute[o.step].flops for o in bp.order
                                       if isinstance(o, RecomputeStep))
    # every original step reads what it read without recompute, from the arena
    want = _values(breq.request)
    got = _values(p.request, bp.order, p.offsets, p.arena_bytes)
    assert got == want


@SETTINGS
@given(schedules(max_steps=40), st.data())
def test_any_budget_between_the_smallest_and_none_is_met(req, data):
    breq = _budget_request(req, data)
    base = plan(dataclasses.replace(req, mode="greedy")).arena_bytes
    smallest = smallest_plan(breq).plan.arena_bytes
    assert smallest <= base
    breq.budget = data.draw(st.integers(smallest, base + 64))
    bp = fit_budget(breq)
    _check_budgeted(breq, bp)
    assert bp.plan.budget.unbudgeted_bytes == base
    if breq.budget >= base:
        assert bp.plan.budget.recompute_steps == [] and bp.redirect == {}


@SETTINGS
@given(schedules(max_steps=30), st.data())
def test_a_budget_below_the_smallest_names_it(req, data):
    breq = _budget_request(req, data)
    smallest = smallest_plan(breq).plan.arena_bytes
    if smallest == 0:
        return
    breq.budget = smallest - 1
    with pytest.raises(MemoryBudgetError) as err:
        fit_budget(breq)
    assert err.value.smallest == smallest
    assert f"{smallest:,} bytes" in str(err.value)
    breq.budget = smallest
    _check_budgeted(breq, fit_budget(breq))


def test_check_plan_rejects_a_budgeted_plan_over_its_budget():
    breq = _layers(6, cheap=1, expensive=1)
    breq.budget = _budget_of(breq, 0.7)
    bp = fit_budget(breq)
    assert check_plan(bp.plan) == [] and bp.plan.budget.recompute_steps
    bp.plan.budget.budget = bp.plan.arena_bytes - 1
    assert any("exceeds the budget" in p for p in check_plan(bp.plan))
    bp.plan.budget.budget = bp.plan.arena_bytes
    c, o = next(iter(bp.plan.budget.recomputed.items()))
    bp.plan.budget.recomputed[c] = c
    assert any("distinct" in p for p in check_plan(bp.plan))


# -- the choice minimises the extra FLOPs -----------------------------------------------

def _layers(n, cheap, expensive, size=4096):
    """A chain of n layers, each an expensive step (a convolution) then a
    cheap one (a normalisation), and a backward pass that reads them in
    reverse, as a network's: the cheap step's gradient reads its input (the
    convolution's output), the convolution's its input (the previous cheap
    step's output)."""
    steps, nbytes, names = [], {0: size}, {0: "data"}
    fwd = []
    x = 0
    for i in range(n):
        a, b = 2 * i + 1, 2 * i + 2
        nbytes[a] = nbytes[b] = size
        names[a], names[b] = f"conv{i}", f"norm{i}"
        steps.append(Step(f"conv{i}", "Convolution", [x], [a]))
        steps.append(Step(f"norm{i}", "Norm", [a], [b], inplace=[(a, b)]))
        fwd.append((x, a, b))
        x = b
    g = 2 * n + 1
    nbytes[g], names[g] = size, "head_grad"
    nxt = g + 1
    for i in reversed(range(n)):
        x, a, b = fwd[i]
        ga, gx = nxt, nxt + 1
        nxt += 2
        nbytes[ga] = nbytes[gx] = size
        names[ga], names[gx] = f"norm{i}_grad", f"conv{i}_grad"
        steps.append(Step(f"norm{i}_backward", "_backward_Norm", [g, a], [ga], inplace=[(g, ga)]))
        steps.append(Step(f"conv{i}_backward", "_backward_Convolution", [ga, x], [gx],
                          inplace=[(ga, gx)]))
        g = gx
    req = PlanRequest(steps, nbytes, names, external={0, 2 * n + 1}, outputs={g},
                      mode="greedy")
    rules = {}
    for k in range(2 * n):
        s = steps[k]
        rules[k] = Recompute(list(s.reads), list(s.writes), [],
                             [(0, 0)] if s.inplace else [], expensive if k % 2 == 0 else cheap)
    return BudgetRequest(req, 2 * n, rules, budget=0)


def _budget_of(breq, fraction):
    base = plan(breq.request).arena_bytes
    return int(base * fraction)


def _checkpoints_plan(breq, every):
    """Chen et al.'s choice: keep every ``every``-th layer's output, drop
    the rest of the saved entries."""
    g = _Budget(breq)
    kept = {x for x in g.saved if breq.request.names[x] in
            {f"norm{i}" for i in range(0, breq.n_forward // 2, every)}}
    rw = g.rewrite(kept)
    return rw.flops, plan(rw.request).arena_bytes


@pytest.mark.parametrize("n", [9, 16, 25])
def test_cheap_recomputes_go_first(n):
    breq = _layers(n, cheap=10, expensive=10_000)
    every = int(math.sqrt(n))
    chen_flops, chen_bytes = _checkpoints_plan(breq, every)
    breq.budget = chen_bytes
    bp = fit_budget(breq)
    _check_budgeted(breq, bp)
    # Chen's choice recomputes about n convolutions; this one recomputes the
    # cheap steps and only the few convolutions the budget still needs
    assert bp.plan.budget.extra_flops * 2 < chen_flops
    redone = [breq.request.steps[o.step].op for o in bp.order if isinstance(o, RecomputeStep)]
    assert redone.count("Convolution") < redone.count("Norm")


def test_no_rule_no_recompute_and_a_rule_reading_its_own_output_keeps_it():
    breq = _layers(6, cheap=1, expensive=1)
    breq.recompute = {k: r for k, r in breq.recompute.items() if k % 2 == 0}   # no Norm rule
    # a rule that reads its own output (a saved mask): that output is never dropped
    k = 0
    rule = breq.recompute[k]
    breq.recompute[k] = dataclasses.replace(rule, reads=rule.reads + rule.writes)
    g = _Budget(breq)
    assert breq.request.steps[k].writes[0] not in g.droppable
    assert all(breq.request.names[x].startswith("conv") for x in g.droppable)
    breq.budget = smallest_plan(breq).plan.arena_bytes
    bp = fit_budget(breq)
    _check_budgeted(breq, bp)
    assert all(breq.request.steps[o.step].op == "Convolution" and o.step != 0
               for o in bp.order if isinstance(o, RecomputeStep))
