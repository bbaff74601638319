"""Memory under a budget: which forward entries to drop and recompute.

``fit_budget(BudgetRequest) -> BudgetPlan`` is a pure function over the
planner's entry ids, like ``plan``.  The request is the whole schedule
(forward steps first), a budget in arena bytes and, for each forward step
that can be run again, a ``Recompute`` rule: what it reads (the step's own
inputs, or outputs of its own that backward keeps anyway, such as a dropout
mask or BatchNorm's saved statistics), which of the step's outputs it makes
again, its scratch, in-place pairs and FLOPs.

The model.  Backward reads some forward entries (the *saved* ones).  A saved
entry that is dropped is not kept after its last forward read; the first time
a backward step needs it, a recompute step (a copy of the rule's call) makes a
copy of it just before, and that copy lives until its last reader.  A rule
reads the originals of kept entries and the copies of dropped ones, so a chain
of dropped entries is made again from the nearest kept one (Chen et al. 2016's
segments fall out of this), each recompute step at most once.  Entries that
are neither saved nor kept (BatchNorm's output under a ReLU) are recomputed
whenever a rule needs them; entries of steps without a rule (random ops) are
read where they are, which keeps them alive.

The choice.  Greedy, on a cost-benefit ratio: the excess of the live bytes
over the target, summed over steps (``excess``), against the FLOPs a drop
adds.  Each round estimates every kept saved entry's gain from the steps it
would free and its cost from the rule steps it would add, evaluates the best
few exactly (rewrite the schedule, compute the liveness with the planner's
in-place groups: the bound the packers reach), and drops the one with the best
exact ratio.  Cheap recomputes (a ReLU, a BatchNorm from its saved statistics)
thus go before expensive ones (a convolution), and a convolution whose output
is small per FLOP is kept.  When the packed arena lands above the budget the
target is lowered by the difference and the search goes on.

When no choice reaches the budget, the search that minimises the peak
(``smallest_plan``: the same greedy aiming each round just below the current
peak) gives the smallest budget nbdl meets; ``MemoryBudgetError`` names it, and
any budget at or above it is met (by that plan if by no cheaper one).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..errors import MemoryBudgetError, NbdlError
from .inplace import inplace_groups
from .liveness import compute_liveness
from .packing import group_arrays, live_bytes
from .plan_memory import plan as make_plan
from .types import BudgetInfo, MemoryPlan, PlanRequest, Step, align_up

_MB = float(1 << 20)
_TRY = 4              # exact evaluations per round among the best estimates
_RETARGETS = 6        # target corrections when packing lands above the bound


@dataclass
class Recompute:
    """How forward step ``step``'s outputs can be made again in backward.

    Parameters
    ----------
    reads : list of int
        Ids the recompute call reads: the step's inputs, or outputs of the
        step itself that backward keeps (they are then never dropped).
    writes : list of int
        The step's output ids it makes again, in the order of its outputs.
    temps : list of int
        Bytes of each scratch buffer the call needs.
    inplace : list of (int, int)
        (position in ``reads``, position in ``writes``) pairs it may alias.
    flops : int
        What one call costs.
    """
    reads: list[int]
    writes: list[int]
    temps: list[int] = field(default_factory=list)
    inplace: list[tuple[int, int]] = field(default_factory=list)
    flops: int = 0


@dataclass
class BudgetRequest:
    """A schedule to fit into ``budget`` arena bytes.

    Parameters
    ----------
    request : PlanRequest
        The whole schedule without recompute, forward steps first.
    n_forward : int
        Steps ``[0, n_forward)`` are the forward pass.
    recompute : dict of int to Recompute
        Forward step -> how to run it again; steps not listed never are.
    budget : int
        Arena bytes.
    forward_flops : int
        FLOPs of the forward pass (reported beside the extra FLOPs).
    """
    request: PlanRequest
    n_forward: int
    recompute: dict[int, Recompute]
    budget: int
    forward_flops: int = 0


@dataclass
class RecomputeStep:
    """A step of the rewritten schedule that runs forward step ``step``'s
    rule; ``copies`` maps each output it makes again to the copy's id."""
    step: int
    copies: dict[int, int]


