"""The workloads of issue 14's speed table, one builder per row: each returns
``(step, per)`` where ``step()`` runs the workload once (the first call,
compilation included, is made here) and ``per`` divides its time into the
row's unit (100 for the per-op dispatch rows, else 1).

The pytest-benchmark files of ``perf/`` time these builders, and
``perf/compare/side_by_side.py`` times them against the same rows of
``perf/compare/mxnet_reference.py`` / ``torch_reference.py`` (the peers'
builders, same names, same shapes).
"""
import numpy as np

import nbdl
from nbdl import autograd, gluon
from nbdl.gluon import nn, rnn

N_OPS = 100
SEQ, BATCH, INPUT, HIDDEN, LAYERS = 35, 32, 256, 256, 2


def mlp_net():
    """The Gluon MLP 784-512-512-10."""
    net = nn.HybridSequential()
    net.add(nn.Dense(512, activation="relu", in_units=784), nn.Dense(512, activation="relu"),
            nn.Dense(10))
    net.initialize(nbdl.init.Xavier())
    return net


def lenet():
    """LeNet-5 as in MXNet's tutorials (ReLU, max pooling)."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, kernel_size=5, padding=2, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Conv2D(16, kernel_size=5, activation="relu"), nn.MaxPool2D(2, 2),
            nn.Dense(120, activation="relu"), nn.Dense(84, activation="relu"), nn.Dense(10))
    return net


def train_step(net, x, y, loss_fn, batch, hybridize=True, optimizer=("sgd", {"learning_rate": 0.01})):
    """A Gluon training step of ``net`` on ``x``/``y``, run once, returned.

    Parameters
    ----------
    net : Block
        Initialized network.
    x, y : numpy arrays
        Input and target.
    loss_fn : Loss
    batch : int
        ``Trainer.step``'s batch size.
    hybridize : bool
        ``hybridize(static_alloc=True, static_shape=True)`` first.
    optimizer : (str, dict)
        The Trainer's optimizer and its arguments.
    """
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), optimizer[0], optimizer[1])
    x, y = nbdl.nd.array(x), nbdl.nd.array(y)

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
    step()
    return step


def gluon_mlp_train():
    nbdl.random.seed(0)
    rng = np.random.RandomState(0)
    return train_step(mlp_net(), rng.rand(128, 784).astype(np.float32),
                      rng.randint(0, 10, 128).astype(np.float32),
                      gluon.loss.SoftmaxCrossEntropyLoss(), 128), 1


def eager_mlp_train():
    nbdl.random.seed(0)
    rng = np.random.RandomState(0)
    return train_step(mlp_net(), rng.rand(128, 784).astype(np.float32),
                      rng.randint(0, 10, 128).astype(np.float32),
                      gluon.loss.SoftmaxCrossEntropyLoss(), 128, hybridize=False), 1


def symbol_mlp():
    """The Symbol MLP with a SoftmaxOutput head."""
    x = nbdl.sym.var("data")
    for i, h in enumerate((512, 512)):
        x = nbdl.sym.Activation(nbdl.sym.FullyConnected(x, num_hidden=h, name=f"fc{i + 1}"),
                                act_type="relu", name=f"relu{i + 1}")
    x = nbdl.sym.FullyConnected(x, num_hidden=10, name="fc3")
    return nbdl.sym.SoftmaxOutput(x, name="softmax")


def symbol_mlp_executor():
    """``symbol_mlp`` bound by ``simple_bind`` for batch 128 with random
    weights, data and labels."""
    ex = symbol_mlp().simple_bind(nbdl.cpu(), data=(128, 784))
    rng = np.random.RandomState(0)
    for name, arr in ex.arg_dict.items():
        if name.endswith("weight"):
            arr[:] = rng.uniform(-0.05, 0.05, arr.shape).astype(np.float32)
    ex.arg_dict["data"][:] = rng.rand(128, 784).astype(np.float32)
    ex.arg_dict["softmax_label"][:] = rng.randint(0, 10, 128).astype(np.float32)
    return ex


def symbol_mlp_train():
    ex = symbol_mlp_executor()
    pairs = [(ex.arg_dict[k], ex.grad_dict[k]) for k in ex.grad_dict
             if k not in ("data", "softmax_label")]

    def step():
        ex.forward(is_train=True)
        ex.backward()
        for w, g in pairs:
            nbdl.nd.sgd_update(w, g, lr=0.01 / 128, out=w)
    step()
    return step, 1


def single_op_train(sym, shape):
    """One op bound alone (``sym`` of one variable ``x``), data of ``shape``:
    ``step()`` runs its training forward and backward (the per-kernel rows of
    ``perf/test_batch_norm.py`` and ``perf/test_pooling.py``).

    Parameters
    ----------
    sym : Symbol
        The op applied to ``nbdl.sym.var("x")``.
    shape : tuple of int
        The data's shape.
    """
    ex = sym.simple_bind(nbdl.cpu(), x=shape, grad_req="write")
    ex.arg_dict["x"][:] = np.random.RandomState(0).rand(*shape).astype(np.float32)
    head = nbdl.nd.array(np.random.RandomState(1).rand(*ex.outputs[0].shape).astype(np.float32))

    def step():
        ex.forward(is_train=True)
        ex.backward(head)
        return ex.grad_dict["x"]
    for _ in range(3):
        step()
    nbdl.nd.waitall()
    return step


def chain_symbol(n=N_OPS):
    """relu and ``* 0.5`` alternating, ``n`` ops."""
    x = nbdl.sym.var("x")
    y = x
    for i in range(n):
        y = (y * 0.5) if i % 2 else nbdl.sym.relu(y)
    return y


def hybrid_dispatch():
    ex = chain_symbol().bind(nbdl.cpu(), args={"x": nbdl.nd.array(np.arange(4, dtype=np.float32))},
                             grad_req="null")
    ex.forward()
    return ex.forward, N_OPS


def eager_dispatch():
    x = nbdl.nd.array(np.arange(4, dtype=np.float32))

    def chain():
        y = x
        for i in range(N_OPS):
            y = (y * 0.5) if i % 2 else nbdl.nd.relu(y)
        return y
    chain()
    return chain, N_OPS


def image_train(net, shape, classes):
    nbdl.random.seed(0)
    net.initialize(nbdl.init.Xavier())
    rng = np.random.RandomState(0)
    return train_step(net, rng.rand(*shape).astype(np.float32),
                      rng.randint(0, classes, shape[0]).astype(np.float32),
                      gluon.loss.SoftmaxCrossEntropyLoss(), shape[0],
                      optimizer=("sgd", {"learning_rate": 0.01, "momentum": 0.9}))


def lenet_train():
    return image_train(lenet(), (128, 1, 28, 28), 10), 1


def resnet18_train():
    from nbdl.gluon.model_zoo import vision
    return image_train(vision.resnet18_v1(classes=10), (32, 3, 32, 32), 10), 1


def zoo_inference(name, batch):
    """Hybridized inference of model-zoo ``name`` on ``batch`` 3x224x224 images
    (random weights: speed does not depend on them); returns ``(net, step)``."""
    from nbdl.gluon.model_zoo import vision
    net = vision.get_model(name)
    net.initialize(nbdl.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    x = nbdl.nd.array(np.random.RandomState(0).rand(batch, 3, 224, 224).astype(np.float32))

    def step():
        return net(x)
    step()
    return net, step


def _zoo_row(name, batch):
    return lambda: (zoo_inference(name, batch)[1], 1)


def rnn_train(cell, hybridize=True):
    """Training step of a fused 2-layer ``cell`` ('lstm' or 'gru') network,
    hidden 256, input 256, TNC 35x32, L2 loss, SGD (hybridized unless
    ``hybridize`` is False)."""
    nbdl.random.seed(0)
    layer = {"lstm": rnn.LSTM, "gru": rnn.GRU}[cell]
    net = layer(HIDDEN, num_layers=LAYERS, input_size=INPUT)
    net.initialize(nbdl.init.Uniform(0.1))
    rng = np.random.RandomState(0)
    return train_step(net, rng.uniform(-1, 1, (SEQ, BATCH, INPUT)).astype(np.float32),
                      rng.uniform(-1, 1, (SEQ, BATCH, HIDDEN)).astype(np.float32),
                      gluon.loss.L2Loss(), BATCH, hybridize=hybridize)


ROWS = {
    "gluon_mlp_train": gluon_mlp_train,
    "eager_mlp_train": eager_mlp_train,
    "symbol_mlp_train": symbol_mlp_train,
    "hybrid_dispatch": hybrid_dispatch,
    "eager_dispatch": eager_dispatch,
    "lenet_train": lenet_train,
    "resnet18_train": resnet18_train,
    "lstm_train": lambda: (rnn_train("lstm"), 1),
    "gru_train": lambda: (rnn_train("gru"), 1),
}
for _name, _key in (("resnet50_v1", "resnet50"), ("resnet18_v1", "resnet18"),
                    ("mobilenet1.0", "mobilenet"), ("squeezenet1.1", "squeezenet")):
    for _b in (1, 16):
        ROWS[f"{_key}_infer_b{_b}"] = _zoo_row(_name, _b)
