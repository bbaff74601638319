"""nbdl.np against numpy: each function on NDArrays (eager, and its
autograd gradient) and on Symbols (bound and run, with and without declared
variable shapes), which must give the same numbers."""
import numpy as np
import pytest

import nbdl
import nbdl.np as mnp
from nbdl import autograd
from nbdl.testing import assert_almost_equal, check_numeric_gradient


def sym_run(fn, arrays, shaped, head=None, kwargs=None):
    """fn on variables, bound and run; (outputs, input gradients for head)."""
    names = [f"a{i}" for i in range(len(arrays))]
    vs = [nbdl.sym.var(n, shape=a.shape if shaped else None) for n, a in zip(names, arrays)]
    out = fn(*vs, **(kwargs or {}))
    many = isinstance(out, list)
    sym = nbdl.sym.Group(out) if many else out
    args = {n: nbdl.nd.array(a, dtype=a.dtype) for n, a in zip(names, arrays)}
    grads = None
    if head is not None:
        grads = {n: nbdl.nd.zeros(a.shape, dtype=a.dtype) for n, a in zip(names, arrays)}
    ex = nbdl.bind(sym, nbdl.cpu(), args, args_grad=grads,
                   grad_req="write" if head is not None else "null")
    outs = [o.asnumpy() for o in ex.forward(is_train=head is not None)]
    if head is None:
        return outs, None
    ex.backward([nbdl.nd.array(h.reshape(o.shape), dtype=h.dtype) for h, o in zip(head, outs)])
    return outs, [grads[n].asnumpy() for n in names]


def check(fn, ref, *arrays, rtol=1e-5, atol=1e-6, grad=True, symbols=(False, True), seed=0,
          **kwargs):
    """fn(*arrays, **kwargs) == ref(...) eagerly and on Symbols; eager autograd
    gradients == the bound graph's gradients."""
    want = ref(*arrays, **kwargs)
    wants = want if isinstance(want, list) else [want]
    xs = [mnp.array(a) for a in arrays]
    got = fn(*xs, **kwargs)
    gots = got if isinstance(got, list) else [got]
    assert len(gots) == len(wants)
    for g, w in zip(gots, wants):
        w = np.asarray(w)
        assert isinstance(g, nbdl.NDArray)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert_almost_equal(g.asnumpy(), w, rtol, atol, names=("eager", "numpy"))
    rng = np.random.RandomState(seed)
    heads = [rng.normal(size=np.asarray(w).shape).astype(np.asarray(g.asnumpy()).dtype)
             for g, w in zip(gots, wants)]
    floats = all(np.issubdtype(a.dtype, np.floating) for a in arrays) and all(
        np.issubdtype(h.dtype, np.floating) for h in heads)
    eager_grads = None
    if grad and floats:
        xs = [mnp.array(a) for a in arrays]
        for x in xs:
            x.attach_grad()
        with autograd.record():
            out = fn(*xs, **kwargs)
        outs = out if isinstance(out, list) else [out]
        autograd.backward(outs, [mnp.array(h) for h in heads])
        eager_grads = [x.grad.asnumpy() for x in xs]
    for shaped in symbols:
        souts, sgrads = sym_run(fn, arrays, shaped, heads if eager_grads else None, kwargs)
        for s, w in zip(souts, wants):
            w = np.asarray(w)
            # a graph has no 0-d arrays: numpy's () is (1,) there
            assert s.shape == w.shape or (w.shape == () and s.shape == (1,)), (s.shape, w.shape)
            assert_almost_equal(s.reshape(w.shape), w, rtol, atol, names=("symbol", "numpy"))
        if eager_grads:
            for e, s in zip(eager_grads, sgrads):
                assert_almost_equal(s, e, rtol, atol, names=("symbol grad", "eager grad"))
    return gots, eager_grads


def rand(rng, *shape, dtype=np.float32, low=-2, high=2):
    return rng.uniform(low, high, shape).astype(dtype)


# -- creation --------------------------------------------------------------------------

