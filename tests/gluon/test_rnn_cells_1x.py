"""Gluon 1.x behaviour of the recurrent cells: graph node names of a 1.x-style
cell unrolled on Symbols (``rnn_t0_out``), stacks unrolled layer by layer
(so BidirectionalCell can be stacked or wrapped in ResidualCell), and
``BidirectionalCell(output_prefix=)``; values against numpy references."""
import numpy as np
import pytest

import nbdl
from nbdl.gluon import rnn

T, N, C, H = 3, 2, 4, 5


def _np_rnn(x_steps, w_ih, b_ih, w_hh, b_hh):
    h = np.zeros((x_steps[0].shape[0], w_hh.shape[1]))
    outs = []
    for x in x_steps:
        h = np.tanh(x @ w_ih.T + b_ih + h @ w_hh.T + b_hh)
        outs.append(h)
    return outs, h


def _set(cell, rng, c_in, hidden=H):
    vals = {"i2h_weight": rng.standard_normal((hidden, c_in)),
            "i2h_bias": rng.standard_normal(hidden),
            "h2h_weight": rng.standard_normal((hidden, hidden)),
            "h2h_bias": rng.standard_normal(hidden)}
    for name, v in vals.items():
        p = getattr(cell, name)
        p.shape = v.shape
        p.initialize(init=nbdl.initializer.Constant(v.astype(np.float32)), force_reinit=True)
    return [vals[k] for k in ("i2h_weight", "i2h_bias", "h2h_weight", "h2h_bias")]


@pytest.mark.parametrize("kind, n_states", [("RNNCell", 1), ("LSTMCell", 2), ("GRUCell", 1)])
def test_1x_cell_names_its_step_nodes(kind, n_states):
    cell = getattr(rnn, kind)(H, prefix="rnn_")
    outputs, states = cell.unroll(T, [nbdl.sym.var(f"x{t}") for t in range(T)])
    assert nbdl.sym.Group(outputs).list_outputs() == [f"rnn_t{t}_out_output" for t in range(T)]
    assert states[0].name == f"rnn_t{T - 1}_out" and len(states) == n_states
    internals = outputs[0].get_internals().list_outputs()
    assert "rnn_t0_i2h_output" in internals and "rnn_t0_h2h_output" in internals
    if kind == "LSTMCell":
        assert states[1].name == f"rnn_t{T - 1}_state"
    # a second unroll starts at t0 again
    again, _ = cell.unroll(1, [nbdl.sym.var("y")])
    assert again[0].name == "rnn_t0_out"
    # a cell without 1.x naming keeps automatic names
    plain = getattr(rnn, kind)(H)
    out, _ = plain.unroll(1, [nbdl.sym.var("z")])
    assert "_t0_" not in out[0].name


def test_stack_of_bidirectional_cells_unrolls_layer_by_layer():
    rng = np.random.default_rng(0)
    l0, r0, top = rnn.RNNCell(H, prefix="l0_"), rnn.RNNCell(H, prefix="r0_"), \
        rnn.RNNCell(H, prefix="top_")
    stack = rnn.HybridSequentialRNNCell()
    stack.add(rnn.BidirectionalCell(l0, r0, output_prefix="bi0_"))
    stack.add(top)
    wl, wr, wt = _set(l0, rng, C), _set(r0, rng, C), _set(top, rng, 2 * H)
    x = rng.standard_normal((N, T, C)).astype(np.float32)
    out, states = stack.unroll(T, nbdl.nd.array(x), layout="NTC", merge_outputs=True)
    steps = [x[:, t].astype(np.float64) for t in range(T)]
    lo, lh = _np_rnn(steps, *wl)
    ro, rh = _np_rnn(steps[::-1], *wr)
    bi = [np.concatenate([a, b], axis=1) for a, b in zip(lo, ro[::-1])]
    to, th = _np_rnn(bi, *wt)
    assert out.shape == (N, T, H)
    np.testing.assert_allclose(out.asnumpy(), np.stack(to, axis=1), rtol=1e-4, atol=1e-5)
    assert len(states) == 3
    for got, want in zip(states, (lh, rh, th)):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5)
    # begin_state given: it is split among the cells in order
    begin = [nbdl.nd.zeros((N, H)) for _ in range(3)]
    out2, _ = stack.unroll(T, nbdl.nd.array(x), begin_state=begin, merge_outputs=True)
    np.testing.assert_allclose(out2.asnumpy(), out.asnumpy(), rtol=1e-6)


