"""stack, diag, slice_like and broadcast_like against numpy references, their
gradients, integer data, CPU vs the CUDA simulator, and their errors; MXNet
1.x's ``inplace=`` on NDArray/Symbol flatten, expand_dims and squeeze; the
nbdl.np spellings (stack, diag, diagonal)."""
import numpy as np
import pytest

import nbdl
from nbdl.errors import ShapeError
from nbdl.testing import check_consistency, check_numeric_gradient, check_symbolic_forward

sym, nd = nbdl.sym, nbdl.nd


def data(shape, dtype=np.float64, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(dtype)


# -- stack ---------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_stack_forward(axis):
    xs = {f"x{i}": data((2, 3), seed=i) for i in range(3)}
    s = sym.stack(*[sym.var(k) for k in xs], axis=axis)
    check_symbolic_forward(s, xs, [np.stack(list(xs.values()), axis=axis)])


def test_stack_int_and_eager():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = nd.stack(nd.array(a, dtype=np.int32), nd.array(a + 10, dtype=np.int32), axis=1)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), np.stack([a, a + 10], axis=1))


def test_stack_gradient():
    s = sym.stack(sym.var("a"), sym.var("b"), axis=1)
    check_numeric_gradient(s, {"a": data((2, 3)), "b": data((2, 3), seed=1)})


def test_stack_errors():
    with pytest.raises(ShapeError, match=r"stack: arg1 has shape \(2, 4\)"):
        nd.stack(nd.zeros((2, 3)), nd.zeros((2, 4)))
    with pytest.raises(ShapeError, match="stack: axis=3 is out of range"):
        nd.stack(nd.zeros((2, 3)), nd.zeros((2, 3)), axis=3)


# -- diag ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,k,a1,a2", [
    ((3, 4), 0, 0, 1), ((3, 4), 1, 0, 1), ((3, 4), -2, 0, 1), ((2, 3, 4), 1, 2, 0),
    ((2, 3, 4), -1, 1, -1),
])
def test_diag_of_matrix(shape, k, a1, a2):
    x = data(shape)
    s = sym.diag(sym.var("x"), k=k, axis1=a1, axis2=a2)
    check_symbolic_forward(s, {"x": x}, [np.diagonal(x, k, a1, a2)])


@pytest.mark.parametrize("k", [0, 1, -2])
def test_diag_of_vector(k):
    x = data((3,))
    check_symbolic_forward(sym.diag(sym.var("x"), k=k), {"x": x}, [np.diag(x, k)])


@pytest.mark.parametrize("shape,k,a1,a2", [((3,), 1, 0, 1), ((3, 4), -1, 0, 1),
                                           ((2, 3, 4), 1, 2, 0)])
def test_diag_gradient(shape, k, a1, a2):
    check_numeric_gradient(sym.diag(sym.var("x"), k=k, axis1=a1, axis2=a2), {"x": data(shape)})


def test_diag_int_and_fluent():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    x = nd.array(a, dtype=np.int64)
    np.testing.assert_array_equal(nd.diag(x, k=1).asnumpy(), np.diag(a, 1))
    np.testing.assert_array_equal(x.diag(k=-1).asnumpy(), np.diag(a, -1))
    v = nd.array([1, 2], dtype=np.int32)
    np.testing.assert_array_equal(nd.diag(v).asnumpy(), np.diag([1, 2]))


def test_diag_errors():
    with pytest.raises(ShapeError, match=r"diag: the diagonal k=7 does not exist"):
        nd.diag(nd.zeros((3, 4)), k=7)
    with pytest.raises(ShapeError, match="diag: axis1=0 and axis2=-2 name the same axis"):
        nd.diag(nd.zeros((3, 4)), axis1=0, axis2=-2)
    with pytest.raises(ShapeError, match="diag: diag needs a 1-d or larger input"):
        op = nbdl.ops.get_op("diag")
        op.infer_shape(op.parse_attrs({})[0], [()], [None])


# -- slice_like ------------------------------------------------------------------------------

@pytest.mark.parametrize("dshape,lshape,axes", [
    ((3, 4), (2, 3), ()), ((3, 4), (2, 3), (-1,)), ((3, 4, 2), (2, 3, 1), (0, 1)),
    ((3, 4), (2, 3, 7), (0,)),
])
def test_slice_like_forward(dshape, lshape, axes):
    x = data(dshape)
    out = x
    for a in (axes or range(len(dshape))):
        out = np.take(out, np.arange(lshape[a]), axis=a)
    s = sym.slice_like(sym.var("x"), sym.var("like"), axes=axes)
    check_symbolic_forward(s, {"x": x, "like": np.zeros(lshape)}, [out])