@pytest.mark.cuda
def test_creation_defaults_and_devices():
    for fn, args, want in [(mnp.zeros, ((2, 3),), np.zeros((2, 3))), (mnp.ones, (4,), np.ones(4)),
                           (mnp.full, ((2, 2), 7.5), np.full((2, 2), 7.5)),
                           (mnp.arange, (2, 11, 3), np.arange(2, 11, 3)),
                           (mnp.arange, (5,), np.arange(5)),
                           (mnp.linspace, (0, 1, 5), np.linspace(0, 1, 5)),
                           (mnp.eye, (3, 4, 1), np.eye(3, 4, 1)), (mnp.identity, (2,), np.eye(2))]:
        out = fn(*args)
        assert out.dtype == np.float32 and out.shape == want.shape
        assert_almost_equal(out.asnumpy(), want)
    assert mnp.empty((2, 0)).shape == (2, 0)
    assert mnp.zeros((), dtype="float64").shape == ()
    assert mnp.zeros(3, device=nbdl.cpu()).device == nbdl.cpu()
    assert mnp.ones(3, ctx=nbdl.gpu(0)).device == nbdl.gpu(0)
    assert mnp.arange(3, dtype=np.int32).dtype == np.int32
    vals, step = mnp.linspace(0, 2, 4, endpoint=False, retstep=True)
    assert step == 0.5 and vals.asnumpy().tolist() == [0, 0.5, 1, 1.5]


@pytest.mark.cuda
def test_array_dtypes():
    assert mnp.array([1, 2]).dtype == np.float32            # MXNet's np default
    assert mnp.array(np.arange(3)).dtype == np.int64        # a numpy array keeps its dtype
    assert mnp.array(2.5).shape == ()
    x = mnp.array(np.ones((2, 2), np.float64))
    assert mnp.array(x).dtype == np.float64
    assert mnp.array(x, dtype="float32").dtype == np.float32
    y = mnp.array(x)
    y[:] = 3
    assert x.asnumpy()[0, 0] == 1                           # a copy
    assert mnp.array(x, copy=False) is x
    assert mnp.array(x, device=nbdl.gpu(0)).device == nbdl.gpu(0)


def test_like_functions(rng):
    a = rand(rng, 2, 3)
    for fn, args, want in [(mnp.zeros_like, (), np.zeros_like(a)),
                           (mnp.ones_like, (), np.ones_like(a)),
                           (mnp.full_like, (-3.5,), np.full_like(a, -3.5)),
                           (mnp.full_like, (np.inf,), np.full_like(a, np.inf))]:
        check(lambda x, fn=fn, args=args: fn(x, *args), lambda x: want, a, grad=False)
    assert mnp.zeros_like(mnp.array(a), dtype="float64").dtype == np.float64
    s = mnp.ones_like(nbdl.sym.var("x"), dtype="float64")
    out = s.eval(ctx=nbdl.cpu(), x=nbdl.nd.array(a))[0]
    assert out.dtype == np.float64 and np.all(out.asnumpy() == 1)


def test_creation_errors():
    with pytest.raises(nbdl.ShapeError, match="negative"):
        mnp.zeros((2, -1))
    with pytest.raises(nbdl.AttrError, match="order"):
        mnp.ones(3, order="F")
    with pytest.raises(nbdl.AttrError, match="step"):
        mnp.arange(0, 3, 0)
    with pytest.raises(nbdl.DeviceError, match="disagree"):
        mnp.zeros(2, device=nbdl.cpu(), ctx=nbdl.gpu(0))
    with pytest.raises(nbdl.DTypeError):
        mnp.array(np.ones(2, np.complex64))
    with pytest.raises(nbdl.AttrError, match="device"):
        mnp.zeros_like(nbdl.sym.var("x"), device=nbdl.cpu())


# -- elementwise ------------------------------------------------------------------------

BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "power", "maximum", "minimum",
          "equal", "not_equal", "greater", "less", "greater_equal", "less_equal"]
CMP = {"equal", "not_equal", "greater", "less", "greater_equal", "less_equal"}


def np_binary(name):
    f = getattr(np, name)
    return (lambda a, b: f(a, b).astype(np.float32)) if name in CMP else f


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)),
                                    ((1,), (2, 2)), ((2, 0), (1,))])
