"""Convolutional network figures (issue 4): LeNet-5 training step (1x28x28,
batch 128), ResNet-18 v1 training step (3x32x32, batch 32, 10 classes) and
ResNet-50 v1 inference at batch 1 and 16 (3x224x224), all hybridized, and
numpy's float32 GEMM in the same run as the machine's reference rate.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf/test_cnn.py --benchmark-only

Each benchmark's ``extra_info`` holds the GFLOP/s of its convolutions
(forward; training: forward, data gradient where one is needed, and weight
gradient), counted from the bound graph, at the median time.
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


def conv_flops(net, training):
    """FLOPs of the convolutions the hybridized ``net``'s executor runs in
    one step (forward; training: and the backward): 2 per multiply-add of
    each product computed, padding taps included."""
    ex = net._cached_op.executors()[0]
    sched = ex._sched
    total = 0
    for s in sched.fwd_train + (sched.backward if training else []):
        name = s.node.op.name
        if name not in ("Convolution", "_backward_Convolution"):
            continue
        data = s.arrays[0] if name == "Convolution" else s.arrays[1]
        weight = s.arrays[1] if name == "Convolution" else s.arrays[2]
        attrs = s.node.attrs
        k = int(np.prod(attrs["kernel"]))
        out_sp = _conv_out(data.shape[2:], attrs)
        macs = data.shape[0] * weight.shape[0] * weight.shape[1] * k * int(np.prod(out_sp))
        if name == "Convolution":
            total += 2 * macs
        else:
            reqs = [sched.req[(id(s.node), i)] for i in range(2)]
            total += 2 * macs * sum(1 for r in reqs if r != 0)
    return total


def _conv_out(xs, attrs):
    k = attrs["kernel"]
    nd = len(k)
    s = tuple(attrs["stride"]) or (1,) * nd
    p = tuple(attrs["pad"]) or (0,) * nd
    d = tuple(attrs["dilate"]) or (1,) * nd
    return tuple((xs[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nd))


def _record_gflops(benchmark, net, training):
    benchmark.extra_info["conv GFLOP/s"] = round(
        conv_flops(net, training) / benchmark.stats.stats.median / 1e9, 1)


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


def test_numpy_sgemm(benchmark):
    """numpy's float32 2048x2048 GEMM: the machine's BLAS rate in this run."""
    rng = np.random.RandomState(0)
    a, b = (rng.rand(2048, 2048).astype(np.float32) for _ in range(2))
    c = np.empty_like(a)
    np.dot(a, b, out=c)
    benchmark.pedantic(lambda: np.dot(a, b, out=c), rounds=20, warmup_rounds=2)
    benchmark.extra_info["GFLOP/s"] = round(2 * 2048 ** 3 / benchmark.stats.stats.median / 1e9, 1)


def test_lenet_train_step(benchmark):
    net = lenet()
    benchmark(_train_step(net, (128, 1, 28, 28), 10))
    _record_gflops(benchmark, net, True)


def test_resnet18_train_step(benchmark):
    from nbdl.gluon.model_zoo import vision
    net = vision.resnet18_v1(classes=10)
    step = _train_step(net, (32, 3, 32, 32), 10)
    benchmark.pedantic(step, rounds=10, warmup_rounds=1)
    _record_gflops(benchmark, net, True)


@pytest.mark.parametrize("batch", [1, 16])
def test_resnet50_inference(benchmark, batch):
    from nbdl.gluon.model_zoo import vision
    net = vision.resnet50_v1()
    net.initialize(nbdl.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    x = nbdl.nd.array(np.random.RandomState(0).rand(batch, 3, 224, 224).astype(np.float32))
    net(x)
    benchmark.pedantic(lambda: net(x), rounds=5 if batch == 16 else 20, warmup_rounds=1)
    _record_gflops(benchmark, net, False)
