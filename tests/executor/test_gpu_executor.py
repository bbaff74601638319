"""The executor on a GPU device (Numba's CUDA simulator in this suite): the
same arena/views/launch path, results equal to the CPU executor."""
import numpy as np
import pytest

import nbdl
from nbdl.testing import assert_almost_equal


def _net():
    x = nbdl.sym.var("data")
    h = nbdl.sym.Activation(nbdl.sym.FullyConnected(x, num_hidden=3, name="fc1"), act_type="tanh")
    return nbdl.sym.SoftmaxOutput(nbdl.sym.FullyConnected(h, num_hidden=2, name="fc2"), name="sm")


def _run(dev):
    rng = np.random.RandomState(0)
    net = _net()
    ex = net.simple_bind(dev, data=(2, 4))
    params = {k: rng.uniform(-0.5, 0.5, a.shape).astype(np.float32)
              for k, a in ex.arg_dict.items() if k != "sm_label"}
    params["sm_label"] = np.array([0, 1], np.float32)
    ex.copy_params_from(params)
    out = ex.forward(is_train=True)[0].asnumpy()
    ex.backward()
    return out, {k: g.asnumpy() for k, g in ex.grad_dict.items()}


@pytest.mark.cuda
def test_gpu_executor_matches_cpu():
    out_c, grads_c = _run(nbdl.cpu())
    out_g, grads_g = _run(nbdl.gpu(0))
    assert_almost_equal(out_g, out_c, rtol=1e-5, atol=1e-6)
    for k in grads_c:
        assert_almost_equal(grads_g[k], grads_c[k], rtol=1e-4, atol=1e-6)