def test_binary_broadcast(name, shapes, rng):
    a = rand(rng, *shapes[0], low=0.5)
    b = rand(rng, *shapes[1], low=0.5)
    if name in CMP and a.size:
        b = np.where(rng.rand(*b.shape) < 0.3, a.reshape(-1)[0], b).astype(np.float32)
    check(getattr(mnp, name), np_binary(name), a, b, rtol=1e-4, atol=1e-5,
          grad=name not in CMP)


@pytest.mark.parametrize("name", BINARY)
def test_binary_scalars(name, rng):
    a = rand(rng, 2, 3, low=0.5)
    ref = np_binary(name)
    for s in (1.5, 2, np.float32(0.75)):
        check(lambda x: getattr(mnp, name)(x, s), lambda x: ref(x, np.float32(s)), a,
              rtol=1e-4, atol=1e-5, grad=name not in CMP)
        check(lambda x: getattr(mnp, name)(s, x), lambda x: ref(np.float32(s), x), a,
              rtol=1e-4, atol=1e-5, grad=name not in CMP)
    both = getattr(mnp, name)(3, 2)
    assert both.shape == () and both.item() == float(getattr(np, name)(3, 2))


def test_binary_numpy_operand_takes_ndarray_dtype(rng):
    a = rand(rng, 2, 3)
    out = mnp.add(mnp.array(a), np.ones((2, 3), np.float64))
    assert out.dtype == np.float32
    assert_almost_equal(out.asnumpy(), a + 1)


def test_binary_errors(rng):
    with pytest.raises(nbdl.ShapeError):
        mnp.add(mnp.ones((2, 3)), mnp.ones((4,)))
    with pytest.raises(nbdl.DTypeError):
        mnp.add(mnp.ones(3), mnp.ones(3, dtype="float64"))
    with pytest.raises(nbdl.GraphError, match="Symbol"):
        mnp.add(nbdl.sym.var("x"), mnp.ones(3))


UNARY = ["negative", "abs", "absolute", "exp", "log", "sqrt", "square", "tanh", "sin", "cos"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("shape", [(2, 3), (1,), (0, 2)])
def test_unary(name, shape, rng):
    low = 0.2 if name in ("log", "sqrt") else -2
    check(getattr(mnp, name), getattr(np, name), rand(rng, *shape, low=low), rtol=1e-5, atol=1e-6)
    assert_almost_equal(getattr(mnp, name)(0.7).asnumpy(), getattr(np, name)(0.7))


@pytest.mark.parametrize("lo,hi", [(-0.5, 1.0), (None, 0.3), (-0.1, None)])
def test_clip_scalars(lo, hi, rng):
    check(lambda x: mnp.clip(x, lo, hi), lambda x: np.clip(x, lo, hi), rand(rng, 3, 4))


def test_clip_array_bounds(rng):
    a, lo, hi = rand(rng, 3, 4), rand(rng, 4, low=-1, high=0), rand(rng, 3, 1, low=0, high=1)
    check(mnp.clip, np.clip, a, lo, hi)
    with pytest.raises(nbdl.AttrError, match="both be None"):
        mnp.clip(mnp.ones(2), None, None)


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3), (2, 3)), ((2, 3), (3,), (2, 1)),
                                    ((3,), (2, 3), ()), ((1, 3), (2, 1), (3,))])
def test_where(shapes, rng):
    cond = (rng.rand(*shapes[0]) > 0.5).astype(np.float32)
    x, y = rand(rng, *shapes[1]), rand(rng, *shapes[2])
    check(mnp.where, np.where, cond, x, y)


def test_where_scalars(rng):
    cond = (rng.rand(2, 3) > 0.5).astype(np.float32)
    x = rand(rng, 2, 3)
    check(lambda c, a: mnp.where(c, a, 0.0), lambda c, a: np.where(c, a, np.float32(0)), cond, x)
    check(lambda c: mnp.where(c, 1.0, -1.0), lambda c: np.where(c, 1, -1).astype(np.float32),
          cond, grad=False)
    check(lambda a: mnp.where(a > 0, a, 0.5 * a), lambda a: np.where(a > 0, a, 0.5 * a), x)


def test_where_broadcast_fallback_gradient(rng):
    """Unknown shapes: the zero-broadcast composition is differentiated too."""
    y = mnp.where(nbdl.sym.var("c"), nbdl.sym.var("x"), nbdl.sym.var("y"))
    check_numeric_gradient(y, {"c": (rng.rand(2, 3) > 0.5).astype(np.float64),
                               "x": rng.normal(size=(3,)), "y": rng.normal(size=(2, 1))},
                           grad_nodes=["x", "y"])


