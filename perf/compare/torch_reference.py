"""Side-by-side reference figures from PyTorch 2.13 (CPU) for perf/test_gluon.py.
Not part of nbdl or its tests: run it in a separate virtual environment,

    python -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch==2.13.0 numpy
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /tmp/torchvenv/bin/python perf/compare/torch_reference.py
"""
import torch

from _timing import median_time


def mlp_step():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                              torch.nn.ReLU(), torch.nn.Linear(512, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.rand(128, 784)
    y = torch.randint(0, 10, (128,))

    def step():
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    return median_time(step)


def chain(record, n=100):
    x = torch.arange(4, dtype=torch.float32, requires_grad=record)

    def run():
        with torch.set_grad_enabled(record):
            y = x
            for i in range(n):
                y = (y * 0.5) if i % 2 else torch.relu(y)
        return y
    return median_time(run, repeat=500) / n


if __name__ == "__main__":
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"MLP 784-512-512-10 batch 128 train step (eager): {mlp_step() * 1e3:.3f} ms")
    print(f"eager chain of tiny ops, no grad: {chain(False) * 1e6:.3f} us/op")
    print(f"eager chain of tiny ops, recording: {chain(True) * 1e6:.3f} us/op")
