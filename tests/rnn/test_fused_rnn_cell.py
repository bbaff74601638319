"""FusedRNNCell (one fused RNN op) against the stack of cells unfuse() builds,
with the weights unpack_weights gives; pack/unpack and the FusedRNN initializer."""
import numpy as np
import pytest

import nbdl
from nbdl import rnn, sym
from nbdl.initializer import FusedRNN, fused_rnn_layout
from nbdl.ops.rnn import GATES, param_size

N, T, C, H = 2, 3, 4, 5


def bind_run(symbol, feed):
    ex = symbol.bind(nbdl.cpu(), {k: nbdl.nd.array(v) for k, v in feed.items()})
    return [o.asnumpy() for o in ex.forward()]


@pytest.mark.parametrize("mode,bidirectional", [("lstm", True), ("gru", False),
                                                ("rnn_tanh", True), ("rnn_relu", False)])
def test_fused_equals_the_unfused_stack(mode, bidirectional, rng):
    cell = rnn.FusedRNNCell(H, num_layers=2, mode=mode, bidirectional=bidirectional,
                            get_next_state=True, prefix="f_")
    x = rng.randn(T, N, C).astype(np.float32)
    fused_out, fused_states = cell.unroll(T, sym.var("data"), layout="TNC", merge_outputs=True)
    size = cell._layout(C)[1]
    params = (rng.randn(size) * 0.3).astype(np.float32)
    got = bind_run(sym.Group([fused_out] + fused_states), {"data": x, "f_parameters": params})
    unpacked = cell.unpack_weights({"f_parameters": nbdl.nd.array(params)})
    stack = cell.unfuse()
    out, states = stack.unroll(T, sym.var("data"), layout="TNC", merge_outputs=True)
    feed = {k: v.asnumpy() for k, v in stack.pack_weights(unpacked).items()}
    want = bind_run(sym.Group([out] + [s for group in states for s in
                                       (group if isinstance(group, list) else [group])]),
                    dict(feed, data=x))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4, atol=1e-5)
    # the fused states are (layers * directions, N, H): the stack's final states in order
    n_kinds = 2 if mode == "lstm" else 1
    per_layer = want[1:]
    for k in range(n_kinds):
        stacked = np.stack(per_layer[k::n_kinds])
        np.testing.assert_allclose(got[1 + k], stacked, rtol=1e-4, atol=1e-5)
    assert cell.state_info[0] == {"shape": (2 * (1 + bidirectional), 0, H), "__layout__": "LNC"}


def test_pack_is_the_inverse_of_unpack_and_the_layout_is_the_ops(rng):
    cell = rnn.FusedRNNCell(H, num_layers=3, mode="gru", bidirectional=True, prefix="g_")
    layout, size = cell._layout(C)
    assert size == param_size(3, 2, GATES["gru"], H, C)
    assert layout[0][0] == "g_l0_i2h_r_weight" and layout[-1][0] == "g_r2_h2h_o_bias"
    flat = nbdl.nd.array(rng.randn(size).astype(np.float32))
    unpacked = cell.unpack_weights({"g_parameters": flat, "other": flat})
    assert "g_parameters" not in unpacked and unpacked["g_l1_i2h_z_weight"].shape == (H, 2 * H)
    packed = cell.pack_weights(unpacked)
    np.testing.assert_array_equal(packed["g_parameters"].asnumpy(), flat.asnumpy())
    with pytest.raises(nbdl.ArgumentError, match="not the size"):
        cell.unpack_weights({"g_parameters": nbdl.nd.zeros((7,))})


def test_the_fused_initializer_sets_the_forget_bias_and_defers_to_the_global_init():
    cell = rnn.FusedRNNCell(H, num_layers=2, mode="lstm", forget_bias=2.5, prefix="lstm_")
    out, _ = cell.unroll(T, sym.var("data"), layout="TNC", merge_outputs=True)
    mod = nbdl.mod.Module(out, label_names=None, context=nbdl.cpu())
    mod.bind(data_shapes=[("data", (T, N, C))])
    mod.init_params(nbdl.init.Constant(0.25))
    args = cell.unpack_weights(mod.get_params()[0])
    np.testing.assert_array_equal(args["lstm_l1_i2h_f_bias"].asnumpy(), np.full(H, 2.5))
    np.testing.assert_array_equal(args["lstm_l0_h2h_f_bias"].asnumpy(), np.full(H, 2.5))
    np.testing.assert_array_equal(args["lstm_l0_i2h_i_bias"].asnumpy(), np.zeros(H))
    np.testing.assert_array_equal(args["lstm_l1_h2h_o_weight"].asnumpy(), np.full((H, H), .25))
    init = nbdl.init.create(FusedRNN(None, H, 2, "lstm", forget_bias=2.5).dumps())
    assert isinstance(init, FusedRNN) and init == FusedRNN(None, H, 2, "lstm", False, 2.5)
    layout, _ = fused_rnn_layout("lstm", 2, False, C, H)
    assert [name for name, _, _ in layout[:2]] == ["l0_i2h_i_weight", "l0_i2h_f_weight"]
