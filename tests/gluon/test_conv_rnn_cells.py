"""Convolutional recurrent cells (Conv{1,2,3}D{RNN,LSTM,GRU}Cell) against a
numpy reference (a direct convolution loop and the gate equations): steps,
unroll in both layouts, channels-last layouts, hybridized vs eager, numeric
gradients, parameters, errors."""
import itertools

import numpy as np
import pytest

import nbdl
from nbdl import autograd
from nbdl.gluon import HybridBlock, nn, rnn
from nbdl.testing import check_numeric_gradient


# -- numpy reference -----------------------------------------------------------------------

def np_conv(x, w, b, pad, dilate):
    """Channels-first stride-1 convolution, one output position at a time.
    x (N, C, *S), w (F, C, *K), b (F,) -> (N, F, *O)."""
    n, _, *spatial = x.shape
    f, _, *kernel = w.shape
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out_sz = [s + 2 * p - d * (k - 1) for s, k, p, d in zip(spatial, kernel, pad, dilate)]
    out = np.zeros((n, f, *out_sz))
    for pos in itertools.product(*[range(o) for o in out_sz]):
        acc = np.zeros((n, f))
        for kpos in itertools.product(*[range(k) for k in kernel]):
            src = tuple(p + d * k for p, d, k in zip(pos, dilate, kpos))
            acc += xp[(slice(None), slice(None)) + src] @ w[(slice(None), slice(None)) + kpos].T
        out[(slice(None), slice(None)) + pos] = acc + b
    return out


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def np_step(kind, p, cfg, x, states, act=np.tanh):
    """One step of a channels-first cell; p holds float64 parameters."""
    h = states[0]
    i2h = np_conv(x, p["i2h_weight"], p["i2h_bias"], cfg["i2h_pad"], cfg["i2h_dilate"])
    h2h_pad = [d * (k - 1) // 2 for d, k in zip(cfg["h2h_dilate"], cfg["h2h_kernel"])]
    h2h = np_conv(h, p["h2h_weight"], p["h2h_bias"], h2h_pad, cfg["h2h_dilate"])
    H = h.shape[1]
    if kind == "RNN":
        out = act(i2h + h2h)
        return out, [out]
    if kind == "LSTM":
        a = i2h + h2h
        i, f = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H])
        g, o = act(a[:, 2 * H:3 * H]), sigmoid(a[:, 3 * H:])
        c = f * states[1] + i * g
        out = o * act(c)
        return out, [out, c]
    r = sigmoid(i2h[:, :H] + h2h[:, :H])
    z = sigmoid(i2h[:, H:2 * H] + h2h[:, H:2 * H])
    n = act(i2h[:, 2 * H:] + r * h2h[:, 2 * H:])
    out = (1 - z) * n + z * h
    return out, [out]


def params(cell):
    return {k: v.data().asnumpy().astype(np.float64) for k, v in cell.collect_params().items()}


# one small configuration per rank, with padding / dilation / uneven kernels
CONFIGS = {
    1: dict(input_shape=(2, 5), hidden=2, i2h_kernel=(3,), h2h_kernel=(3,), i2h_pad=(1,),
            i2h_dilate=(1,), h2h_dilate=(2,)),
    2: dict(input_shape=(2, 4, 3), hidden=2, i2h_kernel=(2, 3), h2h_kernel=(3, 1),
            i2h_pad=(0, 1), i2h_dilate=(1, 1), h2h_dilate=(1, 1)),
    3: dict(input_shape=(1, 3, 2, 3), hidden=2, i2h_kernel=(2, 1, 2), h2h_kernel=(1, 3, 3),
            i2h_pad=(0, 1, 0), i2h_dilate=(1, 1, 2), h2h_dilate=(1, 1, 1)),
}
GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}


def make(kind, dims, **extra):
    cfg = CONFIGS[dims]
    cls = getattr(rnn, f"Conv{dims}D{kind}Cell")
    kw = {k: cfg[k] for k in ("i2h_pad", "i2h_dilate", "h2h_dilate")}
    kw.update(extra)
    cell = cls(cfg["input_shape"], cfg["hidden"], cfg["i2h_kernel"], cfg["h2h_kernel"], **kw)
    return cell, cfg