def test_residual_bidirectional_and_output_prefix():
    rng = np.random.default_rng(1)
    l0, r0 = rnn.RNNCell(C // 2, prefix="l_"), rnn.RNNCell(C // 2, prefix="r_")
    bi = rnn.BidirectionalCell(l0, r0, output_prefix="mybi_")
    cell = rnn.ResidualCell(bi)
    syms, _ = bi.unroll(2, [nbdl.sym.var("a"), nbdl.sym.var("b")])
    assert nbdl.sym.Group(syms).list_outputs() == ["mybi_t0_output", "mybi_t1_output"]
    wl, wr = _set(l0, rng, C, C // 2), _set(r0, rng, C, C // 2)
    x = [rng.standard_normal((N, C)).astype(np.float32) for _ in range(2)]
    out, _ = cell.unroll(2, [nbdl.nd.array(v) for v in x], merge_outputs=False)
    steps = [v.astype(np.float64) for v in x]
    lo, _ = _np_rnn(steps, *wl)
    ro, _ = _np_rnn(steps[::-1], *wr)
    for t in range(2):
        want = np.concatenate([lo[t], ro[::-1][t]], axis=1) + steps[t]
        np.testing.assert_allclose(out[t].asnumpy(), want, rtol=1e-4, atol=1e-5)
    merged, _ = cell.unroll(2, nbdl.nd.array(np.stack(x, axis=1)), merge_outputs=True)
    np.testing.assert_allclose(merged.asnumpy(), np.stack([o.asnumpy() for o in out], axis=1),
                               rtol=1e-6)


def test_bidirectional_output_prefix_must_be_a_string():
    with pytest.raises(nbdl.NbdlError, match="output_prefix must be a str, got 3"):
        rnn.BidirectionalCell(rnn.RNNCell(2), rnn.RNNCell(2), output_prefix=3)


def test_valid_length_merges_outputs_unless_merge_outputs_is_false():
    rng = np.random.default_rng(2)
    x = nbdl.nd.array(rng.standard_normal((T, N, C)).astype(np.float32))
    lengths = nbdl.nd.array([2, 3])
    for cell in (rnn.RNNCell(H, input_size=C),
                 rnn.BidirectionalCell(rnn.RNNCell(H, input_size=C), rnn.RNNCell(H, input_size=C))):
        cell.initialize()
        merged, _ = cell.unroll(T, x, layout="TNC", valid_length=lengths)
        width = H * (2 if isinstance(cell, rnn.BidirectionalCell) else 1)
        assert isinstance(merged, nbdl.nd.NDArray) and merged.shape == (T, N, width)
        np.testing.assert_array_equal(merged.asnumpy()[2, 0], 0)         # past length 2
        listed, _ = cell.unroll(T, x, layout="TNC", valid_length=lengths, merge_outputs=False)
        assert isinstance(listed, list) and len(listed) == T
        np.testing.assert_allclose(np.stack([o.asnumpy() for o in listed]), merged.asnumpy())
        plain, _ = cell.unroll(T, x, layout="TNC")
        assert isinstance(plain, list)


def test_variational_dropout_cell_merges_by_default_and_contrib_names():
    assert nbdl.gluon.contrib.rnn.VariationalDropoutCell is rnn.VariationalDropoutCell
    assert nbdl.gluon.contrib.rnn.LSTMPCell is rnn.LSTMPCell
    assert nbdl.gluon.contrib.rnn.Conv2DLSTMCell is rnn.Conv2DLSTMCell
    base = rnn.RNNCell(H, input_size=C)
    cell = nbdl.gluon.contrib.rnn.VariationalDropoutCell(base, drop_inputs=0.0)
    cell.initialize()
    x = nbdl.nd.array(np.random.default_rng(3).standard_normal((N, T, C)).astype(np.float32))
    merged, _ = cell.unroll(T, x)
    assert isinstance(merged, nbdl.nd.NDArray) and merged.shape == (N, T, H)
    want, _ = base.unroll(T, x, merge_outputs=True)
    np.testing.assert_allclose(merged.asnumpy(), want.asnumpy(), rtol=1e-6)
    listed, _ = cell.unroll(T, x, merge_outputs=False)
    assert isinstance(listed, list) and len(listed) == T


def test_nd_uniform_and_normal_are_the_samplers():
    assert nbdl.nd.uniform is nbdl.nd.random.uniform and nbdl.nd.normal is nbdl.nd.random.normal
    u = nbdl.nd.uniform(shape=(1000,)).asnumpy()
    assert u.shape == (1000,) and 0 <= u.min() and u.max() < 1 and 0.4 < u.mean() < 0.6


@pytest.mark.parametrize("make", [
    lambda: rnn.LSTM(3, num_layers=2, bidirectional=True, input_size=C),
    lambda: rnn.GRU(3, input_size=C),
    lambda: rnn.RNN(3, num_layers=2, activation="tanh", input_size=C),
    lambda: rnn.LSTM(4, projection_size=2, input_size=C),
])
def test_unfused_layer_computes_the_same_with_the_same_parameters(make):
    layer = make()
    layer.initialize(nbdl.initializer.Uniform(0.5))
    stack = layer._unfuse()
    assert {id(p) for p in stack.collect_params().values()} == \
        {id(p) for p in layer.collect_params().values()}
    x = nbdl.nd.array(np.random.default_rng(4).standard_normal((T, N, C)).astype(np.float32))
    fused = layer(x).asnumpy()
    cells, _ = stack.unroll(T, x, layout="TNC", merge_outputs=True)
    np.testing.assert_allclose(cells.asnumpy(), fused, rtol=1e-4, atol=1e-5)
    # numpy check of the first step of a one-layer RNN-tanh reference
    if isinstance(layer, rnn.RNN):
        p = {k.split("_", 1)[1] if k.startswith("l0") else k: v.data().asnumpy()
             for k, v in layer.collect_params().items() if "l0_" in k}
        h1 = np.tanh(x.asnumpy()[0] @ p["i2h_weight"].T + p["i2h_bias"] + p["h2h_bias"])
        first = stack[0].unroll(1, [x[0]])[0][0].asnumpy()
        np.testing.assert_allclose(first, h1, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layout", ["TNC", "NTC"])
def test_fused_layer_without_input_size_inside_a_hybridized_parent(layout):
    layer = rnn.LSTM(3, bidirectional=True, layout=layout)      # input size deferred
    net = nbdl.gluon.nn.HybridSequential()
    net.add(layer)
    net.hybridize()
    net.initialize(nbdl.initializer.Uniform(0.5))
    shape = (T, N, C) if layout == "TNC" else (N, T, C)
    x = nbdl.nd.array(np.random.default_rng(5).standard_normal(shape).astype(np.float32))
    out = net(x)
    assert layer.l0_i2h_weight.shape == (12, C) and layer.r0_i2h_weight.shape == (12, C)
    assert out.shape == shape[:2] + (6,)
    cells, _ = layer._unfuse().unroll(T, x, layout=layout, merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), cells.asnumpy(), rtol=1e-4, atol=1e-5)
