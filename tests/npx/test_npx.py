"""nbdl.npx against numpy references: each function on NDArrays (eager, and
its autograd gradient) and on Symbols (bound and run), giving the same
numbers."""
import numpy as np
import pytest

import nbdl
import nbdl.np as mnp
import nbdl.npx as npx
from nbdl import autograd
from nbdl.testing import assert_almost_equal


def run_graph(fn, arrays, head=None, shaped=False, train=False):
    names = [f"a{i}" for i in range(len(arrays))]
    vs = [nbdl.sym.var(n, shape=a.shape if shaped else None) for n, a in zip(names, arrays)]
    out = fn(*vs)
    sym = nbdl.sym.Group(out) if isinstance(out, list) else out
    args = {n: nbdl.nd.array(a, dtype=a.dtype) for n, a in zip(names, arrays)}
    grads = None
    if head is not None:
        grads = {n: nbdl.nd.zeros(a.shape, dtype=a.dtype) for n, a in zip(names, arrays)
                 if np.issubdtype(a.dtype, np.floating)}
    ex = nbdl.bind(sym, nbdl.cpu(), args, args_grad=grads,
                   grad_req={n: "write" for n in grads} if grads else "null")
    outs = [o.asnumpy() for o in ex.forward(is_train=train or head is not None)]
    if head is None:
        return outs, None
    ex.backward([nbdl.nd.array(h, dtype=h.dtype) for h in head])
    return outs, {n: g.asnumpy() for n, g in grads.items()}


def check(fn, ref, *arrays, rtol=1e-5, atol=1e-6, grad=True, shaped=(False,), seed=0):
    """Eager == numpy; graph == numpy; eager autograd gradients == the graph's."""
    want = ref(*arrays)
    wants = want if isinstance(want, list) else [want]
    got = fn(*[mnp.array(a) for a in arrays])
    gots = got if isinstance(got, list) else [got]
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants):
        assert isinstance(g, nbdl.NDArray) and g.shape == np.shape(w), (g.shape, np.shape(w))
        assert_almost_equal(g.asnumpy(), w, rtol, atol, names=("eager", "numpy"))
    rng = np.random.RandomState(seed)
    heads = [rng.normal(size=g.shape).astype(g.dtype) for g in gots]
    eager = None
    if grad:
        xs = [mnp.array(a) for a in arrays]
        floats = [i for i, a in enumerate(arrays) if np.issubdtype(a.dtype, np.floating)]
        for i in floats:
            xs[i].attach_grad()
        with autograd.record():
            out = fn(*xs)
        autograd.backward(out if isinstance(out, list) else [out], [mnp.array(h) for h in heads])
        eager = {f"a{i}": xs[i].grad.asnumpy() for i in floats}
    for s in shaped:
        outs, grads = run_graph(fn, arrays, heads if grad else None, shaped=s)
        for o, w in zip(outs, wants):
            assert_almost_equal(o, w, rtol, atol, names=("graph", "numpy"))
        if grad:
            for k, e in eager.items():
                assert_almost_equal(grads[k], e, rtol, atol, names=(f"graph grad {k}", "eager"))
    return gots, eager


def rand(rng, *shape, dtype=np.float32, low=-2, high=2):
    return rng.uniform(low, high, shape).astype(dtype)


def np_softmax(x, axis=-1, t=1.0):
    z = x.astype(np.float64) / t
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# -- activations -------------------------------------------------------------------------

def test_relu_sigmoid(rng):
    x = rand(rng, 3, 4)
    check(npx.relu, lambda a: np.maximum(a, 0), x)
    check(npx.sigmoid, lambda a: 1 / (1 + np.exp(-a)), x)


@pytest.mark.parametrize("act,ref", [("relu", lambda a: np.maximum(a, 0)), ("tanh", np.tanh),
                                     ("sigmoid", lambda a: 1 / (1 + np.exp(-a))),
                                     ("softrelu", lambda a: np.log1p(np.exp(a))),
                                     ("softsign", lambda a: a / (1 + np.abs(a)))])
