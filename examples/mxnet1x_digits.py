"""An MXNet 1.x script, unchanged: it imports ``mxnet`` and uses the 1.x APIs
(``mx.mod.Module`` over ``mx.io.NDArrayIter`` with ``mx.metric`` and
``mx.callback``, then a Gluon 1.x ``HybridBlock`` written with
``hybrid_forward(self, F, x)``, ``name_scope()`` and ``ctx=``), on
scikit-learn's digits.  It runs on Apache MXNet 1.9.1 as it is, and on nbdl
through the import alias:

    python -m nbdl.mxnet examples/mxnet1x_digits.py [--epochs 10]
"""
import argparse
import logging

import numpy as np

import mxnet as mx
from mxnet import autograd, gluon, nd


def load_digits(seed=0):
    from sklearn.datasets import load_digits as _load
    d = _load()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.float32)
    idx = np.random.RandomState(seed).permutation(len(x))
    n_test = len(x) // 5
    return x[idx[n_test:]], y[idx[n_test:]], x[idx[:n_test]], y[idx[:n_test]]


def module_mlp(x_train, y_train, x_test, y_test, epochs, batch_size):
    """The symbolic API: a Module trained by fit()."""
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=64, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc2")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    train = mx.io.NDArrayIter(x_train, y_train, batch_size, shuffle=True)
    test = mx.io.NDArrayIter(x_test, y_test, batch_size)
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(train, eval_data=test, optimizer="sgd",
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
            initializer=mx.init.Xavier(), eval_metric="acc", num_epoch=epochs,
            batch_end_callback=mx.callback.Speedometer(batch_size, 20))
    return mod.score(test, mx.metric.Accuracy())[0][1]


class MLP(gluon.HybridBlock):
    """A Gluon 1.x block: parameters created in name_scope, used in hybrid_forward."""

    def __init__(self, **kwargs):
        super(MLP, self).__init__(**kwargs)
        with self.name_scope():
            self.hidden = gluon.nn.Dense(64, activation="relu")
            self.out = gluon.nn.Dense(10)

    def hybrid_forward(self, F, x):
        return self.out(self.hidden(x))


def gluon_mlp(x_train, y_train, x_test, y_test, epochs, batch_size):
    ctx = mx.cpu()
    net = MLP(prefix="mlp_")
    net.collect_params().initialize(mx.init.Xavier(), ctx=ctx)
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    train = mx.io.NDArrayIter(x_train, y_train, batch_size, shuffle=True,
                              last_batch_handle="discard")
    for epoch in range(epochs):
        train.reset()
        for batch in train:
            x = batch.data[0].as_in_context(ctx)
            y = batch.label[0].as_in_context(ctx)
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(batch_size)
    metric = mx.metric.Accuracy()
    metric.update([nd.array(y_test)], [net(nd.array(x_test, ctx=ctx))])
    return metric.get()[1], sorted(net.collect_params().keys())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    mx.random.seed(0)
    np.random.seed(0)
    data = load_digits()
    acc_mod = module_mlp(*data, args.epochs, args.batch_size)
    print(f"Module MLP test accuracy: {acc_mod:.3f}")
    acc_gluon, names = gluon_mlp(*data, args.epochs, args.batch_size)
    print(f"Gluon 1.x MLP test accuracy: {acc_gluon:.3f}")
    print("parameters:", ", ".join(names))
    return acc_mod, acc_gluon


if __name__ == "__main__":
    main()
