"""Higher-order gradients (autograd.grad(..., create_graph=True)) of the
elementwise ops, the scalar ops, Dropout and FullyConnected, against numpy:
f'' by central differences of a numpy f' written here."""
import numpy as np
import pytest

from nbdl import autograd, nd

# name -> (nbdl function, numpy f', domain)
_FIRST = {
    "sin": (nd.sin, np.cos, (-3, 3)),
    "cos": (nd.cos, lambda x: -np.sin(x), (-3, 3)),
    "tan": (nd.tan, lambda x: 1 / np.cos(x) ** 2, (-1.2, 1.2)),
    "sinh": (nd.sinh, np.cosh, (-2, 2)),
    "cosh": (nd.cosh, np.sinh, (-2, 2)),
    "tanh": (nd.tanh, lambda x: 1 - np.tanh(x) ** 2, (-2, 2)),
    "sigmoid": (nd.sigmoid, lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2, (-3, 3)),
    "softrelu": (lambda x: nd.Activation(x, act_type="softrelu"),
                 lambda x: 1 / (1 + np.exp(-x)), (-3, 3)),
    "softsign": (nd.softsign, lambda x: 1 / (1 + np.abs(x)) ** 2, (0.2, 3)),
    "sqrt": (nd.sqrt, lambda x: 0.5 / np.sqrt(x), (0.5, 4)),
    "rsqrt": (nd.rsqrt, lambda x: -0.5 * x ** -1.5, (0.5, 4)),
    "square": (nd.square, lambda x: 2 * x, (-3, 3)),
    "arcsin": (nd.arcsin, lambda x: 1 / np.sqrt(1 - x * x), (-0.9, 0.9)),
    "arccos": (nd.arccos, lambda x: -1 / np.sqrt(1 - x * x), (-0.9, 0.9)),
    "arctan": (nd.arctan, lambda x: 1 / (1 + x * x), (-3, 3)),
    "arcsinh": (nd.arcsinh, lambda x: 1 / np.sqrt(x * x + 1), (-3, 3)),
    "arccosh": (nd.arccosh, lambda x: 1 / np.sqrt(x * x - 1), (1.5, 4)),
    "arctanh": (nd.arctanh, lambda x: 1 / (1 - x * x), (-0.9, 0.9)),
    "expm1": (nd.expm1, np.exp, (-2, 2)),
    "log1p": (nd.log1p, lambda x: 1 / (1 + x), (-0.5, 3)),
    "log2": (nd.log2, lambda x: 1 / (x * np.log(2)), (0.5, 4)),
    "log10": (nd.log10, lambda x: 1 / (x * np.log(10)), (0.5, 4)),
    "erf": (nd.erf, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x), (-2, 2)),
    "erfinv": (nd.erfinv, None, (-0.8, 0.8)),
    "reciprocal": (nd.reciprocal, lambda x: -1 / (x * x), (0.5, 3)),
    "cbrt": (nd.cbrt, lambda x: np.cbrt(x) ** -2 / 3, (0.5, 4)),
    "rcbrt": (nd.rcbrt, lambda x: -np.cbrt(x) ** -4 / 3, (-4, -0.5)),
    "power_scalar": (lambda x: x ** 3.0, lambda x: 3 * x * x, (-2, 2)),
    "rdiv_scalar": (lambda x: 2.0 / x, lambda x: -2 / (x * x), (0.5, 3)),
    "rpower_scalar": (lambda x: 2.0 ** x, lambda x: 2 ** x * np.log(2), (-2, 2)),
    "hypot_scalar": (lambda x: nd._internal._hypot_scalar(x, scalar=1.5),
                     lambda x: x / np.hypot(x, 1.5), (-2, 2)),
    # sigma = 2: quadratic inside |x| <= 1/4 (f'' = 4), linear outside (f'' = 0)
    "smooth_l1": (lambda x: nd.smooth_l1(x, scalar=2.0),
                  lambda x: np.where(np.abs(x) <= 0.25, 4 * x, np.sign(x)), (-1, 1)),
    # piecewise linear: f'' = 0
    "relu": (nd.relu, lambda x: (x > 0).astype(x.dtype), (0.1, 2)),
    "abs": (nd.abs, np.sign, (0.1, 2)),
    "clip": (lambda x: nd.clip(x, -0.5, 0.5), lambda x: (np.abs(x) <= 0.5) * 1.0, (-2, 2)),
    "radians": (nd.radians, lambda x: np.full_like(x, np.pi / 180), (-2, 2)),
    "hard_sigmoid": (nd.hard_sigmoid, lambda x: (np.abs(x) < 2.5) * 0.2, (-1, 1)),
}


