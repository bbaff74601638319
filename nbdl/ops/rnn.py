"""RNN: MXNet's fused recurrent op (rules only; kernels in nbdl.kernels.*.rnn).

Inputs (MXNet's names): ``data`` (T, N, I) in layout TNC, ``parameters`` (one
packed 1-D vector), ``state`` (L*D, N, R), for ``mode='lstm'``
``state_cell`` (L*D, N, H) and, with ``use_sequence_length``,
``sequence_length`` (N,).  Attributes: ``state_size`` (H), ``num_layers``
(L), ``bidirectional`` (D = 2 when set), ``mode`` (rnn_relu, rnn_tanh, lstm,
gru), ``p`` (dropout on every layer's output but the last, in training),
``state_outputs``, ``projection_size`` (P), ``lstm_state_clip_min/max``,
``lstm_state_clip_nan``, ``use_sequence_length``.

``R`` is the size of the recurrent state and of each direction's output: P
with a projection, H without.

Projection (LSTMP, ``projection_size=P``, LSTM only, ``0 < P <= H`` as
MXNet): the cell computes ``h = o * tanh(c)`` of size H and passes on
``r = W_h2r h`` (no bias) of size P, which is the layer's output, the
recurrent state fed to ``W_h2h`` (G*H, P) and the next layer's input (of
size D*P).

The parameter vector follows MXNet: for each layer, for each direction,
``W_i2h`` (G*H, I_l) then ``W_h2h`` (G*H, R) then, with a projection,
``W_h2r`` (P, H); after all weights, for each layer and direction ``b_i2h``
(G*H,) then ``b_h2h`` (G*H,).  ``I_l`` is I for layer 0 and D*R above.  Gate
order is MXNet's: LSTM i, f, g, o; GRU r, z, n with
``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and
``h' = (1 - z) * n + z * h``.

Variable lengths (``use_sequence_length=True``, cuDNN's semantics in MXNet):
``sequence_length`` (float or integer; truncated toward zero and clipped to
``[0, T]``) gives each batch element's length ``len``.  Every layer and
direction runs only the steps ``t < len`` of that element: the forward
direction from 0 to len-1, the reverse one from len-1 down to 0; outputs at
``t >= len`` are zero, the final states are those after the last step run
(the initial states when ``len`` is 0), and no gradient flows through the
padding.  ``sequence_length`` gets no gradient.

Outputs: ``out`` (T, N, D*R), ``hy`` (L*D, N, R), ``cy`` (LSTM only,
(L*D, N, H)) and a hidden ``reserve`` vector (what MXNet calls the reserve
space): every layer's output, the activated gates, the cell states (LSTM) or
the ``W_hn h + b_hn`` values (GRU), the unprojected ``h`` (LSTMP) and the
dropout masks, which ``_backward_RNN`` reads to run back-propagation through
time in one kernel call.  Only ``out`` is visible unless ``state_outputs``.
"""
import numpy as np

from ..errors import AttrError, DTypeError
from .ir import backward_node
from .attrs import Attr
from .registry import REQ_NULL, OpDef, kernel_paths, register, shape_error
from .rules import check_arg_shape

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
MODE_IDS = {"rnn_relu": 0, "rnn_tanh": 1, "lstm": 2, "gru": 3}

RNN_ATTRS = {
    "state_size": Attr("int", doc="Number of hidden units H."),
    "num_layers": Attr("int", doc="Number of stacked layers L."),
    "bidirectional": Attr("bool", False, doc="Also run every layer backwards in time."),
    "mode": Attr("str", choices=tuple(GATES), doc="rnn_relu, rnn_tanh, lstm or gru."),
    "p": Attr("float", 0.0, doc="Dropout probability on the outputs of all layers but the last."),
    "state_outputs": Attr("bool", False, doc="Also output the final states."),
    "projection_size": Attr("int", None, optional=True,
                            doc="LSTMP: project h to this size (LSTM only, <= state_size)."),
    "lstm_state_clip_min": Attr("float", None, optional=True, doc="Lower clip of the LSTM cell."),
    "lstm_state_clip_max": Attr("float", None, optional=True, doc="Upper clip of the LSTM cell."),
    "lstm_state_clip_nan": Attr("bool", False, doc="Accepted; NaN cells stay NaN."),
    "use_sequence_length": Attr("bool", False,
                                doc="Read per-sequence lengths from ``sequence_length``."),
}


