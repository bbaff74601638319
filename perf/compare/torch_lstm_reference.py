"""PyTorch 2.13 reference for perf/test_rnn.py: the same 2-layer LSTM
training step (hidden 256, input 256, batch 32, sequence 35, MSE loss, SGD).
Not part of nbdl or its tests; run it in a separate virtual environment:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /tmp/torchvenv/bin/python perf/compare/torch_lstm_reference.py
"""
import torch

from _timing import median_time

SEQ, BATCH, INPUT, HIDDEN, LAYERS = 35, 32, 256, 256, 2


def lstm_step():
    torch.manual_seed(0)
    net = torch.nn.LSTM(INPUT, HIDDEN, LAYERS)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = torch.nn.MSELoss()
    x = torch.rand(SEQ, BATCH, INPUT) * 2 - 1
    y = torch.rand(SEQ, BATCH, HIDDEN) * 2 - 1

    def step():
        opt.zero_grad()
        out, _ = net(x)
        loss_fn(out, y).backward()
        opt.step()
    return median_time(step, repeat=50, warmup=5)


if __name__ == "__main__":
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"LSTM 2x256, batch 32, seq 35 train step: {lstm_step() * 1e3:.2f} ms")
