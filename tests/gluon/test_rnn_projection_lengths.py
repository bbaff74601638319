"""Fused rnn.LSTM with projection_size (LSTMP) and the fused layers with
use_sequence_length, against unrolled cells (outputs, states, gradients) and
hybridized against eager."""
import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.gluon import rnn

WEIGHTS = ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")


def nd(a, dtype=np.float64):
    return nbdl.nd.array(np.asarray(a, dtype), dtype=dtype)


def share(layer, cell, prefix, names):
    """Give ``cell`` the layer's parameters ``prefix_<name>``."""
    for k in names:
        cell.collect_params()[k].set_data(layer.collect_params()[f"{prefix}_{k}"].data())


def record_loss(fn, proj):
    with autograd.record():
        out, states = fn()
        loss = (out * nd(proj)).sum()
    loss.backward()
    return out.asnumpy(), [s.asnumpy() for s in states]


def test_lstm_projection_parameters_and_states():
    net = rnn.LSTM(4, num_layers=2, bidirectional=True, projection_size=2, input_size=3)
    params = net.collect_params()
    shapes = {k: p.shape for k, p in params.items()}
    assert shapes["l0_i2h_weight"] == (16, 3) and shapes["r0_i2h_weight"] == (16, 3)
    assert shapes["l0_h2h_weight"] == (16, 2) and shapes["l0_h2r_weight"] == (2, 4)
    assert shapes["l1_i2h_weight"] == (16, 4) and shapes["r1_h2r_weight"] == (2, 4)
    assert len(params) == 2 * 2 * 5
    assert [s["shape"] for s in net.state_info(5)] == [(4, 5, 2), (4, 5, 4)]
    assert [s.shape for s in net.begin_state(5)] == [(4, 5, 2), (4, 5, 4)]
    assert "projection_size=2" in repr(net)
    net.initialize()
    out = net(nbdl.nd.ones((6, 5, 3)))
    assert out.shape == (6, 5, 4)                      # 2 directions x projection_size


@pytest.mark.parametrize("L,bi", [(2, False), (1, True)])
def test_lstm_projection_layer_equals_lstmp_cells(L, bi):
    H, P, I, T, N = 3, 2, 2, 4, 2
    rng = np.random.RandomState(0)
    layer = rnn.LSTM(H, num_layers=L, bidirectional=bi, projection_size=P, input_size=I,
                     layout="NTC", dtype="float64")
    layer.initialize(nbdl.init.Uniform(0.5))
    names = WEIGHTS + ("h2r_weight",)
    if bi:
        l_cell = rnn.LSTMPCell(H, P, input_size=I, dtype="float64")
        r_cell = rnn.LSTMPCell(H, P, input_size=I, dtype="float64")
        cells = [(l_cell, "l0"), (r_cell, "r0")]
        stack = rnn.BidirectionalCell(l_cell, r_cell)
    else:
        stack = rnn.SequentialRNNCell()
        cells = []
        for i in range(L):
            c = rnn.LSTMPCell(H, P, input_size=I if i == 0 else P, dtype="float64")
            stack.add(c)
            cells.append((c, f"l{i}"))
    for c, prefix in cells:
        c.initialize()
        share(layer, c, prefix, names)
    x = nd(rng.uniform(-1, 1, (N, T, I)))
    proj = rng.normal(size=(N, T, P * (2 if bi else 1)))
    begin = [nd(rng.uniform(-1, 1, s.shape)) for s in layer.begin_state(N)]
    # the cells' states: [r, c] per cell (layer order; for bi, l then r)
    cell_begin = []
    for k in range(len(cells)):
        cell_begin += [begin[0][k], begin[1][k]]
    out, states = record_loss(lambda: layer(x, begin), proj)
    ref, ref_states = record_loss(
        lambda: stack.unroll(T, x, begin_state=cell_begin, layout="NTC", merge_outputs=True),
        proj)
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)
    for k in range(len(cells)):
        np.testing.assert_allclose(states[0][k], ref_states[2 * k], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(states[1][k], ref_states[2 * k + 1], rtol=1e-10, atol=1e-12)
    for c, prefix in cells:
        for k in names:
            np.testing.assert_allclose(layer.collect_params()[f"{prefix}_{k}"].grad().asnumpy(),
                                       c.collect_params()[k].grad().asnumpy(),
                                       rtol=1e-9, atol=1e-12, err_msg=f"{prefix}_{k}")


def _gru_bidirectional(H, I):
    layer = rnn.GRU(H, bidirectional=True, input_size=I, layout="NTC", dtype="float64",
                    use_sequence_length=True)
    l_cell = rnn.GRUCell(H, input_size=I, dtype="float64")
    r_cell = rnn.GRUCell(H, input_size=I, dtype="float64")
    return layer, rnn.BidirectionalCell(l_cell, r_cell), [(l_cell, "l0"), (r_cell, "r0")], WEIGHTS


def _lstmp_two_layers(H, I):
    P = 2
    layer = rnn.LSTM(H, num_layers=2, projection_size=P, input_size=I, layout="NTC",
                     dtype="float64", use_sequence_length=True)
    stack = rnn.SequentialRNNCell()
    cells = []
    for i in range(2):
        c = rnn.LSTMPCell(H, P, input_size=I if i == 0 else P, dtype="float64")
        stack.add(c)
        cells.append((c, f"l{i}"))
    return layer, stack, cells, WEIGHTS + ("h2r_weight",)


@pytest.mark.parametrize("make", [_gru_bidirectional, _lstmp_two_layers])
def test_sequence_length_layer_equals_cells_with_valid_length(make):
    """The fused layer with sequence_length equals the cells unrolled with
    valid_length: zero outputs after each length, states at the last valid
    step (the reverse direction starting there), the same gradients."""
    H, I, T, N = 3, 2, 4, 3
    rng = np.random.RandomState(1)
    layer, stack, cells, names = make(H, I)
    layer.initialize(nbdl.init.Uniform(0.5))
    for c, prefix in cells:
        c.initialize()
        share(layer, c, prefix, names)
    x = nd(rng.uniform(-1, 1, (N, T, I)))
    lens = np.array([3, 1, 4], np.int32)
    width = layer(x, sequence_length=nbdl.nd.array(lens, dtype=np.int32)).shape[2]
    proj = rng.normal(size=(N, T, width))
    out, states = record_loss(
        lambda: layer(x, layer.begin_state(N, dtype=np.float64),
                      nbdl.nd.array(lens, dtype=np.int32)), proj)
    ref, ref_states = record_loss(
        lambda: stack.unroll(T, x, layout="NTC", merge_outputs=True,
                             valid_length=nd(lens)), proj)
    assert np.all(out[1, 1:] == 0) and np.all(out[0, 3:] == 0)
    np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)
    n_st = len(states)
    for k in range(len(cells)):
        for j in range(n_st):
            np.testing.assert_allclose(states[j][k], ref_states[n_st * k + j], rtol=1e-10,
                                       atol=1e-12)
    for c, prefix in cells:
        for k in names:
            np.testing.assert_allclose(layer.collect_params()[f"{prefix}_{k}"].grad().asnumpy(),
                                       c.collect_params()[k].grad().asnumpy(),
                                       rtol=1e-9, atol=1e-12, err_msg=f"{prefix}_{k}")