def check_rnn_attrs(opname, attrs):
    if attrs["state_size"] <= 0:
        raise AttrError(f"{opname}: state_size={attrs['state_size']!r} is invalid: it must be > 0")
    if attrs["num_layers"] <= 0:
        raise AttrError(f"{opname}: num_layers={attrs['num_layers']!r} is invalid: it must be > 0")
    if not 0.0 <= attrs["p"] < 1.0:
        raise AttrError(f"{opname}: p={attrs['p']!r} is invalid: it must be in [0, 1)")
    proj = attrs["projection_size"]
    if proj is not None:
        if attrs["mode"] != "lstm":
            raise AttrError(f"{opname}: projection_size={proj!r} needs mode='lstm', "
                            f"got mode={attrs['mode']!r}")
        if not 0 < proj <= attrs["state_size"]:
            raise AttrError(f"{opname}: projection_size={proj!r} is invalid: it must be in "
                            f"[1, state_size={attrs['state_size']}]")
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
    """(T, N, I, H, L, D, G, P) from the attributes and the data shape; P is
    the projection size, 0 without a projection."""
    T, N, I = (int(s) for s in data_shape)
    return (T, N, I, attrs["state_size"], attrs["num_layers"],
            2 if attrs["bidirectional"] else 1, GATES[attrs["mode"]],
            int(attrs["projection_size"] or 0))


def rec_size(H, P):
    """R: the recurrent state's (and each direction's output's) size."""
    return P if P > 0 else H


def param_size(L, D, G, H, I, P=0):
    R = rec_size(H, P)
    n = 0
    for layer in range(L):
        il = I if layer == 0 else D * R
        n += D * (G * H * il + G * H * R + P * H)
    return n + L * D * 2 * G * H


def reserve_size(attrs, T, N, I, H, L, D, G, P):
    """Length of the hidden reserve output (layout in nbdl.kernels.cpu.rnn)."""
    R = rec_size(H, P)
    extra = 1 if attrs["mode"] in ("lstm", "gru") else 0
    hasq = 1 if P > 0 else 0
    drop = attrs["p"] > 0 and L > 1
    n = 0
    for layer in range(L):
        n += T * N * D * R + D * T * N * (G * H + extra * H + hasq * H)
        if drop and layer > 0:
            n += 2 * T * N * D * R
    return n


def _fwd_names(attrs):
    lstm = attrs["mode"] == "lstm"
    return (["data", "parameters", "state"] + (["state_cell"] if lstm else [])
            + (["sequence_length"] if attrs["use_sequence_length"] else []))


def _grad_names(attrs):
    """The forward inputs that get a gradient (all but sequence_length)."""
    return ["data", "parameters", "state"] + (["state_cell"] if attrs["mode"] == "lstm" else [])


def _input_names(opname, backward=False):
    def names(attrs):
        check_rnn_attrs(opname, attrs)
        fwd = _fwd_names(attrs)
        if not backward:
            return fwd
        lstm = attrs["mode"] == "lstm"
        heads = ["out_grad", "hy_grad"] + (["cy_grad"] if lstm else [])
        return heads + fwd + ["reserve"]
    return names


def _output_keys(attrs):
    """The outputs as the shape rules name them."""
    return ["out", "hy"] + (["cy"] if attrs["mode"] == "lstm" else []) + ["reserve"]


def _output_names(attrs):
    """MXNet 1.9.1's output names (``rnn_output``, ``rnn_state_output``...)."""
    lstm = attrs["mode"] == "lstm"
    return ["output", "state_output"] + (["statecell_output"] if lstm else []) + ["reserve"]


