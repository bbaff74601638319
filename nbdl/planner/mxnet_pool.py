"""A simulation of MXNet 1.x's memory planning (nnvm ``PlanMemory``), for
comparison and as a fallback packer.

Semantics reproduced (``src/nnvm/plan_memory.cc``, default settings:
``NNVM_EXEC_MATCH_RANGE=16``, one colour, inplace on, one device):

* every entry has a reference count: the number of times steps read it, plus
  one if it is a graph output (so outputs are never released);
* walking the steps in order, an inplace pair ``(i, o)`` gives ``o`` the storage
  of ``i`` when that storage's count is exactly 1 (this read is the last use of
  everything stored there), ``o`` is used later (count > 0), the byte sizes
  are equal, and no earlier pair of the step took ``i`` (MXNet keys this by
  input position; pairs here name ids, and an id read twice has count >= 2
  anyway); the storage's count then grows by ``o``'s count;
* the step's remaining outputs, biggest first, request a block from a free
  pool keyed by size: the smallest free block of at least ``size`` and at
  most ``size * 16`` bytes, else the largest free block below ``size`` but at
  least ``size // 16``, which grows to ``size``; else a new block;
* then each read decrements its storage's count, releasing the block at 0,
  and outputs nobody uses are released at once.

The figure MXNet reports is the sum of the blocks' final sizes.  Requests are
rounded up to the plan's alignment, so the comparison with nbdl's arena is
fair.

Temp space: MXNet's ``kTempSpace`` is a separate per-device resource (one with
``MXNET_EXEC_NUM_TEMP=1``) that grows to the largest request and is not in its
figure.  Here it is counted as one extra block sized by the largest per-step
temp demand (the sum of a step's aligned temps), so both figures include
scratch.
"""
from __future__ import annotations

from bisect import bisect_left, insort
from collections import Counter
from dataclasses import dataclass
from itertools import chain

from .liveness import Liveness, compute_liveness
from .types import PlanRequest, align_up

MATCH_RANGE = 16


@dataclass
class PoolResult:
    storage_of: dict[int, int]      # planned non-temp id -> block index
    block_bytes: list[int]          # final size of every block
    alias_of: dict[int, int]        # inplace choices MXNet made
    temp_block_bytes: int           # largest per-step temp demand
    temp_offset: dict[int, int]     # temp id -> offset inside the temp block

    @property
    def total_bytes(self) -> int:
        return sum(self.block_bytes) + self.temp_block_bytes


