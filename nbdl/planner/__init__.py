"""The static memory planner: liveness -> inplace -> offsets in one arena.

A pure library: the executor builds a ``PlanRequest`` (the whole schedule as
``Step``s, entry sizes, external and output ids), ``plan`` returns a
``MemoryPlan`` whose ``offsets`` place every non-external entry in one arena,
and ``check_plan`` verifies it independently.
"""
from .check import check_plan
from .mxnet_pool import mxnet_pool_bytes
from .plan_memory import plan
from .table import format_plan_table
from .types import Buffer, MemoryPlan, PlanRequest, PlanStats, Step

__all__ = ["Step", "PlanRequest", "MemoryPlan", "Buffer", "PlanStats",
           "plan", "check_plan", "mxnet_pool_bytes", "format_plan_table"]
