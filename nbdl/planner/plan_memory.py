"""``plan(request)``: liveness -> inplace -> packing -> stats.

In greedy mode several packers run and the smallest arena wins; one of them
lays out MXNet's own storage-id pool end to end, so the planned arena is never
bigger than what MXNet 1.x would allocate for the same schedule.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import config
from ..errors import NbdlError
from .inplace import Groups, groups_from_aliases, inplace_groups, singleton_groups
from .liveness import Liveness, compute_liveness
from .mxnet_pool import PoolResult, mxnet_aliases, simulate_mxnet_pool
from .packing import GREEDY_PACKERS, group_arrays, lower_bound_bytes, pack_greedy, pack_naive
from .types import Buffer, MemoryPlan, PlanRequest, PlanStats, align_up


def _resolve_mode(request: PlanRequest) -> str:
    mode = request.mode if request.mode is not None else config.planner_mode()
    if mode not in ("greedy", "naive"):
        raise NbdlError(f"PlanRequest.mode={mode!r}: expected 'greedy', 'naive' or None")
    return mode


def _group_units(groups: Groups, roots, offsets, sizes):
    """(offset, bytes, entries, interval) per storage group."""
    return [(int(offsets[k]), int(sizes[k]), groups.members[r], groups.interval[r])
            for k, r in enumerate(roots)]


def _pool_units(pool: PoolResult, liveness: Liveness, aligned: dict[int, int]):
    """Lay MXNet's blocks end to end, then its temp block; one unit per block
    and per temp."""
    live = liveness.live
    block_offset = np.zeros(len(pool.block_bytes), np.int64)
    if pool.block_bytes:
        block_offset[1:] = np.cumsum(pool.block_bytes)[:-1]
    temp_base = int(sum(pool.block_bytes))
    per_block: dict[int, list[int]] = {}
    for e in liveness.planned:
        if e in pool.storage_of:
            per_block.setdefault(pool.storage_of[e], []).append(e)
    units = []
    for b, entries in per_block.items():
        span = (min(live[e][0] for e in entries), max(live[e][1] for e in entries))
        units.append((int(block_offset[b]), pool.block_bytes[b], entries, span))
    for t, off in pool.temp_offset.items():
        units.append((temp_base + off, aligned[t], [t], live[t]))
    return units, temp_base + pool.temp_block_bytes


def _buffers(units, live) -> list[Buffer]:
    """Merge units that occupy exactly the same bytes; sort by offset, and
    each buffer's entries by first use."""
    merged: dict[tuple[int, int], Buffer] = {}
    for off, size, entries, (first, last) in units:
        b = merged.get((off, size))
        if b is None:
            merged[(off, size)] = Buffer(off, size, list(entries), (first, last))
        else:
            b.entries.extend(entries)
            b.live = (min(b.live[0], first), max(b.live[1], last))
    for b in merged.values():
        b.entries.sort(key=lambda e: live[e][0])
    return sorted(merged.values(), key=lambda b: (b.offset, b.live[0], b.nbytes))


PACKERS = (*GREEDY_PACKERS, "mxnet_pool")


def plan(request: PlanRequest) -> MemoryPlan:
    """Give every non-external entry of ``request`` an offset in one arena."""
    return plan_with(request, PACKERS)


def plan_with(request: PlanRequest, packers=PACKERS) -> MemoryPlan:
    """``plan`` restricted to some of ``PACKERS`` (the smallest arena wins,
    ties to the earlier name); for tests and experiments.  Naive mode ignores
    ``packers``."""
    unknown = set(packers) - set(PACKERS)
    if unknown or not packers:
        raise NbdlError(f"unknown packers {sorted(unknown)}; choose from {list(PACKERS)}")
    mode = _resolve_mode(request)
    if mode == "greedy" and request.unwritten:
        return _plan_with_unwritten(request, packers)
    return _plan(request, packers, mode)


