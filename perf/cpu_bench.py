"""CPU time (``time.process_time``) per step of ``Trainer.step`` over 50
small parameters (SGD with momentum, Adam; the learning rate changing every
step) and of the Gluon MLP training step, each the median of 7 blocks: less
exposed than wall time to other jobs on a shared machine.  Public API only,
so it runs against any checkout::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE NBDL_DRIVER=1 NBDL_PARALLEL_AFTER_RUNS=0 \\
        PYTHONPATH=<checkout> python perf/cpu_bench.py <label>
"""
import statistics
import sys
import time

import numpy as np

import nbdl
from nbdl import autograd, gluon
from nbdl.gluon import nn
from nbdl.lr_scheduler import FactorScheduler


def blocks(fn, n, k=7):
    """Median CPU time of ``fn()`` in ms over ``k`` blocks of ``n`` calls."""
    fn()
    out = []
    for _ in range(k):
        t = time.process_time()
        for _ in range(n):
            fn()
        out.append((time.process_time() - t) / n)
    return statistics.median(out) * 1e3


def trainer(opt):
    """One ``Trainer.step`` over 50 parameters of 64 floats."""
    params = [gluon.Parameter(f"p{i}", shape=(64,)) for i in range(50)]
    for p in params:
        p.initialize(nbdl.init.Uniform(), ctx=nbdl.cpu())
    args = {"learning_rate": 0.01, "lr_scheduler": FactorScheduler(step=1, factor=0.999)}
    if opt == "sgd":
        args.update(momentum=0.9, wd=1e-4)
    tr = gluon.Trainer(params, opt, args)
    grads = [p.grad() for p in params]

    def step():
        for g in grads:          # what backward does to a gradient it writes
            g._fresh_grad = True
        tr.step(1)
    return step


def mlp(mode):
    """The MLP training step of ``perf/test_gluon.py``."""
    nbdl.random.seed(0)
    net = nn.HybridSequential()
    net.add(nn.Dense(512, activation="relu", in_units=784), nn.Dense(512, activation="relu"),
            nn.Dense(10))
    net.initialize(nbdl.init.Xavier())
    if mode == "hybridized":
        net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    rng = np.random.RandomState(0)
    x = nbdl.nd.array(rng.rand(128, 784).astype(np.float32))
    y = nbdl.nd.array(rng.randint(0, 10, 128).astype(np.float32))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        tr.step(128)
    return step


if __name__ == "__main__":
    label = sys.argv[1] if len(sys.argv) > 1 else ""
    print(label, "trainer sgd %.3f ms" % blocks(trainer("sgd"), 50),
          "| trainer adam %.3f ms" % blocks(trainer("adam"), 50),
          "| mlp eager %.2f ms" % blocks(mlp("eager"), 5),
          "| mlp hybridized %.2f ms" % blocks(mlp("hybridized"), 5), flush=True)
