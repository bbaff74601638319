"""Group AdaGrad, mixed-precision LAMB, multi_sum_sq, multi_lars, the
preloaded_multi_* SGD updates and reset_arrays, against numpy."""
import numpy as np
import pytest

import nbdl
from nbdl.device import cpu, gpu
from nbdl.errors import DTypeError, ShapeError

nd = nbdl.nd


def _clip(x, c):
    return np.clip(x, -c, c) if c >= 0 else x


def _on(device, arrays):
    return [nd.array(a, dtype=a.dtype, ctx=device) for a in arrays]


@pytest.mark.parametrize("device", [cpu(), pytest.param(gpu(), marks=pytest.mark.cuda)])
def test_group_adagrad(device):
    rng = np.random.RandomState(0)
    w, g = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    h = rng.uniform(0, 1, (4, 1))
    lr, rescale, clip, eps = 0.1, 0.5, 0.4, 1e-5
    x = _clip(rescale * g, clip)
    h_new = h + (x * x).mean(axis=1, keepdims=True)
    want = w - lr * x / np.sqrt(h_new + eps)
    W, G, H = _on(device, [a.astype(np.float32) for a in (w, g, h)])
    out = nd.contrib.group_adagrad_update(W, G, H, lr=lr, rescale_grad=rescale,
                                          clip_gradient=clip, out=W)
    assert out is W
    np.testing.assert_allclose(W.asnumpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(H.asnumpy(), h_new, rtol=1e-5)
    with pytest.raises(ShapeError, match=r"group_adagrad_update: history has shape \(3, 1\)"):
        nd._contrib_group_adagrad_update(W, G, nd.zeros((3, 1), ctx=device), lr=0.1)


@pytest.mark.parametrize("device", [cpu(), pytest.param(gpu(), marks=pytest.mark.cuda)])
def test_mp_lamb_phases(device):
    rng = np.random.RandomState(1)
    w32 = rng.normal(size=(6,)).astype(np.float32)
    w16, g16 = w32.astype(np.float16), rng.normal(size=(6,)).astype(np.float16)
    mean, var = rng.uniform(0, 1, 6), rng.uniform(0, 1, 6)
    kw = dict(beta1=0.9, beta2=0.99, epsilon=1e-6, t=3, wd=0.01, rescale_grad=0.7,
              clip_gradient=1.0)
    x = _clip(0.7 * g16.astype(np.float64), 1.0)
    m = 0.9 * mean + 0.1 * x
    v = 0.99 * var + 0.01 * x * x
    direction = (m / (1 - 0.9 ** 3)) / (np.sqrt(v / (1 - 0.99 ** 3)) + 1e-6) + 0.01 * w32
    W, G, M, V, W32 = _on(device, [w16, g16, mean.astype(np.float32), var.astype(np.float32),
                                   w32])
    d = nd.mp_lamb_update_phase1(W, G, M, V, W32, **kw)
    assert d.dtype == np.float32
    np.testing.assert_allclose(d.asnumpy(), direction, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(M.asnumpy(), m, rtol=1e-5)
    np.testing.assert_allclose(V.asnumpy(), v, rtol=1e-5)
    r1, r2 = _on(device, [np.array([3.0], np.float32), np.array([2.0], np.float32)])
    out = nd.mp_lamb_update_phase2(W, d, r1, r2, W32, lr=0.1, lower_bound=0.5, upper_bound=2.5,
                                   out=W)
    want = w32 - 0.1 * 2.5 / 2.0 * d.asnumpy()          # r1 clamped to upper_bound
    np.testing.assert_allclose(W32.asnumpy(), want, rtol=1e-6)   # the master copy moves
    assert out is W and W.dtype == np.float16
    np.testing.assert_array_equal(W.asnumpy(), want.astype(np.float32).astype(np.float16))
    with pytest.raises(DTypeError, match="mp_lamb_update_phase1: input 0 must be float16"):
        nd.mp_lamb_update_phase1(W32, G, M, V, W32, t=1, wd=0.0)


@pytest.mark.parametrize("device", [cpu(), pytest.param(gpu(), marks=pytest.mark.cuda)])
def test_multi_sum_sq_and_lars(device):
    rng = np.random.RandomState(2)
    arrays = [rng.normal(size=s).astype(np.float32) for s in [(3, 4), (5,), (2, 2, 2)]]
    out = nd.multi_sum_sq(*_on(device, arrays), num_arrays=3)
    assert out.dtype == np.float32 and out.shape == (3,)
    np.testing.assert_allclose(out.asnumpy(), [np.sum(a.astype(np.float64) ** 2)
                                               for a in arrays], rtol=1e-6)
    half = nd.multi_sum_sq(*_on(device, [a.astype(np.float16) for a in arrays]), num_arrays=3)
    np.testing.assert_allclose(half.asnumpy(), [np.sum(a.astype(np.float16).astype(np.float64)
                                                       ** 2) for a in arrays], rtol=1e-6)
    lrs = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    wss = np.array([4.0, 0.0, 9.0, 1.0], np.float32)
    gss = np.array([1.0, 2.0, 0.0, 4.0], np.float32)
    wds = np.array([0.01, 0.0, 0.1, 0.2], np.float32)
    got = nd.multi_lars(*_on(device, [lrs, wss, gss, wds]), eta=0.5, eps=1e-3, rescale_grad=0.8)
    wn, gn = np.sqrt(wss.astype(np.float64)), np.sqrt(gss.astype(np.float64))
    want = np.where((wn > 0) & (gn > 0), lrs * 0.5 * wn / (gn * 0.8 + wds * wn + 1e-3), lrs)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("device", [cpu(), pytest.param(gpu(), marks=pytest.mark.cuda)])
@pytest.mark.parametrize("mp", [False, True])
@pytest.mark.parametrize("mom", [False, True])
def test_preloaded_multi_sgd(device, mp, mom):
    rng = np.random.RandomState(3)
    shapes = [(3,), (2, 2)]
    lrs, wds = np.array([0.1, 0.2], np.float32), np.array([0.01, 0.03], np.float32)
    w = [rng.normal(size=s).astype(np.float32) for s in shapes]
    g = [rng.normal(size=s).astype(np.float32) for s in shapes]
    m = [rng.normal(size=s).astype(np.float32) for s in shapes]
    if mp:
        w = [a.astype(np.float16).astype(np.float32) for a in w]
        g = [a.astype(np.float16).astype(np.float32) for a in g]
    args, states = [], []
    for k in range(2):
        dt = np.float16 if mp else np.float32
        group = _on(device, [w[k].astype(dt), g[k].astype(dt)]
                    + ([m[k]] if mom else []) + ([w[k]] if mp else []))
        args += group
        states.append(group)
    op = {(False, False): "preloaded_multi_sgd_update",
          (False, True): "preloaded_multi_sgd_mom_update",
          (True, False): "preloaded_multi_mp_sgd_update",
          (True, True): "preloaded_multi_mp_sgd_mom_update"}[mp, mom]
    kw = dict(rescale_grad=0.7, clip_gradient=0.5, num_weights=2)
    if mom:
        kw["momentum"] = 0.9
    outs = getattr(nd, op)(*args, *_on(device, [lrs, wds]), out=[s[0] for s in states], **kw)
    for k in range(2):
        step = ((0.9 * m[k] if mom else 0) - lrs[k] * wds[k] * w[k]
                - lrs[k] * _clip(0.7 * g[k], 0.5))
        want = w[k] + step
        assert outs[k] is states[k][0]
        got = (states[k][-1] if mp else outs[k]).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        if mp:
            np.testing.assert_array_equal(outs[k].asnumpy(), got.astype(np.float16))
        if mom:
            np.testing.assert_allclose(states[k][2].asnumpy(), step, rtol=1e-5, atol=1e-6)


def test_preloaded_checks_the_rates():
    w = nd.zeros((3,))
    with pytest.raises(ShapeError, match="preloaded_multi_sgd_update: lrs has shape"):
        nd.preloaded_multi_sgd_update(w, w, nd.zeros((2,)), nd.zeros((1,)), num_weights=1)


@pytest.mark.parametrize("device", [cpu(), pytest.param(gpu(), marks=pytest.mark.cuda)])
def test_reset_arrays(device):
    a = nd.ones((2, 2), ctx=device)
    b = nd.ones((3,), dtype="float16", ctx=device)
    c = nd.ones((4,), dtype="int32", ctx=device)
    nd.reset_arrays(a, b, c, num_arrays=3)
    for x in (a, b, c):
        assert not x.asnumpy().any()
