"""ONNX export of MXNet's fused ``RNN`` op as ONNX LSTM / GRU / RNN nodes,
one per layer.

MXNet packs every layer's weights into one vector (``nbdl.ops.rnn``: for each
layer and direction ``W_i2h`` then ``W_h2h``; then the biases); ONNX wants per
layer ``W`` (D, G*H, I), ``R`` (D, G*H, H) and ``B`` (D, 2*G*H), with other
gate orders.  The slices and gate permutations are written as ONNX nodes
over the parameter vector, so it may be an initializer or computed (Gluon's
``nn.LSTM`` concatenates its per-layer parameters in the graph); onnxruntime
folds them once.
"""
from ._common import exporter
from .export_nn import _refuse

# ONNX gate k is MXNet gate ORDER[k]:  LSTM MXNet i f g o -> ONNX i o f c;
# GRU MXNet r z n -> ONNX z r h.
ORDER = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn_relu": [0], "rnn_tanh": [0]}
ONNX_OP = {"lstm": "LSTM", "gru": "GRU", "rnn_relu": "RNN", "rnn_tanh": "RNN"}
GATES = {"lstm": 4, "gru": 3, "rnn_relu": 1, "rnn_tanh": 1}


def _block(ctx, node, flat, start, gates, hidden, cols, mode):
    """Rows ``start:start + gates*hidden*cols`` of ``flat`` as (1, G*H, cols)
    in ONNX's gate order (cols = 1 for a bias, squeezed after)."""
    n = gates * hidden * cols
    part = ctx.node("Slice", [flat, ctx.ints("s", [start]), ctx.ints("e", [start + n]),
                              ctx.ints("a", [0])], name=node.name)[0]
    part = ctx.node("Reshape", [part, ctx.ints("shape", [gates, hidden, cols])], name=node.name)[0]
    if gates > 1:
        part = ctx.node("Gather", [part, ctx.ints("order", ORDER[mode])], name=node.name,
                        axis=0)[0]
    return ctx.node("Reshape", [part, ctx.ints("shape", [1, gates * hidden, cols])],
                    name=node.name)[0]


@exporter("RNN")
def rnn(ctx, node, inputs):
    a = node.attrs
    mode = a["mode"]
    if a.get("projection_size"):
        _refuse(node, "projection_size (LSTMP)")
    if a.get("lstm_state_clip_min") is not None or a.get("lstm_state_clip_max") is not None:
        _refuse(node, "lstm_state_clip_min/max")
    if a.get("use_sequence_length"):
        _refuse(node, "use_sequence_length")
    n_in = ctx.shape(node.inputs[0])[2]
    H, L = int(a["state_size"]), int(a["num_layers"])
    D = 2 if a.get("bidirectional") else 1
    G = GATES[mode]
    flat = inputs[1]
    lstm = mode == "lstm"
    # offsets of each (layer, direction)'s weights, then of the biases
    w_at, at = {}, 0
    for layer in range(L):
        il = n_in if layer == 0 else D * H
        for d in range(D):
            w_at[layer, d] = (at, il)
            at += G * H * il + G * H * H
    b_at = at
    x = inputs[0]
    hy, cy = [], []
    for layer in range(L):
        ws, rs, bs = [], [], []
        for d in range(D):
            start, il = w_at[layer, d]
            ws.append(_block(ctx, node, flat, start, G, H, il, mode))
            rs.append(_block(ctx, node, flat, start + G * H * il, G, H, H, mode))
            bstart = b_at + (layer * D + d) * 2 * G * H
            bi = _block(ctx, node, flat, bstart, G, H, 1, mode)
            bh = _block(ctx, node, flat, bstart + G * H, G, H, 1, mode)
            b = ctx.node("Concat", [bi, bh], name=node.name, axis=1)[0]
            bs.append(ctx.node("Reshape", [b, ctx.ints("shape", [1, 2 * G * H])],
                               name=node.name)[0])

        def cat(parts):
            return parts[0] if D == 1 else ctx.node("Concat", parts, name=node.name, axis=0)[0]
        W, R, B = cat(ws), cat(rs), cat(bs)
        h0 = ctx.node("Slice", [inputs[2], ctx.ints("s", [layer * D]),
                                ctx.ints("e", [(layer + 1) * D]), ctx.ints("a", [0])],
                      name=node.name)[0]
        ins = [x, W, R, B, "", h0]
        if lstm:
            c0 = ctx.node("Slice", [inputs[3], ctx.ints("s", [layer * D]),
                                    ctx.ints("e", [(layer + 1) * D]), ctx.ints("a", [0])],
                          name=node.name)[0]
            ins.append(c0)
        extra = {}
        if mode == "gru":
            extra["linear_before_reset"] = 1
        if mode in ("rnn_relu", "rnn_tanh"):
            act = "Relu" if mode == "rnn_relu" else "Tanh"
            extra["activations"] = [act] * D
        outs = ctx.node(ONNX_OP[mode], ins, n_out=3 if lstm else 2, name=f"{node.name}_l{layer}",
                        hidden_size=H, direction="bidirectional" if D == 2 else "forward",
                        **extra)
        y = ctx.node("Transpose", [outs[0]], name=node.name, perm=[0, 2, 1, 3])[0]
        x = ctx.node("Reshape", [y, ctx.ints("shape", [0, 0, D * H])], name=node.name)[0]
        hy.append(outs[1])
        if lstm:
            cy.append(outs[2])
    result = [ctx.node("Identity", [x], name=node.name,
                       outputs=[ctx.claim(node.output(0).name)])[0]]
    if a.get("state_outputs"):
        states = [hy] + ([cy] if lstm else [])
        for k, parts in enumerate(states, start=1):
            out = [ctx.claim(node.output(k).name)]
            if len(parts) == 1:
                result.append(ctx.node("Identity", parts, name=node.name, outputs=out)[0])
            else:
                result.append(ctx.node("Concat", parts, name=node.name, outputs=out, axis=0)[0])
    return result
