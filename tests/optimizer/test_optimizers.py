"""Every optimizer against a numpy reference written here from MXNet's update
formulas (several steps; weight decay, gradient rescaling and clipping,
per-parameter lr_mult/wd_mult), CPU against the CUDA simulator, and the
Optimizer base's bookkeeping and errors."""
import math

import numpy as np
import pytest

import nbdl
from nbdl import optimizer as opt
from nbdl.optimizer import OptimizerError

LR, WD, RESCALE = 0.1, 0.01, 0.5


def clipped(x, c):
    return np.clip(x, -c, c) if c else x


def zeros_state(w, *names):
    return {n: np.zeros_like(w) for n in names}


# -- numpy references: ref(w, g, st, t, lr, wd, rescale, clip, hp) -> new w ------

def ref_sgd(w, g, st, t, lr, wd, rs, c, hp):
    x = clipped(rs * g, c)
    if hp.get("momentum", 0.0) == 0.0:
        return (1 - lr * wd) * w - lr * x
    st["mom"] = hp["momentum"] * st["mom"] - lr * wd * w - lr * x
    return w + st["mom"]


def ref_nag(w, g, st, t, lr, wd, rs, c, hp):
    # MXNet 1.x: the momentum holds lr-scaled steps; its decay term reads the new weight
    mu, x = hp["momentum"], clipped(rs * g, c)
    new = w + mu * mu * st["mom"] - (1 + mu) * lr * (x + wd * w)
    st["mom"] = mu * st["mom"] - lr * (x + wd * new)
    return new


def ref_adam(w, g, st, t, lr, wd, rs, c, hp):
    b1, b2, eps = hp.get("beta1", 0.9), hp.get("beta2", 0.999), hp.get("epsilon", 1e-8)
    x = clipped(rs * g + wd * w, c)
    st["m"] = b1 * st["m"] + (1 - b1) * x
    st["v"] = b2 * st["v"] + (1 - b2) * x * x
    lr_t = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    return w - lr_t * st["m"] / (np.sqrt(st["v"]) + eps)


def ref_adamw(w, g, st, t, lr, wd, rs, c, hp):
    b1, b2, eps = 0.9, 0.999, 1e-6
    x = clipped(rs * g, c)
    st["m"] = b1 * st["m"] + (1 - b1) * x
    st["v"] = b2 * st["v"] + (1 - b2) * x * x
    eta = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t) if hp.get("correct_bias", True) else lr
    return w - eta * (st["m"] / (np.sqrt(st["v"]) + eps) + wd * w)


def ref_rmsprop(w, g, st, t, lr, wd, rs, c, hp):
    g1, eps, cw = hp.get("gamma1", 0.9), 1e-8, hp.get("clip_weights")
    x = clipped(rs * g + wd * w, c)
    st["n"] = (1 - g1) * x * x + g1 * st["n"]
    return clipped(w - lr * x / np.sqrt(st["n"] + eps), cw)


def ref_rmsprop_centered(w, g, st, t, lr, wd, rs, c, hp):
    g1, g2, eps = 0.9, hp.get("gamma2", 0.9), 1e-8
    x = clipped(rs * g + wd * w, c)
    st["n"] = (1 - g1) * x * x + g1 * st["n"]
    st["g"] = (1 - g1) * x + g1 * st["g"]
    st["d"] = g2 * st["d"] - lr * x / np.sqrt(st["n"] - st["g"] ** 2 + eps)
    return w + st["d"]


def ref_adagrad(w, g, st, t, lr, wd, rs, c, hp):
    x = clipped(rs * g, c)
    st["h"] = st["h"] + x * x
    return w - lr * (x / np.sqrt(st["h"] + 1e-7) + wd * w)


def ref_adadelta(w, g, st, t, lr, wd, rs, c, hp):
    # MXNet 1.x: the learning rate takes no part, wd applies to the weight
    rho, eps = 0.9, 1e-5
    x = clipped(rs * g, c)
    st["ag"] = rho * st["ag"] + (1 - rho) * x * x
    d = np.sqrt(st["ad"] + eps) / np.sqrt(st["ag"] + eps) * x
    st["ad"] = rho * st["ad"] + (1 - rho) * d * d
    return w - (d + wd * w)


