"""Recurrent figures (issue 6): the training step of a fused 2-layer LSTM
(hidden 256, input 256, batch 32, sequence 35, layout TNC) with an L2 loss
against a fixed target and plain SGD, hybridized with static_alloc and
eagerly.  PyTorch's ``nn.LSTM`` doing the same step is timed by
``perf/compare/torch_lstm_reference.py``.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf/test_rnn.py --benchmark-only
"""
import numpy as np
import pytest

import nbdl
from nbdl import autograd, gluon
from nbdl.gluon import rnn

SEQ, BATCH, INPUT, HIDDEN, LAYERS = 35, 32, 256, 256, 2


@pytest.mark.parametrize("mode", ["hybridized", "eager"])
def test_lstm_train_step(benchmark, mode):
    nbdl.random.seed(0)
    net = rnn.LSTM(HIDDEN, num_layers=LAYERS, input_size=INPUT)
    net.initialize(nbdl.init.Uniform(0.1))
    if mode == "hybridized":
        net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.L2Loss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    rng = np.random.RandomState(0)
    x = nbdl.nd.array(rng.uniform(-1, 1, (SEQ, BATCH, INPUT)).astype(np.float32))
    y = nbdl.nd.array(rng.uniform(-1, 1, (SEQ, BATCH, HIDDEN)).astype(np.float32))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(BATCH)
    step()
    benchmark(step)
    # forward + backward: 3 products per gate matrix, 2 flops per MAC
    macs = SEQ * BATCH * 4 * HIDDEN * ((INPUT + HIDDEN) + (LAYERS - 1) * (2 * HIDDEN))
    benchmark.extra_info["GFLOP/s"] = 3 * 2 * macs / benchmark.stats.stats.median / 1e9