def test_activation(act, ref, rng):
    check(lambda a: npx.activation(a, act_type=act), ref, rand(rng, 2, 5), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis,t", [(-1, None), (0, None), (1, 2.0)])
def test_softmax_and_log_softmax(axis, t, rng):
    x = rand(rng, 3, 4)
    check(lambda a: npx.softmax(a, axis=axis, temperature=t),
          lambda a: np_softmax(a, axis, t or 1.0), x)
    check(lambda a: npx.log_softmax(a, axis=axis, temperature=t),
          lambda a: np.log(np_softmax(a, axis, t or 1.0)), x, rtol=1e-5, atol=1e-5)


# -- fully_connected -----------------------------------------------------------------------

@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("shape,flatten", [((4, 3), True), ((2, 3, 2), True), ((2, 3, 3), False)])
def test_fully_connected(with_bias, shape, flatten, rng):
    x = rand(rng, *shape)
    k = int(np.prod(shape[1:])) if flatten else shape[-1]
    w, b = rand(rng, 5, k), rand(rng, 5)

    def ref(x, w, b=None):
        y = (x.reshape(shape[0], -1) if flatten else x) @ w.T
        return y if b is None else y + b
    if with_bias:
        check(lambda x, w, b: npx.fully_connected(x, w, b, num_hidden=5, flatten=flatten), ref,
              x, w, b, rtol=1e-4, atol=1e-5)
    else:
        check(lambda x, w: npx.fully_connected(x, w, num_hidden=5, flatten=flatten), ref,
              x, w, rtol=1e-4, atol=1e-5)
    # num_hidden from the weight: NDArrays, and Symbols with declared shapes
    arrays = (x, w, b) if with_bias else (x, w)
    check(lambda *a: npx.fully_connected(*a, flatten=flatten), ref, *arrays, rtol=1e-4,
          atol=1e-5, grad=False, shaped=(True,))


def test_fully_connected_errors():
    x, w = mnp.ones((2, 3)), mnp.ones((4, 3))
    with pytest.raises(nbdl.AttrError, match="no_bias=True"):
        npx.fully_connected(x, w, mnp.ones(4), no_bias=True)
    with pytest.raises(nbdl.AttrError, match="needs a bias"):
        npx.fully_connected(x, w, no_bias=False)
    with pytest.raises(nbdl.AttrError, match="num_hidden"):
        npx.fully_connected(nbdl.sym.var("x"), nbdl.sym.var("w"))
    with pytest.raises(nbdl.ShapeError, match="FullyConnected"):
        npx.fully_connected(x, mnp.ones((4, 2)))


# -- dropout ---------------------------------------------------------------------------------

def test_dropout_identity_outside_training(rng):
    x = rand(rng, 4, 5)
    check(lambda a: npx.dropout(a, p=0.5), lambda a: a, x, grad=False)   # graph: is_train=False


def test_dropout_in_training_and_always(rng):
    x = mnp.array(rand(rng, 50, 40, low=1, high=2))
    with autograd.record():            # record() trains by default
        y = npx.dropout(x, p=0.5)
    kept = y.asnumpy() != 0
    assert 0.3 < kept.mean() < 0.7
    assert_almost_equal(y.asnumpy()[kept], x.asnumpy()[kept] * 2, rtol=1e-6)
    z = npx.dropout(x, p=0.25, mode="always", axes=(1,)).asnumpy()
    assert np.all((z == 0).all(axis=1) | (z != 0).all(axis=1))    # one draw per row
    with autograd.predict_mode():
        assert_almost_equal(npx.dropout(x, p=0.5).asnumpy(), x.asnumpy())


def test_dropout_graph_follows_is_train(rng):
    x = rand(rng, 30, 30, low=1, high=2)
    outs, _ = run_graph(lambda a: npx.dropout(a, p=0.5), [x], train=True)
    assert 0.3 < (outs[0] != 0).mean() < 0.7
    outs, _ = run_graph(lambda a: npx.dropout(a, p=0.5), [x], train=False)
    assert_almost_equal(outs[0], x)


def test_dropout_bad_p():
    with pytest.raises(nbdl.AttrError, match="p="):
        npx.dropout(mnp.ones(3), p=1.5)


# -- layer_norm --------------------------------------------------------------------------------

def np_layer_norm(x, g, b, axis=-1, eps=1e-5):
    m = x.mean(axis=axis, keepdims=True)
    s = np.sqrt(x.var(axis=axis, keepdims=True) + eps)
    shp = [1] * x.ndim
    shp[axis] = -1
    return (x - m) / s * g.reshape(shp) + b.reshape(shp), m, s


@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((2, 4, 3), 1)])
def test_layer_norm(shape, axis, rng):
    x = rand(rng, *shape)
    g, b = rand(rng, shape[axis], low=0.5, high=1.5), rand(rng, shape[axis])
    check(lambda x, g, b: npx.layer_norm(x, g, b, axis=axis),
          lambda x, g, b: np_layer_norm(x, g, b, axis)[0], x, g, b, rtol=1e-4, atol=1e-4)
    out = npx.layer_norm(mnp.array(x), mnp.array(g), mnp.array(b), axis=axis,
                         output_mean_var=True)
    assert isinstance(out, list) and len(out) == 3
    for o, w in zip(out, np_layer_norm(x, g, b, axis)):
        assert_almost_equal(o.asnumpy(), w, rtol=1e-4, atol=1e-4)


# -- embedding -----------------------------------------------------------------------------------

def test_embedding(rng):
    ids = np.array([[0, 3, 3], [1, 9, -1]], dtype=np.int64)
    w = rand(rng, 5, 4)
    ref = lambda i, w: w[np.clip(i.astype(np.int64), 0, 4)]  # noqa: E731
    (out,), grads = check(lambda i, w: npx.embedding(i, w, input_dim=5, output_dim=4), ref, ids, w)
    want = np.zeros_like(w)
    head = np.random.RandomState(0).normal(size=out.shape).astype(np.float32)
    np.add.at(want, np.clip(ids, 0, 4).reshape(-1), head.reshape(-1, 4))
    assert_almost_equal(grads["a1"], want, rtol=1e-5, atol=1e-6)
    # dims from the weight; numpy ids keep their integer dtype
    got = npx.embedding(ids, mnp.array(w))
    assert_almost_equal(got.asnumpy(), ref(ids, w))
    check(lambda i, w: npx.embedding(i, w), ref, ids.astype(np.float32), w, grad=False,
          shaped=(True,))


