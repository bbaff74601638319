"""IdentityAttachKLSparseReg: identity forward, penalty gradient, moving_avg update."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.testing import check_consistency, run_symbol


def np_kl(x, og, ma, target, penalty, momentum):
    axes = (0,) + tuple(range(2, x.ndim))
    avg = x.astype(np.float64).mean(axis=axes)
    ma = momentum * ma + (1 - momentum) * avg
    shape = (1, -1) + (1,) * (x.ndim - 2)
    reg = penalty * (-target / ma + (1 - target) / (1 - ma))
    return og + reg.reshape(shape), ma


def kl(**kw):
    return nbdl.sym.IdentityAttachKLSparseReg(nbdl.sym.var("data"), **kw)


def test_arguments_and_aux():
    y = kl()
    assert y.list_arguments() == ["data"]
    assert y.list_auxiliary_states() == [y.name + "_moving_avg"]
    _, outs, aux = y.infer_shape(data=(4, 3))
    assert outs == [(4, 3)] and aux == [(3,)]


@pytest.mark.cuda
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2)])
def test_kl_sparse_reg_bound(shape, rng):
    x = rng.uniform(0.05, 0.95, shape).astype(np.float32)
    ma0 = rng.uniform(0.2, 0.6, (shape[1],)).astype(np.float32)
    kw = dict(sparseness_target=0.2, penalty=0.01, momentum=0.8)
    y = kl(**kw)
    og = rng.normal(size=shape).astype(np.float32)
    aux_name = y.list_auxiliary_states()[0]
    outs, grads, aux = run_symbol(y, {"data": x}, {aux_name: ma0.copy()}, out_grads=[og],
                                  is_train=True)
    want_g, want_ma = np_kl(x, og, ma0, **{"target": 0.2, "penalty": 0.01, "momentum": 0.8})
    assert np.allclose(outs[0], x)
    assert np.allclose(grads["data"], want_g, rtol=1e-5, atol=1e-6)
    assert np.allclose(aux[aux_name], want_ma, rtol=1e-5)
    check_consistency(y, {"data": x}, aux_states={aux_name: ma0})


def test_kl_sparse_reg_autograd_updates_aux(rng):
    x = nbdl.nd.array(rng.uniform(0.1, 0.9, (5, 2)).astype(np.float32))
    ma = nbdl.nd.array(np.array([0.5, 0.3], np.float32))
    x.attach_grad()
    with autograd.record():
        y = nbdl.nd.IdentityAttachKLSparseReg(x, ma, penalty=0.1)
    y.backward()
    want_g, want_ma = np_kl(x.asnumpy(), np.ones((5, 2)), np.array([0.5, 0.3]), 0.1, 0.1, 0.9)
    assert np.allclose(y.asnumpy(), x.asnumpy())
    assert np.allclose(ma.asnumpy(), want_ma, rtol=1e-5)
    assert np.allclose(x.grad.asnumpy(), want_g, rtol=1e-5)


def test_kl_sparse_reg_errors():
    with pytest.raises(nbdl.errors.AttrError, match="momentum"):
        kl(momentum=1.5)
    with pytest.raises(nbdl.ShapeError, match="IdentityAttachKLSparseReg"):
        kl().infer_shape(data=(4,))
