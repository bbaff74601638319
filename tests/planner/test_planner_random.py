"""Planner invariants on random schedules (hypothesis)."""
from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbdl.planner import PlanRequest, Step, check_plan, mxnet_pool_bytes, plan
from nbdl.planner.plan_memory import PACKERS, plan_with

SIZES = [0, 1, 3, 4, 8, 60, 64, 100, 128, 256, 1000, 4096, 5000]


@st.composite
def schedules(draw, max_steps=30):
    """A random DAG schedule: each step reads earlier entries (or externals),
    writes fresh ones (sometimes an external gradient), may use temps, and
    lists random inplace pairs, often between equal sizes.

    Hypothesis draws the shape of the problem and a seed; the details come
    from ``random.Random(seed)``, which is far faster than drawing every
    choice (shrinking then works on the step count, densities and seed)."""
    num_steps = draw(st.integers(1, max_steps))
    num_ext = draw(st.integers(0, 4))
    p_inplace = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    p_same_size = draw(st.sampled_from([0.0, 0.5, 0.9]))
    align = draw(st.sampled_from([1, 4, 16, 64]))
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    nbytes: dict[int, int] = {}
    names: dict[int, str] = {}

    def new(size, prefix):
        e = len(nbytes)
        nbytes[e], names[e] = size, f"{prefix}{e}"
        return e

    external = {new(rnd.choice(SIZES), "arg") for _ in range(num_ext)}
    readable = sorted(external)
    written: list[int] = []
    steps = []
    for s in range(num_steps):
        # favour recent entries, as real schedules do, so chains form
        reads = [readable[-1 - min(int(rnd.expovariate(0.3)), len(readable) - 1)]
                 for _ in range(rnd.randint(0, 3))] if readable else []
        writes = []
        for _ in range(rnd.randint(0 if reads else 1, 3)):
            same = reads and rnd.random() < p_same_size
            writes.append(new(nbytes[rnd.choice(reads)] if same else rnd.choice(SIZES), "out"))
        if rnd.random() < 0.1:                                  # an external gradient
            g = new(rnd.choice(SIZES), "grad")
            external.add(g)
            writes.append(g)
        temps = [new(rnd.choice(SIZES), "tmp") for _ in range(rnd.choice([0, 0, 0, 1, 2]))]
        pairs = [(i, o) for i in dict.fromkeys(reads) for o in writes]
        inplace = [pr for pr in pairs if rnd.random() < p_inplace]
        rnd.shuffle(inplace)
        steps.append(Step(f"n{s}", "op", reads, writes, temps, inplace))
        fresh = [w for w in writes if w not in external]
        written += fresh
        readable += fresh
    outputs = set(rnd.sample(written, min(len(written), rnd.randint(0, 3))))
    if external and rnd.random() < 0.5:
        outputs.add(min(external))                              # an external output: ignored
    return PlanRequest(steps, nbytes, names, external, outputs, alignment=align)


MANY = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOME = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@MANY
@given(schedules(max_steps=60))
def test_greedy_plan_is_valid_and_no_worse_than_mxnet(req):
    req.mode = "greedy"
    p = plan(req)
    assert check_plan(p) == []
    s = p.stats
    assert s.lower_bound_bytes <= s.planned_bytes <= s.naive_bytes
    assert s.planned_bytes <= s.mxnet_pool_bytes == mxnet_pool_bytes(req)
    assert p.arena_bytes == s.planned_bytes
    assert not set(p.offsets) & req.external
    assert [b.offset for b in p.buffers] == sorted(b.offset for b in p.buffers)


@SOME
@given(schedules())
def test_naive_plan_gives_distinct_regions(req):
    req.mode = "naive"
    p = plan(req)
    assert check_plan(p) == []
    assert p.alias_of == {}
    assert p.stats.planned_bytes == p.stats.naive_bytes == p.arena_bytes
    regions = sorted((p.offsets[e], p.offsets[e] + req.nbytes[e]) for e in p.offsets
                     if req.nbytes[e])
    assert all(a_hi <= b_lo for (_, a_hi), (b_lo, _) in zip(regions, regions[1:]))


@SOME
@given(schedules(), st.data())
def test_check_plan_catches_a_collision(req, data):
    """Moving an entry onto one live at the same step must be reported."""
    req.mode = "greedy"
    p = plan(req)
    live = p.live
    together = [(a, b) for a in p.offsets for b in p.offsets
                if a != b and req.nbytes[a] and req.nbytes[b]
                and live[a][0] <= live[b][1] and live[b][0] <= live[a][1]
                and p.alias_of.get(a) != b and p.alias_of.get(b) != a]
    if not together:
        return
    a, b = data.draw(st.sampled_from(together))
    p.offsets[a] = p.offsets[b]
    assert check_plan(p) != []


@SOME
@given(schedules(), st.sampled_from(PACKERS))
def test_every_packer_alone_gives_a_valid_plan(req, packer):
    req.mode = "greedy"
    p = plan_with(req, [packer])
    assert p.stats.packer == packer
    assert check_plan(p) == []
    if packer == "mxnet_pool":      # MXNet's blocks laid end to end: exactly its figure
        assert p.arena_bytes == p.stats.mxnet_pool_bytes
    assert p.arena_bytes >= plan(req).arena_bytes


@MANY
@given(schedules(max_steps=60))
def test_mxnet_aliases_match_the_pool_whose_bytes_bound_them(req):
    """``mxnet_aliases`` decides as the full pool simulation does, and the
    pool never goes below the lower bound of those groups (what lets the
    planner skip simulating it)."""
    from nbdl.planner.inplace import groups_from_aliases
    from nbdl.planner.liveness import compute_liveness
    from nbdl.planner.mxnet_pool import mxnet_aliases, simulate_mxnet_pool
    from nbdl.planner.packing import group_arrays, lower_bound_bytes
    live = compute_liveness(req)
    sim = simulate_mxnet_pool(req, live)
    assert mxnet_aliases(req, live) == sim.alias_of
    _, starts, ends, sizes = group_arrays(groups_from_aliases(live, sim.alias_of),
                                          req.nbytes, req.alignment)
    assert sim.total_bytes >= lower_bound_bytes(starts, ends, sizes, len(req.steps))
