"""RNN: MXNet's fused recurrent op (rules only; kernels in nbdl.kernels.*.rnn).

Inputs (MXNet's names): ``data`` (T, N, I) in layout TNC, ``parameters`` (one
packed 1-D vector), ``state`` (L*D, N, H) and, for ``mode='lstm'``,
``state_cell`` (L*D, N, H).  Attributes: ``state_size`` (H), ``num_layers``
(L), ``bidirectional`` (D = 2 when set), ``mode`` (rnn_relu, rnn_tanh, lstm,
gru), ``p`` (dropout on every layer's output but the last, in training),
``state_outputs``, ``projection_size``, ``lstm_state_clip_min/max``,
``lstm_state_clip_nan``, ``use_sequence_length``.

The parameter vector follows MXNet: for each layer, for each direction,
``W_i2h`` (G*H, I_l) then ``W_h2h`` (G*H, H); after all weights, for each
layer and direction ``b_i2h`` (G*H,) then ``b_h2h`` (G*H,).  Gate order is
MXNet's: LSTM i, f, g, o; GRU r, z, n with
``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and
``h' = (1 - z) * n + z * h``.

Outputs: ``out`` (T, N, D*H), ``hy`` (L*D, N, H), ``cy`` (LSTM only) and a
hidden ``reserve`` vector (what MXNet calls the reserve space): every
layer's output, the activated gates, the cell states (LSTM) or the
``W_hn h + b_hn`` values (GRU) and the dropout masks, which
``_backward_RNN`` reads to run back-propagation through time in one kernel
call.  Only ``out`` is visible unless ``state_outputs``.
"""
from ..errors import AttrError
from ..graph.ir import make_node
from .attrs import Attr
from .registry import REQ_NULL, OpDef, register, shape_error

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
MODE_IDS = {"rnn_relu": 0, "rnn_tanh": 1, "lstm": 2, "gru": 3}

RNN_ATTRS = {
    "state_size": Attr("int", doc="Number of hidden units H."),
    "num_layers": Attr("int", doc="Number of stacked layers L."),
    "bidirectional": Attr("bool", False, doc="Also run every layer backwards in time."),
    "mode": Attr("str", choices=tuple(GATES), doc="rnn_relu, rnn_tanh, lstm or gru."),
    "p": Attr("float", 0.0, doc="Dropout probability on the outputs of all layers but the last."),
    "state_outputs": Attr("bool", False, doc="Also output the final states."),
    "projection_size": Attr("int", None, optional=True, doc="LSTMP projection (not supported)."),
    "lstm_state_clip_min": Attr("float", None, optional=True, doc="Lower clip of the LSTM cell."),
    "lstm_state_clip_max": Attr("float", None, optional=True, doc="Upper clip of the LSTM cell."),
    "lstm_state_clip_nan": Attr("bool", False, doc="Accepted; NaN cells stay NaN."),
    "use_sequence_length": Attr("bool", False, doc="Per-sequence lengths (not supported)."),
}


def check_rnn_attrs(opname, attrs):
    if attrs["state_size"] <= 0:
        raise AttrError(f"{opname}: state_size={attrs['state_size']!r} is invalid: it must be > 0")
    if attrs["num_layers"] <= 0:
        raise AttrError(f"{opname}: num_layers={attrs['num_layers']!r} is invalid: it must be > 0")
    if not 0.0 <= attrs["p"] < 1.0:
        raise AttrError(f"{opname}: p={attrs['p']!r} is invalid: it must be in [0, 1)")
    if attrs["projection_size"] is not None:
        raise AttrError(f"{opname}: projection_size={attrs['projection_size']!r}: LSTM "
                        f"projection (LSTMP) is not supported")
    if attrs["use_sequence_length"]:
        raise AttrError(f"{opname}: use_sequence_length=True is not supported")
    lo, hi = attrs["lstm_state_clip_min"], attrs["lstm_state_clip_max"]
    if (lo is None) != (hi is None):
        raise AttrError(f"{opname}: lstm_state_clip_min and lstm_state_clip_max must be given "
                        f"together (got {lo!r}, {hi!r})")
    if lo is not None:
        if attrs["mode"] != "lstm":
            raise AttrError(f"{opname}: lstm_state_clip_min/max need mode='lstm', "
                            f"got mode={attrs['mode']!r}")
        if lo > hi:
            raise AttrError(f"{opname}: lstm_state_clip_min={lo!r} > lstm_state_clip_max={hi!r}")