def ref_adamax(w, g, st, t, lr, wd, rs, c, hp):
    b1, b2 = 0.9, 0.999
    x = clipped(rs * g + wd * w, c)
    st["m"] = b1 * st["m"] + (1 - b1) * x
    st["u"] = np.maximum(b2 * st["u"], np.abs(x))
    return w - lr / (1 - b1 ** t) * st["m"] / st["u"]


def ref_nadam(w, g, st, t, lr, wd, rs, c, hp):
    b1, b2, eps, decay = 0.9, 0.999, 1e-8, 0.004
    x = clipped(rs * g + wd * w, c)
    mu_t = b1 * (1 - 0.5 * 0.96 ** (t * decay))
    mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * decay))
    st["sched"] = st.get("sched", 1.0) * mu_t
    st["m"] = b1 * st["m"] + (1 - b1) * x
    st["v"] = b2 * st["v"] + (1 - b2) * x * x
    m_bar = (1 - mu_t) * x / (1 - st["sched"]) + mu_next * st["m"] / (1 - st["sched"] * mu_next)
    v_hat = st["v"] / (1 - b2 ** t)
    return w - lr * m_bar / (np.sqrt(v_hat) + eps)


def ref_lamb(w, g, st, t, lr, wd, rs, c, hp):
    b1, b2, eps = 0.9, 0.999, 1e-6
    x = clipped(rs * g, c)
    st["m"] = b1 * st["m"] + (1 - b1) * x
    st["v"] = b2 * st["v"] + (1 - b2) * x * x
    m_hat, v_hat = st["m"] / (1 - b1 ** t), st["v"] / (1 - b2 ** t)
    d = m_hat / (np.sqrt(v_hat) + eps) + wd * w
    r1, r2 = np.linalg.norm(w), np.linalg.norm(d)
    if hp.get("lower_bound"):
        r1 = max(r1, hp["lower_bound"])
    if hp.get("upper_bound"):
        r1 = min(r1, hp["upper_bound"])
    ratio = 1.0 if r1 == 0 or r2 == 0 else r1 / r2
    return w - lr * ratio * d


def ref_ftrl(w, g, st, t, lr, wd, rs, c, hp):
    lamda1, beta = 0.01, 1.0
    x = clipped(rs * g, c)
    st["z"] = st["z"] + x - (np.sqrt(st["n"] + x * x) - np.sqrt(st["n"])) * w / lr
    st["n"] = st["n"] + x * x
    new = (np.sign(st["z"]) * lamda1 - st["z"]) / ((beta + np.sqrt(st["n"])) / lr + wd)
    return np.where(np.abs(st["z"]) > lamda1, new, 0.0)


def ref_signum(w, g, st, t, lr, wd, rs, c, hp):
    mom, wd_lh = hp.get("momentum", 0.9), hp.get("wd_lh", 0.0)
    if mom == 0.0:
        return (1 - lr * wd) * w - lr * np.sign(g)
    st["mom"] = mom * st["mom"] - (1 - mom) * wd * w - (1 - mom) * clipped(rs * g, c)
    return (1 - lr * wd_lh) * w + lr * np.sign(st["mom"])


def ref_ftml(w, g, st, t, lr, wd, rs, c, hp):
    b1, b2, eps = hp.get("beta1", 0.6), hp.get("beta2", 0.999), 1e-8
    x = clipped(rs * g + wd * w, c)
    st["v"] = b2 * st["v"] + (1 - b2) * x * x
    d_t = (1 - b1 ** t) / lr * (np.sqrt(st["v"] / (1 - b2 ** t)) + eps)
    st["z"] = b1 * st["z"] + (1 - b1) * x - (d_t - b1 * st["d"]) * w
    st["d"] = d_t
    return -st["z"] / d_t