def state_shape(cfg):
    spatial = cfg["input_shape"][1:]
    out = tuple(s + 2 * p - d * (k - 1) for s, k, p, d in
                zip(spatial, cfg["i2h_kernel"], cfg["i2h_pad"], cfg["i2h_dilate"]))
    return (cfg["hidden"],) + out


def nd(a, dtype=np.float32):
    return nbdl.nd.array(np.asarray(a, dtype), dtype=dtype)


# -- steps, states, parameters, unroll -------------------------------------------------------

@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_cell_matches_numpy(kind, dims):
    rng = np.random.RandomState(dims * 10 + GATES[kind])
    cell, cfg = make(kind, dims)
    cell.initialize(nbdl.init.Uniform(0.5))
    G, H, C = GATES[kind], cfg["hidden"], cfg["input_shape"][0]
    n_states = 2 if kind == "LSTM" else 1
    sshape = state_shape(cfg)

    # parameter names and shapes (Gluon's)
    shapes = {k: v.shape for k, v in cell.collect_params().items()}
    assert shapes == {"i2h_weight": (G * H, C) + cfg["i2h_kernel"],
                      "h2h_weight": (G * H, H) + cfg["h2h_kernel"],
                      "i2h_bias": (G * H,), "h2h_bias": (G * H,)}
    # state_info and begin_state
    info = cell.state_info(3)
    assert [i["shape"] for i in info] == [(3,) + sshape] * n_states
    assert all(i["__layout__"] == ("NCW", "NCHW", "NCDHW")[dims - 1] for i in info)
    begin = cell.begin_state(3)
    assert [b.shape for b in begin] == [(3,) + sshape] * n_states
    assert all(not b.asnumpy().any() for b in begin)

    # one step from random states
    p = params(cell)
    x = rng.uniform(-1, 1, (3,) + cfg["input_shape"])
    st = [rng.uniform(-1, 1, (3,) + sshape) for _ in range(n_states)]
    out, new = cell(nd(x), [nd(s) for s in st])
    ref_out, ref_new = np_step(kind, p, cfg, x, st)
    assert out.shape == (3,) + sshape and len(new) == n_states
    np.testing.assert_allclose(out.asnumpy(), ref_out, rtol=1e-4, atol=1e-5)
    for a, b in zip(new, ref_new):
        np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-4, atol=1e-5)

    # unroll over 3 steps from zero states, NTC merged and TNC as a list
    seq = rng.uniform(-1, 1, (3, 3) + cfg["input_shape"])      # (N, T, ...)
    ref_states = [np.zeros((3,) + sshape) for _ in range(n_states)]
    ref_outs = []
    for t in range(3):
        o, ref_states = np_step(kind, p, cfg, seq[:, t], ref_states)
        ref_outs.append(o)
    ref_seq = np.stack(ref_outs, axis=1)
    outs, states = cell.unroll(3, nd(seq), layout="NTC", merge_outputs=True)
    np.testing.assert_allclose(outs.asnumpy(), ref_seq, rtol=1e-4, atol=1e-5)
    for a, b in zip(states, ref_states):
        np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-4, atol=1e-5)
    outs, states = cell.unroll(3, nd(seq.swapaxes(0, 1)), layout="TNC", merge_outputs=False,
                               begin_state=cell.begin_state(3))
    assert isinstance(outs, list) and len(outs) == 3
    for t in range(3):
        np.testing.assert_allclose(outs[t].asnumpy(), ref_outs[t], rtol=1e-4, atol=1e-5)
    for a, b in zip(states, ref_states):
        np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind,dims,layout", [("RNN", 1, "NWC"), ("LSTM", 2, "NHWC"),
                                              ("GRU", 3, "NDHWC")])
