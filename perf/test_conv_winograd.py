"""One bound inference convolution (3x3, stride 1, pad 1, + BatchNorm + ReLU,
fused) run by Winograd F(4x4, 3x3) / F(2x2, 3x3) and by im2col + GEMM
(``NBDL_CONV_WINOGRAD=0``), per layer shape of ResNet-18 at 224x224: what
``conv_plan.winograd_plan``'s limits were read from (perf/README.md, ninth
session)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE pytest perf/test_conv_winograd.py --benchmark-only
"""
import numpy as np
import pytest

import nbdl

# (batch, channels, side): F(4x4) at 56 and 28, F(2x2) at 14; 7x7 and
# batch-1 14x14 keep im2col under the rule (listed to show why)
LAYERS = [(1, 64, 56), (16, 64, 56), (1, 128, 28), (16, 128, 28), (1, 256, 14), (16, 256, 14),
          (16, 512, 7)]


@pytest.mark.parametrize("algo", ["winograd", "im2col"])
@pytest.mark.parametrize("layer", LAYERS, ids=lambda v: "x".join(map(str, v)))
def test_conv3x3_inference(benchmark, monkeypatch, layer, algo):
    n, c, side = layer
    monkeypatch.setenv("NBDL_CONV_WINOGRAD", "1" if algo == "winograd" else "0")
    x = nbdl.sym.var("data")
    conv = nbdl.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=c, name="c")
    y = nbdl.sym.Activation(nbdl.sym.BatchNorm(conv, name="bn"), act_type="relu")
    ex = y.simple_bind(nbdl.cpu(), grad_req="null", data=(n, c, side, side))
    rng = np.random.RandomState(0)
    for name, arr in ex.arg_dict.items():
        arr[:] = rng.uniform(-1, 1, arr.shape).astype(np.float32)
    benchmark.extra_info["kernel"] = "winograd" if "Winograd" in ex.debug_str() else "im2col"

    def step():
        ex.forward(is_train=False)[0].wait_to_read()
    step()
    benchmark.pedantic(step, rounds=5 if n > 1 else 50, iterations=1, warmup_rounds=2)