def geometry(attrs, data_shape):
    """(T, N, I, H, L, D, G) from the attributes and the data shape."""
    T, N, I = (int(s) for s in data_shape)
    return (T, N, I, attrs["state_size"], attrs["num_layers"],
            2 if attrs["bidirectional"] else 1, GATES[attrs["mode"]])


def param_size(L, D, G, H, I):
    n = 0
    for layer in range(L):
        il = I if layer == 0 else D * H
        n += D * (G * H * il + G * H * H)
    return n + L * D * 2 * G * H


def reserve_size(attrs, T, N, I, H, L, D, G):
    """Length of the hidden reserve output (layout in nbdl.kernels.cpu.rnn)."""
    extra = 1 if attrs["mode"] in ("lstm", "gru") else 0
    drop = attrs["p"] > 0 and L > 1
    n = 0
    for layer in range(L):
        n += T * N * D * H + D * (T * N * G * H + extra * T * N * H)
        if drop and layer > 0:
            n += 2 * T * N * D * H
    return n


def _input_names(opname, backward=False):
    def names(attrs):
        check_rnn_attrs(opname, attrs)
        fwd = ["data", "parameters", "state"] + (["state_cell"] if attrs["mode"] == "lstm" else [])
        if not backward:
            return fwd
        lstm = attrs["mode"] == "lstm"
        heads = ["out_grad", "hy_grad"] + (["cy_grad"] if lstm else [])
        return heads + fwd + ["reserve"]
    return names


def _output_names(attrs):
    return ["out", "hy"] + (["cy"] if attrs["mode"] == "lstm" else []) + ["reserve"]


def _n_outputs(attrs):
    return 4 if attrs["mode"] == "lstm" else 3


def _n_visible(attrs):
    if not attrs["state_outputs"]:
        return 1
    return 3 if attrs["mode"] == "lstm" else 2


def _check(opname, name, got, want, in_shapes):
    if got is not None and tuple(got) != tuple(want):
        raise shape_error(opname, f"argument {name!r} has shape {tuple(got)}, expected "
                          f"{tuple(want)}", in_shapes)


def _shapes(opname, attrs, data, in_shapes):
    if len(data) != 3:
        raise shape_error(opname, f"data must be 3-D (T, N, C) in layout TNC, got shape "
                          f"{tuple(data)}", in_shapes)
    T, N, I, H, L, D, G = geometry(attrs, data)
    state = (L * D, N, H)
    return dict(data=tuple(int(s) for s in data), parameters=(param_size(L, D, G, H, I),),
                state=state, state_cell=state, out=(T, N, D * H), hy=state, cy=state,
                reserve=(reserve_size(attrs, T, N, I, H, L, D, G),))


def _forward_shape(attrs, in_shapes, out_shapes):
    opname = "RNN"
    data = in_shapes[0]
    if data is None:
        return in_shapes, out_shapes
    want = _shapes(opname, attrs, data, in_shapes)
    in_names = _input_names(opname)(attrs)
    out_names = _output_names(attrs)
    for n, s in zip(in_names, in_shapes):
        _check(opname, n, s, want[n], in_shapes)
    for n, s in zip(out_names, out_shapes):
        _check(opname, n, s, want[n], in_shapes)
    return [want[n] for n in in_names], [want[n] for n in out_names]


def _backward_shape(attrs, in_shapes, out_shapes):
    opname = "_backward_RNN"
    in_names = _input_names(opname, backward=True)(attrs)
    data = in_shapes[in_names.index("data")]
    if data is None:
        data = out_shapes[0]
    if data is None:
        return in_shapes, out_shapes
    want = _shapes(opname, attrs, data, in_shapes)
    want.update(out_grad=want["out"], hy_grad=want["hy"], cy_grad=want["cy"])
    for n, s in zip(in_names, in_shapes):
        _check(opname, n, s, want[n], in_shapes)
    fwd = _input_names("RNN")(attrs)
    for n, s in zip(fwd, out_shapes):
        _check(opname, n + "_grad", s, want[n], in_shapes)
    return [want[n] for n in in_names], [want[n] for n in fwd]


