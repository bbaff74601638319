"""Gluon figures: the MLP training step (batch 128, 784-512-512-10, SGD)
hybridized with static_alloc and eagerly, the per-op cost of an eager
chain of 100 tiny ops with and without autograd recording, and
``Trainer.step`` over 50 small parameters (SGD with momentum, Adam), the
learning rate changing every step.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf --benchmark-only
"""
import numpy as np
import pytest

import nbdl
from nbdl import autograd, gluon
from workloads import eager_mlp_train, gluon_mlp_train

N_OPS = 100


@pytest.mark.parametrize("mode", ["hybridized", "eager"])
def test_gluon_mlp_train_step(benchmark, mode):
    step, _ = gluon_mlp_train() if mode == "hybridized" else eager_mlp_train()
    benchmark(step)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_trainer_step_50_params(benchmark, optimizer):
    from nbdl.lr_scheduler import FactorScheduler
    params = [gluon.Parameter(f"p{i}", shape=(64,)) for i in range(50)]
    for p in params:
        p.initialize(nbdl.init.Uniform(), ctx=nbdl.cpu())
        p.grad()[:] = 0.01
    args = {"learning_rate": 0.01, "lr_scheduler": FactorScheduler(step=1, factor=0.999)}
    if optimizer == "sgd":
        args.update(momentum=0.9, wd=1e-4)
    trainer = gluon.Trainer(params, optimizer, args)
    grads = [p.grad() for p in params]

    def step():
        for g in grads:          # what backward does to a gradient it writes
            g._fresh_grad = True
        trainer.step(1)
    step()
    benchmark(step)


@pytest.mark.parametrize("record", [False, True])
def test_eager_chain_100_tiny_ops(benchmark, record):
    x = nbdl.nd.array(np.arange(4, dtype=np.float32))
    if record:
        x.attach_grad()

    def chain():
        y = x
        for i in range(N_OPS):
            y = (y * 0.5) if i % 2 else nbdl.nd.relu(y)
        return y

    def run():
        if record:
            with autograd.record():
                return chain()
        return chain()
    run()
    benchmark(run)
    benchmark.extra_info["us_per_op"] = benchmark.stats.stats.median * 1e6 / N_OPS
