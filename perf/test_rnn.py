"""Recurrent figures (issues 6, 14): the training step of a fused 2-layer
LSTM or GRU (hidden 256, input 256, batch 32, sequence 35, layout TNC) with an
L2 loss against a fixed target and plain SGD, hybridized with static_alloc,
and the LSTM eagerly.  PyTorch's ``nn.LSTM``/``nn.GRU`` doing the same step:
``perf/compare/torch_reference.py`` (rows ``lstm_train``, ``gru_train``).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf/test_rnn.py --benchmark-only
"""
import pytest

from workloads import BATCH, HIDDEN, INPUT, LAYERS, SEQ, rnn_train


@pytest.mark.parametrize("cell,hybridize", [("lstm", True), ("lstm", False), ("gru", True)],
                         ids=["lstm-hybridized", "lstm-eager", "gru-hybridized"])
def test_rnn_train_step(benchmark, cell, hybridize):
    step = rnn_train(cell, hybridize)
    benchmark(step)
    # forward + backward: 3 products per gate matrix, 2 flops per MAC
    gates = 4 if cell == "lstm" else 3
    macs = SEQ * BATCH * gates * HIDDEN * ((INPUT + HIDDEN) + (LAYERS - 1) * (2 * HIDDEN))
    benchmark.extra_info["GFLOP/s"] = 3 * 2 * macs / benchmark.stats.stats.median / 1e9
