import numpy as np
import pytest

import nbdl
from nbdl import autograd, npx
from nbdl.device import cpu, gpu
from nbdl.testing import (check_consistency, check_numeric_gradient, check_symbolic_forward,
                          run_symbol)

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def unpack(params, mode, L, D, H, I, P=0):
    """MXNet's packed layout: all weights (layer, direction, i2h, h2h, then with a
    projection h2r (P, H)), then all biases (layer, direction, i2h then h2h)."""
    G = GATES[mode]
    R = P or H
    w, off = {}, 0
    for l in range(L):
        il = I if l == 0 else D * R
        for d in range(D):
            for k, (rows, cols) in (("wx", (G * H, il)), ("wh", (G * H, R)), ("wr", (P, H))):
                w[l, d, k] = params[off:off + rows * cols].reshape(rows, cols)
                off += rows * cols
    for l in range(L):
        for d in range(D):
            w[l, d, "bx"] = params[off:off + G * H]
            w[l, d, "bh"] = params[off + G * H:off + 2 * G * H]
            off += 2 * G * H
    assert off == params.size
    return w


def step(mode, x, h, c, wx, wh, bx, bh, clip=None):
    """One cell step written from the textbook equations (gate order as MXNet);
    ``h`` is the recurrent state (the projected one for LSTMP)."""
    H = wx.shape[0] // GATES[mode]
    if mode in ("rnn_relu", "rnn_tanh"):
        a = x @ wx.T + bx + h @ wh.T + bh
        return (np.tanh(a) if mode == "rnn_tanh" else np.maximum(a, 0)), c
    if mode == "lstm":
        a = x @ wx.T + bx + h @ wh.T + bh
        i, f, g, o = (a[:, k * H:(k + 1) * H] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        if clip is not None:
            c = np.clip(c, *clip)
        return sigmoid(o) * np.tanh(c), c
    ax = x @ wx.T + bx
    ah = h @ wh.T + bh
    r = sigmoid(ax[:, :H] + ah[:, :H])
    z = sigmoid(ax[:, H:2 * H] + ah[:, H:2 * H])
    n = np.tanh(ax[:, 2 * H:] + r * ah[:, 2 * H:])
    return (1 - z) * n + z * h, c


def np_rnn(x, params, h0, c0, mode, L, D, H, clip=None, P=0, lens=None):
    """Reference, one sequence at a time: element n runs its first lens[n]
    steps (forward 0..len-1, reverse len-1..0), zero outputs after them, final
    states after its last step; with a projection the recurrent state and the
    output are r = W_h2r h."""
    T, N, I = x.shape
    R = P or H
    w = unpack(params.astype(np.float64), mode, L, D, H, I, P)
    lens = [T] * N if lens is None else [min(max(int(v), 0), T) for v in lens]
    inp = x.astype(np.float64)
    hy, cy = [], []
    for l in range(L):
        out = np.zeros((T, N, D * R))
        for d in range(D):
            k = l * D + d
            hs, cs = [], []
            for n in range(N):
                h = h0[k, n:n + 1].astype(np.float64)
                c = c0[k, n:n + 1].astype(np.float64) if c0 is not None else None
                for t in (range(lens[n]) if d == 0 else reversed(range(lens[n]))):
                    h, c = step(mode, inp[t, n:n + 1], h, c, w[l, d, "wx"], w[l, d, "wh"],
                                w[l, d, "bx"], w[l, d, "bh"], clip)
                    if P:
                        h = h @ w[l, d, "wr"].T
                    out[t, n, d * R:(d + 1) * R] = h[0]
                hs.append(h[0])
                cs.append(c[0] if c is not None else None)
            hy.append(np.stack(hs) if N else np.zeros((0, R)))
            cy.append((np.stack(cs) if N else np.zeros((0, H))) if c0 is not None else None)
        inp = out
    return inp, np.stack(hy), (np.stack(cy) if c0 is not None else None)


def n_params(mode, L, D, H, I, P=0):
    G = GATES[mode]
    R = P or H
    return (sum(D * (G * H * (I if l == 0 else D * R) + G * H * R + P * H) for l in range(L))
            + L * D * 2 * G * H)


def rnn_sym(mode, lens=False, **kw):
    args = [nbdl.sym.var("data"), nbdl.sym.var("parameters"), nbdl.sym.var("state")]
    if mode == "lstm":
        args.append(nbdl.sym.var("state_cell"))
    if lens:
        args.append(nbdl.sym.var("sequence_length"))
        kw["use_sequence_length"] = True
    return nbdl.sym.RNN(*args, mode=mode, **kw)


def make_inputs(rng, mode, T, N, I, H, L, D, dtype, scale=0.5, P=0, lens=None):
    R = P or H
    loc = {"data": rng.uniform(-1, 1, (T, N, I)).astype(dtype),
           "parameters": rng.uniform(-scale, scale, n_params(mode, L, D, H, I, P)).astype(dtype),
           "state": rng.uniform(-1, 1, (L * D, N, R)).astype(dtype)}
    if mode == "lstm":
        loc["state_cell"] = rng.uniform(-1, 1, (L * D, N, H)).astype(dtype)
    if lens is not None:
        loc["sequence_length"] = np.asarray(lens)
    return loc


def expected(loc, mode, L, D, H, P=0, clip=None):
    out, hy, cy = np_rnn(loc["data"], loc["parameters"], loc["state"], loc.get("state_cell"),
                         mode, L, D, H, clip=clip, P=P, lens=loc.get("sequence_length"))
    return [out, hy] + ([cy] if mode == "lstm" else [])


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)


