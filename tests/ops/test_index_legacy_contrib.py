"""batch_take, choose_element_0index, fill_element_0index, argmax_channel,
ravel_multi_index / unravel_index and the contrib index ops (arange_like,
index_array, index_copy, boolean_mask) against numpy references, with
integer cases, gradients, CPU vs the CUDA simulator and the errors."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.errors import ShapeError
from nbdl.ops.indexing import IndexOutOfRange
from nbdl.testing import (bind_and_run, check_consistency, check_numeric_gradient,
                          check_symbolic_forward)

sym, nd = nbdl.sym, nbdl.nd


def data(shape, dtype=np.float64, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(dtype)


# -- batch_take / choose_element_0index / fill_element_0index --------------------------------

@pytest.mark.parametrize("itype", [np.int32, np.float32])
def test_batch_take_clips(itype):
    a = data((3, 4))
    idx = np.array([5, -1, 2])
    out = nd.batch_take(nd.array(a), nd.array(idx, dtype=itype))
    np.testing.assert_allclose(out.asnumpy(), a[np.arange(3), np.clip(idx, 0, 3)])


def test_batch_take_int_data_and_3d():
    a = np.arange(12, dtype=np.int64).reshape(2, 2, 3)
    out = nd.batch_take(nd.array(a, dtype=np.int64), nd.array([[0, 2], [1, 1]], dtype=np.int32))
    np.testing.assert_array_equal(out.asnumpy(), a.reshape(4, 3)[np.arange(4), [0, 2, 1, 1]]
                                  .reshape(2, 2))
    with pytest.raises(ShapeError, match=r"batch_take: indices of shape \(3,\) must have one entry "
                                         r"per row of a"):
        nd.batch_take(nd.zeros((2, 3)), nd.zeros((3,)))


def test_choose_element_0index_is_pick():
    a = data((2, 3))
    out = nd.choose_element_0index(nd.array(a), nd.array([2.0, 0.0]))
    np.testing.assert_allclose(out.asnumpy(), a[[0, 1], [2, 0]])


def test_fill_element_0index():
    a = data((3, 3))
    out = nd.fill_element_0index(nd.array(a), nd.array([7.0, 8.0, 9.0]), nd.array([2, 0, 5]))
    want = a.copy()
    want[0, 2], want[1, 0] = 7, 8          # row 2: index 5 is out of range, unchanged
    np.testing.assert_allclose(out.asnumpy(), want)
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = nd.fill_element_0index(nd.array(i, dtype=np.int32), nd.array([7, 8], dtype=np.int32),
                                 nd.array([1, 1], dtype=np.int32))
    np.testing.assert_array_equal(out.asnumpy(), [[0, 7, 2], [3, 8, 5]])
    with pytest.raises(ShapeError, match=r"fill_element_0index: mhs has shape \(3,\)"):
        nd.fill_element_0index(nd.zeros((2, 3)), nd.zeros((3,)), nd.zeros((2,)))


def test_argmax_channel():
    x = data((2, 3, 4))
    np.testing.assert_array_equal(nd.argmax_channel(nd.array(x)).asnumpy(), np.argmax(x, 1))
    np.testing.assert_array_equal(nd.array(x[:, :, 0]).argmax_channel().asnumpy(),
                                  np.argmax(x[:, :, 0], 1))
    with pytest.raises(ShapeError, match="argmax_channel: data must have at least 2 dims"):
        nd.argmax_channel(nd.zeros((3,)))


# -- ravel_multi_index / unravel_index ----------------------------------------------------------

def test_ravel_unravel():
    a = np.array([[3, 6, 6], [4, 5, 1]])
    for shape in [(7, 6), (-1, 6)]:
        out = nd.ravel_multi_index(nd.array(a), shape=shape)
        np.testing.assert_array_equal(out.asnumpy(), np.ravel_multi_index(a, (7, 6)))
    flat = np.array([22, 41, 37], np.int64)
    out = nd.unravel_index(nd.array(flat, dtype=np.int64), shape=(7, 6))
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.asnumpy(), np.array(np.unravel_index(flat, (7, 6))))
    # MXNet does not wrap the first coordinate
    out = nd._unravel_index(nd.array([99.0]), shape=(7, 6))
    np.testing.assert_array_equal(out.asnumpy(), [[16], [3]])
    out = nd._ravel_multi_index(nd.array(a, dtype=np.int32), shape=(7, 6))
    assert out.dtype == np.int32
    with pytest.raises(ShapeError, match=r"ravel_multi_index: data of shape \(2, 3\) must have "
                                         r"len\(shape\)=3 rows"):
        nd.ravel_multi_index(nd.array(a), shape=(2, 3, 4))
    with pytest.raises(ShapeError, match="unravel_index: shape=.0, 2. must hold positive sizes"):
        nd.unravel_index(nd.array(flat), shape=(0, 2))


# -- contrib ----------------------------------------------------------------------------------

def test_arange_like():
    z = nd.zeros((2, 3))
    np.testing.assert_allclose(nd.contrib.arange_like(z).asnumpy(), np.arange(6.).reshape(2, 3))
    np.testing.assert_allclose(nd.contrib.arange_like(z, start=1, step=2, axis=-1).asnumpy(),
                               [1, 3, 5])
    np.testing.assert_allclose(nd.contrib.arange_like(z, repeat=2).asnumpy(),
                               (np.arange(6) // 2).reshape(2, 3))
    out = nd.contrib.arange_like(nd.zeros((4,), dtype=np.int32), start=2)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), [2, 3, 4, 5])
    s = sym.contrib.arange_like(sym.var("x"), axis=1)
    assert s.infer_shape(x=(2, 5))[1] == [(5,)]
    assert nd._contrib_arange_like(z, step=0.5).asnumpy()[1, 2] == 2.5


def test_index_array():
    out = nd.contrib.index_array(nd.zeros((2, 3)))
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out.asnumpy(), np.stack(np.indices((2, 3)), -1))
    out = nd.contrib.index_array(nd.zeros((2, 3, 2)), axes=(2, 0))
    ind = np.indices((2, 3, 2))
    np.testing.assert_array_equal(out.asnumpy(), np.stack([ind[2], ind[0]], -1))
    with pytest.raises(ShapeError, match="_contrib_index_array: axes entry=3 is out of range"):
        nd.contrib.index_array(nd.zeros((2, 3)), axes=(3,))


def test_index_copy_forward_gradient():
    old, new = data((4, 2)), data((2, 2), seed=1)
    idx = np.array([2, 0])
    want = old.copy()
    want[idx] = new
    s = sym.contrib.index_copy(sym.var("old"), sym.var("idx"), sym.var("new"))
    check_symbolic_forward(s, {"old": old, "idx": idx.astype(np.int64), "new": new}, [want])
    check_numeric_gradient(s, {"old": old, "idx": idx.astype(np.int32), "new": new},
                           grad_nodes=["old", "new"])
    out = nd.contrib.index_copy(nd.zeros((3,), dtype=np.int32), nd.array([1]),
                                nd.array([5], dtype=np.int32))
    np.testing.assert_array_equal(out.asnumpy(), [0, 5, 0])
    with pytest.raises(IndexOutOfRange):
        nd.contrib.index_copy(nd.zeros((3, 2)), nd.array([3]), nd.zeros((1, 2)))
    with pytest.raises(ShapeError, match=r"_contrib_index_copy: new_tensor of shape \(1, 3\)"):
        nd.contrib.index_copy(nd.zeros((3, 2)), nd.array([0]), nd.zeros((1, 3)))


@pytest.mark.cuda
@pytest.mark.parametrize("req", ["write", "add"])
def test_index_copy_backward_op(req):
    """MXNet's _contrib_backward_index_copy: the copied rows zeroed for old,
    gathered for new (duplicates gather the same row)."""
    g, old, new = data((5, 2)), data((5, 2), seed=1), data((3, 2), seed=2)
    idx = np.array([4, 1, 4], np.int64)
    s = sym._contrib_backward_index_copy(sym.var("g"), sym.var("old"), sym.var("idx"),
                                         sym.var("new"))
    want_old = g.copy()
    want_old[idx] = 0
    outs = check_symbolic_forward(s, {"g": g, "old": old, "idx": idx, "new": new},
                                  [want_old, np.zeros(3), g[idx]])
    assert outs[1].dtype == np.int64
    s1 = sym.contrib.index_copy(sym.var("old"), sym.var("idx"), sym.var("new"))
    init = {"old": data((5, 2), seed=3), "new": data((3, 2), seed=4)}
    _, _, grads, _ = bind_and_run(s1, {"old": old, "idx": idx, "new": new},
                                  grad_names=["old", "new"], grad_req=req, grad_init=init,
                                  out_grads=[g], backward=True)
    base = init if req == "add" else {k: 0 for k in init}
    np.testing.assert_allclose(grads["old"], base["old"] + want_old)
    np.testing.assert_allclose(grads["new"], base["new"] + g[idx])
    check_consistency(s, {"g": g.astype(np.float32), "old": old.astype(np.float32), "idx": idx,
                          "new": new.astype(np.float32)}, grad=False)


def test_boolean_mask_eager_and_gradient():
    x = nd.array(data((3, 2)))
    x.attach_grad()
    with autograd.record():
        y = nd.contrib.boolean_mask(x, nd.array([1.0, 0.0, 1.0]))
    g = data((2, 2), seed=2)
    y.backward(nd.array(g))
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy()[[0, 2]])
    want = np.zeros((3, 2))
    want[[0, 2]] = g
    np.testing.assert_allclose(x.grad.asnumpy(), want)
    empty = nd.contrib.boolean_mask(x, nd.zeros((3,), dtype=np.int32))
    assert empty.shape == (0, 2)
    assert nd._contrib_boolean_mask(x, nd.array([0, 1, 0])).shape == (1, 2)


def test_boolean_mask_graph_is_refused():
    s = sym.contrib.boolean_mask(sym.var("a"), sym.var("m"))
    with pytest.raises(ShapeError, match="_contrib_boolean_mask: the output shape depends on the "
                                         "values of index"):
        s.infer_shape(a=(3, 2), m=(3,))
    with pytest.raises(ShapeError, match=r"index must be 1-d with data.shape\[0\] entries"):
        nd.contrib.boolean_mask(nd.zeros((3, 2)), nd.zeros((2,)))


# -- CPU vs CUDA (simulator) ------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("make,loc", [
    (lambda: sym.batch_take(sym.var("a"), sym.var("i")),
     {"a": data((3, 4), np.float32), "i": np.array([1, 5, -2], np.int32)}),
    (lambda: sym.fill_element_0index(sym.var("a"), sym.var("m"), sym.var("i")),
     {"a": data((2, 3), np.float32), "m": data((2,), np.float32), "i": np.array([2, 0], np.int32)}),
    (lambda: sym.argmax_channel(sym.var("a")), {"a": data((2, 3, 2), np.float32)}),
    (lambda: sym.ravel_multi_index(sym.var("a"), shape=(3, 4)),
     {"a": np.array([[1, 2], [3, 0]], np.float32)}),
    (lambda: sym.unravel_index(sym.var("a"), shape=(3, 4)), {"a": np.array([5, 11], np.int64)}),
    (lambda: sym.contrib.arange_like(sym.var("a"), start=1, repeat=2), {"a": data((2, 3), np.float32)}),
    (lambda: sym.contrib.index_array(sym.var("a"), axes=(1,)), {"a": data((2, 3), np.float32)}),
    (lambda: sym.contrib.index_copy(sym.var("o"), sym.var("i"), sym.var("n")),
     {"o": data((3, 2), np.float32), "i": np.array([2], np.int32), "n": data((1, 2), np.float32)}),
])
def test_cpu_vs_cuda(make, loc):
    check_consistency(make(), loc, grad=False)


def test_batch_take_refuses_a_gradient_through_it():
    y = sym.batch_take(sym.var("x"), sym.var("idx"))
    with pytest.raises(nbdl.GraphError, match="batch_take .* not differentiable"):
        y.simple_bind(nbdl.cpu(), x=(4, 3), idx=(4,), type_dict={"idx": np.int32})
    # stopped before it, or no gradient asked: it binds and runs
    exe = sym.BlockGrad(y).simple_bind(nbdl.cpu(), x=(4, 3), idx=(4,),
                                       type_dict={"idx": np.int32})
    exe.forward(is_train=True)
    exe.backward()
    exe = y.simple_bind(nbdl.cpu(), grad_req="null", x=(4, 3), idx=(4,),
                        type_dict={"idx": np.int32})
    assert exe.forward()[0].shape == (4,)
