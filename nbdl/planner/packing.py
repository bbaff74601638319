"""Offset assignment: place storage groups in one arena.

A group is a closed step interval ``[start, end]`` and an aligned size.  Two
groups whose intervals intersect must get disjoint byte ranges; groups that are
never live together may share bytes, even partly -- which is what a
storage-id pool (whole blocks reused whole) cannot do.

Each greedy packer visits the groups in some order and places each at an
offset chosen among the gaps left by the already placed groups it conflicts
with.  The conflict test is one vectorised comparison over the placed groups,
so a pass costs O(n) numpy work per group and only the (few) conflicting
groups are sorted.
"""
from __future__ import annotations

import numpy as np

from .inplace import Groups
from .place_compiled import COMPILED_MIN_GROUPS, place
from .types import align_up


def group_arrays(groups: Groups, nbytes: dict[int, int], alignment: int):
    """(roots, starts, ends, aligned sizes) as parallel arrays."""
    roots = list(groups.members)
    starts = np.fromiter((groups.interval[r][0] for r in roots), np.int64, len(roots))
    ends = np.fromiter((groups.interval[r][1] for r in roots), np.int64, len(roots))
    sizes = np.fromiter((align_up(nbytes[r], alignment) for r in roots), np.int64, len(roots))
    return roots, starts, ends, sizes


def live_bytes(starts, ends, sizes, num_steps: int):
    """Bytes of the groups live at each step (an int64 array of ``num_steps``)."""
    delta = np.zeros(num_steps + 1, np.int64)
    np.add.at(delta, starts, sizes)
    np.add.at(delta, ends + 1, -sizes)
    return np.cumsum(delta)[:num_steps]


def lower_bound_bytes(starts, ends, sizes, num_steps: int) -> int:
    """Max over steps of the bytes of the groups live at that step."""
    if len(sizes) == 0 or num_steps <= 0:
        return 0
    return int(live_bytes(starts, ends, sizes, num_steps).max())


def _place(order, starts, ends, sizes, best_fit: bool):
    """Place groups in ``order``; return (offsets array, arena bytes)."""
    n = len(sizes)
    offsets = np.zeros(n, np.int64)
    p_start = np.empty(n, np.int64)
    p_end = np.empty(n, np.int64)
    p_lo = np.empty(n, np.int64)
    p_hi = np.empty(n, np.int64)
    k = 0
    arena = 0
    for g in order:
        size = int(sizes[g])
        if size == 0:                       # empty entries take no bytes anywhere
            continue
        s, e = starts[g], ends[g]
        offset = 0
        if k:
            hit = (p_start[:k] <= e) & (p_end[:k] >= s)
            if hit.any():
                lo = p_lo[:k][hit]
                hi = p_hi[:k][hit]
                perm = np.argsort(lo, kind="stable")
                lo, hi = lo[perm], hi[perm]
                reach = np.maximum.accumulate(hi)           # end of the busy prefix
                gap_lo = np.concatenate(([0], reach))        # each gap starts here
                gap_len = np.concatenate((lo, [np.iinfo(np.int64).max])) - gap_lo
                fits = np.flatnonzero(gap_len >= size)       # the last gap always fits
                if best_fit and len(fits) > 1:
                    bounded = fits[:-1]
                    offset = int(gap_lo[bounded[np.argmin(gap_len[bounded])]])
                else:
                    offset = int(gap_lo[fits[0]])
        offsets[g] = offset
        p_start[k], p_end[k], p_lo[k], p_hi[k] = s, e, offset, offset + size
        k += 1
        arena = max(arena, offset + size)
    return offsets, arena


def _order_by_size(starts, ends, sizes):
    # biggest first; among equals the longer-lived first, then earlier first
    return np.lexsort((starts, -(ends - starts), -sizes))


def _order_by_first_use(starts, ends, sizes):
    return np.lexsort((-sizes, starts))


GREEDY_PACKERS = {
    # name: (order, best_fit)
    "greedy_size": (_order_by_size, False),
    "greedy_size_bestfit": (_order_by_size, True),
    "greedy_first_use": (_order_by_first_use, False),
}


def pack_greedy(name: str, starts, ends, sizes):
    """(offsets, arena bytes) of the greedy packer ``name`` (``GREEDY_PACKERS``);
    from ``place_compiled.COMPILED_MIN_GROUPS`` groups on, the same placement
    compiled (``place_compiled``)."""
    order_fn, best_fit = GREEDY_PACKERS[name]
    order = order_fn(starts, ends, sizes)
    if len(sizes) >= COMPILED_MIN_GROUPS:
        as64 = [a.astype(np.int64, copy=False) for a in (order, starts, ends, sizes)]
        offsets, arena = place(*as64, best_fit)
        return offsets, int(arena)
    return _place(order, starts, ends, sizes, best_fit)


def pack_naive(sizes):
    """Every group its own region, end to end in the given order."""
    offsets = np.zeros(len(sizes), np.int64)
    if len(sizes):
        offsets[1:] = np.cumsum(sizes)[:-1]
    return offsets, int(sizes.sum())
