"""ONNX import of LSTM / GRU / RNN nodes as MXNet's fused ``RNN`` op (one
layer each), with the weights repacked into MXNet's parameter vector (the
layout ``export_rnn`` describes)."""
import numpy as np

from .. import symbol as S
from ._common import importer
from .export_rnn import ORDER
from .import_ops import _name, _opt, _refuse

MODES = {"LSTM": "lstm", "GRU": "gru"}


def _to_mxnet(block, gates, mode):
    """(D, G*H, cols) in ONNX's gate order -> the same in MXNet's."""
    d, gh, cols = block.shape
    h = gh // gates
    inverse = np.argsort(ORDER[mode])
    return block.reshape(d, gates, h, cols)[:, inverse].reshape(d, gh, cols)


@importer("LSTM", "GRU", "RNN")
def recurrent(ctx, node, attrs):
    if int(attrs.get("layout", 0)) != 0:
        _refuse(ctx, node, "layout=1 (batch first)")
    if _opt(node, 4):
        _refuse(ctx, node, "sequence_lens")
    if "clip" in attrs:
        _refuse(ctx, node, "clip")
    if attrs.get("input_forget", 0):
        _refuse(ctx, node, "input_forget=1")
    direction = attrs.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else direction
    if direction not in ("forward", "bidirectional"):
        _refuse(ctx, node, f"direction={direction!r}")
    D = 2 if direction == "bidirectional" else 1
    acts = [a.decode() if isinstance(a, bytes) else a for a in attrs.get("activations", [])]
    if node.op_type == "RNN":
        act = acts[0] if acts else "Tanh"
        if act not in ("Tanh", "Relu") or any(x != act for x in acts):
            _refuse(ctx, node, f"activations {acts}")
        mode = "rnn_tanh" if act == "Tanh" else "rnn_relu"
    else:
        mode = MODES[node.op_type]
        default = ["Sigmoid", "Tanh", "Tanh"] if mode == "lstm" else ["Sigmoid", "Tanh"]
        if acts and acts != default * D:
            _refuse(ctx, node, f"activations {acts}")
        if mode == "gru" and not attrs.get("linear_before_reset", 0):
            _refuse(ctx, node, "linear_before_reset=0 (MXNet's GRU resets after the product)")
    G = {"lstm": 4, "gru": 3}.get(mode, 1)
    H = int(attrs["hidden_size"])
    W = ctx.const(node.input[1], f"{node.op_type}'s W")
    R = ctx.const(node.input[2], f"{node.op_type}'s R")
    B = ctx.const(node.input[3], f"{node.op_type}'s B") if _opt(node, 3) \
        else np.zeros((D, 2 * G * H), W.dtype)
    if W.shape[:2] != (D, G * H) or R.shape != (D, G * H, H) or B.shape != (D, 2 * G * H):
        _refuse(ctx, node, f"weights of shapes W {W.shape}, R {R.shape}, B {B.shape} for "
                f"hidden_size={H}")
    W, R = _to_mxnet(W, G, mode), _to_mxnet(R, G, mode)
    Bi = _to_mxnet(B[:, :G * H, None], G, mode)
    Bh = _to_mxnet(B[:, G * H:, None], G, mode)
    parts = [p for d in range(D) for p in (W[d].ravel(), R[d].ravel())]
    parts += [p for d in range(D) for p in (Bi[d].ravel(), Bh[d].ravel())]
    name = _name(ctx, node)
    flat = ctx.param(f"{name}_parameters", np.concatenate(parts).astype(W.dtype))
    x = ctx.sym(node.input[0])

    def state(i, what):
        if _opt(node, i):
            return ctx.sym(node.input[i])
        # zeros of shape (D, N, H), N taken from the data at run time
        first = S.slice_axis(x, axis=0, begin=0, end=1, name=f"{name}_{what}_t0")
        one = S.zeros_like(S.sum(first, axis=2, keepdims=True, name=f"{name}_{what}_s"),
                           name=f"{name}_{what}_z")
        return S.broadcast_axis(one, axis=(0, 2), size=(D, H), name=f"{name}_{what}")
    ins = [x, flat, state(5, "h0")] + ([state(6, "c0")] if mode == "lstm" else [])
    want_states = any(o for o in node.output[1:])
    out = S.RNN(*ins, state_size=H, num_layers=1, bidirectional=D == 2, mode=mode,
                state_outputs=want_states, name=name)
    y = out[0] if want_states else out
    y = S.transpose(S.Reshape(y, shape=(0, 0, D, H), name=f"{name}_y4"), axes=(0, 2, 1, 3),
                    name=f"{name}_y")
    outs = [y]
    if want_states:
        outs.append(out[1])
        if mode == "lstm":
            outs.append(out[2])
    return outs + [None] * (len(node.output) - len(outs))
