"""One bound inference depthwise convolution (3x3, pad 1, + BatchNorm + ReLU,
fused), per layer shape of MobileNet 1.0 at 224x224, batch 1 and 16: output
rows of 16 and more run a plane at a time (``conv_depthwise``, each row's
nine taps summed in registers), narrower ones sixteen channels at a time
(``conv_depthwise_lanes``); perf/README.md, tenth session, has the figures
before and after::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf/test_conv_depthwise.py --benchmark-only
"""
import numpy as np
import pytest

import nbdl

# (channels, input side, stride): MobileNet 1.0's depthwise layers
LAYERS = [(32, 112, 1), (64, 112, 2), (128, 56, 1), (128, 56, 2), (256, 28, 1), (256, 28, 2),
          (512, 14, 1), (512, 14, 2), (1024, 7, 1)]


@pytest.mark.parametrize("batch", [1, 16])
@pytest.mark.parametrize("layer", LAYERS, ids=lambda v: "x".join(map(str, v)))
def test_depthwise3x3_inference(benchmark, layer, batch):
    c, side, stride = layer
    x = nbdl.sym.var("data")
    conv = nbdl.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), stride=(stride, stride),
                                num_filter=c, num_group=c, no_bias=True, name="c")
    y = nbdl.sym.Activation(nbdl.sym.BatchNorm(conv, name="bn"), act_type="relu")
    ex = y.simple_bind(nbdl.cpu(), grad_req="null", data=(batch, c, side, side))
    rng = np.random.RandomState(0)
    for arr in ex.arg_dict.values():
        arr[:] = rng.uniform(-1, 1, arr.shape).astype(np.float32)
    for arr in ex.aux_dict.values():
        arr[:] = rng.uniform(0.5, 1.5, arr.shape).astype(np.float32)

    def step():
        ex.forward(is_train=False)[0].wait_to_read()
    step()
    benchmark.pedantic(step, rounds=10 if batch > 1 else 100, iterations=1, warmup_rounds=3)