def test_embedding_errors():
    with pytest.raises(nbdl.AttrError, match="sparse_grad"):
        npx.embedding(mnp.zeros(2), mnp.ones((3, 2)), sparse_grad=True)
    with pytest.raises(nbdl.AttrError, match="input_dim"):
        npx.embedding(nbdl.sym.var("i"), nbdl.sym.var("w"))
    with pytest.raises(nbdl.ShapeError, match="Embedding"):
        npx.embedding(mnp.zeros(2), mnp.ones((3, 2)), input_dim=4, output_dim=2)


# -- indexing ------------------------------------------------------------------------------------

def test_one_hot(rng):
    ids = np.array([[0, 2], [3, 1]], dtype=np.float32)
    check(lambda i: npx.one_hot(i, 4, on_value=2.0, off_value=-1.0),
          lambda i: np.where(np.eye(4)[i.astype(int)] == 1, 2.0, -1.0).astype(np.float32), ids,
          grad=False)
    assert npx.one_hot(mnp.array(ids), 4, dtype="int32").dtype == np.int32


@pytest.mark.parametrize("axis,keepdims", [(-1, False), (0, True)])
def test_pick(axis, keepdims, rng):
    x = rand(rng, 3, 4)
    n = x.shape[axis]
    idx = rng.randint(0, n, x.shape[1 - axis % 2]).astype(np.float32)

    def ref(x, i):
        out = np.take_along_axis(x, np.expand_dims(i.astype(int), axis), axis=axis)
        return out if keepdims else out.squeeze(axis)
    check(lambda x, i: npx.pick(x, i, axis=axis, keepdims=keepdims), ref, x, idx)
    got = npx.pick(mnp.array(x), idx.astype(np.int64), axis=axis, keepdims=keepdims)
    assert_almost_equal(got.asnumpy(), ref(x, idx))
    with pytest.raises(nbdl.AttrError, match="axis=None"):
        npx.pick(mnp.array(x), idx, axis=None)


@pytest.mark.parametrize("ret_typ", ["indices", "value", "both", "mask"])
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_topk(ret_typ, axis, rng):
    x = (rng.permutation(12).reshape(3, 4) * 0.5).astype(np.float32)

    def ref(x):
        flat = x.reshape(-1) if axis is None else x
        ax = 0 if axis is None else axis
        pos = np.take(np.argsort(-flat, axis=ax, kind="stable"), np.arange(2), axis=ax)
        vals = np.take_along_axis(flat, pos, axis=ax)
        if ret_typ == "mask":
            m = np.zeros_like(flat)
            np.put_along_axis(m, pos, 1, axis=ax)
            return m.reshape(x.shape)
        return {"indices": pos.astype(np.float32), "value": vals,
                "both": [vals, pos.astype(np.float32)]}[ret_typ]
    check(lambda a: npx.topk(a, axis=axis, k=2, ret_typ=ret_typ), ref, x,
          grad=ret_typ in ("value", "both"))


def test_topk_index_dtype(rng):
    out = npx.topk(mnp.array(rand(rng, 2, 5)), k=3, dtype="int64")
    assert out.dtype == np.int64 and out.shape == (2, 3)


# MXNet 2's codes (tests/ops/test_shape_npx_reshape.py has them all)
@pytest.mark.parametrize("shape,new,reverse,want", [
    ((2, 3, 4), (-2, -1), False, (2, 12)), ((2, 3, 4), (-5, -2), False, (6, 4)),
    ((2, 3, 4), (-4,), False, (2, 3, 4)), ((2, 6), (-2, -6, 2, -1), False, (2, 2, 3)),
    ((1, 6), (-3, -2), False, (6,)), ((2, 3, 4), (-1, -2), True, (6, 4))])
def test_reshape_codes(shape, new, reverse, want, rng):
    x = rand(rng, *shape)
    check(lambda a: npx.reshape(a, new, reverse=reverse), lambda a: a.reshape(want), x)


def test_batch_dot(rng):
    a, b = rand(rng, 3, 2, 4), rand(rng, 3, 5, 4)
    check(lambda a, b: npx.batch_dot(a, b, transpose_b=True),
          lambda a, b: a @ np.swapaxes(b, 1, 2), a, b, rtol=1e-4, atol=1e-5)


def test_mixing_symbols_and_ndarrays_is_an_error():
    with pytest.raises(nbdl.GraphError, match="Symbol"):
        npx.batch_dot(nbdl.sym.var("a"), mnp.ones((2, 2, 2)))


def test_namespace_exports():
    for name in npx.__all__:
        assert callable(getattr(npx, name)), name
    for name in ("convolution", "pooling", "batch_norm"):
        assert callable(getattr(npx, name))