def _plan_with_unwritten(request: PlanRequest, packers) -> MemoryPlan:
    """Plan without the unwritten ids, then lay them all at offset 0: no
    kernel writes them and nothing reads them, so they may overlap anything."""
    unwritten = set(request.unwritten)
    write_step = {}
    for s, st in enumerate(request.steps):
        for w in st.writes:
            if w in unwritten:
                write_step[w] = s
        bad = [r for r in st.reads if r in unwritten]
        if bad:
            raise NbdlError(f"step {s} ({st.name}) reads entries {bad} declared unwritten")
    for u in unwritten:
        if u not in write_step or u in request.external or u in request.outputs:
            raise NbdlError(f"unwritten entry {u} must be a planned, non-output entry "
                            f"written by some step")
    inner_steps = [dataclasses.replace(st, writes=[w for w in st.writes if w not in unwritten],
                                       inplace=[p for p in st.inplace if p[1] not in unwritten])
                   for st in request.steps]
    inner = dataclasses.replace(request, steps=inner_steps, unwritten=set())
    p = _plan(inner, packers, "greedy")
    sizes = {u: align_up(request.nbytes[u], request.alignment) for u in unwritten}
    for u in unwritten:
        p.offsets[u] = 0
        p.live[u] = (write_step[u], write_step[u])
    p.arena_bytes = max(p.arena_bytes, max(sizes.values()))
    p.request = request
    st = p.stats
    st.planned_bytes = p.arena_bytes
    st.naive_bytes += sum(sizes.values())
    st.defer_mxnet_pool_bytes(_PoolBytes(request))
    span = (min(write_step.values()), max(write_step.values()))
    p.buffers.append(Buffer(0, max(sizes.values()), sorted(unwritten, key=write_step.get), span))
    p.buffers.sort(key=lambda b: (b.offset, b.live[0], b.nbytes))
    return p


class _PoolBytes:
    """``simulate_mxnet_pool(request, liveness).total_bytes``, on demand."""

    def __init__(self, request, liveness=None):
        self.request, self.liveness = request, liveness

    def __call__(self):
        return simulate_mxnet_pool(self.request, self.liveness).total_bytes


def _plan(request: PlanRequest, packers, mode) -> MemoryPlan:
    liveness = compute_liveness(request)
    align, nbytes = request.alignment, request.nbytes
    num_steps = len(request.steps)
    aligned = {e: -(-nbytes[e] // align) * align for e in liveness.planned}
    pool = None

    if mode == "naive":
        groups = singleton_groups(liveness)
        roots, starts, ends, sizes = group_arrays(groups, nbytes, align)
        offsets, arena = pack_naive(sizes)
        units, packer, alias_of = _group_units(groups, roots, offsets, sizes), "naive", {}
        lower = lower_bound_bytes(starts, ends, sizes, num_steps)
    else:
        groups = inplace_groups(request, liveness)
        roots, starts, ends, sizes = group_arrays(groups, nbytes, align)
        own_lower = lower_bound_bytes(starts, ends, sizes, num_steps)
        # the bound must hold whichever inplace choices the winner used
        # (MXNet's often are ours: a chain's, a ResNet's; then its bound is ours)
        mx_alias = mxnet_aliases(request, liveness)
        if mx_alias == groups.alias_of:
            mx_lower = own_lower
        else:
            mx_groups = groups_from_aliases(liveness, mx_alias)
            _, mx_starts, mx_ends, mx_sizes = group_arrays(mx_groups, nbytes, align)
            mx_lower = lower_bound_bytes(mx_starts, mx_ends, mx_sizes, num_steps)
        best = None
        for name in packers:
            if name == "mxnet_pool":
                # MXNet's blocks hold its groups apart at every step, so its
                # pool is never below their bound: it cannot beat (and ties
                # do not replace) a packer already there.
                if best is not None and best[0] <= mx_lower:
                    continue
                pool = simulate_mxnet_pool(request, liveness)
                arena = pool.total_bytes
            elif best is not None and best[0] <= own_lower:
                # No greedy packer goes below the bound of the groups they all
                # share, and ties keep the earlier packer: the rest cannot win.
                continue
            else:
                offsets, arena = pack_greedy(name, starts, ends, sizes)
            if best is None or arena < best[0]:
                best = (arena, name, offsets if name != "mxnet_pool" else None)
        arena, packer, offsets = best
        if packer == "mxnet_pool":
            units, arena = _pool_units(pool, liveness, aligned)
            alias_of = pool.alias_of
        else:
            units, alias_of = _group_units(groups, roots, offsets, sizes), groups.alias_of
        lower = min(own_lower, mx_lower)

    offsets_by_id: dict[int, int] = {}
    for off, _size, entries, _span in units:
        for e in entries:
            offsets_by_id[e] = off
    stats = PlanStats(naive_bytes=sum(aligned.values()), planned_bytes=int(arena),
                      lower_bound_bytes=int(lower),
                      temp_bytes=sum(aligned[t] for t in liveness.temp_step),
                      mxnet_pool_bytes=pool.total_bytes if pool is not None else 0,
                      packer=packer)
    if pool is None:
        stats.defer_mxnet_pool_bytes(_PoolBytes(request, liveness))
    return MemoryPlan(request=request, offsets=offsets_by_id, arena_bytes=int(arena),
                      live=dict(liveness.live), alias_of=dict(alias_of),
                      buffers=_buffers(units, liveness.live), stats=stats)