def _n_outputs(attrs):
    return 4 if attrs["mode"] == "lstm" else 3


def _n_visible(attrs):
    if not attrs["state_outputs"]:
        return 1
    return 3 if attrs["mode"] == "lstm" else 2


def _check(opname, name, got, want, in_shapes):
    note = " (one length per batch element)" if name.startswith("sequence_length") else ""
    check_arg_shape(opname, name, got, want, in_shapes, note)


def _shapes(opname, attrs, data, in_shapes):
    if len(data) != 3:
        raise shape_error(opname, f"data must be 3-D (T, N, C) in layout TNC, got shape "
                          f"{tuple(data)}", in_shapes)
    T, N, I, H, L, D, G, P = geometry(attrs, data)
    R = rec_size(H, P)
    state, cell = (L * D, N, R), (L * D, N, H)
    return dict(data=tuple(int(s) for s in data), parameters=(param_size(L, D, G, H, I, P),),
                state=state, state_cell=cell, sequence_length=(N,), out=(T, N, D * R),
                hy=state, cy=cell, reserve=(reserve_size(attrs, T, N, I, H, L, D, G, P),))


def _forward_shape(attrs, in_shapes, out_shapes):
    opname = "RNN"
    data = in_shapes[0]
    if data is None:
        return in_shapes, out_shapes
    want = _shapes(opname, attrs, data, in_shapes)
    in_names = _input_names(opname)(attrs)
    out_names = _output_keys(attrs)
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
    grads = _grad_names(attrs)
    for n, s in zip(grads, out_shapes):
        _check(opname, n + "_grad", s, want[n], in_shapes)
    return [want[n] for n in in_names], [want[n] for n in grads]


def _rnn_type(opname, backward):
    """All inputs and outputs share one float dtype, except ``sequence_length``,
    which may be any real or integer dtype (unknown: it takes the data's)."""
    def infer(attrs, in_types, out_types):
        names = _input_names(opname, backward)(attrs)
        lens_at = names.index("sequence_length") if attrs["use_sequence_length"] else -1
        others = [t for i, t in enumerate(in_types) if i != lens_at] + list(out_types)
        known = next((t for t in others if t is not None), None)
        if known is None:
            return in_types, out_types
        ins = [known] * len(in_types)
        if lens_at >= 0:
            lt = in_types[lens_at]
            if lt is not None:
                lt = np.dtype(lt)
                if lt.kind not in "iuf":
                    raise DTypeError(f"{opname}: sequence_length has dtype {lt}; it must be an "
                                     f"integer or float array")
            ins[lens_at] = lt if lt is not None else known
        return ins, [known] * len(out_types)
    return infer


def forward_temp_sizes(T, N, I, H, L, D, G, P):
    """Forward scratch, one vector: the clipped lengths (N,), the recurrent
    state (N, R), the cell (N, H), the h2h gates (N, G*H) and, with a
    projection, the unprojected h (N, H) and its projection (N, P), then the
    h2h gates transposed (G*H, N) (the CPU kernels' product's result before
    its transpose)."""
    R = rec_size(H, P)
    hasq = 1 if P > 0 else 0
    return [N, N * R, N * H, N * G * H, hasq * N * H, N * P, N * G * H]


