"""Module.fit on scikit-learn's digits against the Gluon path (Dense layers,
SoftmaxCrossEntropyLoss, Trainer) from the same weights and batches.

The two compute the same updates in a different order of float operations;
three epochs keep them within 1e-5 of each other (later, a ReLU input that
sits within rounding of 0 can flip in one path and not the other, and the
runs part by more than rounding)."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd, gluon
from nbdl.io import NDArrayIter

BS, HIDDEN, EPOCHS = 32, 32, 3
OPT = {"learning_rate": 0.1, "momentum": 0.9}


def _digits():
    datasets = pytest.importorskip("sklearn.datasets")
    d = datasets.load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.float32)
    idx = np.random.RandomState(0).permutation(len(x))
    n_test = len(x) // 5
    return x[idx[n_test:]], y[idx[n_test:]], x[idx[:n_test]], y[idx[:n_test]]


def _weights():
    rng = np.random.RandomState(3)
    shapes = [(HIDDEN, 64), (HIDDEN, HIDDEN), (10, HIDDEN)]
    out = {}
    for i, shp in enumerate(shapes, 1):
        bound = np.sqrt(6.0 / sum(shp))
        out[f"fc{i}_weight"] = rng.uniform(-bound, bound, shp).astype(np.float32)
        out[f"fc{i}_bias"] = np.zeros(shp[0], np.float32)
    return out


def _symbol():
    x = nbdl.sym.Variable("data")
    for i in (1, 2):
        x = nbdl.sym.Activation(nbdl.sym.FullyConnected(x, num_hidden=HIDDEN, name=f"fc{i}"),
                                act_type="relu")
    return nbdl.sym.SoftmaxOutput(nbdl.sym.FullyConnected(x, num_hidden=10, name="fc3"),
                                  name="softmax")


def _gluon(xtr, ytr, xte, yte, w):
    net = gluon.nn.Sequential()
    net.add(gluon.nn.Dense(HIDDEN, activation="relu"), gluon.nn.Dense(HIDDEN, activation="relu"),
            gluon.nn.Dense(10))
    net.initialize()
    net(nbdl.nd.array(xtr[:BS]))
    for i, layer in enumerate(net, 1):
        layer.weight.set_data(nbdl.nd.array(w[f"fc{i}_weight"]))
        layer.bias.set_data(nbdl.nd.array(w[f"fc{i}_bias"]))
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", dict(OPT))
    for _ in range(EPOCHS):
        for i in range(0, len(xtr) - BS + 1, BS):
            x, y = nbdl.nd.array(xtr[i:i + BS]), nbdl.nd.array(ytr[i:i + BS])
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(BS)
    pred = net(nbdl.nd.array(xte)).asnumpy().argmax(1)
    params = {}
    for i, layer in enumerate(net, 1):
        params[f"fc{i}_weight"] = layer.weight.data().asnumpy()
        params[f"fc{i}_bias"] = layer.bias.data().asnumpy()
    return (pred == yte).mean(), params


def test_module_fit_on_digits_matches_the_gluon_path():
    xtr, ytr, xte, yte = _digits()
    w = _weights()
    mod = nbdl.mod.Module(_symbol())
    mod.fit(NDArrayIter(xtr, ytr, batch_size=BS, last_batch_handle="discard"),
            num_epoch=EPOCHS, arg_params={k: nbdl.nd.array(v) for k, v in w.items()},
            optimizer="sgd", optimizer_params=dict(OPT))
    acc = dict(mod.score(NDArrayIter(xte, yte, batch_size=len(xte)), "acc"))["accuracy"]
    gluon_acc, gluon_params = _gluon(xtr, ytr, xte, yte, w)
    assert acc > 0.9
    assert acc == pytest.approx(gluon_acc, abs=1.0 / len(xte))
    got = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    for k, v in gluon_params.items():
        np.testing.assert_allclose(got[k], v, rtol=1e-4, atol=1e-5, err_msg=k)
