"""Hand-written planner cases: liveness, inplace rules, temps, outputs,
externals, errors, modes and the memory table."""
from __future__ import annotations

import pytest

from nbdl.errors import NbdlError
from nbdl.planner import PlanRequest, Step, check_plan, format_plan_table, plan


def request(steps, sizes, external=(), outputs=(), **kw):
    """``sizes``: {id: nbytes}; names are ``e<id>``."""
    return PlanRequest(steps, dict(sizes), {e: f"e{e}" for e in sizes}, set(external),
                       set(outputs), **kw)


def planned(req):
    p = plan(req)
    assert check_plan(p) == []
    return p


def overlaps(p, a, b):
    sa, sb = p.request.nbytes[a], p.request.nbytes[b]
    return p.offsets[a] < p.offsets[b] + sb and p.offsets[b] < p.offsets[a] + sa


def test_chain_ping_pongs_between_two_buffers():
    # x(ext) -> 1 -> 2 -> 3 -> 4, no inplace: two buffers suffice
    steps = [Step(f"n{k}", "exp", [k - 1 if k > 1 else 0], [k]) for k in range(1, 5)]
    p = planned(request(steps, {0: 256, 1: 256, 2: 256, 3: 256, 4: 256}, external={0},
                        outputs={4}))
    assert p.live == {1: (0, 1), 2: (1, 2), 3: (2, 3), 4: (3, 3)}
    assert p.arena_bytes == p.stats.lower_bound_bytes == 512
    assert p.stats.naive_bytes == 1024
    assert p.offsets[1] == p.offsets[3] != p.offsets[2]


def test_inplace_chain_shares_one_buffer():
    steps = [Step(f"relu{k}", "relu", [k - 1], [k], inplace=[(k - 1, k)]) for k in range(1, 5)]
    p = planned(request(steps, dict.fromkeys(range(5), 100), external={0}, outputs={4}))
    assert p.alias_of == {2: 1, 3: 2, 4: 3}          # 1 cannot take the external 0
    assert len({p.offsets[e] for e in (1, 2, 3, 4)}) == 1
    assert p.arena_bytes == 128                      # aligned to 64
    assert len(p.buffers) == 1 and p.buffers[0].entries == [1, 2, 3, 4]


def test_diamond_inplace_only_at_last_reader():
    # 1 = f(x); 2 = g(1); 3 = h(1); 4 = add(2, 3)
    steps = [Step("a", "f", [0], [1]),
             Step("b", "g", [1], [2], inplace=[(1, 2)]),    # 1 still read by c: refused
             Step("c", "h", [1], [3], inplace=[(1, 3)]),    # 1 dies here: taken
             Step("d", "add", [2, 3], [4], inplace=[(2, 4), (3, 4)])]
    p = planned(request(steps, dict.fromkeys(range(5), 64), external={0}, outputs={4}))
    assert p.live[1] == (0, 2)
    assert p.alias_of == {3: 1, 4: 2}
    assert overlaps(p, 1, 3) and not overlaps(p, 1, 2) and not overlaps(p, 2, 3)


def test_inplace_chain_refused_while_storage_still_read():
    # 2 takes 1's storage; 3 may not take 2's storage at step 2 if 2 is read at step 3
    steps = [Step("a", "f", [0], [1]),
             Step("b", "relu", [1], [2], inplace=[(1, 2)]),
             Step("c", "relu", [2], [3], inplace=[(2, 3)]),
             Step("d", "add", [2, 3], [4])]
    p = planned(request(steps, dict.fromkeys(range(5), 64), external={0}, outputs={4}))
    assert p.alias_of == {2: 1}
    assert not overlaps(p, 2, 3)


@pytest.mark.parametrize("case", ["output", "size", "external", "twice"])
def test_inplace_refused(case):
    sizes = {0: 64, 1: 64, 2: 64, 3: 64}
    outputs, external = {2}, {0}
    steps = [Step("a", "f", [0], [1]), Step("b", "relu", [1], [2], inplace=[(1, 2)])]
    if case == "output":
        outputs = {1, 2}
    elif case == "size":
        sizes[2] = 32
    elif case == "external":
        steps = [Step("b", "relu", [0], [2], inplace=[(0, 2)])]
        del sizes[1]
    elif case == "twice":       # two outputs may not both take input 1
        steps[1] = Step("b", "split", [1], [2, 3], inplace=[(1, 2), (1, 3)])
        outputs = {2, 3}
    p = planned(request(steps, sizes, external=external, outputs=outputs))
    if case == "twice":
        assert p.alias_of == {2: 1}
        assert not overlaps(p, 2, 3)
    else:
        assert p.alias_of == {}


