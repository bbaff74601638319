"""``check_plan`` reports each kind of broken plan."""
from __future__ import annotations

import copy

import pytest

from nbdl.planner import PlanRequest, Step, check_plan, plan


@pytest.fixture
def good():
    # 1 = f(x); 2 = relu(1) inplace; 3 = g(2) with a temp; 4 = h(2, 3)
    steps = [Step("a", "f", [0], [1]),
             Step("b", "relu", [1], [2], inplace=[(1, 2)]),
             Step("c", "g", [2], [3], temps=[9]),
             Step("d", "h", [2, 3], [4])]
    req = PlanRequest(steps, {0: 64, 1: 64, 2: 64, 3: 64, 4: 64, 9: 64},
                      {}, {0}, {4})
    p = plan(req)
    assert check_plan(p) == [] and p.alias_of == {2: 1}
    return p


def broken(p, edit):
    q = copy.deepcopy(p)
    edit(q)
    return check_plan(q)


def test_missing_offset(good):
    assert any("no offset" in m for m in broken(good, lambda q: q.offsets.pop(3)))


def test_misaligned_offset(good):
    assert any("multiple of 64" in m for m in broken(good, lambda q: q.offsets.update({3: 8})))


def test_external_with_offset(good):
    assert any("external" in m for m in broken(good, lambda q: q.offsets.update({0: 0})))


def test_outside_the_arena(good):
    def edit(q):
        q.offsets[4] = q.arena_bytes
    assert any("exceeds the arena" in m for m in broken(good, edit))


def test_overlap_of_live_entries(good):
    def edit(q):
        q.offsets[3] = q.offsets[2]
    assert any("overlap" in m for m in broken(good, edit))


def test_overlap_with_a_temp(good):
    def edit(q):
        q.offsets[9] = q.offsets[2]
    assert any("overlap" in m for m in broken(good, edit))


def test_illegal_alias_is_not_an_excuse(good):
    def edit(q):            # claim 3 took 2's storage: 2 is read after step c
        q.alias_of[3] = 2
        q.offsets[3] = q.offsets[2]
    problems = broken(good, edit)
    assert any("not listed" in m for m in problems)
    assert any("overlap" in m for m in problems)


def test_alias_with_different_offsets(good):
    def edit(q):
        q.offsets[2] = q.offsets[1] + 64 if q.offsets[1] == 0 else 0
    assert broken(good, edit)


def test_wrong_live_and_stats(good):
    def edit(q):
        q.live[2] = (1, 1)
        q.stats.naive_bytes += 64
        q.stats.lower_bound_bytes = q.arena_bytes + 1
    problems = broken(good, edit)
    assert any("plan.live" in m for m in problems)
    assert any("naive_bytes" in m for m in problems)
    assert any("out of order" in m for m in problems)


def test_arena_too_small_for_what_is_live(good):
    def edit(q):
        q.arena_bytes = q.stats.planned_bytes = 64
        for e in q.offsets:
            q.offsets[e] = 0
    problems = broken(good, edit)
    assert any("live at once" in m for m in problems)
