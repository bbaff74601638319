"""nbdl.rnn's unfused cells (MXNet 1.x's mx.rnn): unrolled graphs against
numpy recurrences, MXNet's names, begin states, modifiers and errors."""
import numpy as np
import pytest

import nbdl
from nbdl import rnn, sym

N, T, C, H = 3, 4, 5, 6


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_step(kind, x, states, w):
    """One step of the cell ``kind`` in numpy (MXNet's gate order)."""
    h = states[0]
    xi = x @ w["i2h_weight"].T + w["i2h_bias"]
    hh = h @ w["h2h_weight"].T + w["h2h_bias"]
    if kind == "rnn":
        out = np.tanh(xi + hh)
        return out, [out]
    if kind == "lstm":
        i, f, g, o = np.split(xi + hh, 4, axis=1)
        c = sigmoid(f) * states[1] + sigmoid(i) * np.tanh(g)
        out = sigmoid(o) * np.tanh(c)
        return out, [out, c]
    xr, xz, xn = np.split(xi, 3, axis=1)
    hr, hz, hn = np.split(hh, 3, axis=1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    out = (1 - z) * n + z * h
    return out, [out]


def make(kind, prefix):
    return {"rnn": rnn.RNNCell, "lstm": rnn.LSTMCell, "gru": rnn.GRUCell}[kind](H, prefix=prefix)


def weights(kind, prefix, rng, inputs=C, hidden=H):
    g = {"rnn": 1, "lstm": 4, "gru": 3}[kind]
    return {f"{prefix}i2h_weight": rng.randn(g * hidden, inputs) * 0.4,
            f"{prefix}i2h_bias": rng.randn(g * hidden) * 0.1,
            f"{prefix}h2h_weight": rng.randn(g * hidden, hidden) * 0.4,
            f"{prefix}h2h_bias": rng.randn(g * hidden) * 0.1}


def run(symbol, args):
    args = {k: nbdl.nd.array(np.asarray(v, np.float32)) for k, v in args.items()}
    ex = symbol.bind(nbdl.cpu(), args)
    return [o.asnumpy() for o in ex.forward()]


def np_unroll(kind, prefix, x, w, states=None):
    w = {k[len(prefix):]: v for k, v in w.items()}
    n_states = 2 if kind == "lstm" else 1
    states = states or [np.zeros((x.shape[0], w["h2h_weight"].shape[1]))] * n_states
    outs = []
    for t in range(x.shape[1]):
        out, states = np_step(kind, x[:, t], states, w)
        outs.append(out)
    return np.stack(outs, axis=1), states


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_unrolled_cells_match_a_numpy_recurrence(kind, rng):
    cell = make(kind, f"{kind}_")
    outputs, states = cell.unroll(T, sym.var("data"), merge_outputs=True)
    x = rng.randn(N, T, C)
    w = weights(kind, f"{kind}_", rng)
    got = run(sym.Group([outputs] + states), dict(w, data=x))
    want, want_states = np_unroll(kind, f"{kind}_", x, w)
    np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-5)
    for g, s in zip(got[1:], want_states):
        np.testing.assert_allclose(g, s, rtol=1e-4, atol=1e-5)


def test_names_are_mxnets():
    cell = rnn.LSTMCell(H, prefix="lstm_")
    steps = [sym.var(f"x{t}") for t in range(2)]
    outputs, states = cell.unroll(2, steps)
    assert sorted(cell.params._params) == ["lstm_h2h_bias", "lstm_h2h_weight",
                                           "lstm_i2h_bias", "lstm_i2h_weight"]
    assert sym.Group(outputs).list_outputs() == ["lstm_t0_out_output", "lstm_t1_out_output"]
    assert states[1].name == "lstm_t1_state"
    internals = sym.Group(outputs).get_internals().list_outputs()
    assert "lstm_begin_state_0_output" in internals and "lstm_t0_i2h_output" in internals
    # the LSTM's i2h bias starts with its forget gate at forget_bias
    assert "lstmbias" in sym.Group(outputs).attr_dict()["lstm_i2h_bias"]["__init__"]


def test_unpack_and_pack_weights_split_the_gates(rng):
    cell = rnn.GRUCell(H, prefix="g_")
    w = {k: nbdl.nd.array(v.astype(np.float32)) for k, v in weights("gru", "g_", rng).items()}
    unpacked = cell.unpack_weights(w)
    assert sorted(unpacked) == sorted(f"g_{grp}{gate}_{kind}" for grp in ("i2h", "h2h")
                                      for gate in ("_r", "_z", "_o")
                                      for kind in ("weight", "bias"))
    np.testing.assert_array_equal(unpacked["g_i2h_z_weight"].asnumpy(),
                                  w["g_i2h_weight"].asnumpy()[H:2 * H])
    packed = cell.pack_weights(unpacked)
    assert sorted(packed) == sorted(w)
    for k in w:
        np.testing.assert_array_equal(packed[k].asnumpy(), w[k].asnumpy())