def test_inplace_allowed_when_input_is_read_twice_by_its_last_step():
    steps = [Step("a", "f", [0], [1]), Step("sq", "mul", [1, 1], [2], inplace=[(1, 2)])]
    p = planned(request(steps, dict.fromkeys(range(3), 64), external={0}, outputs={2}))
    assert p.alias_of == {2: 1}


def test_temps_live_only_at_their_step_and_share_bytes():
    steps = [Step("a", "conv", [0], [1], temps=[10]),
             Step("b", "conv", [1], [2], temps=[11]),
             Step("c", "conv", [2], [3], temps=[12])]
    sizes = {0: 64, 1: 64, 2: 64, 3: 64, 10: 1000, 11: 1000, 12: 1000}
    p = planned(request(steps, sizes, external={0}, outputs={3}))
    assert p.live[10] == (0, 0) and p.live[11] == (1, 1)
    assert p.stats.temp_bytes == 3 * 1024
    assert p.offsets[10] == p.offsets[11] == p.offsets[12]
    assert not overlaps(p, 11, 1) and not overlaps(p, 11, 2)
    assert p.arena_bytes == 1024 + 2 * 64


def test_output_stays_live_to_the_end():
    # 1 is an output nobody reads: it must survive steps 1 and 2
    steps = [Step("a", "f", [0], [1, 2]), Step("b", "f", [2], [3]), Step("c", "f", [3], [4])]
    p = planned(request(steps, dict.fromkeys(range(5), 64), external={0}, outputs={1, 4}))
    assert p.live[1] == (0, 2)
    assert not any(overlaps(p, 1, e) for e in (2, 3, 4))


def test_unread_entry_lives_only_at_its_write_step():
    steps = [Step("a", "f", [0], [1, 2]), Step("b", "f", [1], [3])]
    p = planned(request(steps, dict.fromkeys(range(4), 64), external={0}, outputs={3}))
    assert p.live[2] == (0, 0)


def test_external_entries_are_never_planned():
    # 0 argument, 5 its gradient written by the schedule, 6 head gradient
    steps = [Step("a", "f", [0], [1]), Step("a_bwd", "f_bwd", [6, 0], [5])]
    p = planned(request(steps, {0: 64, 1: 64, 5: 64, 6: 64}, external={0, 5, 6}, outputs={1}))
    assert set(p.offsets) == {1}
    assert set(p.live) == {1}


def test_zero_byte_entries():
    steps = [Step("a", "f", [0], [1]), Step("b", "f", [1], [2])]
    p = planned(request(steps, {0: 0, 1: 0, 2: 64}, external={0}, outputs={2}))
    assert p.arena_bytes == 64
    assert p.offsets[1] == 0


def test_empty_schedule():
    p = planned(request([], {}))
    assert p.arena_bytes == 0 and p.offsets == {} and p.buffers == []


@pytest.mark.parametrize("steps, sizes, outputs, message", [
    ([Step("a", "f", [1], [2]), Step("b", "f", [0], [1])], {0: 4, 1: 4, 2: 4}, set(),
     "before it is written"),
    ([Step("a", "f", [7], [1])], {1: 4, 7: 4}, set(), "no step writes"),
    ([Step("a", "f", [1], [1])], {1: 4}, set(), "before it is written"),
    ([Step("a", "f", [0], [1]), Step("b", "f", [0], [1])], {0: 4, 1: 4}, set(), "written at step 0"),
    ([Step("a", "f", [0], [1])], {0: 4, 1: 4}, {9}, "never written"),
    ([Step("a", "f", [0], [1])], {0: 4}, set(), "no size"),
    ([Step("a", "f", [0], [1], temps=[2]), Step("b", "f", [2], [3])], {0: 4, 1: 4, 2: 4, 3: 4},
     set(), "temps live only"),
    ([Step("a", "f", [0], [1], inplace=[(1, 0)])], {0: 4, 1: 4}, set(), "inplace pair"),
])
def test_bad_schedules_raise(steps, sizes, outputs, message):
    req = PlanRequest(steps, sizes, {}, {0} & set(sizes), outputs)
    with pytest.raises(NbdlError, match=message):
        plan(req)


