"""The sampler and pdf ops (ops/random.py, ops/random_pdf.py).

Samplers are checked statistically under fixed seeds (the draws are then
deterministic, so the checks cannot flake; the tolerances are several
standard errors, so a wrong distribution fails them), plus shapes, dtypes,
ranges and reproducibility (eager, bound, hybridized, per device).  The pdf
ops are checked against scipy.stats, with numeric gradients wrt their
parameters (and samples), and CPU against the CUDA simulator.
"""
import numpy as np
import pytest
from scipy import stats

import nbdl
import nbdl.ndarray as nd
from nbdl.device import cpu, gpu
from nbdl.errors import AttrError, DTypeError, ShapeError
from nbdl.ops.registry import get_op
from nbdl.testing import assert_almost_equal, check_consistency, check_numeric_gradient

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning",
                                        "ignore::numba.core.errors.NumbaWarning")

N = 20000

# op -> (attributes, mean, variance, scipy distribution for a KS test or None)
SCALAR_CASES = {
    "_random_uniform": ({"low": -1.0, "high": 3.0}, 1.0, 16 / 12, stats.uniform(-1, 4)),
    "_random_normal": ({"loc": 1.5, "scale": 2.0}, 1.5, 4.0, stats.norm(1.5, 2.0)),
    "_random_gamma": ({"alpha": 0.6, "beta": 2.0}, 1.2, 2.4, stats.gamma(0.6, scale=2.0)),
    "_random_exponential": ({"lam": 4.0}, 0.25, 1 / 16, stats.expon(scale=0.25)),
    "_random_poisson": ({"lam": 3.5}, 3.5, 3.5, None),
    "_random_negative_binomial": ({"k": 3, "p": 0.4}, 4.5, 11.25, None),
    "_random_generalized_negative_binomial": ({"mu": 2.0, "alpha": 0.3}, 2.0, 3.2, None),
}


def _check_moments(a, mean, var, what):
    a = np.asarray(a, dtype=np.float64).ravel()
    n = a.size
    se_mean = np.sqrt(var / n)
    assert abs(a.mean() - mean) < 5 * se_mean + 1e-12, (what, a.mean(), mean)
    # the variance's standard error, from the sample's fourth central moment
    m4 = np.mean((a - a.mean()) ** 4)
    se_var = np.sqrt(max(m4 - var * var, 1e-12) / n)
    assert abs(a.var() - var) < 6 * se_var, (what, a.var(), var)


@pytest.mark.parametrize("op", sorted(SCALAR_CASES))
def test_random_ops_moments_and_distribution(op):
    attrs, mean, var, dist = SCALAR_CASES[op]
    nbdl.random.seed(1234)
    a = nd.invoke.invoke(op, [], dict(attrs, shape=(N,), dtype="float64")).asnumpy()
    assert a.shape == (N,) and a.dtype == np.float64
    _check_moments(a, mean, var, op)
    if dist is not None:
        assert stats.kstest(a, dist.cdf).pvalue > 1e-3
    else:
        assert (a >= 0).all() and (a == np.round(a)).all()


def test_poisson_large_rate_and_discrete_frequencies():
    nbdl.random.seed(5)
    big = nd.random.poisson(40.0, shape=(N,), dtype="float64").asnumpy()
    _check_moments(big, 40.0, 40.0, "poisson 40")
    small = nd.random.poisson(2.0, shape=(N,), dtype="float64").asnumpy()
    for k in range(6):
        p = stats.poisson.pmf(k, 2.0)
        assert abs(np.mean(small == k) - p) < 5 * np.sqrt(p * (1 - p) / N)
    nb = nd.random.negative_binomial(2, 0.5, shape=(N,), dtype="float64").asnumpy()
    for k in range(5):
        p = stats.nbinom.pmf(k, 2, 0.5)
        assert abs(np.mean(nb == k) - p) < 5 * np.sqrt(p * (1 - p) / N)


