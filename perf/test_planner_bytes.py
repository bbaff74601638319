"""Planner speed and the bytes it saves (``python -m pytest perf --benchmark-only``).

Each benchmark times ``plan`` on one schedule and records the byte figures in
``benchmark.extra_info``: naive (no sharing), planned, the lower bound, and
what MXNet 1.x's storage-id pool would allocate.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from nbdl.planner import check_plan, plan

# the schedule builders live with the planner tests; load them by path so the
# benchmarks need no package around tests/
_SPEC = importlib.util.spec_from_file_location(
    "_planner_schedules",
    Path(__file__).resolve().parent.parent / "tests" / "planner" / "test_planner_schedules.py")
schedules = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(schedules)

CASES = {
    "mlp_784_512_512_10_b128": lambda: schedules.mlp_training_request(),
    "mlp_deep_8x1024_b256": lambda: schedules.mlp_training_request(
        batch=256, dims=(784,) + (1024,) * 8 + (10,)),
    "convnet_vgg_b32": lambda: schedules.convnet_request(),
    "chain_200": lambda: schedules.chain_request(num_ops=200),
    "chain_1000_2000_steps": lambda: schedules.chain_request(num_ops=1000),
}


@pytest.mark.parametrize("case", list(CASES))
def test_plan_bytes(benchmark, case):
    req = CASES[case]()
    p = benchmark(plan, req)
    assert check_plan(p) == []
    s = p.stats
    benchmark.extra_info.update(
        steps=len(req.steps), entries=len(p.offsets), packer=s.packer,
        naive_bytes=s.naive_bytes, planned_bytes=s.planned_bytes,
        lower_bound_bytes=s.lower_bound_bytes, mxnet_pool_bytes=s.mxnet_pool_bytes,
        temp_bytes=s.temp_bytes)


@pytest.mark.parametrize("case", ["chain_1000_2000_steps"])
def test_check_plan_speed(benchmark, case):
    p = plan(CASES[case]())
    assert benchmark(check_plan, p) == []
