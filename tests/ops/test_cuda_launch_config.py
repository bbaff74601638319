"""The simulator runs the launch configuration a GPU gets, and where it cannot
afford it a test says what stays untested there (docs/gpu.md).

- Block and tile sizes are the GPU's in the simulator (no ``ENABLE_CUDASIM``
  branch sizes a launch): checked below.
- Grids: ``grid1d`` caps a grid at ``MAX_BLOCKS`` (65535) blocks and every
  kernel's grid-stride loop covers the rest; on a GPU that second turn of
  the loop happens only past 8 million elements, which the simulator cannot
  afford.  Here the cap is shrunk to one block of 32 threads, so arrays of a
  few dozen elements take several turns, and the CPU-vs-CUDA checks of
  kernels of each kind (maps, broadcasts, reductions, scatters with atomics,
  random draws, gathers, GEMM's helpers) must still agree.
- What the simulator never runs: grids past the real cap at the GPU's real
  sizes (the test below is skipped there and runs on a GPU), the cuBLAS road
  (tests/ops/test_matrix_cuda_gemm.py: a numpy stand-in here), the model zoo
  on the GPU (tests/gluon/test_gpu_blocks.py), concurrent blocks and warps
  (tests/cuda_sim.py's race checker stands in), and typing for the GPU
  (tools/cuda_compile_check.py).
"""
import numpy as np
import pytest
from numba import config as numba_config

import nbdl
from nbdl.kernels.cuda import _launch, matrix
from nbdl.testing import check_consistency

sym = nbdl.sym


def test_the_simulator_gets_the_gpus_configuration():
    assert matrix.TILE == 16
    assert _launch.grid1d(1000) == (8, 128)
    assert _launch.grid1d(10 ** 9) == (65535, 128)
    assert _launch.rng_grid(10 ** 6) == (256, 128)
    # fewer elements than a block: the warps that cover them, no idle ones
    assert [_launch.grid1d(n) for n in (0, 1, 32, 33, 100, 128, 129)] == [
        (1, 1), (1, 32), (1, 32), (1, 64), (1, 128), (1, 128), (2, 128)]


@pytest.fixture
def one_small_block(monkeypatch):
    monkeypatch.setattr(_launch, "MAX_BLOCKS", 1)
    monkeypatch.setattr(_launch, "THREADS", 32)


def _x(rng, *shape):
    return rng.normal(size=shape).astype(np.float32)


@pytest.mark.cuda
def test_grid_stride_loops_take_several_turns(one_small_block, rng):
    x, y = sym.var("x"), sym.var("y")
    check_consistency(sym.tanh(x) * y, {"x": _x(rng, 5, 13), "y": _x(rng, 5, 13)})
    check_consistency(sym.broadcast_add(x, y), {"x": _x(rng, 5, 13), "y": _x(rng, 1, 13)})
    check_consistency(sym.sum(x, axis=1), {"x": _x(rng, 40, 3)})
    check_consistency(sym.softmax(x, axis=1), {"x": _x(rng, 40, 3)})
    check_consistency(sym.transpose(x), {"x": _x(rng, 5, 13)})
    ids = np.array([1, 3, 1, 0, 3, 3, 2, 1] * 5, np.float32)
    check_consistency(sym.Embedding(sym.var("i"), sym.var("w"), input_dim=4, output_dim=3),
                      {"i": ids, "w": _x(rng, 4, 3)})                      # atomics
    check_consistency(sym.FullyConnected(x, num_hidden=40, name="fc"),
                      {"x": _x(rng, 3, 2), "fc_weight": _x(rng, 40, 2),
                       "fc_bias": _x(rng, 40)}, rtol=1e-4, atol=1e-5)      # bias gradient


@pytest.mark.cuda
def test_dropout_draws_past_its_states(one_small_block):
    nbdl.random.seed(3)
    x = nbdl.nd.ones((40, 5), ctx=nbdl.gpu(0))
    with nbdl.autograd.train_mode():
        out = nbdl.nd.Dropout(x, p=0.5).asnumpy()
    kept = out != 0
    assert set(np.unique(out)) <= {0.0, 2.0}
    assert 0.25 < kept.mean() < 0.75                    # every element drawn, not only 32
    assert kept[32:].any() and not kept[32:].all()


@pytest.mark.skipif(numba_config.ENABLE_CUDASIM, reason=(
    "the simulator cannot afford a grid past MAX_BLOCKS at the GPU's real sizes "
    "(8.4 million elements, a Python thread each): runs on a GPU"))
@pytest.mark.cuda
def test_grid_past_the_real_cap():
    n = _launch.MAX_BLOCKS * _launch.THREADS + 1000
    x = nbdl.nd.array(np.arange(n, dtype=np.float32), ctx=nbdl.gpu(0))
    out = (x * 2 + 1).asnumpy()
    np.testing.assert_array_equal(out, np.arange(n, dtype=np.float32) * 2 + 1)
    assert float(nbdl.nd.sum(x).asnumpy()[0]) == pytest.approx(n * (n - 1) / 2, rel=1e-6)