def test_bad_alignment_and_mode_raise():
    steps = [Step("a", "f", [0], [1])]
    with pytest.raises(NbdlError, match="alignment"):
        plan(request(steps, {0: 4, 1: 4}, external={0}, alignment=0))
    with pytest.raises(NbdlError, match="mode"):
        plan(request(steps, {0: 4, 1: 4}, external={0}, mode="fast"))


def test_mode_comes_from_the_environment(monkeypatch):
    steps = [Step(f"n{k}", "relu", [k - 1], [k], inplace=[(k - 1, k)]) for k in range(1, 4)]
    req = request(steps, dict.fromkeys(range(4), 64), external={0}, outputs={3})
    monkeypatch.setenv("NBDL_PLANNER", "naive")
    p = planned(req)
    assert p.stats.packer == "naive" and p.alias_of == {}
    assert p.arena_bytes == p.stats.naive_bytes == 3 * 64
    monkeypatch.setenv("NBDL_PLANNER", "greedy")
    assert planned(req).arena_bytes == 64
    req.mode = "naive"                               # an explicit mode wins
    assert planned(req).stats.packer == "naive"


def test_alignment_rounds_every_region():
    steps = [Step("a", "f", [0], [1, 2]), Step("b", "f", [1, 2], [3])]
    p = planned(request(steps, {0: 4, 1: 10, 2: 3, 3: 1}, external={0}, outputs={3},
                        alignment=16))
    assert all(off % 16 == 0 for off in p.offsets.values())
    assert p.stats.naive_bytes == 48


def test_memory_table_lists_buffers_and_totals():
    steps = [Step("fc", "FullyConnected", [0], [1], temps=[3]),
             Step("relu", "Activation", [1], [2], inplace=[(1, 2)])]
    req = PlanRequest(steps, {0: 4096, 1: 2 << 20, 2: 2 << 20, 3: 512},
                      {0: "data", 1: "fc_output", 2: "relu_output", 3: "fc_temp"}, {0}, {2})
    text = format_plan_table(planned(req))
    for word in ("fc_output", "relu_output (inplace fc_output)", "fc_temp (temp)", "naive",
                 "planned", "lower bound", "temp", "mxnet pool", "2,097,152", "2.000 MB"):
        assert word in text, word
    assert "data" not in text.split("\n", 2)[2]      # external arrays are not in the arena


def test_unwritten_entries_take_no_bytes_of_their_own():
    from nbdl.planner import PlanRequest, Step, check_plan, plan
    # step 0 writes a (read later) and u (never written by its kernel, never read)
    steps = [Step("s0", "op", [0], [1, 2]), Step("s1", "op", [1], [3])]
    nbytes = {0: 256, 1: 256, 2: 4096, 3: 256}
    req = PlanRequest(steps, nbytes, {i: f"e{i}" for i in nbytes}, external={0}, outputs={3},
                      unwritten={2})
    p = plan(req)
    assert check_plan(p) == []
    assert p.offsets[2] == 0
    assert p.arena_bytes == 4096          # the view must fit; no extra bytes beyond it
    assert p.stats.naive_bytes == 256 + 4096 + 256
    naive = plan(PlanRequest(steps, nbytes, req.names, {0}, {3}, unwritten={2}, mode="naive"))
    assert check_plan(naive) == [] and naive.arena_bytes == naive.stats.naive_bytes


def test_reading_an_unwritten_entry_is_an_error():
    import pytest
    from nbdl.errors import NbdlError
    from nbdl.planner import PlanRequest, Step, plan
    steps = [Step("s0", "op", [0], [1]), Step("s1", "op", [1], [2])]
    req = PlanRequest(steps, {0: 64, 1: 64, 2: 64}, {}, external={0}, outputs={2}, unwritten={1})
    with pytest.raises(NbdlError, match="unwritten"):
        plan(req)