def test_channels_last_layout(kind, dims, layout):
    """A channels-last cell equals the channels-first one with the channel
    axis moved, for data, states and weights."""
    rng = np.random.RandomState(dims)
    first, cfg = make(kind, dims)
    first.initialize(nbdl.init.Uniform(0.5))
    to_last = (0,) + tuple(range(2, dims + 2)) + (1,)
    to_first = (0, dims + 1) + tuple(range(1, dims + 1))
    last_shape = cfg["input_shape"][1:] + cfg["input_shape"][:1]
    cls = getattr(rnn, f"Conv{dims}D{kind}Cell")
    last = cls(last_shape, cfg["hidden"], cfg["i2h_kernel"], cfg["h2h_kernel"],
               i2h_pad=cfg["i2h_pad"], i2h_dilate=cfg["i2h_dilate"],
               h2h_dilate=cfg["h2h_dilate"], conv_layout=layout)
    G, H, C = GATES[kind], cfg["hidden"], cfg["input_shape"][0]
    assert last.i2h_weight.shape == (G * H,) + cfg["i2h_kernel"] + (C,)
    assert last.h2h_weight.shape == (G * H,) + cfg["h2h_kernel"] + (H,)
    sshape = state_shape(cfg)
    assert last.state_info(2)[0] == {"shape": (2,) + sshape[1:] + sshape[:1],
                                     "__layout__": layout}
    last.initialize()
    for name, p in first.collect_params().items():
        a = p.data().asnumpy()
        last.collect_params()[name].set_data(nd(a.transpose(to_last) if a.ndim > 1 else a))
    seq = rng.uniform(-1, 1, (2, 3) + cfg["input_shape"])
    ref, ref_st = first.unroll(3, nd(seq), merge_outputs=True)
    seq_axes = (0, 1) + tuple(a + 1 for a in to_last[1:])      # (N, T, C, *S) -> (N, T, *S, C)
    seq_last = seq.transpose(seq_axes)
    got, got_st = last.unroll(3, nd(seq_last), merge_outputs=True)
    np.testing.assert_allclose(got.asnumpy(),
                               ref.asnumpy().transpose(seq_axes),
                               rtol=1e-5, atol=1e-6)
    for a, b in zip(got_st, ref_st):
        np.testing.assert_allclose(a.asnumpy().transpose(to_first), b.asnumpy(), rtol=1e-5,
                                   atol=1e-6)


def test_unroll_valid_length_and_stacking():
    """valid_length masks the outputs and picks each sequence's last state;
    a HybridSequentialRNNCell of conv cells starts from zero states of the
    right shapes."""
    rng = np.random.RandomState(7)
    cell, cfg = make("GRU", 1)
    cell.initialize(nbdl.init.Uniform(0.5))
    p = params(cell)
    seq = rng.uniform(-1, 1, (2, 3) + cfg["input_shape"])
    lens = np.array([2, 3])
    outs, (h,) = cell.unroll(3, nd(seq), merge_outputs=True, valid_length=nd(lens))
    for n in range(2):
        st = [np.zeros((1,) + state_shape(cfg))]
        for t in range(3):
            o, st2 = np_step("GRU", p, cfg, seq[n:n + 1, t], st)
            if t < lens[n]:
                np.testing.assert_allclose(outs.asnumpy()[n, t], o[0], rtol=1e-4, atol=1e-5)
                st = st2
            else:
                assert not outs.asnumpy()[n, t].any()
        np.testing.assert_allclose(h.asnumpy()[n], st[0][0], rtol=1e-4, atol=1e-5)

    stack = rnn.HybridSequentialRNNCell()
    stack.add(rnn.Conv1DRNNCell((2, 5), 3, 3, 1))           # -> (3, 3)
    stack.add(rnn.Conv1DLSTMCell((3, 3), 2, 1, 3))          # -> (2, 3)
    stack.initialize()
    outs, states = stack.unroll(2, nd(seq[:, :2]), merge_outputs=True)
    assert outs.shape == (2, 2, 2, 3)
    assert [s.shape for s in states] == [(2, 3, 3), (2, 2, 3), (2, 2, 3)]
    ref, _ = stack.unroll(2, nd(seq[:, :2]), begin_state=stack.begin_state(2),
                          merge_outputs=True)
    np.testing.assert_allclose(outs.asnumpy(), ref.asnumpy(), rtol=1e-6)


