"""MXNet 1.9.1 reference for perf/test_zoo.py: hybridized inference of
resnet18_v1, resnet50_v1, mobilenet1.0 and squeezenet1.1 on 3x224x224 at
batch 1 and 16 (medians).  Not part of nbdl or its tests; run it in a
separate virtual environment:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /tmp/mxvenv/bin/python perf/compare/mxnet_zoo_reference.py
"""
import mxnet as mx
import numpy as np
from mxnet.gluon.model_zoo import vision

from _timing import median_time


if __name__ == "__main__":
    print(f"mxnet {mx.__version__}")
    for name in ("resnet18_v1", "resnet50_v1", "mobilenet1.0", "squeezenet1.1"):
        row = []
        for batch in (1, 16):
            net = vision.get_model(name)
            net.initialize(mx.init.Xavier())
            net.hybridize(static_alloc=True, static_shape=True)
            x = mx.nd.array(np.random.rand(batch, 3, 224, 224))
            t = median_time(lambda: net(x).wait_to_read(), repeat=5 if batch == 16 else 20, warmup=2)
            row.append(f"b{batch} {t * 1e3:.1f} ms ({batch / t:.1f} img/s)")
        print(f"{name}: " + ", ".join(row))