# (optimizer name, constructor kwargs, reference, state names)
CASES = [
    ("sgd", {}, ref_sgd, ()),
    ("sgd", {"momentum": 0.9}, ref_sgd, ("mom",)),
    ("nag", {"momentum": 0.8}, ref_nag, ("mom",)),
    ("adam", {}, ref_adam, ("m", "v")),
    ("adamw", {}, ref_adamw, ("m", "v")),
    ("adamw", {"correct_bias": False}, ref_adamw, ("m", "v")),
    ("rmsprop", {}, ref_rmsprop, ("n",)),
    ("rmsprop", {"clip_weights": 0.8}, ref_rmsprop, ("n",)),
    ("rmsprop", {"centered": True, "gamma2": 0.7}, ref_rmsprop_centered, ("n", "g", "d")),
    ("adagrad", {}, ref_adagrad, ("h",)),
    ("adadelta", {}, ref_adadelta, ("ag", "ad")),
    ("adamax", {}, ref_adamax, ("m", "u")),
    ("nadam", {}, ref_nadam, ("m", "v")),
    ("lamb", {}, ref_lamb, ("m", "v")),
    ("lamb", {"lower_bound": 2.5, "upper_bound": 3.0}, ref_lamb, ("m", "v")),
    ("ftrl", {}, ref_ftrl, ("z", "n")),
    ("signum", {}, ref_signum, ("mom",)),
    ("signum", {"momentum": 0.0}, ref_signum, ()),
    ("signum", {"wd_lh": 0.05}, ref_signum, ("mom",)),
    ("ftml", {}, ref_ftml, ("d", "v", "z")),
    ("ftml", {"beta1": 0.8, "beta2": 0.9}, ref_ftml, ("d", "v", "z")),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'default'}" for n, kw, _, _ in CASES]


class FakeParam:
    def __init__(self, lr_mult=1.0, wd_mult=1.0):
        self.lr_mult, self.wd_mult = lr_mult, wd_mult


def _data(rng, shape=(3, 5), steps=4):
    w0 = rng.uniform(-1.5, 1.5, shape).astype(np.float32)
    grads = [rng.uniform(-2, 2, shape).astype(np.float32) for _ in range(steps)]
    return w0, grads


def _run(o, w0, grads, dtype=np.float32, ctx=None, index=0):
    w = nbdl.nd.array(w0, dtype=dtype, ctx=ctx)
    state = o.create_state_multi_precision(index, w)
    for g in grads:
        o.update([index], [w], [nbdl.nd.array(g, dtype=dtype, ctx=ctx)], [state])
    return w


def _reference(ref, hp, state_names, w0, grads, lr, wd, rescale, clip):
    w = w0.astype(np.float64)
    st = zeros_state(w, *state_names)
    for t, g in enumerate(grads, start=1):
        w = ref(w, g.astype(np.float64), st, t, lr, wd, rescale, clip, hp)
    return w


@pytest.mark.parametrize("name, kwargs, ref, states", CASES, ids=IDS)
@pytest.mark.parametrize("clip", [None, 0.3])
def test_matches_numpy_reference(name, kwargs, ref, states, clip, rng):
    w0, grads = _data(rng)
    lr = 0.01 if name == "ftrl" else LR
    o = opt.create(name, learning_rate=lr, wd=WD, rescale_grad=RESCALE, clip_gradient=clip,
                   **kwargs)
    got = _run(o, w0, grads)
    assert got.dtype == np.float32
    want = _reference(ref, kwargs, states, w0, grads, lr, WD, RESCALE, clip)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("name, kwargs, ref, states", CASES, ids=IDS)
def test_lr_mult_and_wd_mult_from_param_dict(name, kwargs, ref, states, rng):
    w0, grads = _data(rng, shape=(7,), steps=3)
    lr = 0.01 if name == "ftrl" else LR
    o = opt.create(name, learning_rate=lr, wd=WD, rescale_grad=RESCALE,
                   param_dict={4: FakeParam(lr_mult=0.5, wd_mult=3.0)}, **kwargs)
    got = _run(o, w0, grads, index=4)
    want = _reference(ref, kwargs, states, w0, grads, lr * 0.5, WD * 3.0, RESCALE, None)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("name, kwargs, ref, states", CASES, ids=IDS)
def test_float64_weights_stay_float64(name, kwargs, ref, states, rng):
    w0, grads = _data(rng, shape=(6,), steps=2)
    lr = 0.01 if name == "ftrl" else LR
    o = opt.create(name, learning_rate=lr, wd=WD, clip_gradient=0.5, **kwargs)
    got = _run(o, w0, grads, dtype=np.float64)
    assert got.dtype == np.float64
    want = _reference(ref, kwargs, states, w0, grads, lr, WD, 1.0, 0.5)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.cuda
