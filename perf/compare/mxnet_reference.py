"""Apache MXNet 1.9.1's side of issue 14's speed table: one builder per row,
the same names, shapes and steps as ``perf/workloads.py`` (nbdl's side).
Not part of nbdl or its tests; it runs in MXNet's own virtual environment,
standalone (medians of each row, one after the other)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=2 \\
        /work/mxvenv/bin/python perf/compare/mxnet_reference.py [row ...]

or as the peer worker of ``perf/compare/side_by_side.py`` (alternating
rounds against nbdl in one run).  Each builder returns ``(step, per)``:
``step()`` runs the workload once and waits for it, ``per`` divides its time
into the row's unit (100 for the per-op rows).
"""
import sys

import mxnet as mx
import numpy as np

N_OPS = 100


def _train_step(net, x, y, loss_fn, batch, optimizer):
    from mxnet import autograd, gluon
    net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), optimizer[0], optimizer[1])
    x, y = mx.nd.array(x), mx.nd.array(y)

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
        mx.nd.waitall()
    step()
    return step


def gluon_mlp_train():
    from mxnet import gluon
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(512, activation="relu"), gluon.nn.Dense(512, activation="relu"),
            gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier())
    rng = np.random.RandomState(0)
    return _train_step(net, rng.rand(128, 784), rng.randint(0, 10, 128),
                       gluon.loss.SoftmaxCrossEntropyLoss(), 128,
                       ("sgd", {"learning_rate": 0.01})), 1


def symbol_mlp_train():
    x = mx.sym.var("data")
    for i, h in enumerate((512, 512)):
        x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=h, name=f"fc{i + 1}"),
                              act_type="relu")
    x = mx.sym.FullyConnected(x, num_hidden=10, name="fc3")
    net = mx.sym.SoftmaxOutput(x, name="softmax")
    ex = net.simple_bind(mx.cpu(), data=(128, 784))
    rng = np.random.RandomState(0)
    for k, a in ex.arg_dict.items():
        if k.endswith("weight"):
            a[:] = rng.uniform(-0.05, 0.05, a.shape)
    ex.arg_dict["data"][:] = rng.rand(128, 784)
    ex.arg_dict["softmax_label"][:] = rng.randint(0, 10, 128)
    pairs = [(ex.arg_dict[k], ex.grad_dict[k]) for k in ex.grad_dict
             if k not in ("data", "softmax_label")]

    def step():
        ex.forward(is_train=True)
        ex.backward()
        for w, g in pairs:
            mx.nd.sgd_update(w, g, lr=0.01 / 128, out=w)
        mx.nd.waitall()
    step()
    return step, 1


def hybrid_dispatch():
    x = mx.sym.var("x")
    y = x
    for i in range(N_OPS):
        y = (y * 0.5) if i % 2 else mx.sym.relu(y)
    ex = y.bind(mx.cpu(), args={"x": mx.nd.array(np.arange(4))}, grad_req="null")

    def fwd():
        ex.forward()
        mx.nd.waitall()
    fwd()
    return fwd, N_OPS


def _image_train(net, shape, classes):
    from mxnet import gluon
    net.initialize(mx.init.Xavier())
    rng = np.random.RandomState(0)
    return _train_step(net, rng.rand(*shape), rng.randint(0, classes, shape[0]),
                       gluon.loss.SoftmaxCrossEntropyLoss(), shape[0],
                       ("sgd", {"learning_rate": 0.01, "momentum": 0.9})), 1


def lenet_train():
    from mxnet import gluon
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(6, 5, padding=2, activation="relu"), gluon.nn.MaxPool2D(2, 2),
            gluon.nn.Conv2D(16, 5, activation="relu"), gluon.nn.MaxPool2D(2, 2),
            gluon.nn.Dense(120, activation="relu"), gluon.nn.Dense(84, activation="relu"),
            gluon.nn.Dense(10))
    return _image_train(net, (128, 1, 28, 28), 10)


def resnet18_train():
    from mxnet.gluon.model_zoo import vision
    return _image_train(vision.resnet18_v1(classes=10), (32, 3, 32, 32), 10)


def _zoo_row(name, batch):
    def build():
        from mxnet.gluon.model_zoo import vision
        net = vision.get_model(name)
        net.initialize(mx.init.Xavier())
        net.hybridize(static_alloc=True, static_shape=True)
        x = mx.nd.array(np.random.RandomState(0).rand(batch, 3, 224, 224))

        def step():
            net(x).wait_to_read()
        step()
        return step, 1
    return build


ROWS = {"gluon_mlp_train": gluon_mlp_train, "symbol_mlp_train": symbol_mlp_train,
        "hybrid_dispatch": hybrid_dispatch, "lenet_train": lenet_train,
        "resnet18_train": resnet18_train}
for _name, _key in (("resnet50_v1", "resnet50"), ("resnet18_v1", "resnet18"),
                    ("mobilenet1.0", "mobilenet"), ("squeezenet1.1", "squeezenet")):
    for _b in (1, 16):
        ROWS[f"{_key}_infer_b{_b}"] = _zoo_row(_name, _b)


if __name__ == "__main__":
    from _timing import median_time
    print(f"mxnet {mx.__version__}")
    for row in sys.argv[1:] or list(ROWS):
        step, per = ROWS[row]()
        print(f"{row}: {median_time(step, repeat=20, warmup=2) / per * 1e3:.4f} ms")
