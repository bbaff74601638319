"""Pooling's CPU kernels (issue 14): one training step (forward, then
backward) of a bound ``Pooling`` at ResNet's shapes at batch 32: the stem's
3x3/2 max pooling on 32x32 inputs (a 16x16 map) and on 224x224 inputs
(112x112), and the head's global average pooling on 32x32 inputs (a 1x1
map) and on 224x224 inputs (7x7), 2 threads.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf/test_pooling.py --benchmark-only

Max pooling's forward clamps border windows into the data and takes one
unrolled path for every output; channels-first global pooling reduces rows
of ``x`` viewed as (N*C, H*W), a 1x1 map is a copy
(``nbdl/kernels/cpu/pooling.py``, ``pooling_global.py``); figures in perf/README.md.
"""
import pytest

import nbdl
from workloads import single_op_train

CASES = [
    ("max3x3s2_32x64x16x16", (32, 64, 16, 16), dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
    ("max3x3s2_32x64x112x112", (32, 64, 112, 112),
     dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
    ("global_avg_32x512x1x1", (32, 512, 1, 1), dict(global_pool=True, kernel=(1, 1),
                                                    pool_type="avg")),
    ("global_avg_32x512x7x7", (32, 512, 7, 7), dict(global_pool=True, kernel=(7, 7),
                                                    pool_type="avg")),
]


@pytest.mark.parametrize("shape,kw", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pooling_train_step(benchmark, shape, kw):
    """Forward (training) and backward of Pooling(``kw``) on ``shape``."""
    sym = nbdl.sym.Pooling(nbdl.sym.var("x"), name="pool", **kw)
    benchmark(single_op_train(sym, shape))
