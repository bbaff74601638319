"""Shared pieces of the Module tests: a small MLP, a separable data set and
its numpy forward pass."""
import numpy as np
import pytest

import nbdl


def mlp(hidden=8, classes=2):
    data = nbdl.sym.Variable("data")
    fc1 = nbdl.sym.FullyConnected(data, num_hidden=hidden, name="fc1")
    act = nbdl.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = nbdl.sym.FullyConnected(act, num_hidden=classes, name="fc2")
    return nbdl.sym.SoftmaxOutput(fc2, name="softmax")


def separable(n=100, dim=4, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, dim).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.float32)
    x[:, 0] += np.where(y > 0, 0.5, -0.5)
    return x, y


def init_params(dim=4, hidden=8, classes=2, seed=1):
    rng = np.random.RandomState(seed)
    return {"fc1_weight": (rng.randn(hidden, dim) * 0.3).astype(np.float32),
            "fc1_bias": np.zeros(hidden, np.float32),
            "fc2_weight": (rng.randn(classes, hidden) * 0.3).astype(np.float32),
            "fc2_bias": np.zeros(classes, np.float32)}


def np_forward(p, x):
    h = np.maximum(x @ p["fc1_weight"].T + p["fc1_bias"], 0)
    z = h @ p["fc2_weight"].T + p["fc2_bias"]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def as_nd(params):
    return {k: nbdl.nd.array(v) for k, v in params.items()}


def as_np(params):
    return {k: v.asnumpy() for k, v in params.items()}


@pytest.fixture
def data():
    return separable()
