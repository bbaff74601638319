"""``packing._place`` compiled with Numba, for large graphs.

The same greedy placement, step for step: each group in ``order`` goes to the
first gap (or, with ``best_fit``, the smallest bounded gap, else the last) left
by the already placed groups whose step intervals intersect its own, the
conflicting groups taken in order of their low offset (stable).  The numpy
version does O(placed) vector work per group, which is the planner's cost on
graphs of tens of thousands of entries; this one does the same comparisons in
one loop.  ``packing`` uses it above ``COMPILED_MIN_GROUPS`` groups only, so
small graphs never pay its compilation; tests check that both give the same
offsets."""
import numpy as np
from numba import njit

COMPILED_MIN_GROUPS = 2048


@njit(cache=True)
def place(order, starts, ends, sizes, best_fit):
    """(offsets, arena bytes) for the groups placed in ``order``.

    The placed groups are kept sorted by (offset, placement order), which is
    the order the numpy version sorts the conflicting ones into (a stable
    sort by offset of groups listed in placement order), so the gaps are
    walked without sorting.

    Parameters
    ----------
    order : int64 array
        Group indices in placement order.
    starts, ends : int64 arrays
        Each group's first and last step (inclusive).
    sizes : int64 array
        Each group's aligned size in bytes (0: the group takes no bytes).
    best_fit : bool
        Take the smallest bounded gap that fits rather than the first gap.
    """
    n = sizes.shape[0]
    offsets = np.zeros(n, np.int64)
    q_start = np.empty(n, np.int64)     # placed groups, sorted by (lo, placement)
    q_end = np.empty(n, np.int64)
    q_lo = np.empty(n, np.int64)
    q_hi = np.empty(n, np.int64)
    big = np.iinfo(np.int64).max
    k = 0
    arena = 0
    for g in order:
        size = sizes[g]
        if size == 0:
            continue
        s = starts[g]
        e = ends[g]
        found = False
        reach = 0
        best_len = big
        offset = 0
        for j in range(k):
            if q_start[j] <= e and q_end[j] >= s:
                gap_len = q_lo[j] - reach
                if gap_len >= size:
                    if not best_fit:
                        offset = reach
                        found = True
                        break
                    if gap_len < best_len:
                        best_len = gap_len
                        offset = reach
                        found = True
                if q_hi[j] > reach:
                    reach = q_hi[j]
        if not found:
            offset = reach          # the gap after every conflicting group
        offsets[g] = offset
        # insert after the placed groups whose offset is <= this one
        pos = k
        while pos > 0 and q_lo[pos - 1] > offset:
            q_start[pos] = q_start[pos - 1]
            q_end[pos] = q_end[pos - 1]
            q_lo[pos] = q_lo[pos - 1]
            q_hi[pos] = q_hi[pos - 1]
            pos -= 1
        q_start[pos] = s
        q_end[pos] = e
        q_lo[pos] = offset
        q_hi[pos] = offset + size
        k += 1
        if offset + size > arena:
            arena = offset + size
    return offsets, arena