def test_slice_like_gradient_and_int():
    s = sym.slice_like(sym.var("x"), sym.var("like"), axes=(0, 1))
    check_numeric_gradient(s, {"x": data((3, 4, 2)), "like": np.zeros((2, 3, 1))},
                           grad_nodes=["x"])
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = nd.slice_like(nd.array(a, dtype=np.int32), nd.zeros((2, 2)))
    np.testing.assert_array_equal(out.asnumpy(), a[:2, :2])


def test_slice_like_errors():
    with pytest.raises(ShapeError, match="slice_like: data .2-d. and shape_like .3-d. must have "
                                         "the same rank"):
        nd.slice_like(nd.zeros((3, 4)), nd.zeros((2, 3, 1)))
    with pytest.raises(ShapeError, match="slice_like: axis 0 of shape_like has size 5, more than "
                                         "data's 3"):
        nd.slice_like(nd.zeros((3, 4)), nd.zeros((5, 3)))


# -- broadcast_like ----------------------------------------------------------------------------

def test_broadcast_like_forward_and_gradient():
    x = data((1, 3))
    s = sym.broadcast_like(sym.var("x"), sym.var("y"))
    check_symbolic_forward(s, {"x": x, "y": np.zeros((4, 3))}, [np.broadcast_to(x, (4, 3))])
    s = sym.broadcast_like(sym.var("x"), sym.var("y"), lhs_axes=(0,), rhs_axes=(1,))
    check_symbolic_forward(s, {"x": x, "y": np.zeros((5, 2))}, [np.broadcast_to(x, (2, 3))])
    check_numeric_gradient(s, {"x": x, "y": np.zeros((5, 2))}, grad_nodes=["x"])


def test_broadcast_like_int():
    a = np.array([[1], [2]], np.int32)
    out = nd.broadcast_like(nd.array(a, dtype=np.int32), nd.zeros((2, 3)))
    np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(a, (2, 3)))


def test_broadcast_like_errors():
    with pytest.raises(ShapeError, match="broadcast_like: axis 0 of lhs has size 2, which cannot "
                                         "be broadcast to 4"):
        nd.broadcast_like(nd.zeros((2, 3)), nd.zeros((4, 3)))
    with pytest.raises(ShapeError, match="broadcast_like: lhs_axes=.0,. and rhs_axes=None must "
                                         "be given together"):
        nd.broadcast_like(nd.zeros((1, 3)), nd.zeros((4, 3)), lhs_axes=(0,))


def test_broadcast_to_keeps_zero_axes_and_lists():
    x = nd.array(data((1, 3)))
    assert nd.broadcast_to(x, shape=(2, 0)).shape == (2, 3)
    assert nd.broadcast_to(x, shape=[4, 3]).shape == (4, 3)


# -- CPU vs CUDA (simulator) ------------------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("make,shapes", [
    (lambda: sym.stack(sym.var("a"), sym.var("b"), axis=1), {"a": (2, 3), "b": (2, 3)}),
    (lambda: sym.diag(sym.var("a"), k=1), {"a": (3, 4)}),
    (lambda: sym.diag(sym.var("a"), k=-1), {"a": (3,)}),
    (lambda: sym.slice_like(sym.var("a"), sym.var("b")), {"a": (3, 4), "b": (2, 3)}),
    (lambda: sym.broadcast_like(sym.var("a"), sym.var("b")), {"a": (1, 3), "b": (2, 3)}),
])
def test_cpu_vs_cuda(make, shapes):
    check_consistency(make(), {k: data(v, np.float32, i) for i, (k, v) in enumerate(shapes.items())})


# -- inplace= on the fluent methods -------------------------------------------------------------

def test_inplace_methods_share_memory():
    x = nd.array(np.arange(6.0).reshape(2, 3, 1))
    y = x.flatten(inplace=True)
    y[0, 0] = 9
    assert y.shape == (2, 3) and x.asnumpy()[0, 0, 0] == 9
    assert x.squeeze(inplace=True).shape == (2, 3)
    z = x.expand_dims(0, inplace=True)
    z[0, 1, 0, 0] = 7
    assert z.shape == (1, 2, 3, 1) and x.asnumpy()[1, 0, 0] == 7
    w = x.squeeze(axis=2)          # not in place: a copy
    w[0, 0] = -1
    assert x.asnumpy()[0, 0, 0] == 9
    x.attach_grad()
    with nbdl.autograd.record():       # recorded: the ops, so the gradient flows
        y = (x.flatten(inplace=True) * 2).sum() + (x.squeeze(inplace=True) * 3).sum() \
            + (x.expand_dims(0, inplace=True) * 4).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.full((2, 3, 1), 9.0))
    assert sym.var("a").flatten(inplace=True).infer_shape(a=(2, 3, 4))[1] == [(2, 12)]
    assert sym.var("a").expand_dims(axis=1, inplace=True).infer_shape(a=(2, 3))[1] == [(2, 1, 3)]
    assert sym.var("a").squeeze(inplace=False).infer_shape(a=(2, 1))[1] == [(2,)]