def test_wrong_distribution_is_caught():
    # the checks above fail for a distribution with the wrong scale
    nbdl.random.seed(1234)
    a = nd.random.normal(1.5, 2.2, shape=(N,), dtype="float64").asnumpy()
    with pytest.raises(AssertionError):
        _check_moments(a, 1.5, 4.0, "normal")
    assert stats.kstest(a, stats.norm(1.5, 2.0).cdf).pvalue < 1e-3


def test_ranges_and_default_dtypes():
    nbdl.random.seed(0)
    u = nd.random.uniform(2.0, 2.5, shape=(4000,))
    assert u.dtype is np.float32
    a = u.asnumpy()
    assert a.min() >= 2.0 and a.max() < 2.5
    r = nd.random.randint(-3, 4, shape=(2000,))
    assert r.dtype is np.int32
    assert set(np.unique(r.asnumpy())) == set(range(-3, 4))
    big = nd.random.randint(50000000, 50000010, shape=(100,), dtype="int64").asnumpy()
    assert big.dtype == np.int64 and big.min() >= 50000000 and big.max() < 50000010
    assert (nd.random.gamma(0.3, 1.0, shape=(500,)).asnumpy() >= 0).all()
    assert nd.random.exponential(shape=(3, 2)).shape == (3, 2)
    assert nd.random.uniform().shape == (1,)


def test_float16_on_cpu():
    nbdl.random.seed(4)
    u = nd.random.uniform(-1, 1, shape=(4000,), dtype="float16")
    assert u.dtype is np.float16
    a = u.asnumpy().astype(np.float64)
    assert a.min() >= -1 and a.max() < 1
    _check_moments(a, 0.0, 1 / 3, "float16 uniform")
    mu = nd.array([0.0, 4.0], dtype=np.float16)
    x = nd.random.normal(mu, 1.0, shape=(2000,), dtype="float16").asnumpy().astype(np.float64)
    _check_moments(x[1], 4.0, 1.0, "float16 sample_normal")
    i, lp = nd.random.multinomial(nd.array([0.25, 0.75], dtype=np.float16), shape=(4000,),
                                  get_prob=True)
    assert lp.dtype is np.float16 and abs(i.asnumpy().mean() - 0.75) < 5 * np.sqrt(0.1875 / 4000)


def test_sample_ops_per_element():
    nbdl.random.seed(3)
    mu = nd.array([0.0, 10.0], dtype=np.float64)
    sigma = nd.array([1.0, 0.5], dtype=np.float64)
    x = nd._sample_normal(mu, sigma, shape=(50, 100))
    assert x.shape == (2, 50, 100) and x.dtype is np.float32     # MXNet: float32 default
    a = x.asnumpy().reshape(2, -1).astype(np.float64)
    _check_moments(a[0], 0.0, 1.0, "row 0")
    _check_moments(a[1], 10.0, 0.25, "row 1")
    lam = nd.array([[1.0, 30.0]])
    p = nd._sample_poisson(lam, shape=(4000,), dtype="float64").asnumpy()
    _check_moments(p[0, 0], 1.0, 1.0, "lam 1")
    _check_moments(p[0, 1], 30.0, 30.0, "lam 30")
    lo, hi = nd.array([0.0, 5.0]), nd.array([1.0, 6.0])
    u = nd._sample_uniform(lo, hi).asnumpy()
    assert u.shape == (2,) and 0 <= u[0] < 1 and 5 <= u[1] < 6
    for op, ins in [("_sample_gamma", [nd.array([2.0]), nd.array([0.5])]),
                    ("_sample_exponential", [nd.array([2.0])]),
                    ("_sample_negative_binomial", [nd.array([3.0]), nd.array([0.4])]),
                    ("_sample_generalized_negative_binomial", [nd.array([2.0]), nd.array([0.3])])]:
        v = nd.invoke.invoke(op, ins, {"shape": (4000,)}).asnumpy()
        assert v.shape == (1, 4000) and (v >= 0).all()
    # the front-end dispatches NDArray parameters to _sample_ (scalars broadcast)
    y = nd.random.normal(mu, 0.01, shape=(3,))
    assert y.shape == (2, 3) and np.allclose(y.asnumpy()[1], 10, atol=0.1)