class _Pool:
    """MXNet's ``GraphAllocator``: blocks and a size-keyed free multimap."""

    def __init__(self):
        self.block_bytes: list[int] = []
        self.free: list[tuple[int, int, int]] = []   # (bytes, release order, block)
        self.seq = 0

    def request(self, size: int) -> int:
        free = self.free
        begin = bisect_left(free, (size // MATCH_RANGE,))
        mid = bisect_left(free, (size,))
        end = bisect_left(free, (size * MATCH_RANGE + 1,))
        if mid < end:           # smallest block >= size (earliest released among equals)
            pick = mid
        elif mid > begin:       # else the largest smaller one (latest released), grown
            pick = mid - 1
        else:
            self.block_bytes.append(size)
            return len(self.block_bytes) - 1
        _, _, block = free.pop(pick)
        self.block_bytes[block] = max(self.block_bytes[block], size)
        return block

    def release(self, block: int) -> None:
        insort(self.free, (self.block_bytes[block], self.seq, block))
        self.seq += 1


def _entry_refs(request: PlanRequest, liveness: Liveness) -> dict[int, int]:
    """Every planned entry's reference count: the steps' reads of it, plus
    one for a graph output."""
    planned = set(liveness.planned)
    reads = Counter(chain.from_iterable(st.reads for st in request.steps))
    entry_ref: dict[int, int] = {e: reads.get(e, 0) for e in planned}
    for e in request.outputs:
        if e in planned:
            entry_ref[e] += 1
    return entry_ref


def _take_inplace(pairs, owner, ref, entry_ref, nbytes, external, alias_of) -> None:
    """MXNet's in-place choice over one step's ``(input, output)`` pairs:
    an output takes its input's storage (``owner``: entry -> storage key,
    ``ref``: key -> outstanding references) when that storage's count is 1,
    the output is read later, the byte sizes agree and no earlier pair took
    the input; ``alias_of`` records each choice."""
    taken: set[int] = set()
    for i, o in pairs:
        if i in taken or i not in owner or o in external or o in owner:
            continue
        key = owner[i]
        if ref[key] == 1 and entry_ref[o] > 0 and nbytes[i] == nbytes[o]:
            taken.add(i)
            owner[o] = key
            ref[key] += entry_ref[o]
            alias_of[o] = i


def simulate_mxnet_pool(request: PlanRequest, liveness: Liveness | None = None) -> PoolResult:
    if liveness is None:
        liveness = compute_liveness(request)
    align = request.alignment
    nbytes, external = request.nbytes, request.external
    entry_ref = _entry_refs(request, liveness)

    pool = _Pool()
    request_block, release = pool.request, pool.release
    storage: dict[int, int] = {}
    ref: list[int] = []                 # per block: outstanding references
    alias_of: dict[int, int] = {}
    temp_block = 0
    temp_offset: dict[int, int] = {}

    for st in request.steps:
        if st.inplace:
            _take_inplace(st.inplace, storage, ref, entry_ref, nbytes, external, alias_of)
        writes = st.writes
        fresh = [(nbytes[e], k, e) for k, e in enumerate(writes)
                 if e not in external and e not in storage]
        if len(fresh) > 1:
            fresh.sort(reverse=True)    # biggest first, like MXNet
        for n, _, e in fresh:
            sid = request_block(-(-n // align) * align)
            if sid == len(ref):
                ref.append(0)
            ref[sid] = entry_ref[e]
            storage[e] = sid
        for e in st.reads:
            sid = storage.get(e)
            if sid is None:             # external
                continue
            ref[sid] -= 1
            if ref[sid] == 0:
                release(sid)
        for e in writes:
            sid = storage.get(e)
            if sid is not None and ref[sid] == 0 and e not in external:
                release(sid)
        if st.temps:
            used = 0
            for t in st.temps:
                temp_offset[t] = used
                used += align_up(nbytes[t], align)
            temp_block = max(temp_block, used)

    return PoolResult(storage_of=storage, block_bytes=pool.block_bytes, alias_of=alias_of,
                      temp_block_bytes=temp_block, temp_offset=temp_offset)


def mxnet_aliases(request: PlanRequest, liveness: Liveness) -> dict[int, int]:
    """``simulate_mxnet_pool(request, liveness).alias_of`` without the pool:
    MXNet's in-place choice reads only the reference count of the input's
    storage, which belongs to the entries sharing it by in-place alone (a
    block is reused only once its count is 0, and a step reads only entries
    whose storage is still held), so counting per group decides the same."""
    nbytes, external = request.nbytes, request.external
    entry_ref = _entry_refs(request, liveness)
    group: dict[int, int] = {}          # entry -> its group's first entry
    ref: dict[int, int] = {}            # group -> outstanding references
    alias_of: dict[int, int] = {}
    for st in request.steps:
        if st.inplace:
            _take_inplace(st.inplace, group, ref, entry_ref, nbytes, external, alias_of)
        for e in st.writes:
            if e not in external and e not in group:
                group[e] = e
                ref[e] = entry_ref[e]
        for e in st.reads:
            g = group.get(e)
            if g is not None:
                ref[g] -= 1
    return alias_of


def mxnet_pool_bytes(request: PlanRequest) -> int:
    """Bytes MXNet 1.x's storage-id pool would allocate for ``request``
    (blocks rounded to ``request.alignment``, plus one shared temp block)."""
    return simulate_mxnet_pool(request).total_bytes
