"""``check_plan``: verify a ``MemoryPlan`` from its request alone.

Deliberately shares no code with the planner: liveness is recomputed here in
the simplest way, and the overlap test is a plain sweep over intervals.  It
returns a list of problems (empty when the plan is valid) so a test can show
all of them at once.
"""
from __future__ import annotations

from .types import MemoryPlan


def _round_up(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _recompute_live(request):
    """id -> [first, last] for every non-external id, or a problem string."""
    ext = request.external
    written, last, temp_at = {}, {}, {}
    problems = []
    for s, st in enumerate(request.steps):
        for e in st.reads:
            if e in ext:
                continue
            if e not in written:
                problems.append(f"step {s} reads entry {e} that is not written before it")
            else:
                last[e] = max(last[e], s)
        for e in list(st.writes) + list(st.temps):
            if e in ext:
                continue
            if e in written:
                problems.append(f"entry {e} is written twice (steps {written[e]} and {s})")
            written[e] = s
            last[e] = s
        for t in st.temps:
            temp_at[t] = s
    end = len(request.steps) - 1
    for e in request.outputs:
        if e not in ext and e in written:
            last[e] = end
    return {e: (written[e], last[e]) for e in written}, temp_at, problems


def _alias_problem(request, live, temp_at, out, inp):
    """Why ``alias_of[out] = inp`` is not a legal inplace, or None."""
    if out not in live or inp not in live:
        return f"alias {out} -> {inp}: both must be planned entries"
    if out in temp_at or inp in temp_at:
        return f"alias {out} -> {inp}: temps cannot alias"
    s = live[out][0]
    st = request.steps[s]
    if (inp, out) not in [tuple(p) for p in st.inplace]:
        return f"alias {out} -> {inp}: pair not listed in step {s}'s inplace {list(st.inplace)}"
    if inp in request.outputs:
        return f"alias {out} -> {inp}: {inp} is a graph output and must stay intact"
    if live[inp][1] != s:
        return f"alias {out} -> {inp}: {inp} is still read at step {live[inp][1]} after step {s}"
    if request.nbytes[inp] != request.nbytes[out]:
        return (f"alias {out} -> {inp}: sizes differ "
                f"({request.nbytes[out]} vs {request.nbytes[inp]} bytes)")
    return None


def _budget_problems(plan, live, size):
    """A plan made under a memory budget: it fits (unless naive), and every
    recomputed entry is a copy, made by one of the recompute steps after its
    original was written, of the original's size (the recompute steps' reads
    and writes are checked with every other step's)."""
    b, req = plan.budget, plan.request
    problems = []
    if plan.stats.packer != "naive" and plan.arena_bytes > b.budget:
        problems.append(f"arena of {plan.arena_bytes} bytes exceeds the budget of {b.budget}")
    if b.recompute_steps and not b.unbudgeted_bytes > b.budget:
        problems.append(f"recompute steps although the schedule fits without them "
                        f"({b.unbudgeted_bytes} <= {b.budget} bytes)")
    steps = set(b.recompute_steps)
    bad = [k for k in steps if not 0 <= k < len(req.steps)]
    if bad:
        problems.append(f"recompute steps {bad} are outside the schedule")
    for c, o in b.recomputed.items():
        if c == o or c not in live or o not in live:
            problems.append(f"recomputed entry {c} (of {o}): both must be distinct planned entries")
            continue
        if live[c][0] not in steps or c not in req.steps[live[c][0]].writes:
            problems.append(f"recomputed entry {c} is not written by a recompute step")
        if live[o][0] >= live[c][0]:
            problems.append(f"recomputed entry {c} is made at step {live[c][0]}, not after its "
                            f"original {o} (step {live[o][0]})")
        if req.nbytes.get(c) != req.nbytes.get(o):
            problems.append(f"recomputed entry {c} has {req.nbytes.get(c)} bytes, its original "
                            f"{o} {req.nbytes.get(o)}")
    return problems


def st_packer(plan: MemoryPlan) -> str:
    return plan.stats.packer


def check_plan(plan: MemoryPlan) -> list[str]:
    req = plan.request
    align = req.alignment
    problems: list[str] = []
    live, temp_at, live_problems = _recompute_live(req)
    problems += live_problems

    for e in req.external:
        if e in plan.offsets:
            problems.append(f"external entry {e} has an offset")
    for e in live:
        if e not in plan.offsets:
            problems.append(f"planned entry {e} has no offset")
    for e in plan.offsets:
        if e not in live and e not in req.external:
            problems.append(f"entry {e} has an offset but is not in the schedule")
    for e, span in live.items():
        if tuple(plan.live.get(e, ())) != span:
            problems.append(f"entry {e}: plan.live says {plan.live.get(e)}, schedule says {span}")

    size = {e: _round_up(req.nbytes.get(e, 0), align) for e in live}
    # Unwritten ids (REQ_NULL outputs nobody reads) may overlap anything in a
    # greedy plan: check that they really are never read, then leave them out
    # of the overlap and live-bytes checks.
    free = set(req.unwritten) if st_packer(plan) != "naive" else set()
    for s, st_ in enumerate(req.steps):
        for e in st_.reads:
            if e in req.unwritten:
                problems.append(f"step {s} reads entry {e}, which is declared unwritten")
    for e in req.unwritten:
        if e in req.outputs or e in req.external:
            problems.append(f"unwritten entry {e} is an output or external")
    for e in live:
        off = plan.offsets.get(e)
        if off is None:
            continue
        if off < 0 or off % align:
            problems.append(f"entry {e}: offset {off} is not a non-negative multiple of {align}")
        if off + size[e] > plan.arena_bytes:
            problems.append(f"entry {e}: [{off}, {off + size[e]}) "
                            f"exceeds the arena of {plan.arena_bytes} bytes")

    legal = set()
    for out, inp in plan.alias_of.items():
        why = _alias_problem(req, live, temp_at, out, inp)
        if why:
            problems.append(why)
        else:
            legal.add((out, inp))
            if plan.offsets.get(out) != plan.offsets.get(inp):
                problems.append(f"alias {out} -> {inp}: offsets differ")

    # sweep: every entry against those still live when it starts
    order = sorted((e for e in live if e in plan.offsets and size[e] and e not in free),
                   key=lambda e: live[e][0])
    active: list[int] = []
    for e in order:
        start = live[e][0]
        active = [a for a in active if live[a][1] >= start]
        lo, hi = plan.offsets[e], plan.offsets[e] + size[e]
        for a in active:
            a_lo, a_hi = plan.offsets[a], plan.offsets[a] + size[a]
            if a_lo < hi and lo < a_hi and (e, a) not in legal and (a, e) not in legal:
                problems.append(f"entries {a} (steps {live[a]}, bytes [{a_lo}, {a_hi})) and "
                                f"{e} (steps {live[e]}, bytes [{lo}, {hi})) overlap while both live")
        active.append(e)

    # bytes that must coexist at each step under the plan's own aliasing
    n = len(req.steps)
    delta = [0] * (n + 1)
    for e, (first, last) in live.items():
        if e in free:
            continue
        delta[first] += size[e]
        delta[last + 1] -= size[e]
    for out, inp in legal:          # a legal alias shares its transfer step's bytes
        delta[live[out][0]] -= size[out]
        delta[live[out][0] + 1] += size[out]
    need, running = 0, 0
    for d in delta:
        running += d
        need = max(need, running)

    st = plan.stats
    if plan.arena_bytes < need:
        problems.append(f"arena of {plan.arena_bytes} bytes is below the {need} bytes live at once")
    if st.lower_bound_bytes > need:
        problems.append(f"stats.lower_bound_bytes {st.lower_bound_bytes} exceeds the {need} "
                        f"bytes this plan's aliasing keeps live at once")
    temps = sum(size[t] for t in temp_at if t in size)
    if st.temp_bytes != temps:
        problems.append(f"stats.temp_bytes {st.temp_bytes} != {temps}")
    naive = sum(size.values())
    if st.naive_bytes != naive:
        problems.append(f"stats.naive_bytes {st.naive_bytes} != {naive}")
    if st.planned_bytes != plan.arena_bytes:
        problems.append(f"stats.planned_bytes {st.planned_bytes} != arena_bytes {plan.arena_bytes}")
    if not st.lower_bound_bytes <= st.planned_bytes <= st.naive_bytes:
        problems.append(f"stats out of order: lower bound {st.lower_bound_bytes}, "
                        f"planned {st.planned_bytes}, naive {st.naive_bytes}")
    if plan.budget is not None:
        problems += _budget_problems(plan, live, size)
    if st.packer == "naive":
        if plan.alias_of:
            problems.append("naive plan has aliases")
        regions = sorted((plan.offsets[e], plan.offsets[e] + size[e]) for e in order)
        for (_, a_hi), (b_lo, _) in zip(regions, regions[1:]):
            if b_lo < a_hi:
                problems.append(f"naive plan shares bytes at offset {b_lo}")
    return problems