MODES = ["rnn_relu", "rnn_tanh", "lstm", "gru"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("T,N,I,H,L,bi", [(3, 2, 4, 3, 1, False), (2, 3, 2, 2, 2, True),
                                          (1, 1, 1, 1, 1, False), (0, 2, 3, 2, 1, True),
                                          (2, 0, 3, 2, 2, False)])
def test_rnn_forward_matches_numpy(mode, dtype, T, N, I, H, L, bi):
    D = 2 if bi else 1
    loc = make_inputs(np.random.RandomState(0), mode, T, N, I, H, L, D, dtype)
    sym = rnn_sym(mode, state_size=H, num_layers=L, bidirectional=bi, state_outputs=True)
    out, hy, cy = np_rnn(loc["data"], loc["parameters"], loc["state"], loc.get("state_cell"),
                         mode, L, D, H)
    expected = [out, hy] + ([cy] if mode == "lstm" else [])
    outs = check_symbolic_forward(sym, loc, expected, **tol(dtype))
    assert all(o.dtype == dtype for o in outs)


def test_rnn_only_output_visible_without_state_outputs():
    sym = rnn_sym("lstm", state_size=2, num_layers=1)
    assert len(sym.list_outputs()) == 1
    assert sym.list_arguments() == ["data", "parameters", "state", "state_cell"]
    sym = rnn_sym("gru", state_size=2, num_layers=1, state_outputs=True)
    assert len(sym.list_outputs()) == 2


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("L,bi", [(1, False), (2, True)])
def test_rnn_numeric_gradient(mode, L, bi):
    D = 2 if bi else 1
    loc = make_inputs(np.random.RandomState(1), mode, 3, 2, 2, 2, L, D, np.float64)
    if mode == "rnn_relu":  # keep pre-activations away from the kink
        loc["parameters"] = np.abs(loc["parameters"]) + 0.05
        loc["data"] = np.abs(loc["data"])
        loc["state"] = np.abs(loc["state"])
    sym = rnn_sym(mode, state_size=2, num_layers=L, bidirectional=bi, state_outputs=True)
    check_numeric_gradient(sym, loc)


def test_lstm_state_clip_forward_and_gradient():
    loc = make_inputs(np.random.RandomState(2), "lstm", 3, 2, 2, 2, 1, 1, np.float64, scale=1.5)
    sym = rnn_sym("lstm", state_size=2, num_layers=1, state_outputs=True,
                  lstm_state_clip_min=-0.3, lstm_state_clip_max=0.4)
    out, hy, cy = np_rnn(loc["data"], loc["parameters"], loc["state"], loc["state_cell"], "lstm",
                         1, 1, 2, clip=(-0.3, 0.4))
    assert np.abs(cy).max() <= 0.4 + 1e-12
    check_symbolic_forward(sym, loc, [out, hy, cy], **tol(np.float64))
    check_numeric_gradient(sym, loc)


def test_rnn_dropout_between_layers():
    H, L = 3, 2
    loc = make_inputs(np.random.RandomState(3), "rnn_tanh", 4, 3, 2, H, L, 1, np.float64)
    sym = rnn_sym("rnn_tanh", state_size=H, num_layers=L, p=0.5)
    ref, _, _ = np_rnn(loc["data"], loc["parameters"], loc["state"], None, "rnn_tanh", L, 1, H)
    # inference: no dropout
    check_symbolic_forward(sym, loc, [ref], **tol(np.float64))
    nbdl.random.seed(7)
    a = run_symbol(sym, loc, is_train=True)[0][0]
    nbdl.random.seed(7)
    b = run_symbol(sym, loc, is_train=True)[0][0]
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, ref)
    # the gradient of a training run is consistent with its own mask: with a
    # fixed seed, forward + backward in one run against central differences
    nbdl.random.seed(11)
    loc1 = {k: v.copy() for k, v in loc.items()}
    g = run_symbol(sym, loc1, out_grads=[np.ones((4, 3, H))], is_train=True)[1]
    assert np.all(np.isfinite(g["parameters"]))