def test_hybridized_equals_eager_projection_and_lengths():
    rng = np.random.RandomState(2)
    net = rnn.LSTM(3, num_layers=2, bidirectional=True, projection_size=2, dtype="float64",
                   use_sequence_length=True)
    net.initialize(nbdl.init.Uniform(0.5))
    x = nd(rng.uniform(-1, 1, (3, 3, 2)))
    lens = nbdl.nd.array(np.array([3, 0, 2], np.int32), dtype=np.int32)
    states = [nd(rng.uniform(-1, 1, s.shape)) for s in net.begin_state(3)]
    proj = rng.normal(size=(3, 3, 4))

    def run():
        out, st = record_loss(lambda: net(x, states, lens), proj)
        only = net(x, sequence_length=lens).asnumpy()     # states=None: zeros, output only
        grads = {k: p.grad().asnumpy().copy() for k, p in net.collect_params().items()}
        return out, st, only, grads
    eager = run()
    net.hybridize()
    hyb = run()
    for a, b in zip([eager[0], eager[2]] + eager[1], [hyb[0], hyb[2]] + hyb[1]):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)
    for k in eager[3]:
        np.testing.assert_allclose(hyb[3][k], eager[3][k], rtol=1e-10, atol=1e-12, err_msg=k)
    assert np.all(eager[0][:, 1] == 0)
    np.testing.assert_array_equal(eager[1][0][:, 1], states[0].asnumpy()[:, 1])  # length 0


def test_projection_and_sequence_length_errors():
    with pytest.raises(nbdl.NbdlError, match="projection_size"):
        rnn.GRU(3, projection_size=2)
    with pytest.raises(nbdl.NbdlError, match="projection_size=4"):
        rnn.LSTM(3, projection_size=4)
    x = nbdl.nd.ones((4, 2, 3))
    net = rnn.GRU(2, use_sequence_length=True)
    net.initialize()
    with pytest.raises(nbdl.NbdlError, match="sequence_length"):
        net(x)
    with pytest.raises(nbdl.ShapeError, match=r"sequence_length.*\(3,\).*\(2,\)"):
        net(x, sequence_length=nbdl.nd.array([1, 2, 3]))
    plain = rnn.GRU(2)
    plain.initialize()
    with pytest.raises(nbdl.NbdlError, match="use_sequence_length=False"):
        plain(x, None, nbdl.nd.array([1, 2]))