def backward_temp_sizes(T, N, I, H, L, D, G, P, gru=True, dparams_scratch=True):
    """Backward scratch, one vector: the clipped lengths (N,), the current
    layer's output gradient (T, N, D*R), its input gradient (T, N, max I_l)
    and, bidirectional only, a second buffer for the reverse direction's
    share, the i2h gate gradients (T, N, G*H) and, GRU only, separate h2h gate
    gradients (T, N, G*H) (for RNN and LSTM they are the i2h ones), the
    previous recurrent states (T, N, R), dh (N, R), dc (N, H), one step's h2h
    gate gradients (N, G*H) and their product with W_h2h (N, R); with a
    projection the gradients of every step's projected output (T, N, P), one
    step's of them (N, P) and of the unprojected h (N, H); then, only when
    the parameter gradient is not requested (``dparams_scratch``), room to
    compute it anyway (the kernels otherwise accumulate straight into the
    output); then W_h2h transposed (R, G*H) and one step's product with it
    transposed (R, N) (the CPU kernels' per-step product).  The kernels
    slice the vector in this order."""
    R = rec_size(H, P)
    hasq = 1 if P > 0 else 0
    imax = max(I, D * R)
    return [N, T * N * D * R, T * N * imax, (D - 1) * T * N * imax, T * N * G * H,
            (T * N * G * H if gru else 0), T * N * R, N * R, N * H, N * G * H, N * R,
            T * N * P, N * P, hasq * N * H,
            (param_size(L, D, G, H, I, P) if dparams_scratch else 0), R * G * H, R * N]


def backward_temp_call_sizes(call):
    """``backward_temp_sizes`` for a ``_backward_RNN`` call (its req decides
    whether the parameter gradient needs scratch)."""
    lstm = call.attrs["mode"] == "lstm"
    geo = geometry(call.attrs, call.in_shapes[3 if lstm else 2])
    return backward_temp_sizes(*geo, gru=call.attrs["mode"] == "gru",
                               dparams_scratch=call.req is None or call.req[1] == REQ_NULL)


def forward_temp(call):
    """The forward scratch, plus room for the reserve when nobody reads the
    reserve output (req null: the planner gives it no storage)."""
    geo = geometry(call.attrs, call.in_shapes[0])
    sizes = forward_temp_sizes(*geo)
    if call.req is not None and call.req[-1] == REQ_NULL:
        sizes.append(reserve_size(call.attrs, *geo))
    return [((sum(sizes),), call.in_dtypes[0])]


def backward_temp(call):
    lstm = call.attrs["mode"] == "lstm"
    return [((sum(backward_temp_call_sizes(call)),), call.in_dtypes[3 if lstm else 2])]


def _gradient(node, out_grads):
    lstm = node.attrs["mode"] == "lstm"
    n_heads = 3 if lstm else 2
    reserve = node.output(n_heads)
    back = backward_node("_backward_RNN",
                         list(out_grads[:n_heads]) + list(node.inputs) + [reserve], node)
    n_grads = len(_grad_names(node.attrs))
    return ([back.output(i) for i in range(n_grads)]
            + [None] * (len(node.inputs) - n_grads))


register(OpDef(
    name="RNN",
    input_names=_input_names("RNN"),
    num_outputs=_n_outputs, num_visible_outputs=_n_visible, output_names=_output_names,
    attrs=dict(RNN_ATTRS),
    infer_shape=_forward_shape, infer_type=_rnn_type("RNN", False),
    gradient=_gradient,
    temp=forward_temp,
    kernels=kernel_paths("rnn", "prepare_rnn"),
    train_aware=True,
    # sequence_length: input 3 (rnn_*, gru) or 4 (lstm); the type rule holds
    # every other input to the data's float dtype
    int_inputs=(3, 4),
    doc="Multi-layer (bidirectional) Elman RNN, LSTM (optionally projected) or GRU over a "
        "whole sequence, optionally of per-sequence lengths."))

register(OpDef(
    name="_backward_RNN",
    input_names=_input_names("_backward_RNN", backward=True),
    num_outputs=lambda attrs: 4 if attrs["mode"] == "lstm" else 3,
    output_names=lambda attrs: [n + "_grad" for n in _grad_names(attrs)],
    attrs=dict(RNN_ATTRS),
    infer_shape=_backward_shape, infer_type=_rnn_type("_backward_RNN", True),
    temp=backward_temp,
    kernels=kernel_paths("rnn", "prepare_rnn_backward"),
    hidden=True,
    # sequence_length: input 5 (rnn_*, gru) or 7 (lstm), after the head
    # gradients and the other forward inputs
    int_inputs=(5, 7),
    doc="RNN's data, parameter and state gradients by back-propagation through time."))
