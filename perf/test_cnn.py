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
from workloads import image_train, lenet, zoo_inference


def conv_flops(net, training):
    """FLOPs of the convolutions the hybridized ``net``'s executor runs in
    one step (forward; training: and the backward): 2 per multiply-add of
    each product computed, padding taps included."""
    ex = net._cached_op.executors()[0]
    sched = ex._sched
    total = 0
    for s in sched.fwd_train + (sched.backward if training else []):
        name = s.node.op.name
        if name not in ("Convolution", "_nbdl_fused_conv", "_backward_Convolution"):
            continue
        fwd = name != "_backward_Convolution"
        data = s.arrays[0] if fwd else s.arrays[1]
        weight = s.arrays[1] if fwd else s.arrays[2]
        attrs = s.node.attrs
        k = int(np.prod(attrs["kernel"]))
        out_sp = _conv_out(data.shape[2:], attrs)
        macs = data.shape[0] * weight.shape[0] * weight.shape[1] * k * int(np.prod(out_sp))
        if fwd:
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
    benchmark(image_train(net, (128, 1, 28, 28), 10))
    _record_gflops(benchmark, net, True)


def test_resnet18_train_step(benchmark):
    from nbdl.gluon.model_zoo import vision
    net = vision.resnet18_v1(classes=10)
    step = image_train(net, (32, 3, 32, 32), 10)
    benchmark.pedantic(step, rounds=10, warmup_rounds=1)
    _record_gflops(benchmark, net, True)


@pytest.mark.parametrize("batch", [1, 16])
def test_resnet50_inference(benchmark, batch):
    net, step = zoo_inference("resnet50_v1", batch)
    benchmark.pedantic(step, rounds=5 if batch == 16 else 20, warmup_rounds=1)
    _record_gflops(benchmark, net, False)
