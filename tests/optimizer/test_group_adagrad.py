"""mx.optimizer.contrib.GroupAdaGrad (the _contrib_group_adagrad_update op)."""
import numpy as np
import pytest

import nbdl
from nbdl.optimizer import OptimizerError


def test_group_adagrad_matches_the_row_wise_formula():
    rng = np.random.RandomState(0)
    w, g = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    opt = nbdl.optimizer.contrib.GroupAdaGrad(learning_rate=0.1, eps=1e-8, clip_gradient=0.4,
                                              rescale_grad=0.8)
    assert isinstance(nbdl.optimizer.create("groupadagrad"), nbdl.optimizer.contrib.GroupAdaGrad)
    W = nbdl.nd.array(w)
    state = opt.create_state(0, W)
    assert state.shape == (3, 1)
    hist = np.zeros((3, 1))
    for _ in range(2):
        opt.update(0, W, nbdl.nd.array(g), state)
        x = np.clip(0.8 * g, -0.4, 0.4)
        hist += (x * x).mean(axis=1, keepdims=True)
        w = w - 0.1 * x / np.sqrt(hist + 1e-8)
    np.testing.assert_allclose(W.asnumpy(), w, rtol=1e-5)
    np.testing.assert_allclose(state.asnumpy(), hist, rtol=1e-5)
    with pytest.raises(OptimizerError, match="GroupAdaGrad: weight decay is not supported"):
        nbdl.optimizer.contrib.GroupAdaGrad(wd=0.1).update(0, W, nbdl.nd.array(g), state)
    with pytest.raises(OptimizerError, match="GroupAdaGrad: the weight must be 2-D"):
        opt.create_state(1, nbdl.nd.zeros((3,)))