# -- reductions -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "amax", "amin"])
@pytest.mark.parametrize("shape,axis,keepdims", [((2, 3, 4), None, False), ((2, 3, 4), 1, False),
                                                 ((2, 3, 4), (0, 2), True), ((2, 3, 4), -1, True),
                                                 ((5,), 0, False), ((5,), None, True),
                                                 ((2, 3), (), False)])
def test_reductions(name, shape, axis, keepdims, rng):
    a = rand(rng, *shape, low=0.5, high=1.5)
    check(lambda x: getattr(mnp, name)(x, axis=axis, keepdims=keepdims),
          lambda x: getattr(np, name)(x, axis=axis, keepdims=keepdims), a, rtol=1e-5, atol=1e-6)


def test_reduction_dtype_and_0d(rng):
    a = rand(rng, 3, 2)
    out = mnp.sum(mnp.array(a), dtype="float64")
    assert out.dtype == np.float64 and out.shape == ()
    assert_almost_equal(out.asnumpy(), a.astype(np.float64).sum())
    z = mnp.mean(mnp.array(np.float32(4.0)))
    assert z.shape == () and z.item() == 4.0
    assert mnp.sum(1.5).item() == 1.5


def test_reduction_errors():
    with pytest.raises(nbdl.ShapeError, match="out of bounds"):
        mnp.sum(mnp.ones((2, 3)), axis=2)
    with pytest.raises(nbdl.ShapeError, match="duplicate"):
        mnp.mean(mnp.ones((2, 3)), axis=(1, -1))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("shape,axis,keepdims", [((3, 4), None, False), ((3, 4), 0, False),
                                                 ((3, 4), -1, True), ((5,), 0, False),
                                                 ((2, 3, 2), 1, False)])
def test_arg_reductions(name, shape, axis, keepdims, rng):
    a = rand(rng, *shape)
    kw = {"keepdims": True} if keepdims else {}
    (out,), _ = check(lambda x: getattr(mnp, name)(x, axis=axis, **kw),
                      lambda x: getattr(np, name)(x, axis=axis, **kw), a, grad=False)
    assert out.dtype == np.int64


def test_arg_reduction_errors():
    with pytest.raises(nbdl.ShapeError, match="empty"):
        mnp.argmax(mnp.zeros((0,)))
    with pytest.raises(nbdl.ShapeError, match="axis"):
        mnp.argmin(mnp.ones((2, 2)), axis=(0, 1))


# -- products ---------------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                   ((2, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((4, 3), ())])
def test_dot(sa, sb, rng):
    # Symbols: numpy's contraction for an N-D rhs needs the declared shape; a
    # graph has no 0-d operand
    symbols = () if sb == () else ((True,) if len(sb) > 2 else (False, True))
    check(mnp.dot, np.dot, rand(rng, *sa), rand(rng, *sb), rtol=1e-4, atol=1e-5, symbols=symbols)


def test_dot_unknown_shapes_uses_mxnet_dot(rng):
    a, b = rand(rng, 2, 3), rand(rng, 3, 4)
    check(mnp.dot, np.dot, a, b, rtol=1e-4, atol=1e-5, symbols=(False,))
    outs, _ = sym_run(mnp.dot, [a, b], shaped=False)
    assert_almost_equal(outs[0], a @ b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)),
                                   ((2, 1, 2, 3), (4, 3, 2)), ((3,), (3, 4)), ((2, 2, 3), (3,)),
                                   ((3,), (3,)), ((2, 3), (5, 3, 4)), ((3,), (2, 2, 3, 4)),
                                   ((1, 2, 3), (4, 3, 2))])
def test_matmul(sa, sb, rng):
    # Symbols of unknown rank take the broadcast-multiply form, numpy's for >= 2-D operands
    symbols = (True,) if min(len(sa), len(sb)) < 2 else (False, True)
    check(mnp.matmul, np.matmul, rand(rng, *sa), rand(rng, *sb), rtol=1e-4, atol=1e-5,
          symbols=symbols)