def test_like_ops_take_shape_and_dtype():
    data = nd.zeros((3, 4), dtype=np.float64)
    for name in ("uniform", "normal", "gamma", "exponential", "poisson", "negative_binomial",
                 "generalized_negative_binomial"):
        out = getattr(nd.random, f"{name}_like")(data)
        assert out.shape == (3, 4) and out.dtype is np.float64, name
    v = nd._random_uniform_like(data, low=5, high=6).asnumpy()
    assert (v >= 5).all() and (v < 6).all()
    assert nd._random_normal_like(nd.ones((2,))).dtype is np.float32
    for op in ("_random_gamma_like", "_random_exponential_like", "_random_poisson_like",
               "_random_negative_binomial_like", "_random_generalized_negative_binomial_like"):
        assert get_op(op).list_inputs(get_op(op).parse_attrs({})[0]) == ["data"]


def test_bad_arguments_raise_nbdl_errors():
    with pytest.raises(DTypeError, match="float16"):
        nd.random.uniform(shape=(2,), dtype="float16", ctx=gpu(0))
    with pytest.raises(AttrError, match="_random_uniform"):
        nd.random.uniform(shape=(2,), dtype="int32")
    with pytest.raises(AttrError, match="_random_randint"):
        nd._random_randint(low=3, high=3, shape=(2,))
    with pytest.raises(AttrError, match="scale"):
        nd._random_normal(scale=-1.0, shape=(2,))
    with pytest.raises(AttrError, match="p="):
        nd._random_negative_binomial(k=2, p=1.5, shape=(2,))
    with pytest.raises(ShapeError, match="_sample_uniform"):
        nd._sample_uniform(nd.zeros((2,)), nd.ones((3,)))
    with pytest.raises(DTypeError, match="_sample_normal"):
        nd._sample_normal(nd.zeros((2,), dtype=np.int32), nd.ones((2,), dtype=np.int32))
    with pytest.raises(ShapeError):
        nd.random.normal(nd.zeros((2,)), nd.ones((3,)))


@pytest.mark.cuda
def test_out_and_ctx():
    out = nd.zeros((5,), dtype=np.float64)
    assert nd.random.normal(shape=(5,), out=out) is out
    assert (out.asnumpy() != 0).all()
    g = nd._random_uniform(shape=(3,), ctx=gpu(0))
    assert g.context == gpu(0)
    h = nd.random.exponential(2.0, shape=(2, 2), ctx=gpu(0))
    assert h.context == gpu(0) and h.shape == (2, 2)


def test_seed_reproduces_eager_bound_and_hybridized():
    x = nbdl.sym.var("x")
    net = nbdl.sym.random.uniform(shape=(6,)) + x * 0 + nbdl.sym.random.normal(shape=(6,))
    ex = net.simple_bind(cpu(), x=(6,), grad_req="null")

    class Noisy(nbdl.gluon.HybridBlock):
        def hybrid_forward(self, F, v):
            return v + F.random.normal(shape=(4,))

    blk = Noisy()
    blk.hybridize()

    def draw():
        e = nd.random.gamma(2.0, 1.0, shape=(5,)).asnumpy()
        b1 = ex.forward(x=nd.zeros((6,)))[0].asnumpy()
        b2 = ex.forward(x=nd.zeros((6,)))[0].asnumpy()
        h = blk(nd.zeros((4,))).asnumpy()
        return e, b1, b2, h
    nbdl.random.seed(77)
    first = draw()
    nbdl.random.seed(77)
    second = draw()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[1], first[2])      # each run draws anew
    nbdl.random.seed(78)
    assert not np.array_equal(draw()[0], first[0])


