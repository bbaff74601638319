"""The planner's data: what the executor asks for and what it gets back.

Entry ids are plain ints chosen by the caller.  A ``Step`` is one kernel call
of the schedule; a ``PlanRequest`` is the whole schedule (forward then
backward) plus sizes; a ``MemoryPlan`` gives every planned id a byte offset in
one arena.
"""
from __future__ import annotations

from dataclasses import dataclass, field


def align_up(nbytes: int, alignment: int) -> int:
    """``nbytes`` rounded up to a multiple of ``alignment`` (0 stays 0)."""
    return -(-nbytes // alignment) * alignment


@dataclass
class Step:
    """One scheduled kernel call."""
    name: str                       # node name, for debug tables
    op: str                         # op name
    reads: list[int]                # entry ids read (may repeat; may be external)
    writes: list[int]               # entry ids written
    temps: list[int] = ()           # scratch ids live only during this step
    inplace: list[tuple[int, int]] = ()   # (read id, written id) the kernel may alias


@dataclass
class PlanRequest:
    """The whole schedule to plan, forward and backward together."""
    steps: list[Step]
    nbytes: dict[int, int]          # bytes of every id that appears (temps included)
    names: dict[int, str]           # readable name per id
    external: set[int]              # bound to user arrays: never planned
    outputs: set[int]               # must stay live to the end of the schedule
    alignment: int = 64
    mode: str | None = None         # 'greedy' | 'naive'; None -> nbdl.config.planner_mode()
    # ids a step lists among its writes but whose kernel is told not to write
    # them (REQ_NULL) and that nothing reads: they need a view of the right
    # shape but no bytes of their own, so greedy plans place them at offset 0
    # over whatever else lives there.  Naive plans give them regions as usual.
    unwritten: set[int] = field(default_factory=set)


@dataclass
class Buffer:
    """One row of the memory table: a region and the entries that use it."""
    offset: int
    nbytes: int                     # aligned size of the region
    entries: list[int]              # ids stored there, in order of first use
    live: tuple[int, int]           # first step any of them is live .. last step


@dataclass
class PlanStats:
    naive_bytes: int = 0            # every planned id its own aligned region
    planned_bytes: int = 0          # arena size
    lower_bound_bytes: int = 0      # max over steps of aligned bytes live at once (of the
                                    # inplace choices considered, the smaller)
    temp_bytes: int = 0             # sum of temp sizes (aligned)
    mxnet_pool_bytes: int = 0       # MXNet 1.x storage-id pool on the same request
    packer: str = ""                # strategy that produced the offsets

    def defer_mxnet_pool_bytes(self, compute) -> None:
        """Compute ``mxnet_pool_bytes`` with ``compute()`` when it is first
        read (the planner skips simulating MXNet's pool when no packer
        needs it; the figure is a statistic)."""
        self.__dict__.pop("mxnet_pool_bytes", None)
        self.__dict__["_pool_bytes"] = compute

    def __getattr__(self, name):
        compute = self.__dict__.get("_pool_bytes")
        if name != "mxnet_pool_bytes" or compute is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = self.__dict__["mxnet_pool_bytes"] = int(compute())
        del self.__dict__["_pool_bytes"]
        return value


del PlanStats.mxnet_pool_bytes     # the default lives in __init__; reads may be deferred


@dataclass
class BudgetInfo:
    """What a memory budget changed (``nbdl.planner.recompute``): forward
    entries dropped after the forward pass and made again by recompute steps
    in backward.  Ids and step indices are those of the plan's request."""
    budget: int                     # arena bytes asked for
    unbudgeted_bytes: int           # the arena without recompute
    recomputed: dict[int, int] = field(default_factory=dict)   # copy id -> original id
    recompute_steps: list[int] = field(default_factory=list)   # steps that make the copies
    extra_flops: int = 0            # FLOPs of the recompute steps
    forward_flops: int = 0          # FLOPs of the forward pass, for scale


@dataclass
class MemoryPlan:
    request: PlanRequest
    offsets: dict[int, int]                 # arena byte offset of every planned id
    arena_bytes: int                        # == stats.planned_bytes
    live: dict[int, tuple[int, int]]        # planned id -> (first step, last step); no externals
    alias_of: dict[int, int]                # out id -> in id whose storage it took
    buffers: list[Buffer] = field(default_factory=list)   # sorted by offset
    stats: PlanStats = field(default_factory=PlanStats)
    budget: BudgetInfo | None = None        # set when a memory budget added recompute steps
