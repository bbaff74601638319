"""valid_length in unroll, ZoneoutCell, VariationalDropoutCell, LSTMPCell,
each against a numpy reference."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.gluon import HybridBlock, rnn


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def params(cell):
    return {k: v.data().asnumpy().astype(np.float64) for k, v in cell.collect_params().items()}


def np_lstm_step(p, x, h, c):
    a = x @ p["i2h_weight"].T + p["i2h_bias"] + h @ p["h2h_weight"].T + p["h2h_bias"]
    H = c.shape[-1]
    i, f = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H])
    g, o = np.tanh(a[:, 2 * H:3 * H]), sigmoid(a[:, 3 * H:])
    c = f * c + i * g
    return o * np.tanh(c), c


def np_gru_step(p, x, h):
    ax = x @ p["i2h_weight"].T + p["i2h_bias"]
    ah = h @ p["h2h_weight"].T + p["h2h_bias"]
    H = h.shape[-1]
    r = sigmoid(ax[:, :H] + ah[:, :H])
    z = sigmoid(ax[:, H:2 * H] + ah[:, H:2 * H])
    n = np.tanh(ax[:, 2 * H:] + r * ah[:, 2 * H:])
    return (1 - z) * n + z * h


def np_lstm_unroll(p, x, H, lens):
    """x: (N, T, C); outputs zero after each length, states at the last valid step."""
    N, T, _ = x.shape
    outs = np.zeros((N, T, H))
    hs, cs = np.zeros((N, H)), np.zeros((N, H))
    for n in range(N):
        h, c = np.zeros((1, H)), np.zeros((1, H))
        for t in range(max(int(lens[n]), 1)):
            h, c = np_lstm_step(p, x[n:n + 1, t], h, c)
            if t < lens[n]:
                outs[n, t] = h[0]
        hs[n], cs[n] = h[0], c[0]
    return outs, hs, cs


def nd(a, dtype=np.float32):
    return nbdl.nd.array(np.asarray(a, dtype))


# -- valid_length ------------------------------------------------------------------------

@pytest.mark.parametrize("layout,merge", [("NTC", True), ("TNC", False)])
def test_unroll_valid_length_matches_numpy(layout, merge):
    rng = np.random.RandomState(0)
    cell = rnn.LSTMCell(3, input_size=2)
    cell.initialize(nbdl.init.Uniform(0.5))
    x = rng.uniform(-1, 1, (3, 4, 2)).astype(np.float32)
    lens = np.array([2, 4, 1], np.float32)
    data = x if layout == "NTC" else x.transpose(1, 0, 2)
    outs, (h, c) = cell.unroll(4, nd(data), layout=layout, merge_outputs=merge,
                               valid_length=nd(lens))
    ref, rh, rc = np_lstm_unroll(params(cell), x.astype(np.float64), 3, lens)
    if merge:
        got = outs.asnumpy()
    else:
        assert len(outs) == 4
        got = np.stack([o.asnumpy() for o in outs], axis=1)
    if layout == "TNC" and merge:
        got = got.transpose(1, 0, 2)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h.asnumpy(), rh, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c.asnumpy(), rc, rtol=1e-4, atol=1e-5)


def test_bidirectional_valid_length_matches_numpy():
    rng = np.random.RandomState(1)
    l_cell, r_cell = rnn.GRUCell(2, input_size=3), rnn.GRUCell(2, input_size=3)
    cell = rnn.BidirectionalCell(l_cell, r_cell)
    cell.initialize(nbdl.init.Uniform(0.5))
    x = rng.uniform(-1, 1, (2, 4, 3))
    lens = np.array([3, 4])
    outs, states = cell.unroll(4, nd(x), layout="NTC", merge_outputs=True,
                               valid_length=nd(lens, np.int32))
    pl, pr = params(l_cell), params(r_cell)
    ref = np.zeros((2, 4, 4))
    for n in range(2):
        L = lens[n]
        h = np.zeros((1, 2))
        for t in range(L):
            h = np_gru_step(pl, x[n:n + 1, t], h)
            ref[n, t, :2] = h[0]
        np.testing.assert_allclose(states[0].asnumpy()[n], h[0], rtol=1e-4, atol=1e-5)
        h = np.zeros((1, 2))
        for t in reversed(range(L)):
            h = np_gru_step(pr, x[n:n + 1, t], h)
            ref[n, t, 2:] = h[0]
        np.testing.assert_allclose(states[1].asnumpy()[n], h[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(outs.asnumpy(), ref, rtol=1e-4, atol=1e-5)


class _Unroller(HybridBlock):
    def __init__(self, cell, length):
        super().__init__()
        self.cell, self._length = cell, length

    def forward(self, x, valid_length):
        outs, states = self.cell.unroll(self._length, x, layout="NTC", merge_outputs=True,
                                        valid_length=valid_length)
        return outs


def test_valid_length_hybridized_and_gradients():
    rng = np.random.RandomState(2)
    cell = rnn.LSTMCell(2, input_size=2, dtype="float64")
    net = _Unroller(cell, 3)
    net.initialize(nbdl.init.Uniform(0.5))
    x = nbdl.nd.array(rng.uniform(-1, 1, (2, 3, 2)), dtype=np.float64)
    lens = nbdl.nd.array(np.array([1.0, 3.0]), dtype=np.float64)
    proj = nbdl.nd.array(rng.normal(size=(2, 3, 2)), dtype=np.float64)

    def run():
        with autograd.record():
            loss = (net(x, lens) * proj).sum()
        loss.backward()
        return loss.asnumpy(), cell.i2h_weight.grad().asnumpy().copy()
    eager_loss, eager_grad = run()
    net.hybridize()
    hyb_loss, hyb_grad = run()
    np.testing.assert_allclose(hyb_loss, eager_loss, rtol=1e-10)
    np.testing.assert_allclose(hyb_grad, eager_grad, rtol=1e-9, atol=1e-12)
    ref, _, _ = np_lstm_unroll(params(cell), x.asnumpy(), 2, [1, 3])
    assert np.allclose(ref[0, 1:], 0)
    np.testing.assert_allclose(float(eager_loss.reshape(-1)[0]), (ref * proj.asnumpy()).sum(), rtol=1e-9)


def test_valid_length_bad_shape():
    cell = rnn.RNNCell(2, input_size=2)
    cell.initialize()
    with pytest.raises(nbdl.NbdlError, match=r"valid_length.*\(3, 2\)"):
        cell.unroll(2, nd(np.zeros((3, 2, 2))), valid_length=nd(np.zeros((3, 2))))


# -- ZoneoutCell -------------------------------------------------------------------------

def test_zoneout_inference_is_base_cell_and_training_mixes():
    rng = np.random.RandomState(3)
    base = rnn.GRUCell(4, input_size=3)
    cell = rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5)
    cell.initialize(nbdl.init.Uniform(0.5))
    x = rng.uniform(-1, 1, (8, 3))
    h = rng.uniform(-1, 1, (8, 4))
    new = np_gru_step(params(base), x, h)
    out, (st,) = cell(nd(x), [nd(h)])
    np.testing.assert_allclose(out.asnumpy(), new, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(st.asnumpy(), new, rtol=1e-4, atol=1e-5)
    cell.reset()
    with autograd.record():
        out, (st,) = cell(nd(x), [nd(h)])
    out, st = out.asnumpy(), st.asnumpy()
    # each output element is the new value or the previous output (zeros at the first step)
    took_new = np.isclose(out, new, rtol=1e-4, atol=1e-5)
    assert np.all(took_new | (out == 0))
    assert took_new.any() and (~took_new).any()
    kept_new = np.isclose(st, new, rtol=1e-4, atol=1e-5)
    assert np.all(kept_new | np.isclose(st, h, rtol=1e-5))
    assert kept_new.any() and (~kept_new).any()
    assert "ZoneoutCell" in repr(cell)


def test_zoneout_unroll_and_errors():
    cell = rnn.ZoneoutCell(rnn.LSTMCell(2, input_size=2), zoneout_outputs=0.3)
    cell.initialize()
    x = nd(np.random.RandomState(4).uniform(-1, 1, (2, 3, 2)))
    with autograd.record():
        outs, states = cell.unroll(3, x, merge_outputs=True)
    assert outs.shape == (2, 3, 2) and len(states) == 2
    with pytest.raises(nbdl.NbdlError, match="zoneout_states=1.5"):
        rnn.ZoneoutCell(rnn.RNNCell(2), zoneout_states=1.5)
    with pytest.raises(nbdl.NbdlError, match="BidirectionalCell"):
        rnn.ZoneoutCell(rnn.BidirectionalCell(rnn.RNNCell(2), rnn.RNNCell(2)))


# -- VariationalDropoutCell -------------------------------------------------------------

def test_variational_dropout_shares_one_mask_over_time():
    cell = rnn.VariationalDropoutCell(rnn.DropoutCell(0.0), drop_inputs=0.5, drop_outputs=0.5)
    x = nd(np.ones((6, 5, 7)))
    outs, _ = cell.unroll(5, x, merge_outputs=True)
    np.testing.assert_array_equal(outs.asnumpy(), np.ones((6, 5, 7)))   # not training
    with autograd.record():
        outs, _ = cell.unroll(5, x, merge_outputs=True)
    o = outs.asnumpy()
    for t in range(1, 5):
        np.testing.assert_array_equal(o[:, t], o[:, 0])   # the same mask at every step
    assert set(np.unique(o)) <= {0.0, 4.0} and (o == 0).any() and (o == 4).any()
    with autograd.record():
        again, _ = cell.unroll(5, x, merge_outputs=True)
    assert not np.array_equal(again.asnumpy(), o)          # a new sequence, new masks


def test_variational_dropout_states_matches_numpy_in_inference():
    rng = np.random.RandomState(5)
    base = rnn.LSTMCell(3, input_size=2)
    cell = rnn.VariationalDropoutCell(base, drop_inputs=0.2, drop_states=0.3, drop_outputs=0.1)
    cell.initialize(nbdl.init.Uniform(0.5))
    x = rng.uniform(-1, 1, (2, 3, 2))
    outs, (h, c) = cell.unroll(3, nd(x), merge_outputs=True)
    ref, rh, rc = np_lstm_unroll(params(base), x, 3, [3, 3])
    np.testing.assert_allclose(outs.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c.asnumpy(), rc, rtol=1e-4, atol=1e-5)
    with autograd.record():
        outs, _ = cell.unroll(3, nd(x), merge_outputs=True)
    assert outs.shape == (2, 3, 3)
    with pytest.raises(nbdl.NbdlError, match="drop_states"):
        rnn.VariationalDropoutCell(rnn.SequentialRNNCell(), drop_states=0.5)
    assert "drop_inputs=0.2" in repr(cell)


# -- LSTMPCell ---------------------------------------------------------------------------

def np_lstmp_step(p, x, r, c):
    h, c = np_lstm_step(p, x, r, c)
    return h @ p["h2r_weight"].T, c


def test_lstmp_cell_matches_numpy():
    rng = np.random.RandomState(6)
    cell = rnn.LSTMPCell(4, 2, input_size=3)
    cell.initialize(nbdl.init.Uniform(0.5))
    assert set(cell.collect_params()) == {"i2h_weight", "h2h_weight", "h2r_weight",
                                          "i2h_bias", "h2h_bias"}
    assert cell.h2r_weight.shape == (2, 4) and cell.h2h_weight.shape == (16, 2)
    assert [s["shape"] for s in cell.state_info(5)] == [(5, 2), (5, 4)]
    x = rng.uniform(-1, 1, (3, 5, 3))
    outs, (r, c) = cell.unroll(5, nd(x), merge_outputs=True)
    p = params(cell)
    rr, cc = np.zeros((3, 2)), np.zeros((3, 4))
    ref = []
    for t in range(5):
        rr, cc = np_lstmp_step(p, x[:, t], rr, cc)
        ref.append(rr)
    np.testing.assert_allclose(outs.asnumpy(), np.stack(ref, 1), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(r.asnumpy(), rr, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c.asnumpy(), cc, rtol=1e-4, atol=1e-5)
    assert repr(cell) == "LSTMPCell(3 -> 16 -> 2)"


def test_lstmp_deferred_input_and_numeric_gradient():
    rng = np.random.RandomState(7)
    cell = rnn.LSTMPCell(3, 2, dtype="float64")
    cell.initialize(nbdl.init.Uniform(0.5))
    x = nbdl.nd.array(rng.uniform(-1, 1, (2, 4)), dtype=np.float64)
    st = [nbdl.nd.array(rng.uniform(-1, 1, s["shape"]), dtype=np.float64)
          for s in cell.state_info(2)]
    proj = rng.normal(size=(2, 2))
    with autograd.record():
        out, _ = cell(x, st)
        loss = (out * nbdl.nd.array(proj, dtype=np.float64)).sum()
    loss.backward()
    assert cell.i2h_weight.shape == (12, 4)
    p = cell.h2r_weight
    grad = p.grad().asnumpy().copy()
    w = p.data().asnumpy().copy()
    num = np.zeros_like(w)
    eps = 1e-6
    for i in range(w.size):
        for sgn in (1, -1):
            w2 = w.copy()
            w2.flat[i] += sgn * eps
            p.set_data(nbdl.nd.array(w2, dtype=np.float64))
            num.flat[i] += sgn * float((cell(x, st)[0].asnumpy() * proj).sum()) / (2 * eps)
    np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-8)
    with pytest.raises(nbdl.NbdlError, match="projection_size=0"):
        rnn.LSTMPCell(3, 0)
