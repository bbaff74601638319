"""A small CNN on scikit-learn's digits (1x8x8 images), hybridized:
Conv2D -> BatchNorm -> relu -> Conv2D -> MaxPool2D -> Dropout -> Dense.

    python examples/cnn_digits.py [--epochs 15]
"""
import argparse

import numpy as np

import nbdl
from nbdl import autograd, gluon
from nbdl.gluon import nn


def load_digits(seed=0):
    from sklearn.datasets import load_digits as _load
    d = _load()
    x = (d.images / 16.0).astype(np.float32)[:, None, :, :]      # N, 1, 8, 8
    y = d.target.astype(np.float32)
    idx = np.random.RandomState(seed).permutation(len(x))
    n_test = len(x) // 5
    return (x[idx[n_test:]], y[idx[n_test:]]), (x[idx[:n_test]], y[idx[:n_test]])


def build():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, kernel_size=3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(32, kernel_size=3, padding=1), nn.Activation("relu"),
            nn.MaxPool2D(pool_size=2),                                    # 32 x 4 x 4
            nn.Dropout(0.25), nn.Dense(64, activation="relu"), nn.Dense(10))
    return net


def run(epochs=15, batch_size=32, lr=0.05, seed=0, verbose=True):
    nbdl.random.seed(seed)
    (xtr, ytr), (xte, yte) = load_digits()
    train = gluon.data.DataLoader(gluon.data.ArrayDataset(xtr, ytr), batch_size=batch_size,
                                  shuffle=True, last_batch="discard")
    net = build()
    net.initialize(nbdl.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr, "momentum": 0.9})
    for epoch in range(epochs):
        total, n = 0.0, 0
        for x, y in train:
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(batch_size)
            total += float(loss.asnumpy().sum())
            n += x.shape[0]
        if verbose:
            print(f"epoch {epoch + 1:3d}  loss {total / n:.4f}  held-out acc "
                  f"{accuracy(net, xte, yte):.4f}")
    return accuracy(net, xte, yte), net


def accuracy(net, x, y, batch=64):
    acc = gluon.metric.Accuracy()
    for i in range(0, len(x), batch):
        acc.update(nbdl.nd.array(y[i:i + batch]), net(nbdl.nd.array(x[i:i + batch])))
    return acc.get()[1]


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=15)
    args = p.parse_args()
    acc, net = run(args.epochs)
    print(f"held-out accuracy {acc:.4f}")
    print(nbdl.debug_str(net).split("\n\n")[-1])