def test_begin_states_as_variables_and_stepping_by_hand(rng):
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.LSTMCell(H, prefix="a_"))
    stack.add(rnn.RNNCell(H, prefix="b_"))
    begin = stack.begin_state(func=sym.Variable)
    assert [b.name for b in begin] == ["a_begin_state_0", "a_begin_state_1", "b_begin_state_0"]
    assert stack.state_shape == [(0, H)] * 3
    x = rng.randn(N, 2, C)
    w = dict(weights("lstm", "a_", rng), **weights("rnn", "b_", rng, inputs=H))
    init = [rng.randn(N, H) for _ in range(3)]
    feed = dict(w, data=x, a_begin_state_0=init[0], a_begin_state_1=init[1],
                b_begin_state_0=init[2])
    unrolled, _ = stack.unroll(2, sym.var("data"), begin_state=begin, merge_outputs=True)
    stack.reset()
    states, outs = begin, []
    for t, step in enumerate(sym.split(sym.var("data"), num_outputs=2, axis=1, squeeze_axis=1)):
        out, states = stack(step, states)
        outs.append(out)
    got_unrolled = run(unrolled, feed)[0]
    got_steps = run(sym.Group(outs), feed)
    np.testing.assert_allclose(np.stack(got_steps, axis=1), got_unrolled, rtol=1e-6)
    a_out, _ = np_unroll("lstm", "a_", x, weights_of(w, "a_"), init[:2])
    want, _ = np_unroll("rnn", "b_", a_out, weights_of(w, "b_"), init[2:])
    np.testing.assert_allclose(got_unrolled, want, rtol=1e-4, atol=1e-5)


def weights_of(w, prefix):
    return {k: v for k, v in w.items() if k.startswith(prefix)}


def test_bidirectional_concatenates_forward_and_reversed_backward(rng):
    cell = rnn.BidirectionalCell(rnn.RNNCell(H, prefix="l_"), rnn.GRUCell(H, prefix="r_"),
                                 output_prefix="bi_")
    steps = [sym.var(f"x{t}") for t in range(3)]
    outputs, states = cell.unroll(3, steps)
    assert [o.name for o in outputs] == ["bi_t0", "bi_t1", "bi_t2"]
    x = rng.randn(N, 3, C)
    w = dict(weights("rnn", "l_", rng), **weights("gru", "r_", rng))
    got = np.stack(run(sym.Group(outputs), dict(w, **{f"x{t}": x[:, t] for t in range(3)})), 1)
    fwd, _ = np_unroll("rnn", "l_", x, weights_of(w, "l_"))
    bwd, _ = np_unroll("gru", "r_", x[:, ::-1], weights_of(w, "r_"))
    np.testing.assert_allclose(got, np.concatenate([fwd, bwd[:, ::-1]], axis=2),
                               rtol=1e-4, atol=1e-5)
    merged, _ = cell.unroll(3, sym.var("data"), merge_outputs=True)
    assert merged.name == "bi_out"
    np.testing.assert_allclose(run(merged, dict(w, data=x))[0], got, rtol=1e-5, atol=1e-6)


def test_residual_dropout_and_zoneout(rng):
    res = rnn.ResidualCell(rnn.GRUCell(C, prefix="g_"))
    outputs, _ = res.unroll(2, sym.var("data"), merge_outputs=True)
    x = rng.randn(N, 2, C)
    w = weights("gru", "g_", rng, hidden=C)
    plain, _ = np_unroll("gru", "g_", x, w)
    np.testing.assert_allclose(run(outputs, dict(w, data=x))[0], plain + x, rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(nbdl.GraphError, match="use the modifier cell"):
        res.base_cell.begin_state()
    drop, _ = rnn.DropoutCell(0.5).unroll(2, sym.var("data"), merge_outputs=True)
    assert [n for n in drop.get_internals().list_outputs() if "dropout" in n]
    zone = rnn.ZoneoutCell(rnn.RNNCell(H, prefix="z_"), zoneout_outputs=0.5, zoneout_states=0.5)
    zout, _ = zone.unroll(3, sym.var("data"), merge_outputs=True)
    assert zout.infer_shape(data=(N, 3, C))[1] == [(N, 3, H)]
    w = weights("rnn", "z_", rng)
    x = rng.randn(N, 3, C)
    want, _ = np_unroll("rnn", "z_", x, w)  # not training: zoneout keeps nothing
    np.testing.assert_allclose(run(zout, dict(w, data=x))[0], want, rtol=1e-4, atol=1e-5)
    with pytest.raises(nbdl.ArgumentError, match="cannot be stepped"):
        rnn.ZoneoutCell(rnn.FusedRNNCell(H))


def test_convolutional_cells_keep_the_spatial_size():
    for cls, n_states in ((rnn.ConvRNNCell, 1), (rnn.ConvLSTMCell, 2), (rnn.ConvGRUCell, 1)):
        cell = cls(input_shape=(2, 3, 8, 6), num_hidden=4, prefix="c_")
        assert cell.state_shape == [(0, 4, 8, 6)] * n_states
        outputs, _ = cell.unroll(2, [sym.var("x0"), sym.var("x1")])
        assert sym.Group(outputs).list_outputs() == ["c_t0_out_output", "c_t1_out_output"]
        shapes = sym.Group(outputs).infer_shape(x0=(2, 3, 8, 6), x1=(2, 3, 8, 6))[1]
        assert shapes == [(2, 4, 8, 6)] * 2
    with pytest.raises(nbdl.ArgumentError, match="must be odd"):
        rnn.ConvRNNCell(input_shape=(1, 3, 8, 6), num_hidden=4, h2h_kernel=(2, 3))


def test_bad_unrolls():
    cell = rnn.RNNCell(H)
    with pytest.raises(nbdl.ArgumentError, match="3 inputs for length 2"):
        cell.unroll(2, [sym.var("a"), sym.var("b"), sym.var("c")])
    with pytest.raises(nbdl.ArgumentError, match="inputs=None"):
        cell.unroll(2, None)
    with pytest.raises(nbdl.GraphError, match="cannot be stepped"):
        rnn.FusedRNNCell(H)(sym.var("a"), [])


def test_the_alias_maps_mxnet_rnn():
    nbdl.alias_mxnet()
    import mxnet as mx
    assert mx.rnn.LSTMCell is rnn.LSTMCell
    from mxnet.rnn import io as rnn_io
    assert rnn_io.BucketSentenceIter is rnn.BucketSentenceIter