def test_activation_names_and_blocks():
    rng = np.random.RandomState(3)
    x = rng.uniform(-1, 1, (2, 2, 5))
    cell, cfg = make("RNN", 1, activation="relu")
    cell.initialize(nbdl.init.Uniform(0.5))
    h = rng.uniform(-1, 1, (2,) + state_shape(cfg))
    out, _ = cell(nd(x), [nd(h)])
    ref, _ = np_step("RNN", params(cell), cfg, x, [h], act=lambda a: np.maximum(a, 0))
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)

    cell, cfg = make("LSTM", 1, activation=nn.LeakyReLU(0.1))
    cell.initialize(nbdl.init.Uniform(0.5))
    assert list(cell.collect_params()) == ["i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"]
    st = [rng.uniform(-1, 1, (2,) + state_shape(cfg)) for _ in range(2)]
    out, new = cell(nd(x), [nd(s) for s in st])
    ref, ref_new = np_step("LSTM", params(cell), cfg, x, st,
                           act=lambda a: np.where(a >= 0, a, 0.1 * a))
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(new[1].asnumpy(), ref_new[1], rtol=1e-4, atol=1e-5)
    assert repr(cell) == "Conv1DLSTMCell(2 -> 8, LeakyReLU(0.1), NCW)"
    assert repr(rnn.Conv2DGRUCell((3, 4, 4), 5, 3, 3)) == "Conv2DGRUCell(3 -> 15, tanh, NCHW)"


# -- hybridized vs eager, gradients ----------------------------------------------------------

class _Unroller(HybridBlock):
    def __init__(self, cell, length, layout):
        super().__init__()
        self.cell, self._length, self._layout = cell, length, layout

    def forward(self, x):
        outs, states = self.cell.unroll(self._length, x, layout=self._layout,
                                        merge_outputs=True)
        return outs, states[-1]


@pytest.mark.parametrize("kind,dims,layout", [("LSTM", 2, "NTC"), ("GRU", 1, "TNC"),
                                              ("RNN", 3, "NTC")])
