"""Convolutional network figures (issue 4): LeNet-5 training step (1x28x28,
batch 128), ResNet-18 v1 training step (3x32x32, batch 32, 10 classes) and
ResNet-50 v1 inference at batch 1 and 16 (3x224x224), all hybridized.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf/test_cnn.py --benchmark-only
"""
import numpy as np
import pytest

import nbdl
from nbdl import autograd, gluon
from nbdl.gluon import nn


def lenet():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, kernel_size=5, padding=2, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Conv2D(16, kernel_size=5, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Dense(120, activation="relu"), nn.Dense(84, activation="relu"), nn.Dense(10))
    return net


def _train_step(net, shape, classes):
    nbdl.random.seed(0)
    net.initialize(nbdl.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9})
    rng = np.random.RandomState(0)
    x = nbdl.nd.array(rng.rand(*shape).astype(np.float32))
    y = nbdl.nd.array(rng.randint(0, classes, shape[0]).astype(np.float32))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(shape[0])
    step()
    return step


def test_lenet_train_step(benchmark):
    benchmark(_train_step(lenet(), (128, 1, 28, 28), 10))


def test_resnet18_train_step(benchmark):
    from nbdl.gluon.model_zoo import vision
    step = _train_step(vision.resnet18_v1(classes=10), (32, 3, 32, 32), 10)
    benchmark.pedantic(step, rounds=10, warmup_rounds=1)


@pytest.mark.parametrize("batch", [1, 16])
def test_resnet50_inference(benchmark, batch):
    from nbdl.gluon.model_zoo import vision
    net = vision.resnet50_v1()
    net.initialize(nbdl.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    x = nbdl.nd.array(np.random.RandomState(0).rand(batch, 3, 224, 224).astype(np.float32))
    net(x)
    benchmark.pedantic(lambda: net(x), rounds=5 if batch == 16 else 20, warmup_rounds=1)