def test_rnn_infer_shape_from_data():
    sym = rnn_sym("gru", state_size=5, num_layers=2, bidirectional=True, state_outputs=True)
    args, outs, _ = sym.infer_shape(data=(7, 3, 4))
    assert args == [(7, 3, 4), (n_params("gru", 2, 2, 5, 4),), (4, 3, 5)]
    assert outs == [(7, 3, 10), (4, 3, 5)]


def test_rnn_errors():
    sym = rnn_sym("lstm", state_size=2, num_layers=1)
    with pytest.raises(nbdl.ShapeError, match="RNN.*parameters"):
        sym.infer_shape(data=(2, 3, 4), parameters=(5,))
    with pytest.raises(nbdl.ShapeError, match="RNN.*state"):
        sym.infer_shape(data=(2, 3, 4), state=(1, 2, 2))
    with pytest.raises(nbdl.ShapeError, match="3-D"):
        sym.infer_shape(data=(2, 3))
    with pytest.raises(nbdl.AttrError, match="mode"):
        rnn_sym("gru", state_size=2, num_layers=1, lstm_state_clip_min=-1, lstm_state_clip_max=1)
    with pytest.raises(nbdl.AttrError, match="state_size"):
        rnn_sym("gru", state_size=0, num_layers=1)


@pytest.mark.cuda
@pytest.mark.parametrize("mode", MODES)
def test_rnn_cpu_cuda_consistency(mode):
    loc = make_inputs(np.random.RandomState(4), mode, 2, 2, 2, 2, 2, 2, np.float64)
    sym = rnn_sym(mode, state_size=2, num_layers=2, bidirectional=True, state_outputs=True)
    check_consistency(sym, loc, devices=[cpu(), gpu()])


@pytest.mark.cuda
def test_rnn_cpu_cuda_consistency_dropout_inference_and_clip():
    loc = make_inputs(np.random.RandomState(5), "lstm", 2, 2, 2, 2, 2, 1, np.float32, scale=1.5)
    sym = rnn_sym("lstm", state_size=2, num_layers=2, p=0.4, state_outputs=True,
                  lstm_state_clip_min=-0.5, lstm_state_clip_max=0.5)
    check_consistency(sym, loc, devices=[cpu(), gpu()], is_train=False, rtol=1e-4, atol=1e-5)


@pytest.mark.cuda
def test_rnn_cuda_dropout_training_runs():
    loc = make_inputs(np.random.RandomState(6), "gru", 2, 2, 2, 2, 2, 1, np.float32)
    sym = rnn_sym("gru", state_size=2, num_layers=2, p=0.5)
    outs, grads, _ = run_symbol(sym, loc, out_grads=[np.ones((2, 2, 2), np.float32)],
                                device=gpu(), is_train=True)
    assert np.all(np.isfinite(outs[0])) and np.all(np.isfinite(grads["parameters"]))