@dataclass
class BudgetPlan:
    """``fit_budget``'s answer.  ``order`` has one item per step of
    ``plan.request``: the index of the original step it is, or the
    ``RecomputeStep`` it adds.  ``copies``: original id -> copy id, for
    every output a recompute step makes; ``redirect``: the dropped entries
    among them, whose readers after the forward pass read the copy."""
    plan: MemoryPlan
    order: list
    copies: dict[int, int]
    redirect: dict[int, int]


class _Rewrite:
    """The schedule rewritten for one set of kept entries."""

    def __init__(self, request, order, copies, redirect, flops, pos):
        self.request, self.order, self.copies, self.flops, self.pos = (request, order, copies,
                                                                         flops, pos)
        self.redirect = redirect
        self.live = None
        self.peak = 0

    def excess(self, target):
        return int(np.maximum(self.live - target, 0).sum())


class _Budget:
    """The request's structure, computed once: producers, rules, which
    entries may be dropped, and where each is read."""

    def __init__(self, breq: BudgetRequest):
        req = breq.request
        self.breq, self.req = breq, req
        self.nf = nf = breq.n_forward
        # a rule reading an entry no kernel writes (an unread output, such as
        # a mask nobody needs) cannot run: that step is kept instead
        self.rules = {k: r for k, r in breq.recompute.items()
                      if not any(x in req.unwritten for x in r.reads)}
        if not 0 <= nf <= len(req.steps):
            raise NbdlError(f"BudgetRequest.n_forward={nf} is outside the schedule's "
                            f"{len(req.steps)} steps")
        ext = req.external
        prod = {}
        for k in range(nf):
            for w in req.steps[k].writes:
                if w not in ext:
                    prod[w] = k
        self.rule_of = {}
        pinned = set()
        for k, rule in self.rules.items():
            if not 0 <= k < nf:
                raise NbdlError(f"recompute rule for step {k}, which is not a forward step")
            bad = [w for w in rule.writes if prod.get(w) != k]
            if bad:
                raise NbdlError(f"recompute rule of step {k} ({req.steps[k].name}) makes "
                                f"{bad}, which that step does not write")
            for w in rule.writes:
                self.rule_of[w] = k
            pinned.update(r for r in rule.reads if prod.get(r) == k)
        self.droppable = {x for x in self.rule_of
                          if x not in pinned and x not in req.outputs
                          and x not in req.unwritten and req.nbytes.get(x, 0) > 0}
        last_fwd, first_bwd = {}, {}
        for s, st in enumerate(req.steps):
            for r in st.reads:
                if r in self.droppable:
                    if s < nf:
                        last_fwd[r] = s
                    elif r not in first_bwd:
                        first_bwd[r] = s
        self.saved = [x for x in sorted(first_bwd)]
        self.last_fwd = {x: last_fwd.get(x, prod[x]) for x in self.saved}
        self.first_bwd = first_bwd
        self.next_id = max(req.nbytes, default=-1) + 1

    # -- the rewritten schedule -------------------------------------------------
    def rewrite(self, kept) -> _Rewrite:
        """The schedule in which the saved entries outside ``kept`` are
        dropped and made again before their first backward reader."""
        req, rules, rule_of = self.req, self.rules, self.rule_of
        droppable = self.droppable

        def gone(x):
            return x in droppable and x not in kept

        steps = list(req.steps[:self.nf])
        order = list(range(self.nf))
        pos = list(range(self.nf))
        nbytes, names = dict(req.nbytes), dict(req.names)
        copies = {}
        flops = 0
        next_id = self.next_id
        emitted = set()

        def emit(k):
            nonlocal next_id, flops
            rule = rules[k]
            reads = [copies[r] if gone(r) else r for r in rule.reads]
            made = {}
            for w in rule.writes:
                c = made[w] = copies[w] = next_id
                next_id += 1
                nbytes[c], names[c] = nbytes[w], f"{names.get(w, w)} (recomputed)"
            writes = [made[w] for w in rule.writes]
            temps = []
            for t, n in enumerate(rule.temps):
                temps.append(next_id)
                nbytes[next_id], names[next_id] = n, f"{req.steps[k].name}_recompute_temp{t}"
                next_id += 1
            pairs = [(reads[i], writes[o]) for i, o in rule.inplace]
            steps.append(Step(f"{req.steps[k].name}_recompute", req.steps[k].op, reads, writes,
                              temps, pairs))
            order.append(RecomputeStep(k, made))
            flops += rule.flops
            emitted.add(k)

        def materialise(x):
            stack = [rule_of[x]]
            while stack:
                k = stack[-1]
                if k in emitted:
                    stack.pop()
                    continue
                need = [rule_of[r] for r in rules[k].reads
                        if gone(r) and r not in copies and rule_of[r] not in emitted]
                if need:
                    stack.extend(need)
                else:
                    stack.pop()
                    emit(k)

        for b in range(self.nf, len(req.steps)):
            st = req.steps[b]
            if any(gone(r) for r in st.reads):
                for r in st.reads:
                    if gone(r) and r not in copies:
                        materialise(r)
                st = Step(st.name, st.op, [copies[r] if gone(r) else r for r in st.reads],
                          st.writes, st.temps,
                          [(copies[i] if gone(i) else i, o) for i, o in st.inplace])
            pos.append(len(steps))
            steps.append(st)
            order.append(b)
        read = {r for st in steps for r in st.reads}
        unwritten = set(req.unwritten) | {c for c in copies.values() if c not in read}
        new = dataclasses.replace(req, steps=steps, nbytes=nbytes, names=names,
                                  unwritten=unwritten)
        redirect = {x: c for x, c in copies.items() if gone(x)}
        return _Rewrite(new, order, copies, redirect, flops, pos)

    def evaluate(self, kept) -> _Rewrite:
        """``rewrite(kept)`` with the bytes live at each of its steps, under
        the in-place choices the greedy packers share."""
        rw = self.rewrite(kept)
        req = rw.request
        unwritten = req.unwritten
        if unwritten:       # no bytes of their own (as plan_memory lays them)
            req = dataclasses.replace(req, unwritten=set(), steps=[
                dataclasses.replace(st, writes=[w for w in st.writes if w not in unwritten],
                                    inplace=[p for p in st.inplace if p[1] not in unwritten])
                if any(w in unwritten for w in st.writes) else st for st in req.steps])
        liveness = compute_liveness(req)
        groups = inplace_groups(req, liveness)
        _, starts, ends, sizes = group_arrays(groups, req.nbytes, req.alignment)
        rw.live = live_bytes(starts, ends, sizes, len(req.steps))
        rw.peak = int(rw.live.max()) if len(rw.live) else 0
        return rw

    # -- the choice ---------------------------------------------------------------
    def _added_flops(self, x, done, kept):
        """FLOPs of the rule steps dropping ``x`` adds to a schedule that
        already recomputes the forward steps ``done``."""
        rules, rule_of, droppable = self.rules, self.rule_of, self.droppable
        total, stack, seen = 0, [rule_of[x]], set()
        while stack:
            k = stack.pop()
            if k in done or k in seen:
                continue
            seen.add(k)
            total += rules[k].flops
            stack.extend(rule_of[r] for r in rules[k].reads
                         if r in droppable and (r not in kept or r == x))
        return total

    def descend(self, kept, target, cur=None, peak_mode=False):
        """Drop saved entries from ``kept`` (a set, changed in place) until
        the live bytes stay within ``target`` at every step (with
        ``peak_mode``: until no drop lowers the peak).  Returns the last
        evaluation."""
        cur = cur or self.evaluate(kept)
        size = self.req.nbytes
        align = self.req.alignment
        while True:
            # peak mode aims a little (1/512) below the current peak, so that
            # big graphs still drop entries in groups
            goal = cur.peak - cur.peak // 512 - 1 if peak_mode else target
            if cur.peak <= goal or not kept:
                return cur
            excess = cur.excess(goal)
            over = np.maximum(cur.live - goal, 0)
            hot_sum = np.concatenate(([0], np.cumsum(over > 0)))
            over_sum = np.concatenate(([0], np.cumsum(over)))
            cands = sorted(kept)
            start = np.array([cur.pos[self.last_fwd[x]] + 1 for x in cands], np.int64)
            stop = np.array([cur.pos[self.first_bwd[x]] for x in cands], np.int64)
            stop = np.maximum(stop, start)
            nb = np.array([align_up(size[x], align) for x in cands], np.int64)
            gain = np.minimum(nb * (hot_sum[stop] - hot_sum[start]),
                              over_sum[stop] - over_sum[start])
            ranked = []
            done = {o.step for o in cur.order if isinstance(o, RecomputeStep)}
            for i in np.flatnonzero(gain > 0):
                x = cands[i]
                cost = self._added_flops(x, done, kept)
                ranked.append((-float(gain[i]) / (cost + 1), x, int(gain[i])))
            ranked.sort()
            # Far above the target, the best estimates (within half the best
            # ratio) whose gains add up to at most a quarter of the excess go
            # together: one evaluation instead of one round each, for big
            # graphs drop hundreds of entries.
            group, total = [], 0
            for r, x, est in ranked:
                if total + est > excess // 4 or r > ranked[0][0] / 2:
                    break
                group.append(x)
                total += est
            if len(group) > 1:
                kept.difference_update(group)
                new = self.evaluate(kept)
                if new.excess(goal) < excess and new.peak <= cur.peak:
                    cur = new
                    continue
                kept.update(group)
            best = None
            tried = 0
            for _, x, _ in ranked:
                kept.discard(x)
                new = self.evaluate(kept)
                kept.add(x)
                g = excess - new.excess(goal)
                if g > 0:
                    ratio = g / (new.flops - cur.flops + 1)
                    if best is None or ratio > best[0]:
                        best = (ratio, x, new)
                    tried += 1
                    if tried >= _TRY:
                        break
            if best is None:
                return cur
            kept.discard(best[1])
            cur = best[2]

    def keep_again(self, kept, target, cur):
        """The greedy's last drops may have made earlier ones unneeded: keep
        again, costliest rule first, every dropped entry whose return keeps
        the live bytes within ``target`` and saves FLOPs (those whose rule
        costs at least 1/64 of the extra FLOPs: the rest cannot save much)."""
        rules, rule_of = self.rules, self.rule_of
        dropped = sorted((x for x in self.saved if x not in kept),
                         key=lambda x: (-rules[rule_of[x]].flops, x))
        for x in dropped:
            if rules[rule_of[x]].flops * 64 < cur.flops:
                break
            kept.add(x)
            new = self.evaluate(kept)
            if new.peak <= target and new.flops < cur.flops:
                cur = new
            else:
                kept.discard(x)
        return cur

    def finish(self, rw: _Rewrite, plan: MemoryPlan) -> BudgetPlan:
        unread = rw.request.unwritten
        copy_of = {c: o for o, c in rw.copies.items() if c not in unread}
        steps = [i for i, o in enumerate(rw.order) if isinstance(o, RecomputeStep)]
        plan.budget = BudgetInfo(budget=self.breq.budget, unbudgeted_bytes=0,
                                 recomputed=copy_of, recompute_steps=steps, extra_flops=rw.flops,
                                 forward_flops=self.breq.forward_flops)
        return BudgetPlan(plan, rw.order, dict(rw.copies), dict(rw.redirect))