@pytest.mark.parametrize("name, kwargs, ref, states", CASES, ids=IDS)
def test_cpu_and_cuda_simulator_kernels_agree(name, kwargs, ref, states, rng):
    w0, grads = _data(rng, shape=(5,), steps=2)
    make = lambda: opt.create(name, learning_rate=0.05, wd=WD, rescale_grad=RESCALE,  # noqa: E731
                              clip_gradient=0.4, **kwargs)
    cpu = _run(make(), w0, grads)
    gpu = _run(make(), w0, grads, ctx=nbdl.gpu(0))
    assert gpu.context == nbdl.gpu(0)
    np.testing.assert_allclose(gpu.asnumpy(), cpu.asnumpy(), rtol=1e-5, atol=1e-6)


def test_kernels_receive_float32_scalars():
    from nbdl.kernels.cpu import optimizer as kernels
    w = nbdl.nd.ones((4,))
    o = opt.Adam(wd=0.1)
    o.update(0, w, nbdl.nd.ones((4,)), o.create_state(0, w))
    sig = [s for s in kernels.adam_update.signatures if str(s[0].dtype) == "float32"][0]
    # (weight, grad, mean, var, out, req, then the seven scalar attributes)
    assert len(sig) == 13 and all(str(t) == "float32" for t in sig[6:])


def test_scheduler_drives_the_rate_and_counts_updates():
    from nbdl.lr_scheduler import FactorScheduler
    sched = FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    o = opt.SGD(lr_scheduler=sched)
    w = nbdl.nd.zeros((2,))
    for _ in range(3):
        o.update([0], [w], [nbdl.nd.ones((2,))], [None])
    np.testing.assert_allclose(w.asnumpy(), [-1.75, -1.75])      # 1 + 0.5 + 0.25
    assert o.num_update == 3 and o.learning_rate == 0.25
    with pytest.raises(OptimizerError, match="lr_scheduler"):
        o.set_learning_rate(0.1)


def test_update_counts_per_index_and_begin_num_update():
    o = opt.SGD(begin_num_update=10)
    ws = [nbdl.nd.zeros((1,)) for _ in range(2)]
    g = nbdl.nd.ones((1,))
    o.update([0, 1], ws, [g, g], [None, None])
    o.update([0], ws[:1], [g], [None])
    assert o._index_update_count == {0: 12, 1: 11} and o.num_update == 12


def test_set_learning_rate_and_single_value_update():
    o = opt.SGD(learning_rate=0.5)
    o.set_learning_rate(0.25)
    assert o.learning_rate == 0.25
    w = nbdl.nd.ones((3,))
    o.update(0, w, nbdl.nd.ones((3,)), None)
    np.testing.assert_allclose(w.asnumpy(), [0.75] * 3)
    with pytest.raises(OptimizerError, match="learning_rate must be >= 0"):
        o.set_learning_rate(-1)


def test_mults_by_name_and_mxnet_wd_rule():
    o = opt.SGD(learning_rate=1.0, wd=0.1, param_idx2name={0: "fc_weight", 1: "fc_bias"})
    assert o._get_wd(0) == pytest.approx(0.1) and o._get_wd(1) == 0.0
    o.set_lr_mult({"fc_weight": 0.1, 1: 3.0})
    assert o._get_lr(0) == pytest.approx(0.1) and o._get_lr(1) == pytest.approx(3.0)
    sym = nbdl.sym.var("w", lr_mult=2.0, wd_mult=0.5)
    o2 = opt.SGD(learning_rate=1.0, wd=1.0, sym=sym, param_idx2name={0: "w"})
    assert o2._get_lr(0) == 2.0 and o2._get_wd(0) == 0.5


def test_clip_gradient_zero_means_no_clipping(rng):
    w0, grads = _data(rng, shape=(4,), steps=2)
    a = _run(opt.SGD(clip_gradient=0), w0, grads).asnumpy()
    b = _run(opt.SGD(clip_gradient=None), w0, grads).asnumpy()
    np.testing.assert_array_equal(a, b)


