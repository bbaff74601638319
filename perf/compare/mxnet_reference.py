"""Side-by-side reference figures from Apache MXNet 1.9.1 for the executor
benchmarks in perf/.  Not part of nbdl or its tests: run it in a separate
virtual environment that has MXNet,

    python -m venv /tmp/mxvenv && /tmp/mxvenv/bin/pip install 'mxnet==1.9.1' 'numpy<1.24'
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /tmp/mxvenv/bin/python perf/compare/mxnet_reference.py

It prints the median of repeated timings for the same workloads as
perf/test_executor_mlp.py and perf/test_dispatch.py.
"""
import mxnet as mx
import numpy as np

from _timing import median_time


def mlp_step():
    x = mx.sym.var("data")
    for i, h in enumerate((512, 512)):
        x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=h, name=f"fc{i + 1}"), act_type="relu")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc3")
    net = mx.sym.SoftmaxOutput(x, name="softmax")
    ex = net.simple_bind(mx.cpu(), data=(128, 784))
    rng = np.random.RandomState(0)
    for k, a in ex.arg_dict.items():
        if k.endswith("weight"):
            a[:] = rng.uniform(-0.05, 0.05, a.shape)
    ex.arg_dict["data"][:] = rng.rand(128, 784)
    ex.arg_dict["softmax_label"][:] = rng.randint(0, 10, 128)
    pairs = [(ex.arg_dict[k], ex.grad_dict[k]) for k in ex.grad_dict if k != "data" and k != "softmax_label"]

    def step():
        ex.forward(is_train=True)
        ex.backward()
        for w, g in pairs:
            mx.nd.sgd_update(w, g, lr=0.01 / 128, out=w)
        mx.nd.waitall()
    return median_time(step)


def chain(n=100):
    x = mx.sym.var("x")
    y = x
    for i in range(n):
        y = (y * 0.5) if i % 2 else mx.sym.relu(y)
    ex = y.bind(mx.cpu(), args={"x": mx.nd.array(np.arange(4))}, grad_req="null")

    def fwd():
        ex.forward()
        mx.nd.waitall()
    return median_time(fwd, repeat=500) / n


def gluon_step():
    from mxnet import autograd, gluon
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(512, activation="relu"), gluon.nn.Dense(512, activation="relu"),
            gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})
    x = mx.nd.array(np.random.rand(128, 784))
    y = mx.nd.array(np.random.randint(0, 10, 128))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(128)
        mx.nd.waitall()
    return median_time(step)


def cnn_figures():
    """LeNet-5 train step (1x28x28, batch 128), resnet18_v1 train step
    (3x32x32, batch 32, 10 classes), resnet50_v1 inference (batch 1 and 16)."""
    from mxnet import autograd, gluon
    from mxnet.gluon.model_zoo import vision

    def train_step(net, shape, classes, repeat):
        net.initialize(mx.init.Xavier())
        net.hybridize(static_alloc=True, static_shape=True)
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01, "momentum": 0.9})
        x = mx.nd.array(np.random.rand(*shape))
        y = mx.nd.array(np.random.randint(0, classes, shape[0]))

        def step():
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(shape[0])
            mx.nd.waitall()
        return median_time(step, repeat=repeat, warmup=2)

    lenet = gluon.nn.HybridSequential()
    lenet.add(gluon.nn.Conv2D(6, 5, padding=2, activation="relu"), gluon.nn.MaxPool2D(2, 2),
              gluon.nn.Conv2D(16, 5, activation="relu"), gluon.nn.MaxPool2D(2, 2),
              gluon.nn.Dense(120, activation="relu"), gluon.nn.Dense(84, activation="relu"),
              gluon.nn.Dense(10))
    out = {"lenet": train_step(lenet, (128, 1, 28, 28), 10, 50),
           "resnet18": train_step(vision.resnet18_v1(classes=10), (32, 3, 32, 32), 10, 10)}
    for batch in (1, 16):
        net = vision.resnet50_v1()
        net.initialize(mx.init.Xavier())
        net.hybridize(static_alloc=True, static_shape=True)
        x = mx.nd.array(np.random.rand(batch, 3, 224, 224))

        def fwd():
            net(x).wait_to_read()
        out[f"resnet50_b{batch}"] = median_time(fwd, repeat=5 if batch == 16 else 20, warmup=2)
    return out


if __name__ == "__main__":
    print(f"mxnet {mx.__version__}")
    print(f"MLP 784-512-512-10 batch 128 train step: {mlp_step() * 1e3:.3f} ms")
    print(f"Gluon MLP train step, hybridized static_alloc: {gluon_step() * 1e3:.3f} ms")
    for k, v in cnn_figures().items():
        print(f"{k}: {v * 1e3:.2f} ms")
    print(f"100-op chain of tiny ops, static graph: {chain() * 1e6:.3f} us/op")