def test_rnn_eager_ndarray_call():
    loc = make_inputs(np.random.RandomState(7), "rnn_tanh", 3, 2, 2, 3, 1, 1, np.float32)
    out = nbdl.nd.RNN(*(nbdl.nd.array(loc[k]) for k in ("data", "parameters", "state")),
                      mode="rnn_tanh", state_size=3, num_layers=1)
    ref, _, _ = np_rnn(loc["data"], loc["parameters"], loc["state"], None, "rnn_tanh", 1, 1, 3)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)


# -- projection (LSTMP) -----------------------------------------------------------------

@pytest.mark.parametrize("dtype,L,bi", [(np.float64, 1, False), (np.float32, 2, True)])
def test_lstm_projection_forward_matches_numpy(dtype, L, bi):
    D, H, P = (2 if bi else 1), 3, 2
    loc = make_inputs(np.random.RandomState(10), "lstm", 3, 2, 4, H, L, D, dtype, P=P)
    sym = rnn_sym("lstm", state_size=H, num_layers=L, bidirectional=bi, state_outputs=True,
                  projection_size=P)
    want = expected(loc, "lstm", L, D, H, P)
    outs = check_symbolic_forward(sym, loc, want, **tol(dtype))
    assert [o.shape for o in outs] == [(3, 2, D * P), (L * D, 2, P), (L * D, 2, H)]
    assert all(o.dtype == dtype for o in outs)
    check_symbolic_forward(sym, loc, want, is_train=True, **tol(dtype))   # reserve written


def test_lstm_projection_infer_shape():
    sym = rnn_sym("lstm", state_size=5, num_layers=2, bidirectional=True, state_outputs=True,
                  projection_size=3)
    args, outs, _ = sym.infer_shape(data=(7, 4, 6))
    # per layer and direction: i2h (20, I_l), h2h (20, 3), h2r (3, 5); I_1 = 2 * 3
    n = 2 * (20 * 6 + 20 * 3 + 3 * 5) + 2 * (20 * 6 + 20 * 3 + 3 * 5) + 2 * 2 * 2 * 20
    assert args == [(7, 4, 6), (n,), (4, 4, 3), (4, 4, 5)]
    assert outs == [(7, 4, 6), (4, 4, 3), (4, 4, 5)]
    args, _, _ = rnn_sym("lstm", state_size=5, num_layers=2, projection_size=2).infer_shape(
        data=(7, 4, 3))
    assert args[1] == (20 * 3 + 20 * 2 + 2 * 5 + 20 * 2 + 20 * 2 + 2 * 5 + 2 * 2 * 20,)


def test_lstm_projection_with_clip_forward_and_gradient():
    loc = make_inputs(np.random.RandomState(11), "lstm", 3, 2, 2, 3, 1, 1, np.float64,
                      scale=1.5, P=2)
    sym = rnn_sym("lstm", state_size=3, num_layers=1, state_outputs=True, projection_size=2,
                  lstm_state_clip_min=-0.3, lstm_state_clip_max=0.4)
    want = expected(loc, "lstm", 1, 1, 3, 2, clip=(-0.3, 0.4))
    assert np.abs(want[2]).max() <= 0.4 + 1e-12
    check_symbolic_forward(sym, loc, want, **tol(np.float64))
    check_numeric_gradient(sym, loc)


def test_lstm_projection_numeric_gradient_two_layers_bidirectional():
    loc = make_inputs(np.random.RandomState(12), "lstm", 3, 2, 2, 2, 2, 2, np.float64, P=1)
    sym = rnn_sym("lstm", state_size=2, num_layers=2, bidirectional=True, state_outputs=True,
                  projection_size=1)
    check_numeric_gradient(sym, loc)


# -- sequence_length ---------------------------------------------------------------------

@pytest.mark.parametrize("mode,L,bi,P", [("lstm", 2, False, 0), ("gru", 2, True, 0),
                                         ("rnn_relu", 1, True, 0), ("lstm", 2, True, 2)])