@pytest.mark.cuda
def test_seed_per_device():
    def gpu_draw():
        return nd.random.uniform(shape=(8,), ctx=gpu(0)).asnumpy()
    nbdl.random.seed(5, ctx=gpu(0))
    a = gpu_draw()
    nbdl.random.seed(5, ctx=gpu(0))
    nd.random.uniform(shape=(8,))            # CPU draws in between change nothing on gpu(0)
    nbdl.random.seed(99, ctx=cpu())
    b = gpu_draw()
    np.testing.assert_array_equal(a, b)
    nbdl.random.seed(6, ctx=gpu(0))
    assert not np.array_equal(gpu_draw(), a)
    nbdl.random.seed(11, ctx=cpu())
    c = nd.random.uniform(shape=(8,)).asnumpy()
    gpu_draw()
    nbdl.random.seed(11, ctx=cpu())
    np.testing.assert_array_equal(nd.random.uniform(shape=(8,)).asnumpy(), c)


@pytest.mark.cuda
def test_samplers_on_cuda_simulator_match_statistics():
    nbdl.random.seed(21)
    a = nd.random.normal(2.0, 3.0, shape=(512,), ctx=gpu(0), dtype="float64").asnumpy()
    _check_moments(a, 2.0, 9.0, "gpu normal")
    nbdl.random.seed(21)
    np.testing.assert_array_equal(
        nd.random.normal(2.0, 3.0, shape=(512,), ctx=gpu(0), dtype="float64").asnumpy(), a)
    p = nd._sample_poisson(nd.array([1.0, 20.0], ctx=gpu(0)), shape=(256,)).asnumpy()
    _check_moments(p[0], 1.0, 1.0, "gpu poisson 1")
    _check_moments(p[1], 20.0, 20.0, "gpu poisson 20")
    r = nd.random.randint(0, 5, shape=(200,), ctx=gpu(0)).asnumpy()
    assert set(np.unique(r)) == set(range(5))
    m = nd.random.multinomial(nd.array([[0.1, 0.9]], ctx=gpu(0)), shape=256).asnumpy()
    assert abs(m.mean() - 0.9) < 5 * np.sqrt(0.09 / 256)
    s = nd.random.shuffle(nd.array(np.arange(12).reshape(6, 2), ctx=gpu(0))).asnumpy()
    np.testing.assert_array_equal(np.sort(s[:, 0]), np.arange(0, 12, 2))
    g = nd.random.gamma(3.0, 0.5, shape=(256,), ctx=gpu(0), dtype="float64").asnumpy()
    _check_moments(g, 1.5, 0.75, "gpu gamma")


def test_multinomial_frequencies_prob_and_gradient():
    nbdl.random.seed(9)
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], dtype=np.float32)
    data = nd.array(probs)
    idx, lp = nd.random.multinomial(data, shape=(4000,), get_prob=True)
    assert idx.shape == (2, 4000) and idx.dtype is np.int32 and lp.dtype is np.float32
    i = idx.asnumpy()
    for r in range(2):
        for c in range(3):
            p = probs[r, c]
            assert abs(np.mean(i[r] == c) - p) < 5 * np.sqrt(p * (1 - p) / 4000)
    assert_almost_equal(lp.asnumpy(), np.log(np.take_along_axis(probs, i, axis=1)))
    one = nd.random.multinomial(nd.array([0.0, 1.0]), dtype="uint8")
    assert one.shape == (1,) and one.dtype is np.uint8 and one.asnumpy()[0] == 1
    assert nd.random.multinomial(nd.array([0.5, 0.5]), shape=(2, 3)).shape == (2, 3)
    # d/d data of sum(head * log p[idx]) = head / p at the drawn categories
    x = nd.array(probs)
    x.attach_grad()
    head = np.random.RandomState(0).rand(2, 5).astype(np.float32)
    with nbdl.autograd.record():
        k, logp = nd._sample_multinomial(x, shape=(5,), get_prob=True)
    logp.backward(nd.array(head))
    ref = np.zeros_like(probs)
    kk = k.asnumpy()
    for r in range(2):
        for j in range(5):
            ref[r, kk[r, j]] += head[r, j] / probs[r, kk[r, j]]
    assert_almost_equal(x.grad.asnumpy(), ref, rtol=1e-5, atol=1e-6)