def test_graphs_do_not_bake_in_sizes(rng):
    """Shapes declared when a graph is built only choose rank-dependent ops:
    the graph still runs when bound with other sizes (a new batch size)."""
    a, b, c = (nbdl.sym.var(n, shape=s) for n, s in (("a", (1, 2, 3)), ("b", (1, 3, 4)),
                                                     ("c", (1, 2, 1))))
    y = mnp.reshape(mnp.matmul(a, b), (-1, 4))
    y = mnp.where(mnp.greater(y, 0.0), y, mnp.reshape(c, (-1, 1)))
    y = mnp.concatenate(mnp.split(y, [1], axis=1), axis=1)
    # the same graph on variables without declared shapes, bound with batch size 3
    y = y(a=nbdl.sym.var("a"), b=nbdl.sym.var("b"), c=nbdl.sym.var("c"))
    av, bv, cv = rand(rng, 3, 2, 3), rand(rng, 3, 3, 4), rand(rng, 3, 2, 1)
    ex = nbdl.bind(y, nbdl.cpu(), {"a": nbdl.nd.array(av), "b": nbdl.nd.array(bv),
                                   "c": nbdl.nd.array(cv)}, grad_req="null")
    want = (av @ bv).reshape(-1, 4)
    want = np.where(want > 0, want, cv.reshape(-1, 1))
    assert_almost_equal(ex.forward()[0].asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_matmul_unknown_rank_fallback_gradient(rng):
    y = mnp.matmul(nbdl.sym.var("a"), nbdl.sym.var("b"))
    check_numeric_gradient(y, {"a": rng.normal(size=(2, 1, 2, 3)), "b": rng.normal(size=(2, 3, 2))})


def test_product_errors():
    with pytest.raises(nbdl.ShapeError, match="not aligned"):
        mnp.dot(mnp.ones((2, 3)), mnp.ones((2, 3)))
    with pytest.raises(nbdl.ShapeError, match="core dimension"):
        mnp.matmul(mnp.ones((2, 3)), mnp.ones((2, 3)))
    with pytest.raises(nbdl.ShapeError, match="scalar"):
        mnp.matmul(mnp.ones((2, 3)), 2.0)


# -- shape ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,new", [((2, 3), (3, 2)), ((2, 3), (-1,)), ((2, 3, 4), (4, -1)),
                                       ((6,), (1, 2, 1, 3)), ((1,), ()), ((2, 0), (0, 5, 3)),
                                       ((2, 3), 6)])
def test_reshape(shape, new, rng):
    symbols = () if isinstance(new, tuple) and 0 in new else (False, True)
    check(lambda x: mnp.reshape(x, new), lambda x: np.reshape(x, new), rand(rng, *shape),
          symbols=symbols)
    check(mnp.ravel, np.ravel, rand(rng, *shape))


def test_reshape_errors():
    with pytest.raises(nbdl.ShapeError, match="cannot reshape"):
        mnp.reshape(mnp.ones((2, 3)), (4, -1))
    with pytest.raises(nbdl.ShapeError, match="one unknown"):
        mnp.reshape(mnp.ones((2, 3)), (-1, -1))
    with pytest.raises(nbdl.ShapeError, match="zero-length"):
        mnp.reshape(nbdl.sym.var("x"), (0, 3))
    with pytest.raises(nbdl.AttrError, match="order"):
        mnp.reshape(mnp.ones(2), (2,), order="F")


@pytest.mark.parametrize("shape,axes", [((2, 3), None), ((2, 3, 4), (1, 2, 0)), ((3,), None),
                                        ((2, 3, 4), (-1, 0, 1))])
def test_transpose(shape, axes, rng):
    check(lambda x: mnp.transpose(x, axes), lambda x: np.transpose(x, axes), rand(rng, *shape))


@pytest.mark.parametrize("shape,a1,a2", [((2, 3), 0, 1), ((2, 3, 4), 0, -1), ((2, 3, 4), 1, 1)])
def test_swapaxes(shape, a1, a2, rng):
    check(lambda x: mnp.swapaxes(x, a1, a2), lambda x: np.swapaxes(x, a1, a2), rand(rng, *shape))
    with pytest.raises(nbdl.ShapeError, match="axis2"):
        mnp.swapaxes(mnp.ones(shape), 0, len(shape))