def _erfinv_prime(x):
    from scipy.special import erfinv
    return np.sqrt(np.pi) / 2 * np.exp(erfinv(x) ** 2)


def _grads(fn, xv, heads):
    """The first len(heads) derivatives by repeated grad(create_graph=True)."""
    x = nd.array(xv, dtype=np.float32)
    x.attach_grad()
    out = []
    with autograd.record():
        y = fn(x)
        for h in heads:
            y = autograd.grad(y, [x], head_grads=nd.array(h, dtype=np.float32),
                              create_graph=True, retain_graph=True)[0]
            out.append(y.asnumpy())
    return out


@pytest.mark.parametrize("name", sorted(_FIRST))
def test_second_derivative_matches_numpy(name, rng):
    fn, prime, (lo, hi) = _FIRST[name]
    prime = prime or _erfinv_prime
    xv = rng.uniform(lo, hi, 6).astype(np.float32).astype(np.float64)
    h1 = rng.normal(size=6).astype(np.float32).astype(np.float64)
    h2 = rng.normal(size=6).astype(np.float32).astype(np.float64)
    g1, g2 = _grads(fn, xv, [h1, h2])
    np.testing.assert_allclose(g1, h1 * prime(xv), rtol=1e-4, atol=1e-5)
    eps = 1e-5
    second = (prime(xv + eps) - prime(xv - eps)) / (2 * eps)
    np.testing.assert_allclose(g2, h1 * h2 * second, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name,third", [("sin", lambda x: -np.cos(x)),
                                        ("sigmoid", None), ("tanh", None)])
def test_third_derivative(name, third, rng):
    fn, prime, (lo, hi) = _FIRST[name]
    xv = rng.uniform(lo, hi, 5).astype(np.float32).astype(np.float64)
    heads = [rng.normal(size=5).astype(np.float32).astype(np.float64) for _ in range(3)]
    g3 = _grads(fn, xv, heads)[2]
    if third is None:        # d3 by second differences of the numpy f'
        eps = 1e-4
        third = lambda x: (prime(x + eps) - 2 * prime(x) + prime(x - eps)) / eps ** 2  # noqa: E731
    np.testing.assert_allclose(g3, heads[0] * heads[1] * heads[2] * third(xv), rtol=2e-3,
                               atol=1e-3)


def test_dropout_second_derivative_is_zero(rng):
    xv = rng.uniform(-1, 1, 8)
    g1, g2 = _grads(lambda x: nd.Dropout(x, p=0.5), xv, [np.ones(8), np.ones(8)])
    assert set(np.unique(g1)) <= {0.0, 2.0}
    np.testing.assert_array_equal(g2, np.zeros(8))


@pytest.mark.parametrize("flatten,shape", [(True, (3, 2, 2)), (False, (2, 3, 4))])
def test_fully_connected_second_order(flatten, shape, rng):
    hidden = 3
    xv = rng.normal(size=shape)
    k = int(np.prod(shape[1:])) if flatten else shape[-1]
    wv, bv = rng.normal(size=(hidden, k)), rng.normal(size=hidden)
    x, w, b = (nd.array(v, dtype=np.float64) for v in (xv, wv, bv))
    for a in (x, w, b):
        a.attach_grad()
    with autograd.record():
        y = nd.FullyConnected(x, w, b, num_hidden=hidden, flatten=flatten)
        oy = nd.array(rng.normal(size=y.shape), dtype=np.float64)
        dx, dw = autograd.grad(y, [x, w], head_grads=oy, create_graph=True, retain_graph=True)
        o_dx = nd.array(rng.normal(size=dx.shape), dtype=np.float64)
        o_dw = nd.array(rng.normal(size=dw.shape), dtype=np.float64)
        z = nd.sum(dx * o_dx) + nd.sum(dw * o_dw)
    z.backward()
    x2, oy2 = xv.reshape(-1, k), oy.asnumpy().reshape(-1, hidden)
    # z = <o_dx, oy.W> + <o_dw, oy^T.x>: linear in x and in W
    np.testing.assert_allclose(dx.asnumpy(), (oy2 @ wv).reshape(shape), rtol=1e-10)
    np.testing.assert_allclose(x.grad.asnumpy(), (oy2 @ o_dw.asnumpy()).reshape(shape),
                               rtol=1e-10)
    np.testing.assert_allclose(w.grad.asnumpy(), oy2.T @ o_dx.asnumpy().reshape(-1, k),
                               rtol=1e-10)
    np.testing.assert_array_equal(b.grad.asnumpy(), np.zeros(hidden))
