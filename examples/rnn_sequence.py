"""Sequence classification with a hybridized ``gluon.rnn.LSTM`` on generated
data: each example is a sequence of ``length`` numbers drawn uniformly from
[0, 1), labelled 1 when their sum exceeds ``length / 2``.  The LSTM reads
the sequence (NTC), its output at the last step goes through a Dense layer
to two classes.  With the defaults (12 epochs of 2,048 sequences of length
10, Adam, about 30 s on two CPU cores) the mean training loss falls from
0.58 in the first epoch to below 0.1 (0.082 measured, seed 0) with a held-out
accuracy of about 94%.

    python examples/rnn_sequence.py [--epochs 12] [--eager]
"""
import argparse

import numpy as np

import nbdl
from nbdl import autograd, gluon
from nbdl.gluon import nn, rnn


def make_data(n, length, seed):
    rng = np.random.RandomState(seed)
    x = rng.uniform(0, 1, (n, length, 1)).astype(np.float32)
    y = (x.sum(axis=(1, 2)) > length / 2).astype(np.float32)
    return x, y


class SumClassifier(gluon.HybridBlock):
    def __init__(self, length, hidden=16):
        super().__init__()
        self._length = length
        self.lstm = rnn.LSTM(hidden, layout="NTC", input_size=1)
        self.out = nn.Dense(2, in_units=hidden)

    def forward(self, x):
        h = self.lstm(x)                                  # (N, T, hidden)
        T = self._length
        last = h.slice_axis(axis=1, begin=T - 1, end=T).squeeze(axis=1)
        return self.out(last)


def run(epochs=12, n_train=2048, length=10, batch_size=64, lr=0.02, hybridize=True, seed=0,
        verbose=True):
    """Train; return (per-epoch mean training losses, held-out accuracy, net)."""
    nbdl.random.seed(seed)
    xtr, ytr = make_data(n_train, length, seed)
    xte, yte = make_data(512, length, seed + 1)
    train = gluon.data.DataLoader(gluon.data.ArrayDataset(xtr, ytr), batch_size=batch_size,
                                  shuffle=True, last_batch="discard")
    net = SumClassifier(length)
    net.initialize(nbdl.init.Xavier())
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": lr})
    losses = []
    for epoch in range(epochs):
        total, count = 0.0, 0
        for x, y in train:
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(batch_size)
            total += float(loss.asnumpy().sum())
            count += x.shape[0]
        losses.append(total / count)
        if verbose:
            print(f"epoch {epoch + 1:3d}  loss {losses[-1]:.4f}")
    pred = net(nbdl.nd.array(xte)).asnumpy().argmax(axis=1)
    return losses, float((pred == yte).mean()), net


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--eager", action="store_true")
    args = p.parse_args(argv)
    losses, acc, _ = run(args.epochs, hybridize=not args.eager)
    print(f"final training loss {losses[-1]:.4f}, held-out accuracy {acc:.4f}")
    return acc


if __name__ == "__main__":
    main()