@pytest.mark.parametrize("shape,axis", [((2, 3), 0), ((2, 3), -1), ((2, 3), 2), ((2, 3), (0, 2)),
                                        ((3,), (-1, 0))])
def test_expand_dims(shape, axis, rng):
    check(lambda x: mnp.expand_dims(x, axis), lambda x: np.expand_dims(x, axis), rand(rng, *shape))


@pytest.mark.parametrize("shape,axis", [((1, 3, 1), None), ((1, 3, 1), 0), ((1, 3, 1), (0, -1)),
                                        ((1, 1), None), ((2, 3), None)])
def test_squeeze(shape, axis, rng):
    check(lambda x: mnp.squeeze(x, axis), lambda x: np.squeeze(x, axis), rand(rng, *shape))
    if shape == (2, 3):
        with pytest.raises(nbdl.ShapeError, match="size"):
            mnp.squeeze(mnp.ones(shape), 0)


@pytest.mark.parametrize("shapes,axis", [([(2, 3), (1, 3)], 0), ([(2, 3), (2, 1), (2, 2)], -1),
                                         ([(2, 3), (3,)], None)])
def test_concatenate(shapes, axis, rng):
    arrays = [rand(rng, *s) for s in shapes]
    check(lambda *xs: mnp.concatenate(list(xs), axis=axis),
          lambda *xs: np.concatenate(xs, axis=axis), *arrays)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack(axis, rng):
    arrays = [rand(rng, 2, 3) for _ in range(3)]
    check(lambda *xs: mnp.stack(list(xs), axis=axis), lambda *xs: np.stack(xs, axis=axis), *arrays)


@pytest.mark.parametrize("sections,axis", [(3, 0), (2, 1), ([1, 4], 0), ([2], -1), (1, 0)])
def test_split(sections, axis, rng):
    check(lambda x: mnp.split(x, sections, axis=axis),
          lambda x: np.split(x, sections, axis=axis), rand(rng, 6, 4))


def test_split_and_shape_errors(rng):
    with pytest.raises(nbdl.ShapeError, match="equal division"):
        mnp.split(mnp.ones((5, 2)), 2)
    pieces = mnp.split(mnp.array(rand(rng, 4, 2)), [0, 2])
    assert [p.shape for p in pieces] == [(0, 2), (2, 2), (2, 2)]
    with pytest.raises(nbdl.ShapeError, match="same shape"):
        mnp.stack([mnp.ones(2), mnp.ones(3)])
    with pytest.raises(nbdl.ShapeError, match="same number of dimensions"):
        mnp.concatenate([mnp.ones((2, 2)), mnp.ones(2)])
    with pytest.raises(nbdl.ShapeError, match="list or tuple"):
        mnp.stack(mnp.ones(2))


# -- one forward for both -----------------------------------------------------------------

def test_one_function_for_ndarrays_and_symbols(rng):
    """A numpy-style forward written once, run eagerly and as a bound graph."""
    def forward(x, w):
        h = mnp.maximum(mnp.dot(x, mnp.transpose(w)), 0.0)
        z = mnp.stack([h, mnp.square(h)], axis=-1)
        return mnp.sum(mnp.mean(z, axis=-1) * 0.5 - 1.0, axis=1)

    def ref(x, w):
        h = np.maximum(x @ w.T, 0)
        return (np.stack([h, h * h], -1).mean(-1) * 0.5 - 1).sum(1)
    check(forward, ref, rand(rng, 4, 3), rand(rng, 5, 3), rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
def test_gpu_eager(rng):
    a, b = rand(rng, 2, 3), rand(rng, 3)
    x = mnp.array(a, device=nbdl.gpu(0))
    y = mnp.array(b, device=nbdl.gpu(0))
    out = mnp.sum(mnp.multiply(mnp.add(x, y), 2.0), axis=0)
    assert out.device == nbdl.gpu(0)
    assert_almost_equal(out.asnumpy(), ((a + b) * 2).sum(0), rtol=1e-5, atol=1e-6)


def test_namespace_exports():
    import nbdl.np as ns
    for name in ns.__all__:
        assert hasattr(ns, name), name
    assert ns.ndarray is nbdl.NDArray and ns.float32 is np.float32
