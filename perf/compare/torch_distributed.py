"""torch.distributed (gloo) reference for perf/distributed_bench.py: one rank
of a DistributedDataParallel job started by ``mpiexec -n R`` (the rank and
size come from MPICH's ``PMI_RANK``/``PMI_SIZE``).  Not part of nbdl or its
tests; run by a Python with torch 2.13 (``/work/torchvenv``):

    mpiexec -n 2 /work/torchvenv/bin/python perf/compare/torch_distributed.py MODEL BATCH STEPS WARMUP

MODEL is ``mlp`` (784-512-512-10) or ``resnet18`` (ResNet-18 v1 with a 3x3
stem and no max-pooling, for 32x32 inputs, 10 classes: the same network as
nbdl's ``resnet18_v1(thumbnail=True)``).  Prints a JSON line on rank 0."""
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn


class Basic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        r = x if self.down is None else self.down(x)
        return torch.relu(self.body(x) + r)


def resnet18_thumbnail(classes=10):
    layers = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU()]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes)]
    return nn.Sequential(*layers)


def main(model, batch, steps, warmup):
    rank, size = int(os.environ.get("PMI_RANK", 0)), int(os.environ.get("PMI_SIZE", 1))
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // size))
    # the ranks of one job are children of the same MPICH proxy: a port per job
    port = 20000 + os.getppid() % 20000
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=size)
    torch.manual_seed(0)
    if model == "mlp":
        net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                            nn.Linear(512, 10))
        x = torch.rand(batch, 784)
    else:
        net = resnet18_thumbnail()
        x = torch.rand(batch, 3, 32, 32)
    y = torch.randint(0, 10, (batch,))
    ddp = nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    times = []
    for i in range(warmup + steps):
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss_fn(ddp(x), y).backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    grads = torch.cat([p.detach().reshape(-1) for p in net.parameters()])
    comm = []
    for _ in range(5):
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(grads)
        comm.append(time.perf_counter() - t0)
    timed = sorted(times[warmup:])
    if rank == 0:
        print(json.dumps({"step_ms": timed[len(timed) // 2] * 1e3,
                          "comm_ms": sorted(comm)[2] * 1e3, "torch": torch.__version__}),
              flush=True)
    dist.barrier()
    # gloo's teardown at exit sometimes aborts ("terminate called without an active
    # exception") after the figures are printed: leave without it
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