def test_sequence_length_forward_matches_numpy(mode, L, bi, P):
    D, H, T, N = (2 if bi else 1), 3, 4, 4
    lens = np.array([2, 0, 4, 1], np.int32)
    loc = make_inputs(np.random.RandomState(13), mode, T, N, 2, H, L, D, np.float64, P=P,
                      lens=lens)
    sym = rnn_sym(mode, lens=True, state_size=H, num_layers=L, bidirectional=bi,
                  state_outputs=True, projection_size=P or None)
    assert sym.list_arguments()[-1] == "sequence_length"
    want = expected(loc, mode, L, D, H, P)
    outs = check_symbolic_forward(sym, loc, want, **tol(np.float64))
    check_symbolic_forward(sym, loc, want, is_train=True, **tol(np.float64))
    assert np.all(outs[0][2:, 0] == 0) and np.all(outs[0][:, 1] == 0)   # padding is zero
    np.testing.assert_array_equal(outs[1][:, 1], loc["state"][:, 1])  # length 0: initial state
    # the padding's data is never read
    loc2 = dict(loc, data=loc["data"].copy())
    loc2["data"][2:, 0] = 1e3
    loc2["data"][:, 1] = -1e3
    check_symbolic_forward(sym, loc2, want, **tol(np.float64))


@pytest.mark.parametrize("lens", [np.array([2.7, -1.0, 9.0]), np.array([2, 0, 3], np.int64)])
def test_sequence_length_dtypes_truncate_and_clip(lens):
    """Float lengths truncate toward zero; lengths are clipped to [0, T]; any
    real or integer dtype works with float32 data."""
    loc = make_inputs(np.random.RandomState(14), "gru", 3, 3, 2, 2, 1, 2, np.float32, lens=lens)
    sym = rnn_sym("gru", lens=True, state_size=2, num_layers=1, bidirectional=True,
                  state_outputs=True)
    want = expected(loc, "gru", 1, 2, 2)
    check_symbolic_forward(sym, loc, want, **tol(np.float32))
    np.testing.assert_allclose(want[0][2, 0], 0)   # 2.7 runs 2 steps


@pytest.mark.parametrize("mode,P", [("lstm", 1), ("gru", 0), ("rnn_tanh", 0)])
def test_sequence_length_numeric_gradient(mode, P):
    lens = np.array([2, 0, 3], np.int32)
    loc = make_inputs(np.random.RandomState(15), mode, 3, 3, 2, 2, 2, 2, np.float64, P=P,
                      lens=lens)
    sym = rnn_sym(mode, lens=True, state_size=2, num_layers=2, bidirectional=True,
                  state_outputs=True, projection_size=P or None)
    grads = check_numeric_gradient(sym, loc)
    assert np.all(grads["data"][2:, 0] == 0) and np.all(grads["data"][:, 1] == 0)
    assert "sequence_length" not in grads     # an integer input: not differentiated


def test_sequence_length_gets_no_gradient():
    loc = make_inputs(np.random.RandomState(16), "lstm", 3, 2, 2, 2, 1, 1, np.float64,
                      lens=np.array([1.0, 3.0]))
    sym = rnn_sym("lstm", lens=True, state_size=2, num_layers=1)
    _, grads, _ = run_symbol(sym, loc, out_grads=[np.ones((3, 2, 2))], is_train=True)
    np.testing.assert_array_equal(grads["sequence_length"], np.zeros(2))
    assert np.abs(grads["parameters"]).sum() > 0