def test_shuffle_permutes_rows():
    nbdl.random.seed(2)
    x = nd.array(np.arange(30).reshape(10, 3), dtype=np.int32)
    y = nd.random.shuffle(x)
    a = y.asnumpy()
    assert a.dtype == np.int32 and not np.array_equal(a, x.asnumpy())
    np.testing.assert_array_equal(np.sort(a[:, 0]), np.arange(0, 30, 3))
    np.testing.assert_array_equal(a[:, 1:] - a[:, :1], np.tile([1, 2], (10, 1)))
    assert not np.array_equal(nd._shuffle(x).asnumpy(), a)
    assert nd.random.shuffle(nd.zeros((0, 2))).shape == (0, 2)


def test_symbols_infer_shape_and_roundtrip_json():
    x = nbdl.sym.var("x")
    y = nbdl.sym.random.uniform(low=0, high=1) + x          # shape from the consumer
    assert y.infer_shape(x=(2, 3))[1] == [(2, 3)]
    loaded = nbdl.sym.load_json(y.tojson())
    ex = loaded.simple_bind(cpu(), x=(2, 3), grad_req="null")
    v = ex.forward(x=nd.ones((2, 3)))[0].asnumpy()
    assert v.shape == (2, 3) and (v >= 1).all() and (v < 2).all()
    mu = nbdl.sym.var("mu")
    s = nbdl.sym.random.normal(mu, mu, shape=(4,))           # Symbols: _sample_normal
    assert s.infer_shape(mu=(3,))[1] == [(3, 4)]
    assert "_sample_normal" in s.tojson()
    assert "_random_randint" in nbdl.sym.random.randint(0, 5, shape=(2,)).tojson()
    assert nbdl.sym.random.pdf_normal is not None
    both = nbdl.sym.random.multinomial(nbdl.sym.var("p"), shape=(2,))   # get_prob: MXNet's True
    assert both.list_outputs() == [f"{both.name}_output", f"{both.name}_prob"]


def test_mxnet_names_attrs_and_aliases():
    expect = {
        "_random_uniform": ["low", "high", "shape", "ctx", "dtype"],
        "_random_normal": ["loc", "scale", "shape", "ctx", "dtype"],
        "_random_gamma": ["alpha", "beta", "shape", "ctx", "dtype"],
        "_random_exponential": ["lam", "shape", "ctx", "dtype"],
        "_random_poisson": ["lam", "shape", "ctx", "dtype"],
        "_random_negative_binomial": ["k", "p", "shape", "ctx", "dtype"],
        "_random_generalized_negative_binomial": ["mu", "alpha", "shape", "ctx", "dtype"],
        "_random_randint": ["low", "high", "shape", "ctx", "dtype"],
        "_sample_uniform": ["shape", "dtype"], "_sample_normal": ["shape", "dtype"],
        "_sample_gamma": ["shape", "dtype"], "_sample_exponential": ["shape", "dtype"],
        "_sample_poisson": ["shape", "dtype"], "_sample_negative_binomial": ["shape", "dtype"],
        "_sample_generalized_negative_binomial": ["shape", "dtype"],
        "_sample_multinomial": ["shape", "get_prob", "dtype"], "_shuffle": [],
    }
    for name, attrs in expect.items():
        assert sorted(get_op(name).attrs) == sorted(attrs), name
    inputs = {"_sample_uniform": ["low", "high"], "_sample_normal": ["mu", "sigma"],
              "_random_pdf_negative_binomial": ["sample", "k", "p"],
              "_random_pdf_generalized_negative_binomial": ["sample", "mu", "alpha"],
              "_random_pdf_dirichlet": ["sample", "alpha"]}
    for name, ins in inputs.items():
        op = get_op(name)
        assert op.list_inputs(op.parse_attrs({})[0]) == ins, name
    for alias, name in [("uniform", "_random_uniform"), ("random_normal", "_random_normal"),
                        ("sample_multinomial", "_sample_multinomial"), ("shuffle", "_shuffle"),
                        ("random_pdf_gamma", "_random_pdf_gamma")]:
        assert get_op(alias) is get_op(name)


