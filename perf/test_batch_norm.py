"""BatchNorm's CPU kernels (issue 14): one training step (forward with batch
statistics, then backward) of a bound ``BatchNorm`` at the shapes of
ResNet-18's stages on 32x32 inputs at batch 32 (maps 16x16 to 1x1) and of
a BatchNorm after a dense layer (batch 512, 2048 units), 2 threads.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf/test_batch_norm.py --benchmark-only

The kernels walk each sample's row in memory order with per-position sums
where a channel's run is short (16 values or fewer) and per-channel sums
otherwise (``nbdl/kernels/cpu/batch_norm.py``); figures in perf/README.md.
"""
import pytest

import nbdl
from workloads import single_op_train

SHAPES = [(32, 64, 16, 16), (32, 64, 8, 8), (32, 128, 4, 4), (32, 256, 2, 2),
          (32, 512, 1, 1), (512, 2048)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_batch_norm_train_step(benchmark, shape):
    """Forward (training) and backward of BatchNorm on ``shape``."""
    sym = nbdl.sym.BatchNorm(nbdl.sym.var("x"), fix_gamma=False, name="bn")
    benchmark(single_op_train(sym, shape))
