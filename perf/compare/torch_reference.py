"""PyTorch 2.13's side of issue 14's speed table (CPU): one builder per row,
the same names, shapes and steps as ``perf/workloads.py`` (nbdl's side).
Not part of nbdl or its tests; it runs in PyTorch's own virtual
environment, standalone (medians of each row, one after the other)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /work/torchvenv/bin/python \\
        perf/compare/torch_reference.py [row ...]

or as the peer worker of ``perf/compare/side_by_side.py``.  Each builder
returns ``(step, per)`` as in ``mxnet_reference.py``.
"""
import sys

import torch

N_OPS = 100
SEQ, BATCH, INPUT, HIDDEN, LAYERS = 35, 32, 256, 256, 2


def eager_dispatch():
    x = torch.arange(4, dtype=torch.float32)

    def run():
        with torch.no_grad():
            y = x
            for i in range(N_OPS):
                y = (y * 0.5) if i % 2 else torch.relu(y)
        return y
    run()
    return run, N_OPS


def eager_mlp_train():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                              torch.nn.ReLU(), torch.nn.Linear(512, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    x, y = torch.rand(128, 784), torch.randint(0, 10, (128,))

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    step()
    return step, 1


def _rnn_train(cls):
    def build():
        torch.manual_seed(0)
        net = cls(INPUT, HIDDEN, LAYERS)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        loss_fn = torch.nn.MSELoss()
        x = torch.rand(SEQ, BATCH, INPUT) * 2 - 1
        y = torch.rand(SEQ, BATCH, HIDDEN) * 2 - 1

        def step():
            opt.zero_grad()
            out, _ = net(x)
            loss_fn(out, y).backward()
            opt.step()
        step()
        return step, 1
    return build


ROWS = {"eager_dispatch": eager_dispatch, "eager_mlp_train": eager_mlp_train,
        "lstm_train": _rnn_train(torch.nn.LSTM), "gru_train": _rnn_train(torch.nn.GRU)}


if __name__ == "__main__":
    from _timing import median_time
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for row in sys.argv[1:] or list(ROWS):
        step, per = ROWS[row]()
        print(f"{row}: {median_time(step, repeat=50, warmup=5) / per * 1e3:.4f} ms")