# -- pdf ops ------------------------------------------------------------------------------

def _pdf_case(dist, rng):
    """(inputs in the op's order, scipy pdf (or pmf) of the samples)."""
    n, s = 2, 3
    if dist == "uniform":
        lo, hi = rng.uniform(-1, 0, n), rng.uniform(1, 2, n)
        x = rng.uniform(0, 1, (n, s))
        return [x, lo, hi], stats.uniform(lo[:, None], (hi - lo)[:, None]).pdf(x)
    if dist == "normal":
        mu, sigma = rng.normal(size=n), rng.uniform(0.5, 2, n)
        x = rng.normal(size=(n, s))
        return [x, mu, sigma], stats.norm(mu[:, None], sigma[:, None]).pdf(x)
    if dist == "gamma":
        a, b = rng.uniform(1, 3, n), rng.uniform(0.5, 2, n)
        x = rng.uniform(0.5, 3, (n, s))
        return [x, a, b], stats.gamma(a[:, None], scale=1 / b[:, None]).pdf(x)
    if dist == "exponential":
        lam = rng.uniform(0.5, 2, n)
        x = rng.uniform(0.1, 3, (n, s))
        return [x, lam], stats.expon(scale=1 / lam[:, None]).pdf(x)
    if dist == "poisson":
        lam = rng.uniform(1, 4, n)
        x = rng.integers(0, 6, (n, s)).astype(np.float64)
        return [x, lam], stats.poisson(lam[:, None]).pmf(x)
    if dist == "negative_binomial":
        k, p = rng.uniform(1, 4, n), rng.uniform(0.2, 0.8, n)
        x = rng.integers(0, 6, (n, s)).astype(np.float64)
        return [x, k, p], stats.nbinom(k[:, None], p[:, None]).pmf(x)
    if dist == "generalized_negative_binomial":
        mu, alpha = rng.uniform(1, 4, n), rng.uniform(0.2, 1.0, n)
        x = rng.integers(0, 6, (n, s)).astype(np.float64)
        ref = stats.nbinom(1 / alpha[:, None], 1 / (1 + mu[:, None] * alpha[:, None])).pmf(x)
        return [x, mu, alpha], ref
    alpha = rng.uniform(0.8, 3, (n, 3))
    x = np.stack([rng.dirichlet(alpha[i], s) for i in range(n)])
    return [x, alpha], np.stack([stats.dirichlet(alpha[i]).pdf(x[i].T) for i in range(n)])


PDFS = ["uniform", "normal", "gamma", "exponential", "poisson", "negative_binomial",
        "generalized_negative_binomial", "dirichlet"]
PDF_OPS = ["_random_pdf_uniform", "_random_pdf_normal", "_random_pdf_gamma",
           "_random_pdf_exponential", "_random_pdf_poisson", "_random_pdf_negative_binomial",
           "_random_pdf_generalized_negative_binomial", "_random_pdf_dirichlet"]


def test_pdf_ops_registered_with_gradients():
    for name, dist in zip(PDF_OPS, PDFS):
        op = get_op(name)
        assert op.gradient is not None and get_op(f"_backward_pdf_{dist}").hidden
        assert op.list_inputs({})[0] == "sample" and "is_log" in op.attrs