def same_float_type(attrs, in_types, out_types):
    known = next((t for t in list(in_types) + list(out_types) if t is not None), None)
    return [known] * len(in_types), [known] * len(out_types)


def forward_temp_sizes(T, N, I, H, L, D, G):
    """Forward scratch, one vector: h_prev (N, H), c_prev (N, H), h2h gates (N, G*H)."""
    return [N * H, N * H, N * G * H]


def backward_temp_sizes(T, N, I, H, L, D, G):
    """Backward scratch, one vector: the current layer's output gradient
    (T, N, D*H), its input gradient and a second buffer for it (T, N, max I_l),
    the i2h and h2h gate gradients (T, N, G*H) each, the previous hidden states
    (T, N, H), dh and dc (N, H) each, and the parameter gradient."""
    imax = max(I, D * H)
    return [T * N * D * H, T * N * imax, T * N * imax, T * N * G * H, T * N * G * H,
            T * N * H, N * H, N * H, param_size(L, D, G, H, I)]


def _temp(sizes_fn, data_index):
    def temp(call):
        shape = call.in_shapes[data_index]
        sizes = sizes_fn(*geometry(call.attrs, shape))
        return [((sum(sizes),), call.in_dtypes[data_index])]
    return temp


def forward_temp(call):
    """The forward scratch, plus room for the reserve when nobody reads the
    reserve output (req null: the planner gives it no storage)."""
    sizes = forward_temp_sizes(*geometry(call.attrs, call.in_shapes[0]))
    if call.req is not None and call.req[-1] == REQ_NULL:
        sizes.append(reserve_size(call.attrs, *geometry(call.attrs, call.in_shapes[0])))
    return [((sum(sizes),), call.in_dtypes[0])]


def backward_temp(call):
    lstm = call.attrs["mode"] == "lstm"
    return _temp(backward_temp_sizes, 3 if lstm else 2)(call)


def _gradient(node, out_grads):
    lstm = node.attrs["mode"] == "lstm"
    n_heads = 3 if lstm else 2
    reserve = node.output(n_heads)
    back = make_node("_backward_RNN", list(out_grads[:n_heads]) + list(node.inputs) + [reserve],
                     dict(node.attrs), name=f"{node.name}_backward")
    return [back.output(i) for i in range(len(node.inputs))]


register(OpDef(
    name="RNN",
    input_names=_input_names("RNN"),
    num_outputs=_n_outputs, num_visible_outputs=_n_visible, output_names=_output_names,
    attrs=dict(RNN_ATTRS),
    infer_shape=_forward_shape, infer_type=same_float_type,
    gradient=_gradient,
    temp=forward_temp,
    kernels={"cpu": "nbdl.kernels.cpu.rnn:prepare_rnn",
             "cuda": "nbdl.kernels.cuda.rnn:prepare_rnn"},
    train_aware=True,
    doc="Multi-layer (bidirectional) Elman RNN, LSTM or GRU over a whole sequence."))

register(OpDef(
    name="_backward_RNN",
    input_names=_input_names("_backward_RNN", backward=True),
    num_outputs=lambda attrs: 4 if attrs["mode"] == "lstm" else 3,
    output_names=lambda attrs: [n + "_grad" for n in _input_names("RNN")(attrs)],
    attrs=dict(RNN_ATTRS),
    infer_shape=_backward_shape, infer_type=same_float_type,
    temp=backward_temp,
    kernels={"cpu": "nbdl.kernels.cpu.rnn:prepare_rnn_backward",
             "cuda": "nbdl.kernels.cuda.rnn:prepare_rnn_backward"},
    hidden=True,
    doc="RNN's data, parameter and state gradients by back-propagation through time."))