def test_hybridized_equals_eager_with_gradients(kind, dims, layout):
    """The unrolled cell's outputs and every gradient, hybridized against
    eager, in float32 (the dtype whose kernels the other tests compile
    anyway; float64 here compiled the convolution, GEMM and concatenation
    kernels a second time, ~13 s of a cold run, for a comparison of two
    paths that run the same kernels)."""
    rng = np.random.RandomState(11)
    cell, cfg = make(kind, dims)
    net = _Unroller(cell, 2, layout)
    net.initialize(nbdl.init.Uniform(0.5))
    shape = (2, 2) + cfg["input_shape"]
    x = nd(rng.uniform(-1, 1, shape), np.float32)
    x.attach_grad()
    proj_o, proj_s = None, None

    def run():
        nonlocal proj_o, proj_s
        with autograd.record():
            outs, last = net(x)
            if proj_o is None:
                proj_o = nd(rng.normal(size=outs.shape), np.float32)
                proj_s = nd(rng.normal(size=last.shape), np.float32)
            loss = (outs * proj_o).sum() + (last * proj_s).sum()
        loss.backward()
        grads = {k: p.grad().asnumpy().copy() for k, p in net.collect_params().items()}
        grads["x"] = x.grad.asnumpy().copy()
        return outs.asnumpy(), last.asnumpy(), grads

    eager = run()
    net.hybridize()
    hyb = run()
    assert hyb[0].dtype == np.float32
    np.testing.assert_allclose(hyb[0], eager[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hyb[1], eager[1], rtol=1e-5, atol=1e-6)
    for k, g in eager[2].items():
        assert np.abs(g).sum() > 0, k
        np.testing.assert_allclose(hyb[2][k], g, rtol=1e-4, atol=1e-5, err_msg=k)


def test_hybridized_cell_step():
    rng = np.random.RandomState(5)
    cell, cfg = make("LSTM", 1)
    cell.initialize(nbdl.init.Uniform(0.5))
    x = nd(rng.uniform(-1, 1, (2,) + cfg["input_shape"]))
    st = [nd(rng.uniform(-1, 1, (2,) + state_shape(cfg))) for _ in range(2)]
    eager_out, eager_st = cell(x, st)
    cell.hybridize()
    out, new = cell(x, st)
    np.testing.assert_allclose(out.asnumpy(), eager_out.asnumpy(), rtol=1e-6, atol=1e-7)
    for a, b in zip(new, eager_st):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_numeric_gradient(kind):
    """The traced two-step graph's gradients against central differences
    (float64), for the input, both weights and both biases."""
    cell = getattr(rnn, f"Conv1D{kind}Cell")((1, 3), 1, 2, 3, i2h_pad=1, h2h_dilate=1)
    net = _Unroller(cell, 2, "NTC")
    net.initialize(nbdl.init.Uniform(0.5))
    net.hybridize()
    x = np.random.RandomState(2).uniform(-1, 1, (1, 2, 1, 3))
    net(nd(x))
    sym = net._cached[0]
    loc = {"data": x}
    for name, p in net.collect_params().items():
        loc[p._var_name] = p.data().asnumpy().astype(np.float64)
    assert set(loc) == set(sym.list_arguments())
    check_numeric_gradient(sym, loc)


# -- errors ----------------------------------------------------------------------------------

def test_errors():
    with pytest.raises(nbdl.NbdlError, match=r"h2h_kernel must be odd.*\(3, 2\)"):
        rnn.Conv2DRNNCell((1, 4, 4), 2, 3, (3, 2))
    with pytest.raises(nbdl.NbdlError, match="h2h_kernel must be odd"):
        rnn.Conv1DLSTMCell((1, 4), 2, 3, 4)
    with pytest.raises(nbdl.NbdlError, match=r"i2h_kernel must have 3 elements"):
        rnn.Conv3DGRUCell((1, 4, 4, 4), 2, (3, 3), 3)
    with pytest.raises(nbdl.NbdlError, match=r"input_shape must have 3 elements"):
        rnn.Conv2DGRUCell((1, 4), 2, 3, 3)
    with pytest.raises(nbdl.NbdlError, match=r"input_shape must be a tuple"):
        rnn.Conv1DGRUCell(4, 2, 3, 3)
    with pytest.raises(nbdl.NbdlError, match=r"smaller than the dilated i2h_kernel"):
        rnn.Conv1DRNNCell((1, 4), 2, 3, 3, i2h_dilate=2)
    with pytest.raises(nbdl.NbdlError, match=r"conv_layout 'NCHW' is not supported"):
        rnn.Conv1DRNNCell((1, 4), 2, 3, 3, conv_layout="NCHW")
    with pytest.raises(nbdl.NbdlError, match=r"hidden_channels must be positive"):
        rnn.Conv1DRNNCell((1, 4), 0, 3, 3)
    with pytest.raises(nbdl.NbdlError, match=r"activation 'gelu' is not one of"):
        rnn.Conv1DRNNCell((1, 4), 2, 3, 3, activation="gelu")

    cell = rnn.Conv2DLSTMCell((2, 4, 4), 2, 3, 3)
    cell.initialize()
    good = [nbdl.nd.zeros((1, 2, 2, 2))] * 2
    with pytest.raises(nbdl.ShapeError, match=r"input has shape \(1, 2, 5, 4\).*\(2, 4, 4\)"):
        cell(nbdl.nd.zeros((1, 2, 5, 4)), good)
    with pytest.raises(nbdl.ShapeError, match=r"input has shape \(2, 4, 4\)"):
        cell(nbdl.nd.zeros((2, 4, 4)), good)
    with pytest.raises(nbdl.ShapeError, match=r"states\[1\] has shape \(1, 2, 4, 4\)"):
        cell(nbdl.nd.zeros((1, 2, 4, 4)), [good[0], nbdl.nd.zeros((1, 2, 4, 4))])
    with pytest.raises(nbdl.NbdlError, match=r"expected a list of 2 state"):
        cell(nbdl.nd.zeros((1, 2, 4, 4)), good[:1])
    with pytest.raises(nbdl.NbdlError):
        cell.unroll(2, nbdl.nd.zeros((1, 2, 3, 4, 4)))           # wrong channel count