def test_projection_and_sequence_length_errors():
    with pytest.raises(nbdl.AttrError, match="projection_size=1 needs mode='lstm'"):
        rnn_sym("gru", state_size=2, num_layers=1, projection_size=1)
    with pytest.raises(nbdl.AttrError, match=r"projection_size=3 .*\[1, state_size=2\]"):
        rnn_sym("lstm", state_size=2, num_layers=1, projection_size=3)
    with pytest.raises(nbdl.AttrError, match="projection_size=0"):
        rnn_sym("lstm", state_size=2, num_layers=1, projection_size=0)
    sym = rnn_sym("lstm", state_size=3, num_layers=1, projection_size=2)
    with pytest.raises(nbdl.ShapeError, match=r"RNN.*'state'.*\(1, 1, 3\).*\(1, 1, 2\)"):
        sym.infer_shape(data=(2, 1, 2), state=(1, 1, 3))
    sym = rnn_sym("gru", lens=True, state_size=2, num_layers=1)
    with pytest.raises(nbdl.ShapeError, match=r"RNN.*sequence_length.*\(2, 1\).*\(3,\)"):
        sym.infer_shape(data=(4, 3, 2), sequence_length=(2, 1))
    with pytest.raises(nbdl.ShapeError, match=r"sequence_length.*\(2,\).*\(3,\)"):
        sym.infer_shape(data=(4, 3, 2), sequence_length=(2,))
    x, w, h = (nbdl.nd.zeros(s) for s in [(2, 3, 2), (n_params("gru", 1, 1, 2, 2),), (1, 3, 2)])
    with pytest.raises(nbdl.GraphError, match="RNN.*sequence_length"):
        nbdl.nd.RNN(x, w, h, mode="gru", state_size=2, num_layers=1, use_sequence_length=True)
    with pytest.raises(nbdl.DTypeError, match="RNN.*state"):
        nbdl.nd.RNN(x, w, nbdl.nd.zeros((1, 3, 2), dtype=np.int32), mode="gru", state_size=2,
                    num_layers=1)
    with pytest.raises(nbdl.AttrError, match="sequence_length"):
        npx.rnn(x, w, h, mode="gru", state_size=2, num_layers=1, use_sequence_length=True)


@pytest.mark.cuda
@pytest.mark.parametrize("mode,P,lens", [("lstm", 1, [3, 1]), ("gru", 0, [0, 2])])
def test_cpu_cuda_consistency_projection_and_lengths(mode, P, lens):
    loc = make_inputs(np.random.RandomState(17), mode, 3, 2, 2, 2, 2, 2, np.float64, P=P,
                      lens=np.array(lens, np.int32))
    sym = rnn_sym(mode, lens=True, state_size=2, num_layers=2, bidirectional=True,
                  state_outputs=True, projection_size=P or None)
    check_consistency(sym, loc, devices=[cpu(), gpu()])


def test_npx_rnn_eager_autograd_matches_executor():
    """npx.rnn eagerly under autograd (LSTMP, bidirectional, lengths): outputs
    against the numpy reference, gradients against the executor's."""
    rng = np.random.RandomState(18)
    lens = np.array([3, 1, 2], np.int32)
    loc = make_inputs(rng, "lstm", 3, 3, 2, 3, 1, 2, np.float64, P=2, lens=lens)
    arrays = {k: nbdl.nd.array(v, dtype=v.dtype) for k, v in loc.items()}
    for k in ("data", "parameters", "state", "state_cell"):
        arrays[k].attach_grad()
    want = expected(loc, "lstm", 1, 2, 3, 2)
    heads = [rng.normal(size=w.shape) for w in want]
    with autograd.record():
        outs = npx.rnn(arrays["data"], arrays["parameters"], arrays["state"],
                       state_cell=arrays["state_cell"], sequence_length=arrays["sequence_length"],
                       mode="lstm", state_size=3, num_layers=1, bidirectional=True,
                       state_outputs=True, use_sequence_length=True, projection_size=2)
        loss = sum((o * nbdl.nd.array(g, dtype=np.float64)).sum() for o, g in zip(outs, heads))
    loss.backward()
    for o, w in zip(outs, want):
        np.testing.assert_allclose(o.asnumpy(), w, **tol(np.float64))
    sym = rnn_sym("lstm", lens=True, state_size=3, num_layers=1, bidirectional=True,
                  state_outputs=True, projection_size=2)
    _, grads, _ = run_symbol(sym, loc, out_grads=heads, is_train=True,
                             grad_nodes=["data", "parameters", "state", "state_cell"])
    for k, g in grads.items():
        np.testing.assert_allclose(arrays[k].grad.asnumpy(), g, rtol=1e-10, atol=1e-12)
    # on Symbols npx.rnn builds the same node
    s = npx.rnn(*(nbdl.sym.var(k) for k in ("data", "parameters", "state", "state_cell",
                                            "sequence_length")),
                mode="lstm", state_size=3, num_layers=1, use_sequence_length=True)
    assert s.list_arguments() == ["data", "parameters", "state", "state_cell", "sequence_length"]


