"""The optimizer update ops (nbdl/ops/optimizer.py) against numpy references
written here: the new weight, the states updated in place, the in-place
``out=weight`` form, float16 weights through the ``mp_*`` ops, the CUDA
kernels (simulator), bound graphs, the scalar-attribute cache and errors."""
import sys

import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.errors import DTypeError, GraphError, ShapeError
from nbdl.imperative import invoke as _inv
from nbdl.imperative import invoke_scalars as _scal
from nbdl.testing import check_consistency

nd = nbdl.nd
N = 7


def _clip(x, c):
    return np.clip(x, -c, c) if c >= 0 else x


# -- numpy references: (weight, grad, states...) -> (new weight, new states...) ------
# Every reference computes in float64 from the float32 inputs.

def ref_sgd(w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, **_):
    return ((1 - lr * wd) * w - lr * _clip(rescale_grad * g, clip_gradient),)


def ref_sgd_mom(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                **_):
    mom = momentum * mom - lr * wd * w - lr * _clip(rescale_grad * g, clip_gradient)
    return w + mom, mom


def ref_nag(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
            in_place=True, **_):
    # MXNet: mom *= momentum; out = w - mom + (1 + momentum) * (mom - lr * (x + wd * w));
    # mom -= lr * (x + wd * w) where w is the weight array after out was written
    x = _clip(rescale_grad * g, clip_gradient)
    m = momentum * mom
    out = w - m + (1 + momentum) * (m - lr * (x + wd * w))
    w_after = out if in_place else w
    return out, m - lr * (x + wd * w_after)