# -- nbdl.np --------------------------------------------------------------------------------------

def test_np_spellings():
    a = data((2, 3))
    x = nbdl.np.array(a)
    np.testing.assert_allclose(nbdl.np.stack([x, x], axis=-1).asnumpy(), np.stack([a, a], -1))
    np.testing.assert_allclose(nbdl.np.diag(x, 1).asnumpy(), np.diag(a, 1))
    np.testing.assert_allclose(nbdl.np.diagonal(x, offset=-1, axis1=1, axis2=0).asnumpy(),
                               np.diagonal(a, -1, 1, 0))
    s = nbdl.np.stack([sym.var("p"), sym.var("q")], axis=0)
    assert s.infer_shape(p=(2, 3), q=(2, 3))[1] == [(2, 2, 3)]
    with pytest.raises(ShapeError, match="diag: input must be 1-d or 2-d"):
        nbdl.np.diag(nbdl.np.zeros((2, 2, 2)))


# -- req: REQ_ADD accumulates, REQ_NULL leaves the output alone --------------------------------

def _run_req(device, name, attrs, inputs, out_shape, req):
    from nbdl.executor.interpret import run_op
    from nbdl.ops import get_op
    dev = nbdl.Device(device)
    op = get_op(name)
    base = data(out_shape, np.float32, seed=9)
    out = dev.from_numpy(base.copy())
    run_op(op, op.parse_attrs(attrs)[0], [dev.from_numpy(x) for x in inputs], [out_shape],
           [np.float32], dev, outputs=[out], req=[req])
    return base, nbdl.Device.to_numpy(out)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
@pytest.mark.parametrize("name,attrs,inputs,want", [
    ("stack", {"num_args": 2, "axis": 1},
     [np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)],
     np.stack([np.ones((2, 2)), np.zeros((2, 2))], 1)),
    ("diag", {"k": 1}, [np.arange(2, dtype=np.float32)], np.diag(np.arange(2.0), 1)),
    ("_backward_diag", {}, [np.arange(2, dtype=np.float32), np.zeros((2, 3), np.float32)],
     np.array([[0.0, 0, 0], [0, 1, 0]])),
    ("slice_like", {}, [np.arange(6, dtype=np.float32).reshape(2, 3), np.zeros((1, 2), np.float32)],
     np.array([[0.0, 1]])),
    ("broadcast_like", {}, [np.ones((1, 2), np.float32), np.zeros((3, 2), np.float32)],
     np.ones((3, 2))),
    ("gather_nd", {}, [np.arange(4, dtype=np.float32), np.array([[3, 3]], np.float32)],
     np.array([3.0, 3])),
    ("_backward_gather_nd", {"shape": (3,)}, [np.ones(2, np.float32),
                                              np.array([[1, 1]], np.float32)],
     np.array([0.0, 2, 0])),
])
def test_req_add_and_null(device, name, attrs, inputs, want):
    from nbdl.ops import REQ_ADD, REQ_NULL
    base, got = _run_req(device, name, attrs, inputs, want.shape, REQ_ADD)
    np.testing.assert_allclose(got, base + want, rtol=1e-6)
    base, got = _run_req(device, name, attrs, inputs, want.shape, REQ_NULL)
    np.testing.assert_array_equal(got, base)


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.cuda)])
def test_broadcast_to_and_axis_int(device):
    dev = nbdl.Device(device)
    a = np.array([[1], [2]], np.int32)
    out = nd.broadcast_to(nd.array(a, dtype=np.int32, ctx=dev), shape=(0, 3))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(a, (2, 3)))
    out = nd.broadcast_axis(nd.array(a.T, dtype=np.int64, ctx=dev), axis=0, size=2)
    np.testing.assert_array_equal(out.asnumpy(), np.broadcast_to(a.T, (2, 2)))


def test_broadcast_like_empty_axes_are_refused():
    lhs, rhs = nbdl.nd.ones((2, 1)), nbdl.nd.ones((2, 3))
    with pytest.raises(nbdl.ShapeError, match="must not be empty"):
        nbdl.nd.broadcast_like(lhs, rhs, lhs_axes=(), rhs_axes=())
    assert nbdl.nd.broadcast_like(lhs, rhs, lhs_axes=(1,), rhs_axes=(1,)).shape == (2, 3)