def test_adamax_leaves_elements_with_zero_gradients_unchanged():
    w = nbdl.nd.array([1.0, 2.0])
    o = opt.Adamax()
    st = o.create_state(0, w)
    o.update(0, w, nbdl.nd.array([0.0, 1.0]), st)
    out = w.asnumpy()
    assert out[0] == 1.0 and np.isfinite(out).all() and out[1] < 2.0


def test_multi_precision_float16_weights():
    w = nbdl.nd.array([1.0, 2.0, 3.0], dtype=np.float16)
    o = opt.SGD(learning_rate=0.1, momentum=0.9, multi_precision=True)
    st = o.create_state_multi_precision(0, w)
    mom, master = st          # SGD keeps MXNet 1.x's order: (momentum, master)
    assert master.dtype == np.float32 and mom.dtype == np.float32
    master_first = opt.Adam(multi_precision=True).create_state_multi_precision(0, w)
    assert master_first[0].dtype == np.float32 and isinstance(master_first[1], tuple)
    for _ in range(2):
        o.update_multi_precision([0], [w], [nbdl.nd.ones((3,), dtype=np.float16)], [st])
    want = np.array([1.0, 2.0, 3.0]) - 0.1 - (0.9 * 0.1 + 0.1)
    np.testing.assert_allclose(master.asnumpy(), want, rtol=1e-6)
    assert w.dtype == np.float16
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-3)
    with pytest.raises(OptimizerError, match="multi_precision=True"):
        opt.SGD().create_state_multi_precision(0, w)


def test_empty_weight_is_a_no_op():
    for name in ("sgd", "lamb"):
        o = opt.create(name)
        w = nbdl.nd.zeros((0, 3))
        o.update(0, w, nbdl.nd.zeros((0, 3)), o.create_state(0, w))
        assert w.shape == (0, 3)


def test_mismatched_arrays_name_the_parameter():
    o = opt.Adam()
    w = nbdl.nd.ones((3,))
    with pytest.raises(OptimizerError, match="parameter 7.*gradient is float32\\(4,\\)"):
        o.update(7, w, nbdl.nd.ones((4,)), o.create_state(7, w))
    with pytest.raises(OptimizerError, match="must be an NDArray"):
        o.update(0, np.ones(3), nbdl.nd.ones((3,)), None)
    with pytest.raises(OptimizerError, match="2 indices, 1 weights"):
        o.update([0, 1], [w], [w], [None])
    with pytest.raises(OptimizerError, match="int32"):
        opt.SGD().update(0, nbdl.nd.ones((2,), dtype=np.int32), nbdl.nd.ones((2,)), None)


@pytest.mark.parametrize("make, words", [
    (lambda: opt.create("adamm"), "unknown optimizer 'adamm'"),
    (lambda: opt.SGD(momentun=0.9), "unknown arguments \\['momentun'\\]"),
    (lambda: opt.SGD(momentum=-0.1), "momentum must be >= 0"),
    (lambda: opt.Adam(beta1=1.0), "beta1 must be < 1"),
    (lambda: opt.SGD(learning_rate="fast"), "learning_rate must be a number"),
    (lambda: opt.SGD(clip_gradient=-1), "clip_gradient must be > 0"),
    (lambda: opt.Ftrl(learning_rate=0.0), "learning_rate must be > 0"),
    (lambda: opt.AdaGrad(eps=1e-3, epsilon=1e-4), "disagree"),
    (lambda: opt.SGD(begin_num_update=-2), "begin_num_update"),
])
def test_bad_arguments_raise(make, words):
    with pytest.raises(OptimizerError, match=words):
        make()


def test_register_and_create_a_custom_optimizer():
    @opt.register
    class HalfStepTest(opt.Optimizer):
        def _step(self, index, weight, grad, state, lr, wd):
            self._update_op("sgd_update", [weight, grad], self._base_attrs(lr / 2, wd))
    o = opt.create("halfsteptest", learning_rate=1.0)
    w = nbdl.nd.zeros((2,))
    o.update(0, w, nbdl.nd.ones((2,)), None)
    np.testing.assert_allclose(w.asnumpy(), [-0.5, -0.5])
    assert opt.create(o) is o
    assert isinstance(opt.Optimizer.create_optimizer("nag", momentum=0.5), opt.NAG)