def ref_adam(w, g, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
             rescale_grad=1.0, clip_gradient=-1.0, **_):
    x = _clip(rescale_grad * g + wd * w, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * x
    var = beta2 * var + (1 - beta2) * x * x
    return w - lr * mean / (np.sqrt(var) + epsilon), mean, var


def ref_adamw(w, g, mean, var, rescale, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
              clip_gradient=-1.0):
    s = float(rescale[0])
    if s == 0 or not np.isfinite(s):
        return w, mean, var
    x = _clip(s * g, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * x
    var = beta2 * var + (1 - beta2) * x * x
    return w - eta * (lr * mean / (np.sqrt(var) + epsilon) + wd * w), mean, var


def ref_signsgd(w, g, lr, wd=0.0, **_):
    return ((1 - lr * wd) * w - lr * np.sign(g),)


def ref_signum(w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
               wd_lh=0.0):
    mom = momentum * mom - (1 - momentum) * (wd * w + _clip(rescale_grad * g, clip_gradient))
    return (1 - lr * wd_lh) * w + lr * np.sign(mom), mom


def ref_ftml(w, g, d, v, z, lr, t, beta1=0.6, beta2=0.999, epsilon=1e-8, wd=0.0,
             rescale_grad=1.0, clip_grad=-1.0):
    x = _clip(rescale_grad * g + wd * w, clip_grad)
    v = beta2 * v + (1 - beta2) * x * x
    d_t = (1 - beta1 ** t) / lr * (np.sqrt(v / (1 - beta2 ** t)) + epsilon)
    z = beta1 * z + (1 - beta1) * x - (d_t - beta1 * d) * w
    return -z / d_t, d_t, v, z


def ref_ftrl(w, g, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
             clip_gradient=-1.0):
    x = _clip(rescale_grad * g, clip_gradient)
    z = z + x - (np.sqrt(n + x * x) - np.sqrt(n)) * w / lr
    n = n + x * x
    w = np.where(np.abs(z) > lamda1, (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + wd),
                 0.0)
    return w, z, n


def ref_rmsprop(w, g, n, lr, gamma1=0.95, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
                clip_gradient=-1.0, clip_weights=-1.0):
    x = _clip(rescale_grad * g + wd * w, clip_gradient)
    n = (1 - gamma1) * x * x + gamma1 * n
    w = w - lr * x / np.sqrt(n + epsilon)
    return _clip(w, clip_weights), n


def ref_rmspropalex(w, g, n, gm, delta, lr, gamma1=0.95, gamma2=0.9, epsilon=1e-8, wd=0.0,
                    rescale_grad=1.0, clip_gradient=-1.0, clip_weights=-1.0):
    x = _clip(rescale_grad * g + wd * w, clip_gradient)
    n = (1 - gamma1) * x * x + gamma1 * n
    gm = (1 - gamma1) * x + gamma1 * gm
    delta = gamma2 * delta - lr * x / np.sqrt(n - gm * gm + epsilon)
    return _clip(w + delta, clip_weights), n, gm, delta


def ref_lamb1(w, g, mean, var, t, wd, beta1=0.9, beta2=0.999, epsilon=1e-6,
              bias_correction=True, rescale_grad=1.0, clip_gradient=-1.0):
    x = _clip(rescale_grad * g, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * x
    var = beta2 * var + (1 - beta2) * x * x
    m, v = mean, var
    if bias_correction:
        m, v = mean / (1 - beta1 ** t), var / (1 - beta2 ** t)
    return m / (np.sqrt(v) + epsilon) + wd * w, mean, var


def ref_lamb2(w, g, r1, r2, lr, lower_bound=-1.0, upper_bound=-1.0):
    r1 = float(r1[0])
    if lower_bound >= 0:
        r1 = max(r1, lower_bound)
    if upper_bound >= 0:
        r1 = min(r1, upper_bound)
    ratio = 1.0 if r1 == 0 or r2[0] == 0 else r1 / float(r2[0])
    return (w - lr * ratio * g,)


def ref_adagrad(w, g, h, lr, epsilon=1e-7, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    x = _clip(rescale_grad * g, clip_gradient)
    h = h + x * x
    return w - lr * (x / np.sqrt(h + epsilon) + wd * w), h


def ref_adadelta(w, g, acc_g, acc_d, rho=0.9, epsilon=1e-5, wd=0.0, rescale_grad=1.0,
                 clip_gradient=-1.0):
    x = _clip(rescale_grad * g, clip_gradient)
    acc_g = rho * acc_g + (1 - rho) * x * x
    d = np.sqrt(acc_d + epsilon) / np.sqrt(acc_g + epsilon) * x
    return w - (d + wd * w), acc_g, rho * acc_d + (1 - rho) * d * d


def ref_adamax(w, g, m, u, lr, beta1=0.9, beta2=0.999, wd=0.0, rescale_grad=1.0,
               clip_gradient=-1.0):
    x = _clip(rescale_grad * g + wd * w, clip_gradient)
    m = beta1 * m + (1 - beta1) * x
    u = np.maximum(beta2 * u, np.abs(x))
    return w - lr * m / u, m, u


def ref_nadam(w, g, m, v, lr, coef_g, coef_m, coef_v, beta1=0.9, beta2=0.999, epsilon=1e-8,
              wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    x = _clip(rescale_grad * g + wd * w, clip_gradient)
    m = beta1 * m + (1 - beta1) * x
    v = beta2 * v + (1 - beta2) * x * x
    return w - lr * (coef_g * x + coef_m * m) / (np.sqrt(v * coef_v) + epsilon), m, v


def ref_sgld(w, g, noise, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    return (w - lr / 2 * (_clip(rescale_grad * g, clip_gradient) + wd * w) + noise,)


def _pos(shape, rng):
    return rng.uniform(0.1, 1.0, shape)


def _big(shape, rng):
    # rmspropalex: n stays above g**2 (the root's argument positive)
    return rng.uniform(1.0, 2.0, shape)


# op -> (reference, number of states, state maker (or one per state; None: uniform in
# [-0.5, 0.5]), attributes)
CASES = {
    "sgd_update": (ref_sgd, 0, None, dict(lr=0.1, wd=0.01, rescale_grad=0.5, clip_gradient=0.3)),
    "sgd_mom_update": (ref_sgd_mom, 1, None, dict(lr=0.1, momentum=0.9, wd=0.01,
                                                  clip_gradient=0.4)),
    "nag_mom_update": (ref_nag, 1, None, dict(lr=0.1, momentum=0.9, wd=0.05, rescale_grad=2.0)),
    "adam_update": (ref_adam, 2, _pos, dict(lr=0.01, beta1=0.8, wd=0.01, clip_gradient=0.5)),
    "_adamw_update": (ref_adamw, 2, _pos, dict(lr=0.5, eta=0.1, wd=0.01, clip_gradient=0.5)),
    "signsgd_update": (ref_signsgd, 0, None, dict(lr=0.1, wd=0.1)),
    "signum_update": (ref_signum, 1, None, dict(lr=0.1, momentum=0.9, wd=0.01, wd_lh=0.1)),
    "ftml_update": (ref_ftml, 3, _pos, dict(lr=0.1, t=3, wd=0.01, clip_grad=0.5)),
    "ftrl_update": (ref_ftrl, 2, _pos, dict(lr=0.1, lamda1=0.01, beta=1.0, wd=0.01)),
    "rmsprop_update": (ref_rmsprop, 1, _pos, dict(lr=0.01, gamma1=0.9, wd=0.01,
                                                  clip_weights=0.9)),
    "rmspropalex_update": (ref_rmspropalex, 3, [_big, None, None],
                           dict(lr=0.01, gamma1=0.9, gamma2=0.8, epsilon=1e-3)),
    "lamb_update_phase1": (ref_lamb1, 2, _pos, dict(t=2, wd=0.01, clip_gradient=0.5)),
    "_nbdl_adagrad_update": (ref_adagrad, 1, _pos, dict(lr=0.1, wd=0.01)),
    "_nbdl_adadelta_update": (ref_adadelta, 2, _pos, dict(rho=0.8, wd=0.01)),
    "_nbdl_adamax_update": (ref_adamax, 2, _pos, dict(lr=0.1, beta1=0.8, wd=0.01)),
    "_nbdl_nadam_update": (ref_nadam, 2, _pos, dict(lr=0.1, coef_g=0.5, coef_m=0.4,
                                                    coef_v=2.0, wd=0.01)),
}
# extra read-only inputs after the states: name -> maker(rng)
_EXTRA = {"_adamw_update": lambda rng: np.array([0.5])}


def _inputs(op, rng, dtype=np.float32):
    _, n_states, make, _ = CASES[op]
    shape = (N,)
    arrays = [rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)]
    for k in range(n_states):
        mk = make[k] if isinstance(make, list) else make
        arrays.append(mk(shape, rng) if mk else rng.uniform(-0.5, 0.5, shape))
    if op in _EXTRA:
        arrays.append(_EXTRA[op](rng))
    return [a.astype(dtype) for a in arrays]


def _expected(op, host, in_place=True):
    ref, n_states, _, attrs = CASES[op]
    args = [a.astype(np.float64) for a in host]
    kw = dict(attrs)
    if op == "nag_mom_update":
        kw["in_place"] = in_place
    res = ref(*args, **kw)
    if op == "lamb_update_phase1":       # the output is the direction, not a weight
        return res
    return res


def _run(op, host, device, out_weight=True):
    arrays = [nd.array(a, ctx=device, dtype=a.dtype) for a in host]
    attrs = CASES[op][3]
    fn = getattr(nd if not op.startswith("_") else nd._internal, op)
    if out_weight and op != "lamb_update_phase1":
        res = fn(*arrays, out=arrays[0], **attrs)
        assert res is arrays[0]
    else:
        res = fn(*arrays, **attrs)
    n_states = CASES[op][1]
    return [res.asnumpy()] + [a.asnumpy() for a in arrays[2:2 + n_states]], \
        arrays[0].asnumpy()


@pytest.mark.parametrize("op", sorted(CASES))
def test_update_matches_numpy_in_place(op):
    rng = np.random.RandomState(1)
    host = _inputs(op, rng)
    got, _ = _run(op, host, cpu())
    want = _expected(op, host)
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6, err_msg=f"{op} result {k}")


@pytest.mark.parametrize("op", sorted(set(CASES) - {"lamb_update_phase1", "nag_mom_update"}))
def test_in_place_and_new_output_agree_bit_for_bit(op, monkeypatch):
    """An update written into its weight (``REQ_INPLACE``: the kernels' loop
    that stores through the weight) and into a new array (the loop through
    ``out``) give the same weight and states, to the bit, over a length
    with vector loops and a remainder (NAG's in-place decay reads the new
    weight, as MXNet's: ``test_update_matches_numpy_in_place``)."""
    monkeypatch.setattr(sys.modules[__name__], "N", 1003)
    rng = np.random.RandomState(3)
    host = _inputs(op, rng)
    in_place, _ = _run(op, host, cpu())
    new_out, weight_after = _run(op, host, cpu(), out_weight=False)
    np.testing.assert_array_equal(weight_after, host[0])
    for k, (a, b) in enumerate(zip(in_place, new_out)):
        np.testing.assert_array_equal(a, b, err_msg=f"{op} result {k}")


@pytest.mark.parametrize("op", ["sgd_mom_update", "nag_mom_update", "adam_update"])
def test_new_output_leaves_the_weight(op):
    rng = np.random.RandomState(2)
    host = _inputs(op, rng)
    got, weight_after = _run(op, host, cpu(), out_weight=False)
    np.testing.assert_array_equal(weight_after, host[0])
    want = _expected(op, host, in_place=False)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)


def test_lamb_phase2_and_the_sgld_noise_input():
    rng = np.random.RandomState(3)
    w, g = rng.uniform(-1, 1, (N,)).astype(np.float32), rng.uniform(-1, 1, (N,)).astype(np.float32)
    for r1, r2, lo, hi in [(2.0, 4.0, -1.0, -1.0), (2.0, 4.0, 3.0, -1.0), (2.0, 4.0, -1.0, 1.0),
                           (0.0, 4.0, -1.0, -1.0), (2.0, 0.0, -1.0, -1.0)]:
        W = nd.array(w)
        out = nd.lamb_update_phase2(W, nd.array(g), nd.array([r1]), nd.array([r2]), lr=0.1,
                                    lower_bound=lo, upper_bound=hi, out=W)
        np.testing.assert_allclose(out.asnumpy(), ref_lamb2(w, g, [r1], [r2], 0.1, lo, hi)[0],
                                   rtol=1e-6)
    noise = rng.normal(size=(N,)).astype(np.float32)
    got = nd._internal._nbdl_sgld_update(nd.array(w), nd.array(g), nd.array(noise), lr=0.2,
                                         wd=0.1, clip_gradient=0.5)
    np.testing.assert_allclose(got.asnumpy(), ref_sgld(w, g, noise, 0.2, 0.1, 1.0, 0.5)[0],
                               rtol=1e-6)


def test_adamw_skips_on_a_bad_rescale_and_has_the_contrib_name():
    rng = np.random.RandomState(4)
    w, g, m, v, _ = _inputs("_adamw_update", rng)
    for scale in (0.0, np.inf, np.nan):
        W, M, V = nd.array(w), nd.array(m), nd.array(v)
        nd.contrib.adamw_update(W, nd.array(g), M, V, nd.array([scale]), lr=0.1, eta=1.0, out=W)
        np.testing.assert_array_equal(W.asnumpy(), w)
        np.testing.assert_array_equal(M.asnumpy(), m)


def test_float64_keeps_float64():
    rng = np.random.RandomState(5)
    host = _inputs("adam_update", rng, np.float64)
    got, _ = _run("adam_update", host, cpu())
    assert got[0].dtype == np.float64
    for a, b in zip(got, _expected("adam_update", host)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# -- float16 weights through the float32 master copy ------------------------------

@pytest.mark.parametrize("op,ref,n_mom", [("mp_sgd_update", ref_sgd, 0),
                                          ("mp_sgd_mom_update", ref_sgd_mom, 1),
                                          ("mp_nag_mom_update", ref_nag, 1)])
def test_mp_updates_float16(op, ref, n_mom):
    rng = np.random.RandomState(6)
    w32 = rng.uniform(-1, 1, (N,)).astype(np.float32)
    w16, g16 = w32.astype(np.float16), rng.uniform(-1, 1, (N,)).astype(np.float16)
    mom = rng.uniform(-0.1, 0.1, (N,)).astype(np.float32)
    attrs = dict(lr=0.1, wd=0.01, rescale_grad=0.5, clip_gradient=0.3)
    if n_mom:
        attrs["momentum"] = 0.9
    W, G, M, W32 = nd.array(w16, dtype="float16"), nd.array(g16, dtype="float16"), \
        nd.array(mom), nd.array(w32)
    inputs = [W, G] + ([M] if n_mom else []) + [W32]
    getattr(nd, op)(*inputs, out=W, **attrs)
    args = [w32.astype(np.float64), g16.astype(np.float64)] + ([mom] if n_mom else [])
    want = ref(*args, **attrs)
    np.testing.assert_allclose(W32.asnumpy(), want[0], rtol=1e-5, atol=1e-6)
    assert W.dtype == np.float16
    np.testing.assert_array_equal(W.asnumpy(), W32.asnumpy().astype(np.float16))
    if n_mom:
        np.testing.assert_allclose(M.asnumpy(), want[1], rtol=1e-5, atol=1e-6)


def test_mp_dtype_errors():
    w16 = nd.zeros((3,), dtype="float16")
    with pytest.raises(DTypeError, match="mp_sgd_update.*float32"):
        nd.mp_sgd_update(w16, w16, nd.zeros((3,), dtype="float64"), lr=0.1)
    with pytest.raises(DTypeError, match="mp_sgd_update.*float16"):
        nd.mp_sgd_update(nd.zeros((3,)), nd.zeros((3,)), nd.zeros((3,)), lr=0.1)


# -- multi-tensor forms -----------------------------------------------------------

def test_multi_sgd_updates():
    rng = np.random.RandomState(7)
    shapes = [(3,), (2, 2)]
    lrs, wds = (0.1, 0.2), (0.01, 0.0)
    w = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    g = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    m = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    W = [nd.array(a) for a in w]
    outs = nd.multi_sgd_update(W[0], nd.array(g[0]), W[1], nd.array(g[1]), lrs=lrs, wds=wds,
                               rescale_grad=0.5, num_weights=2, out=W)
    for k in range(2):
        assert outs[k] is W[k]
        np.testing.assert_allclose(W[k].asnumpy(), ref_sgd(w[k], g[k], lrs[k], wds[k], 0.5)[0],
                                   rtol=1e-6)
    W, M = [nd.array(a) for a in w], [nd.array(a) for a in m]
    outs = nd.multi_sgd_mom_update(W[0], nd.array(g[0]), M[0], W[1], nd.array(g[1]), M[1],
                                   lrs=lrs, wds=wds, momentum=0.9, num_weights=2)
    for k in range(2):
        want_w, want_m = ref_sgd_mom(w[k], g[k], m[k], lrs[k], 0.9, wds[k])
        np.testing.assert_allclose(outs[k].asnumpy(), want_w, rtol=1e-6)
        np.testing.assert_allclose(M[k].asnumpy(), want_m, rtol=1e-6)
    # float16 weights with float32 masters (and momentum)
    w32 = [a.copy() for a in w]
    W16 = [nd.array(a.astype(np.float16), dtype="float16") for a in w32]
    G16 = [nd.array(a.astype(np.float16), dtype="float16") for a in g]
    W32, M = [nd.array(a) for a in w32], [nd.array(a) for a in m]
    nd.multi_mp_sgd_mom_update(W16[0], G16[0], M[0], W32[0], W16[1], G16[1], M[1], W32[1],
                               lrs=lrs, wds=wds, momentum=0.9, num_weights=2, out=W16)
    for k in range(2):
        want_w, want_m = ref_sgd_mom(w32[k], g[k].astype(np.float16).astype(np.float64), m[k],
                                     lrs[k], 0.9, wds[k])
        np.testing.assert_allclose(W32[k].asnumpy(), want_w, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(W16[k].asnumpy(), W32[k].asnumpy().astype(np.float16))
    W16 = [nd.array(a.astype(np.float16), dtype="float16") for a in w32]
    W32 = [nd.array(a) for a in w32]
    nd.multi_mp_sgd_update(W16[0], G16[0], W32[0], W16[1], G16[1], W32[1], lrs=lrs, wds=wds,
                           num_weights=2, out=W16)
    for k in range(2):
        want = ref_sgd(w32[k], g[k].astype(np.float16).astype(np.float64), lrs[k], wds[k])[0]
        np.testing.assert_allclose(W32[k].asnumpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ShapeError, match="multi_sgd_update: lrs has 1 values for num_weights=2"):
        nd.multi_sgd_update(W[0], W[0], W[0], W[0], lrs=(0.1,), wds=(0.0, 0.0), num_weights=2)


# -- errors ------------------------------------------------------------------------

def test_mismatched_shapes_name_the_op_and_input():
    w = nd.zeros((4,))
    with pytest.raises(ShapeError, match=r"sgd_mom_update: input 'mom' has shape \(3,\) but the "
                                         r"weight has \(4,\)"):
        nd.sgd_mom_update(w, nd.zeros((4,)), nd.zeros((3,)), lr=0.1, out=w)
    with pytest.raises(ShapeError, match=r"adam_update: input 'grad' has shape \(2, 2\)"):
        nd.adam_update(w, nd.zeros((2, 2)), nd.zeros((4,)), nd.zeros((4,)), lr=0.1)
    with pytest.raises(ShapeError, match=r"lamb_update_phase2: input 'r1'.*must be \(1,\)"):
        nd.lamb_update_phase2(w, w, nd.zeros((2,)), nd.zeros((1,)), lr=0.1)
    with pytest.raises(nbdl.errors.AttrError, match="sgd_update.*'lr' is missing"):
        nd.sgd_update(w, w)


# -- the scalar attributes are kernel arguments -----------------------------------

def test_a_changing_learning_rate_reuses_the_prepared_kernel():
    from nbdl.kernels.cpu import optimizer as kernels
    w, g, m = nd.ones((5,)), nd.ones((5,)), nd.zeros((5,))
    nd.sgd_mom_update(w, g, m, lr=0.5, momentum=0.5, out=w)
    n_sig = len(kernels.sgd_mom_update.signatures)
    size = _inv.cache_info()["size"]
    fast = len(_scal._scalar_fast)
    ref_w, ref_m = np.ones(5), np.zeros(5)
    ref_w, ref_m = ref_sgd_mom(ref_w, np.ones(5), ref_m, 0.5, 0.5)
    for k in range(1, 60):
        lr = 0.5 / (k + 1)
        nd.sgd_mom_update(w, g, m, lr=lr, momentum=0.5, out=w)
        ref_w, ref_m = ref_sgd_mom(ref_w, np.ones(5), ref_m, lr, 0.5)
    np.testing.assert_allclose(w.asnumpy(), ref_w, rtol=1e-5)
    np.testing.assert_allclose(m.asnumpy(), ref_m, rtol=1e-5)
    assert len(kernels.sgd_mom_update.signatures) == n_sig
    assert _inv.cache_info()["size"] == size
    assert len(_scal._scalar_fast) == fast


# -- bound graphs: the states are variables written in place ----------------------

def test_symbol_graph_updates_bound_states():
    w, g, m = nbdl.sym.var("w"), nbdl.sym.var("g"), nbdl.sym.var("mom")
    out = nbdl.sym.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9, wd=0.01)
    out = nbdl.sym.load_json(out.tojson())
    rng = np.random.RandomState(8)
    host = [rng.uniform(-1, 1, (N,)).astype(np.float32) for _ in range(3)]
    arrays = {k: nd.array(a) for k, a in zip(("w", "g", "mom"), host)}
    ex = out.bind(cpu(), arrays, grad_req="null")
    res = ex.forward()[0].asnumpy()
    want_w, want_m = ref_sgd_mom(*host, lr=0.1, momentum=0.9, wd=0.01)
    np.testing.assert_allclose(res, want_w, rtol=1e-6)
    np.testing.assert_allclose(arrays["mom"].asnumpy(), want_m, rtol=1e-6)
    np.testing.assert_array_equal(arrays["w"].asnumpy(), host[0])
    bad = nbdl.sym.sgd_mom_update(w, g, m * 2, lr=0.1)
    with pytest.raises(GraphError, match="input 'mom' is updated in place"):
        bad.bind(cpu(), arrays, grad_req="null")


# -- CUDA kernels (simulator) ------------------------------------------------------

@pytest.mark.cuda
@pytest.mark.parametrize("op", ["sgd_update", "sgd_mom_update", "nag_mom_update", "adam_update",
                                "_adamw_update", "signum_update", "ftml_update", "ftrl_update",
                                "rmspropalex_update", "lamb_update_phase1",
                                "_nbdl_nadam_update"])
def test_cuda_matches_cpu(op):
    rng = np.random.RandomState(9)
    host = _inputs(op, rng)
    a, _ = _run(op, host, cpu())
    b, _ = _run(op, host, gpu())
    for x, y in zip(a, b):
        np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-7)


@pytest.mark.cuda
def test_cuda_mp_multi_and_lamb_phase2_match_cpu():
    rng = np.random.RandomState(10)
    w32 = rng.uniform(-1, 1, (N,)).astype(np.float32)
    g16 = rng.uniform(-1, 1, (N,)).astype(np.float16)
    mom = rng.uniform(-1, 1, (N,)).astype(np.float32)
    res = []
    for dev in (cpu(), gpu()):
        W = nd.array(w32.astype(np.float16), ctx=dev, dtype="float16")
        W32, M = nd.array(w32, ctx=dev), nd.array(mom, ctx=dev)
        nd.mp_nag_mom_update(W, nd.array(g16, ctx=dev, dtype="float16"), M, W32, lr=0.1,
                             momentum=0.9, wd=0.01, out=W)
        A = nd.array(w32, ctx=dev)
        outs = nd.multi_sgd_update(A, nd.array(mom, ctx=dev), A, nd.array(w32, ctx=dev),
                                   lrs=(0.1, 0.2), wds=(0.0, 0.1), num_weights=2)
        p2 = nd.lamb_update_phase2(A, nd.array(mom, ctx=dev), nd.array([2.0], ctx=dev),
                                   nd.array([3.0], ctx=dev), lr=0.1, upper_bound=1.0)
        res.append([W.asnumpy(), W32.asnumpy(), M.asnumpy(), p2.asnumpy()]
                   + [o.asnumpy() for o in outs])
    for x, y in zip(*res):
        np.testing.assert_allclose(y.astype(np.float64), x.astype(np.float64), rtol=1e-5,
                                   atol=1e-7)


@pytest.mark.cuda
def test_check_consistency_of_a_bound_update():
    w, g, mean, var = (nbdl.sym.var(n) for n in ("w", "g", "mean", "var"))
    out = nbdl.sym.adam_update(w, g, mean, var, lr=0.01, wd=0.01)
    rng = np.random.RandomState(11)
    loc = {"w": rng.uniform(-1, 1, (N,)).astype(np.float32),
           "g": rng.uniform(-1, 1, (N,)).astype(np.float32),
           "mean": rng.uniform(-1, 1, (N,)).astype(np.float32),
           "var": rng.uniform(0.1, 1, (N,)).astype(np.float32)}
    check_consistency(out, loc, grad=False)


def test_optimizer_reprepares_when_a_state_array_is_replaced():
    o = nbdl.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    w, g = nd.ones((4,)), nd.ones((4,))
    mom = o.create_state(0, w)
    for _ in range(2):
        o.update(0, w, g, mom)
    fresh = nd.zeros((4,))              # e.g. states loaded from a file
    before = w.asnumpy().astype(np.float64)
    o.update(0, w, g, fresh)
    want_w, want_m = ref_sgd_mom(before, np.ones(4), np.zeros(4), 0.1, 0.9)
    np.testing.assert_allclose(w.asnumpy(), want_w, rtol=1e-6)
    np.testing.assert_allclose(fresh.asnumpy(), want_m, rtol=1e-6)
    with pytest.raises(nbdl.optimizer.OptimizerError, match="parameter 0: the state"):
        o.update(0, w, g, nd.zeros((3,)))


@pytest.mark.cuda
def test_optimizer_on_the_gpu_matches_the_cpu():
    res = []
    for dev in (cpu(), gpu()):
        o = nbdl.optimizer.Adam(learning_rate=0.1, wd=0.01)
        w = nd.array(np.linspace(-1, 1, 5), ctx=dev)
        g = nd.array(np.linspace(0.5, -0.5, 5), ctx=dev)
        st = o.create_state(0, w)
        for _ in range(3):
            o.update(0, w, g, st)
        res.append(w.asnumpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-6)