@pytest.mark.parametrize("dev", [cpu, pytest.param(gpu, marks=pytest.mark.cuda)])
@pytest.mark.parametrize("mode,L,bi", [("lstm", 2, True), ("gru", 1, False)])
@pytest.mark.parametrize("skip", ["parameters", "data"])
def test_backward_with_a_gradient_not_wanted(dev, mode, L, bi, skip):
    """grad_req null for the parameters (the CPU kernel then skips the weight
    products) or for the data (it skips the first layer's input product):
    the other gradients must not change."""
    D = 2 if bi else 1
    loc = make_inputs(np.random.RandomState(7), mode, 3, 2, 2, 2, L, D, np.float64)
    sym = rnn_sym(mode, state_size=2, num_layers=L, bidirectional=bi, state_outputs=True)
    outs = expected(loc, mode, L, D, 2)
    rng = np.random.RandomState(8)
    heads = [rng.uniform(-1, 1, o.shape) for o in outs]
    others = [k for k in loc if k != skip]
    _, full, _ = run_symbol(sym, loc, out_grads=heads, device=dev(), is_train=True,
                            engine="executor")
    _, part, _ = run_symbol(sym, loc, out_grads=heads, grad_nodes=others, device=dev(),
                            is_train=True, engine="executor")
    assert set(part) == set(others) and skip in full
    for k in others:
        np.testing.assert_array_equal(part[k], full[k], err_msg=k)


@pytest.mark.parametrize("mode,P,lens", [("lstm", 0, None), ("gru", 0, [4, 1, 0, 3, 4]),
                                         ("lstm", 2, [2, 4, 3, 1, 4]), ("rnn_tanh", 0, None),
                                         ("rnn_relu", 0, [3, 4, 1, 4, 2])])
@pytest.mark.parametrize("N,H", [(5, 3), (4, 8)])
def test_rnn_batch_slices(mode, P, lens, N, H, monkeypatch):
    """The parallel kernels run the gate math in batch slices (one a thread)
    and split each step's recurrent products along their longer side (by
    rows for N=5, H=3; by columns, the gates' or the hidden units', for N=4,
    H=8): the same outputs and gradients as the numpy reference and the
    serial kernels, with lengths and a projection."""
    import numba
    from nbdl.testing import bind_and_run
    T, I, L, D = 4, 3, 2, 2
    lens = None if lens is None else lens[:N]
    loc = make_inputs(np.random.RandomState(2), mode, T, N, I, H, L, D, np.float32, P=P,
                      lens=lens)
    sym = rnn_sym(mode, lens=lens is not None, state_size=H, num_layers=L, bidirectional=True,
                  state_outputs=True, projection_size=P or None)
    og = [np.random.RandomState(3).uniform(-1, 1, s).astype(np.float32)
          for s in sym.infer_shape(**{k: v.shape for k, v in loc.items()})[1]]
    names = [n for n in loc if n != "sequence_length"]
    prev = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        runs = []
        for parallel in (False, True):
            monkeypatch.setenv("NBDL_PARALLEL_MIN", "1" if parallel else str(1 << 40))
            ex, outs, grads, _ = bind_and_run(sym, loc, grad_names=names, out_grads=og,
                                              backward=True)
            kernels = {s.fn.py_func.__name__ for s in ex._sched.fwd_train + ex._sched.backward}
            assert ("rnn_forward_parallel" in kernels) == parallel
            assert ("rnn_backward_parallel" in kernels) == parallel
            runs.append((outs, grads))
    finally:
        numba.set_num_threads(prev)
    for want, got in zip(expected(loc, mode, L, D, H, P=P), runs[1][0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    for a, b in zip(runs[0][0], runs[1][0]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    for k in names:
        np.testing.assert_allclose(runs[1][1][k], runs[0][1][k], rtol=1e-5, atol=1e-6)
