"""The simulation of MXNet 1.x's storage-id pool, case by case."""
from __future__ import annotations

from nbdl.planner import PlanRequest, Step, mxnet_pool_bytes, plan
from nbdl.planner.mxnet_pool import simulate_mxnet_pool


def request(steps, sizes, external=(0,), outputs=(), alignment=1):
    return PlanRequest(steps, dict(sizes), {}, set(external), set(outputs), alignment=alignment)


def test_chain_reuses_a_released_block():
    # 1 dies at step 1 and is released after 2 is allocated; 3 takes its block
    steps = [Step("a", "f", [0], [1]), Step("b", "f", [1], [2]), Step("c", "f", [2], [3])]
    sim = simulate_mxnet_pool(request(steps, dict.fromkeys(range(4), 100), outputs={3}))
    assert sim.block_bytes == [100, 100]
    assert sim.storage_of[1] == sim.storage_of[3] != sim.storage_of[2]


def test_larger_block_within_match_range_is_taken_whole():
    # 1 (1000 B) freed; 3 asks 100 B: 1000 <= 100 * 16, so it takes the 1000-byte block
    steps = [Step("a", "f", [0], [1]), Step("b", "f", [1], [2]), Step("c", "f", [2], [3])]
    sim = simulate_mxnet_pool(request(steps, {0: 4, 1: 1000, 2: 8, 3: 100}, outputs={3}))
    assert sim.block_bytes == [1000, 8]
    assert sim.storage_of[3] == sim.storage_of[1]


def test_block_beyond_match_range_is_not_taken():
    steps = [Step("a", "f", [0], [1]), Step("b", "f", [1], [2]), Step("c", "f", [2], [3])]
    sim = simulate_mxnet_pool(request(steps, {0: 4, 1: 1700, 2: 8, 3: 100}, outputs={3}))
    assert len(sim.block_bytes) == 3                 # 1700 > 100 * 16: a new block


def test_smaller_block_is_grown():
    # 3 asks 1600 B; the free 100-byte block is >= 1600 // 16 and grows to 1600
    steps = [Step("a", "f", [0], [1]), Step("b", "f", [1], [2]), Step("c", "f", [2], [3])]
    sim = simulate_mxnet_pool(request(steps, {0: 4, 1: 100, 2: 8, 3: 1600}, outputs={3}))
    assert sim.block_bytes == [1600, 8]
    assert mxnet_pool_bytes(request(steps, {0: 4, 1: 100, 2: 8, 3: 1600}, outputs={3})) == 1608


def test_smallest_sufficient_block_is_preferred():
    # blocks of 500 and 200 are free when 3 asks 150: it gets the 200-byte one
    steps = [Step("a", "f", [0], [1, 2]), Step("b", "f", [1, 2], [4]),
             Step("c", "f", [4], [3])]
    sim = simulate_mxnet_pool(request(steps, {0: 4, 1: 500, 2: 200, 3: 150, 4: 8},
                                      outputs={3}))
    assert sim.block_bytes[sim.storage_of[3]] == 200


def test_inplace_needs_refcount_one():
    # 1 read twice by step b: MXNet refuses inplace (refcount 2), nbdl allows it
    steps = [Step("a", "f", [0], [1]), Step("b", "mul", [1, 1], [2], inplace=[(1, 2)])]
    req = request(steps, dict.fromkeys(range(3), 64), outputs={2})
    assert simulate_mxnet_pool(req).alias_of == {}
    assert plan(req).alias_of == {2: 1}
    assert plan(req).arena_bytes < mxnet_pool_bytes(req) == 128


def test_inplace_chain_and_unused_output():
    # an output nobody reads is released at once; MXNet does not inplace into it
    steps = [Step("a", "f", [0], [1]), Step("b", "relu", [1], [2], inplace=[(1, 2)]),
             Step("c", "relu", [2], [3, 4], inplace=[(2, 4), (2, 3)])]
    sim = simulate_mxnet_pool(request(steps, dict.fromkeys(range(5), 64), outputs={3}))
    assert sim.alias_of == {2: 1, 3: 2}
    assert len(sim.block_bytes) == 2


def test_temps_are_one_block_sized_by_the_largest_step():
    steps = [Step("a", "f", [0], [1], temps=[5, 6]), Step("b", "f", [1], [2], temps=[7])]
    sim = simulate_mxnet_pool(request(steps, {0: 4, 1: 64, 2: 64, 5: 100, 6: 30, 7: 120},
                                      outputs={2}, alignment=64))
    assert sim.temp_block_bytes == 128 + 64
    assert sim.total_bytes == 2 * 64 + 192


def test_sizes_are_aligned_like_the_planner():
    steps = [Step("a", "f", [0], [1]), Step("b", "f", [1], [2])]
    assert mxnet_pool_bytes(request(steps, {0: 4, 1: 10, 2: 70}, outputs={2},
                                    alignment=64)) == 64 + 128