PDF_INPUTS = {"uniform": ["low", "high"], "normal": ["mu", "sigma"], "gamma": ["alpha", "beta"],
              "exponential": ["lam"], "poisson": ["lam"], "negative_binomial": ["k", "p"],
              "generalized_negative_binomial": ["mu", "alpha"], "dirichlet": ["alpha"]}


def _pdf_sym(dist, **attrs):
    names = ["sample"] + PDF_INPUTS[dist]
    return getattr(nbdl.sym, f"_random_pdf_{dist}")(*[nbdl.sym.var(n) for n in names],
                                                    **attrs), names


@pytest.mark.parametrize("dist", PDFS)
def test_pdf_against_scipy_with_gradients(dist):
    rng = np.random.default_rng(0)
    ins, ref = _pdf_case(dist, rng)
    arrays = [nd.array(a, dtype=np.float64) for a in ins]
    got = getattr(nd, f"_random_pdf_{dist}")(*arrays).asnumpy()
    assert_almost_equal(got, ref, rtol=1e-6, atol=1e-10)
    lg = getattr(nd.random, f"pdf_{dist}")(*arrays, is_log=True).asnumpy()
    assert_almost_equal(lg, np.log(ref), rtol=1e-6, atol=1e-8)
    sym, names = _pdf_sym(dist, is_log=True)
    loc = dict(zip(names, ins))
    # discrete samples: no gradient to the sample (MXNet's is 0 there)
    nodes = names if dist in ("normal", "gamma", "exponential", "dirichlet") else names[1:]
    check_numeric_gradient(sym, loc, grad_nodes=nodes, numeric_eps=1e-5, rtol=1e-4, atol=1e-6)
    sym2, _ = _pdf_sym(dist)
    check_numeric_gradient(sym2, loc, grad_nodes=nodes[-1:], numeric_eps=1e-5, rtol=1e-4,
                           atol=1e-6)


def test_pdf_float32_and_shapes():
    x = nd.array(np.array([[0.5, 1.0, 2.0]], dtype=np.float32))
    v = nd._random_pdf_exponential(x, nd.array([2.0])).asnumpy()
    assert v.dtype == np.float32
    assert_almost_equal(v, 2 * np.exp(-2 * np.array([[0.5, 1.0, 2.0]])), rtol=1e-6)
    d = nd._random_pdf_dirichlet(nd.array([0.2, 0.3, 0.5]), nd.array([1.0, 2.0, 3.0]))
    assert d.shape == (1,)
    assert_almost_equal(d.asnumpy()[0], stats.dirichlet([1.0, 2.0, 3.0]).pdf([0.2, 0.3, 0.5]),
                        rtol=1e-5)
    h = nd._random_pdf_normal(nd.array([[0.0, 1.0]], dtype=np.float16),
                              nd.array([0.0], dtype=np.float16),
                              nd.array([1.0], dtype=np.float16), is_log=True)
    assert h.dtype is np.float16
    assert_almost_equal(h.asnumpy(), stats.norm.logpdf([[0.0, 1.0]]), rtol=1e-3, atol=1e-3)
    with pytest.raises(ShapeError, match="_random_pdf_normal"):
        nd._random_pdf_normal(nd.zeros((2, 3)), nd.zeros((3,)), nd.ones((3,)))
    with pytest.raises(DTypeError):
        nd._random_pdf_poisson(nd.zeros((2,), dtype=np.float64), nd.ones((2,)))


@pytest.mark.cuda
@pytest.mark.parametrize("dist", ["gamma", "exponential", "generalized_negative_binomial",
                                  "dirichlet"])
def test_pdf_cpu_vs_cuda(dist):
    ins, _ = _pdf_case(dist, np.random.default_rng(1))
    sym, names = _pdf_sym(dist, is_log=dist != "gamma")
    check_consistency(sym, dict(zip(names, ins)), devices=[cpu(), gpu()], rtol=1e-4,
                      atol=1e-6)
