"""The fused RNN op exports as ONNX LSTM / GRU / RNN nodes (one per layer)
that onnxruntime runs to nbdl's outputs, also from Gluon's nn.LSTM, and the
exported model imports back."""
import numpy as np
import onnx
import pytest

import nbdl
from nbdl.onnx import export_block, export_model, import_model
from onnx_helpers import assert_close, nbdl_run, ort_run

S = nbdl.sym


@pytest.mark.parametrize("mode,layers,bidir", [("lstm", 2, True), ("gru", 1, False),
                                               ("rnn_tanh", 2, False), ("rnn_relu", 1, True)])
def test_fused_rnn_exports(mode, layers, bidir, rng):
    t, n, i, h = 4, 2, 3, 5
    d = 2 if bidir else 1
    x = S.var("data")
    ins = [x, S.var("params"), S.var("state")] + ([S.var("cell")] if mode == "lstm" else [])
    out = S.RNN(*ins, state_size=h, num_layers=layers, bidirectional=bidir, mode=mode,
                state_outputs=True, name="rnn")
    shapes = dict(zip(out.list_arguments(), out.infer_shape(data=(t, n, i), state=(layers * d, n, h),
                                                            **({"cell": (layers * d, n, h)}
                                                               if mode == "lstm" else {}))[0]))
    params = {"params": (rng.randn(*shapes["params"]) * 0.5).astype(np.float32)}
    feeds = {k: rng.randn(*s).astype(np.float32) for k, s in shapes.items() if k != "params"}
    names = [k for k in out.list_arguments() if k != "params"]
    model = export_model(out, params, [feeds[k].shape for k in names], onnx_file_path=None)
    onnx.checker.check_model(model, full_check=True)
    kinds = [nd.op_type for nd in model.graph.node if nd.op_type in ("LSTM", "GRU", "RNN")]
    assert kinds == [{"lstm": "LSTM", "gru": "GRU"}.get(mode, "RNN")] * layers
    want = nbdl_run(out, feeds, params)
    got = ort_run(model, feeds)
    for g, w in zip(got, want):
        assert_close(g, w)
    # and back: ONNX's per-layer nodes become one RNN op each
    sym, arg, aux = import_model(model)
    again = nbdl_run(sym, feeds, {**arg, **aux})
    for g, w in zip(again, want):
        assert_close(g, w)


def test_gluon_lstm_language_model(rng, tmp_path):
    class LM(nbdl.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.embed = nbdl.gluon.nn.Embedding(20, 8)
            self.lstm = nbdl.gluon.rnn.LSTM(6, num_layers=2)
            self.out = nbdl.gluon.nn.Dense(20, flatten=False)

        def forward(self, x):
            return self.out(self.lstm(self.embed(x)))

    net = LM()
    net.initialize(nbdl.init.Xavier())
    net.hybridize()
    tokens = rng.randint(0, 20, (5, 3)).astype(np.float32)
    want = net(nbdl.nd.array(tokens)).asnumpy()
    path = export_block(net, str(tmp_path / "lm.onnx"), [tokens.shape], dynamic=True)
    onnx.checker.check_model(onnx.load(path), full_check=True)
    feed = onnx.load(path).graph.input[0].name
    assert_close(ort_run(path, {feed: tokens})[0], want)


class EncoderBlock(nbdl.gluon.HybridBlock):
    """A BERT-style encoder layer: multi-head self-attention and a GELU
    feed-forward, each with a residual and LayerNorm."""

    def __init__(self, units=8, heads=2, hidden=16, **kw):
        super().__init__(**kw)
        self.units, self.heads = units, heads
        with self.name_scope():
            self.qkv = nbdl.gluon.nn.Dense(3 * units, flatten=False)
            self.proj = nbdl.gluon.nn.Dense(units, flatten=False)
            self.ln1 = nbdl.gluon.nn.LayerNorm()
            self.ffn1 = nbdl.gluon.nn.Dense(hidden, flatten=False)
            self.ffn2 = nbdl.gluon.nn.Dense(units, flatten=False)
            self.ln2 = nbdl.gluon.nn.LayerNorm()

    def hybrid_forward(self, F, x):
        h = self.heads
        qkv = self.qkv(x)                                    # (B, T, 3U)
        qkv = F.reshape(qkv, shape=(0, 0, 3 * h, -1))        # (B, T, 3H, D)
        qkv = F.transpose(qkv, axes=(0, 2, 1, 3))            # (B, 3H, T, D)
        q, k, v = F.split(qkv, num_outputs=3, axis=1)        # (B, H, T, D) each
        q = F.reshape(q, shape=(-3, 0, 0))                   # (B*H, T, D)
        k = F.reshape(k, shape=(-3, 0, 0))
        v = F.reshape(v, shape=(-3, 0, 0))
        att = F.softmax(F.batch_dot(q, k, transpose_b=True) / np.sqrt(self.units // h), axis=-1)
        ctx = F.batch_dot(att, v)                            # (B*H, T, D)
        ctx = F.reshape(ctx, shape=(-4, -1, h, 0, 0))        # (B, H, T, D)
        ctx = F.reshape(F.transpose(ctx, axes=(0, 2, 1, 3)), shape=(0, 0, -1))
        x = self.ln1(x + self.proj(ctx))
        f = self.ffn2(F.LeakyReLU(self.ffn1(x), act_type="gelu"))
        return self.ln2(x + f)


def test_bert_style_encoder_block(rng, tmp_path):
    net = EncoderBlock()
    net.initialize(nbdl.init.Xavier())
    net.hybridize()
    x = rng.randn(2, 5, 8).astype(np.float32)
    want = net(nbdl.nd.array(x)).asnumpy()
    path = export_block(net, str(tmp_path / "enc.onnx"), [x.shape], dynamic=True)
    onnx.checker.check_model(onnx.load(path), full_check=True)
    feed = onnx.load(path).graph.input[0].name
    assert_close(ort_run(path, {feed: x})[0], want)
    x3 = rng.randn(3, 5, 8).astype(np.float32)
    assert_close(ort_run(path, {feed: x3})[0], net(nbdl.nd.array(x3)).asnumpy())
