"""Gluon on nbdl.gpu(0): a hybridized block (its CachedOp) trained by a
Trainer gives the CPU's numbers, and the model zoo's networks run a training
step on the GPU with the CPU's results.

In the simulator (one Python thread per CUDA thread) a small convolutional
net is what a test can afford; the zoo's networks run where a real GPU does
(NBDL_TEST_CUDA=1, perf/gpu_check.sh), and the test says so when skipped.
"""
import numpy as np
import pytest
from numba import config as numba_config

import nbdl
from nbdl import autograd
from nbdl.gluon import Trainer, nn
from nbdl.gluon.loss import SoftmaxCrossEntropyLoss
from nbdl.gluon.model_zoo import get_model
from nbdl.testing import assert_almost_equal


def _small_cnn():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(3, kernel_size=3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(pool_size=2), nn.Dense(4))
    return net


def _train(make, device, x, y, steps, init):
    """``steps`` SGD-with-momentum steps of ``make()`` on ``device``; the
    outputs of the last forward pass and the parameters after the steps."""
    nbdl.random.seed(0)
    net = make()
    net.initialize(init, device=nbdl.cpu())
    net(nbdl.nd.array(x[:1]))                    # deferred shapes, CPU-drawn values
    net.reset_device(device)
    net.hybridize()
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05, "momentum": 0.9})
    loss_fn = SoftmaxCrossEntropyLoss()
    xd, yd = nbdl.nd.array(x, ctx=device), nbdl.nd.array(y, ctx=device)
    for _ in range(steps):
        with autograd.record():
            out = net(xd)
            loss = loss_fn(out, yd)
        loss.backward()
        trainer.step(x.shape[0])
    params = {k: p.data().asnumpy() for k, p in net.collect_params().items()}
    assert all(p.data().context == device for p in net.collect_params().values())
    return out.asnumpy(), params


def _compare(make, x, y, steps, init, rtol, atol):
    out_c, params_c = _train(make, nbdl.cpu(), x, y, steps, init)
    out_g, params_g = _train(make, nbdl.gpu(0), x, y, steps, init)
    assert_almost_equal(out_g, out_c, rtol=rtol, atol=atol)
    for k in params_c:
        assert_almost_equal(params_g[k], params_c[k], rtol=rtol, atol=atol, names=(f"gpu {k}", f"cpu {k}"))


@pytest.mark.cuda
def test_hybridized_block_trains_on_the_gpu_as_on_the_cpu():
    rng = np.random.RandomState(0)
    x = rng.normal(size=(2, 2, 6, 6)).astype(np.float32)
    y = np.array([1, 3], np.float32)
    _compare(_small_cnn, x, y, steps=2, init=nbdl.initializer.Xavier(), rtol=1e-4, atol=1e-5)


ZOO = ["resnet18_v1", "resnet50_v2", "mobilenet0.25"]


@pytest.mark.cuda
@pytest.mark.skipif(numba_config.ENABLE_CUDASIM, reason=(
    "the simulator cannot afford a zoo network (a Python thread per CUDA thread): "
    "these run on a real GPU (NBDL_TEST_CUDA=1, perf/gpu_check.sh)"))
@pytest.mark.parametrize("name", ZOO)
def test_zoo_network_trains_on_the_gpu_as_on_the_cpu(name):
    rng = np.random.RandomState(1)
    x = rng.normal(size=(2, 3, 32, 32)).astype(np.float32)
    y = np.array([3, 7], np.float32)
    init = nbdl.initializer.Xavier(rnd_type="uniform", factor_type="in", magnitude=6)
    _compare(lambda: get_model(name), x, y, steps=1, init=init, rtol=1e-3, atol=1e-4)
