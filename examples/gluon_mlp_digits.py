"""A Gluon MLP on scikit-learn's bundled digits, the way research code is
written: autograd.record, loss.backward, trainer.step, a tqdm bar per epoch,
metrics per epoch.  Runs hybridized (static_alloc, static_shape) by default;
``--eager`` runs the same model eagerly.

    python examples/gluon_mlp_digits.py [--epochs 30] [--eager]
"""
import argparse

import numpy as np

import nbdl
from nbdl import autograd, gluon
from nbdl.gluon import nn


def load_digits(seed=0):
    from sklearn.datasets import load_digits as _load
    d = _load()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.float32)
    idx = np.random.RandomState(seed).permutation(len(x))
    n_test = len(x) // 5
    return (x[idx[n_test:]], y[idx[n_test:]]), (x[idx[:n_test]], y[idx[:n_test]])


def build(hidden=128):
    net = nn.HybridSequential()
    net.add(nn.Dense(hidden, activation="relu"), nn.Dense(hidden, activation="relu"), nn.Dense(10))
    return net


def run(epochs=30, batch_size=32, lr=0.1, hybridize=True, seed=0, progress=True, verbose=True):
    """Train and return (per-epoch training losses, held-out accuracy)."""
    nbdl.random.seed(seed)
    (xtr, ytr), (xte, yte) = load_digits()
    train = gluon.data.DataLoader(gluon.data.ArrayDataset(xtr, ytr), batch_size=batch_size,
                                  shuffle=True, last_batch="discard")
    test = gluon.data.DataLoader(gluon.data.ArrayDataset(xte, yte), batch_size=batch_size)
    net = build()
    net.initialize(nbdl.init.Xavier())
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr, "momentum": 0.9})
    train_acc, losses = gluon.metric.Accuracy(), []
    bar = None
    if progress:
        try:
            from tqdm import tqdm as bar
        except ImportError:
            bar = None
    for epoch in range(epochs):
        train_acc.reset()
        total, count = 0.0, 0
        batches = bar(train, desc=f"epoch {epoch + 1}/{epochs}", leave=False) if bar else train
        for x, y in batches:
            with autograd.record():
                out = net(x)
                loss = loss_fn(out, y)
            loss.backward()
            trainer.step(batch_size)
            train_acc.update(y, out)
            total += float(loss.asnumpy().sum())
            count += x.shape[0]
        losses.append(total / count)
        if verbose:
            test_acc = evaluate(net, test)
            print(f"epoch {epoch + 1:3d}  loss {losses[-1]:.4f}  train acc {train_acc.get()[1]:.4f}  "
                  f"held-out acc {test_acc:.4f}")
    return losses, evaluate(net, test)


def evaluate(net, loader):
    acc = gluon.metric.Accuracy()
    for x, y in loader:
        acc.update(y, net(x))
    return acc.get()[1]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--eager", action="store_true")
    args = p.parse_args(argv)
    _, acc = run(args.epochs, args.batch_size, args.lr, hybridize=not args.eager)
    print(f"held-out accuracy {acc:.4f}")
    return acc


if __name__ == "__main__":
    main()