def fit_budget(breq: BudgetRequest, unbudgeted: MemoryPlan | None = None) -> BudgetPlan:
    """Recompute steps that make ``breq.request`` fit ``breq.budget`` arena
    bytes at a small cost in FLOPs (see the module's docstring).

    Parameters
    ----------
    breq : BudgetRequest
        The schedule, its recompute rules and the budget.
    unbudgeted : MemoryPlan, optional
        ``plan(breq.request)`` when the caller has it.

    Returns
    -------
    BudgetPlan
        Its ``plan`` (the rewritten schedule planned greedily) has
        ``budget`` set; without recompute steps when the schedule fits as it is.

    Raises
    ------
    MemoryBudgetError
        When no choice fits; it names the smallest budget that does.
    """
    req = breq.request
    if unbudgeted is None:
        unbudgeted = make_plan(dataclasses.replace(req, mode="greedy"))
    base_bytes = unbudgeted.arena_bytes
    g = _Budget(breq)
    if base_bytes <= breq.budget:
        return _with_base(g.finish(g.rewrite(set(g.saved)), unbudgeted), base_bytes)
    found = _search(g, breq.budget)
    if found is not None:
        return _with_base(g.finish(*found), base_bytes)
    smallest = smallest_plan(breq, g, unbudgeted)
    if smallest.plan.arena_bytes <= breq.budget:
        return _with_base(smallest, base_bytes)
    need = smallest.plan.arena_bytes
    raise MemoryBudgetError(
        f"memory budget of {breq.budget:,} bytes ({breq.budget / _MB:,.1f} MB) is too small for "
        f"this graph: the smallest budget nbdl's planner meets is {need:,} bytes "
        f"({need / _MB:,.1f} MB) by recomputing {len(smallest.redirect)} of the "
        f"{len(g.saved)} forward entries backward reads (without a budget it needs "
        f"{base_bytes:,} bytes, {base_bytes / _MB:,.1f} MB)", smallest=need)


