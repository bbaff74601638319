"""nbdl.npx.convolution / deconvolution / pooling / batch_norm / leaky_relu:
eager against numpy, and the same call on Symbols giving the same numbers."""
import numpy as np
import pytest

import nbdl
import nbdl.npx as npx
from nbdl import autograd
from nbdl.testing import assert_almost_equal



def on_symbols(fn, arrays):
    """``fn`` on shaped variables, bound and run forward (inference)."""
    names = [f"a{i}" for i in range(len(arrays))]
    out = fn(*[nbdl.sym.var(n, shape=a.shape) for n, a in zip(names, arrays)])
    args = {n: nbdl.nd.array(a) for n, a in zip(names, arrays)}
    arg_names = out.list_arguments()
    aux = {n: v for n, v in args.items() if n not in arg_names}
    args = {n: v for n, v in args.items() if n in arg_names}
    ex = nbdl.bind(out, nbdl.cpu(), args, aux_states=aux or None, grad_req="null")
    return ex.forward(is_train=False)[0].asnumpy()


def nd(*arrays):
    return [nbdl.nd.array(a) for a in arrays]


def test_convolution_1x1_is_a_channel_matmul(rng):
    x = rng.uniform(-1, 1, (2, 3, 4, 5)).astype(np.float32)
    w = rng.uniform(-1, 1, (6, 3, 1, 1)).astype(np.float32)
    b = rng.uniform(-1, 1, 6).astype(np.float32)
    ref = np.einsum("nchw,fc->nfhw", x, w[:, :, 0, 0]) + b.reshape(1, 6, 1, 1)
    out = npx.convolution(*nd(x, w, b))              # kernel, num_filter from the weight
    assert_almost_equal(out.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    sym_out = on_symbols(lambda a, c, d: npx.convolution(a, c, d, kernel=(1, 1), num_filter=6),
                         [x, w, b])
    assert_almost_equal(sym_out, ref, rtol=1e-5, atol=1e-5)
    no_bias = npx.convolution(*nd(x, w), stride=(2, 2))
    assert_almost_equal(no_bias.asnumpy(), ref[:, :, ::2, ::2] - b.reshape(1, 6, 1, 1),
                        rtol=1e-5, atol=1e-5)


def test_deconvolution_1d(rng):
    x = rng.uniform(-1, 1, (1, 2, 3)).astype(np.float32)
    w = rng.uniform(-1, 1, (2, 1, 2)).astype(np.float32)
    ref = np.zeros((1, 1, 4))
    for c in range(2):
        for i in range(3):
            ref[0, 0, i:i + 2] += x[0, c, i] * w[c, 0]
    out = npx.deconvolution(*nd(x, w))
    assert out.shape == (1, 1, 4)
    assert_almost_equal(out.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    sym_out = on_symbols(lambda a, c: npx.deconvolution(a, c, kernel=(2,), num_filter=1),
                         [x, w])
    assert_almost_equal(sym_out, ref, rtol=1e-5, atol=1e-6)


def test_pooling(rng):
    x = rng.uniform(-1, 1, (2, 3, 4, 4)).astype(np.float32)
    out = npx.pooling(nbdl.nd.array(x), kernel=(2, 2), stride=(2, 2), pool_type="avg")
    ref = x.reshape(2, 3, 2, 2, 2, 2).mean(axis=(3, 5))
    assert_almost_equal(out.asnumpy(), ref, rtol=1e-5, atol=1e-6)
    g = npx.pooling(nbdl.nd.array(x), global_pool=True)
    assert_almost_equal(g.asnumpy(), x.max(axis=(2, 3), keepdims=True))
    sym_out = on_symbols(lambda a: npx.pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="avg"),
                         [x])
    assert_almost_equal(sym_out, ref, rtol=1e-5, atol=1e-6)


def test_leaky_relu(rng):
    x = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
    assert_almost_equal(npx.leaky_relu(nbdl.nd.array(x), slope=0.2).asnumpy(),
                        np.where(x > 0, x, 0.2 * x))
    gamma = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    ref = np.where(x > 0, x, gamma * x)
    assert_almost_equal(npx.leaky_relu(*nd(x, gamma), act_type="prelu").asnumpy(), ref)
    assert_almost_equal(on_symbols(lambda a, b: npx.leaky_relu(a, b, act_type="prelu"),
                                   [x, gamma]), ref)
    with pytest.raises(nbdl.NbdlError, match="gamma"):
        npx.leaky_relu(nbdl.nd.array(x), act_type="prelu")


def test_batch_norm_inference_and_training(rng):
    x = rng.uniform(-1, 1, (4, 3, 2)).astype(np.float32)
    gamma, beta = np.array([1.0, 2.0, 0.5], np.float32), np.array([0.0, 1.0, -1.0], np.float32)
    mean, var = np.array([0.1, -0.2, 0.3], np.float32), np.array([1.0, 0.5, 2.0], np.float32)
    r = lambda v: v.reshape(1, 3, 1)  # noqa: E731
    ref = (x - r(mean)) / np.sqrt(r(var) + 1e-3) * r(gamma) + r(beta)
    out = npx.batch_norm(*nd(x, gamma, beta, mean, var), fix_gamma=False)
    assert_almost_equal(out.asnumpy(), ref, rtol=1e-5, atol=1e-5)
    sym_out = on_symbols(lambda *a: npx.batch_norm(*a, fix_gamma=False),
                         [x, gamma, beta, mean, var])
    assert_almost_equal(sym_out, ref, rtol=1e-5, atol=1e-5)
    arrays = nd(x, gamma, beta, mean, var)
    with autograd.record():
        npx.batch_norm(*arrays, fix_gamma=False, momentum=0.5)
    batch_mean = x.mean(axis=(0, 2))
    assert_almost_equal(arrays[3].asnumpy(), 0.5 * mean + 0.5 * batch_mean, rtol=1e-5,
                        atol=1e-6)
