"""The planner on real executors: within 10% of its lower bound on the MLP
and on a deep chain, never above MXNet's storage-id pool, far below naive."""
import numpy as np
import pytest

import nbdl


def mlp(hidden=(512, 512), classes=10):
    x = nbdl.sym.var("data")
    for i, h in enumerate(hidden):
        x = nbdl.sym.Activation(nbdl.sym.FullyConnected(x, num_hidden=h, name=f"fc{i}"), act_type="relu")
    return nbdl.sym.SoftmaxOutput(nbdl.sym.FullyConnected(x, num_hidden=classes, name="out"), name="sm")


def chain(n):
    y = nbdl.sym.var("x")
    for i in range(n):
        y = nbdl.sym.tanh(y) if i % 3 == 0 else (nbdl.sym.sigmoid(y) if i % 3 == 1 else y * 1.5)
    return y


@pytest.mark.parametrize("grad", [True, False])
def test_mlp_plan_within_10_percent_of_lower_bound(grad):
    ex = mlp().simple_bind(nbdl.cpu(), data=(128, 784), grad_req="write" if grad else "null")
    s = ex.memory_plan.stats
    assert s.planned_bytes <= 1.10 * s.lower_bound_bytes
    assert s.planned_bytes <= s.mxnet_pool_bytes
    assert s.planned_bytes < s.naive_bytes


def test_deep_chain_plan_within_10_percent_of_lower_bound():
    ex = chain(120).bind(nbdl.cpu(), args={"x": nbdl.nd.ones((64, 256))},
                         args_grad={"x": nbdl.nd.zeros((64, 256))})
    s = ex.memory_plan.stats
    assert s.planned_bytes <= 1.10 * s.lower_bound_bytes
    assert s.planned_bytes <= s.mxnet_pool_bytes
    # forward activations must be kept for backward; the rest is reused
    assert s.planned_bytes < 0.6 * s.naive_bytes