def _search(g: _Budget, budget: int):
    """The search aimed at ``budget`` arena bytes: ``(rewrite, plan)`` with
    the greedy packing of the rewritten schedule within ``budget``, or None.
    A pure function of the request and ``budget`` (``smallest_plan`` relies
    on it)."""
    kept = set(g.saved)
    target = budget
    cur = None
    for _ in range(_RETARGETS):
        cur = g.descend(kept, target, cur)
        if cur.peak <= target:
            cur = g.keep_again(kept, target, cur)
        p = make_plan(dataclasses.replace(cur.request, mode="greedy"))
        if p.arena_bytes <= budget:
            return cur, p
        if cur.peak > target:
            return None     # the greedy is stuck above the target
        target -= p.arena_bytes - budget
    return None


def smallest_plan(breq: BudgetRequest, g: _Budget | None = None,
                  unbudgeted: MemoryPlan | None = None) -> BudgetPlan:
    """The plan of the smallest arena the greedy search reaches (whatever
    the FLOPs): the same search aiming each round just below the peak, or
    the schedule without recompute when the greedy packing of that search's
    schedule comes out larger (recomputing moves bytes between steps, and
    the packer is a heuristic), then the search aimed one byte below the
    best arena so far, while it finds a smaller one: so ``fit_budget``
    fails exactly below this arena (its own search aimed there was this
    one's last).  Independent of ``breq.budget``, so a budget of its arena is
    always met, and never above the unbudgeted arena.

    Parameters
    ----------
    breq : BudgetRequest
        The schedule and its recompute rules.
    g : optional
        The search state ``fit_budget`` already built for ``breq``.
    unbudgeted : MemoryPlan, optional
        ``plan(breq.request)`` when the caller has it.
    """
    g = g or _Budget(breq)
    kept = set(g.saved)
    cur = g.descend(kept, 0, peak_mode=True)
    cur = g.keep_again(kept, cur.peak, cur)
    p = make_plan(dataclasses.replace(cur.request, mode="greedy"))
    if unbudgeted is None:
        unbudgeted = make_plan(dataclasses.replace(breq.request, mode="greedy"))
    best = (g.rewrite(set(g.saved)), unbudgeted) if unbudgeted.arena_bytes <= p.arena_bytes \
        else (cur, p)
    while best[1].arena_bytes > 0:      # each round finds a strictly smaller arena
        found = _search(g, best[1].arena_bytes - 1)
        if found is None:
            break
        best = found
    return g.finish(*best)


def _with_base(bp: BudgetPlan, base_bytes: int) -> BudgetPlan:
    bp.plan.budget.unbudgeted_bytes = base_bytes
    return bp


__all__ = ["Recompute", "BudgetRequest", "RecomputeStep", "BudgetPlan", "fit_budget",
           "smallest_plan"]
