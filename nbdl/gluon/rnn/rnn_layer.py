"""Fused recurrent layers: RNN, LSTM, GRU (Gluon 2.0's ``rnn.RNN``/``LSTM``/``GRU``).

Each layer keeps Gluon's per-layer parameters (``l0_i2h_weight``,
``l0_h2h_weight``, ``l0_i2h_bias``, ``l0_h2h_bias``, with
``projection_size`` also ``l0_h2r_weight`` (projection_size, hidden_size);
``r0_...`` for the reverse direction) and packs them at call time, with
registered ops (Reshape + Concat, so gradients flow back to each one), into
the single vector of the fused ``RNN`` op in MXNet's order: all weights
(layer, direction, i2h, h2h, h2r), then all biases.  ``forward`` is written
with ``call_op`` and so runs eagerly on NDArrays and traces into a graph
after ``hybridize()``.

With ``use_sequence_length=True`` the layer takes
``forward(inputs, states=None, sequence_length=...)``: each batch element
runs only its first ``sequence_length[n]`` steps (the reverse direction
starts at its last valid step), outputs after them are zero and the returned
states are those at each element's last valid step.
"""
from ...errors import NbdlError
from ...symbol.symbol import Symbol
from .._trace import call_op
from ..hybrid_block import HybridBlock
from ..parameter import Parameter

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


class _RNNLayer(HybridBlock):
    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size=None, h2r_weight_initializer=None,
                 lstm_state_clip_min=None, lstm_state_clip_max=None, lstm_state_clip_nan=False,
                 dtype="float32", use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if layout not in ("TNC", "NTC"):
            raise NbdlError(f"{name}: invalid layout {layout!r}; must be 'TNC' or 'NTC'")
        if int(hidden_size) <= 0 or int(num_layers) <= 0:
            raise NbdlError(f"{name}: hidden_size and num_layers must be "
                            f"positive, got {hidden_size}, {num_layers}")
        # Gluon treats projection_size=0 like None
        proj = int(projection_size) if projection_size else None
        if proj is not None and (mode != "lstm" or not 0 < proj <= int(hidden_size)):
            raise NbdlError(f"{name}: projection_size={projection_size!r} is invalid: it needs "
                            f"mode 'lstm' and 0 < projection_size <= hidden_size={hidden_size}")
        self._hidden_size, self._num_layers = int(hidden_size), int(num_layers)
        self._projection_size = proj
        self._layout, self._dropout, self._mode = layout, float(dropout), mode
        self._dir = 2 if bidirectional else 1
        self._input_size = int(input_size)
        self._clip = (lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan)
        self._dtype = dtype
        self._use_sequence_length = bool(use_sequence_length)
        self._gates = _GATES[mode]
        ng, nh = self._gates, self._hidden_size
        nr = proj or nh          # size of the recurrent state and of each direction's output
        ni = self._input_size
        for i in range(self._num_layers):
            for d in ["l", "r"][:self._dir]:
                self._register_param(f"{d}{i}_i2h_weight", (ng * nh, ni), i2h_weight_initializer)
                self._register_param(f"{d}{i}_h2h_weight", (ng * nh, nr), h2h_weight_initializer)
                self._register_param(f"{d}{i}_i2h_bias", (ng * nh,), i2h_bias_initializer)
                self._register_param(f"{d}{i}_h2h_bias", (ng * nh,), h2h_bias_initializer)
                if proj is not None:
                    self._register_param(f"{d}{i}_h2r_weight", (proj, nh),
                                         h2r_weight_initializer)
            ni = nr * self._dir

    def _register_param(self, name, shape, init):
        p = Parameter(name, shape=shape, init=init, dtype=self._dtype, allow_deferred_init=True)
        setattr(self, name, p)

    def __repr__(self):
        shape = getattr(self, "l0_i2h_weight").shape
        inp = shape[1] if shape and shape[1] else None
        s = f"{type(self).__name__}({inp} -> {self._hidden_size}, {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        if self._projection_size is not None:
            s += f", projection_size={self._projection_size}"
        return s + ")"

    def state_info(self, batch_size=0):
        """State shapes: ``(num_layers * num_directions, batch, R)`` with R the
        projection size (or hidden size), and for LSTM the cell
        ``(num_layers * num_directions, batch, hidden_size)``."""
        n = self._num_layers * self._dir
        info = [{"shape": (n, batch_size, self._projection_size or self._hidden_size),
                 "__layout__": "LNC", "dtype": self._dtype}]
        if self._mode == "lstm":
            info.append({"shape": (n, batch_size, self._hidden_size), "__layout__": "LNC",
                         "dtype": self._dtype})
        return info

    def begin_state(self, batch_size=0, func=None, **kwargs):
        """Initial states: zeros of the shapes ``state_info(batch_size)`` gives
        (``kwargs`` such as ``dtype`` override the layer's, as in Gluon)."""
        from ... import ndarray as nd
        func = func or nd.zeros
        return [func(info["shape"], **{"dtype": info["dtype"], **kwargs})
                for info in self.state_info(batch_size)]

    def _infer_from_traced_input(self, known):
        """Size layer 0's i2h weights from the shape of the input this layer
        was last traced on, inside a parent's graph (``known``: the shapes of
        the graph's inputs and known parameters)."""
        x = getattr(self, "_traced_input", None)
        todo = [p for p in (getattr(self, f"{d}0_i2h_weight") for d in ["l", "r"][:self._dir])
                if p.shape is None or not all(s > 0 for s in p.shape)]
        if x is None or not todo:
            return
        inputs = x.list_inputs()
        _, out_shapes, _ = x._infer_shape_partial(
            (), {k: v for k, v in known.items() if k in inputs}, zero_unknown=False)
        if out_shapes and out_shapes[0] and out_shapes[0][-1] > 0:
            for p in todo:
                p.shape = (self._gates * self._hidden_size, int(out_shapes[0][-1]))

    def _infer_params(self, sym, names, args):
        # the packed vector hides each weight's shape from graph inference:
        # layer 0's i2h weights take the input's feature size directly
        x = next(a for a in args if a is not None)
        ni = int(x.shape[-1])
        for d in ["l", "r"][:self._dir]:
            p = getattr(self, f"{d}0_i2h_weight")
            if p.shape is None or not all(s > 0 for s in p.shape):
                p.shape = (self._gates * self._hidden_size, ni)
        super()._infer_params(sym, names, args)

    def _unfuse(self):
        """The layer as a stack of recurrent cells (MXNet 1.x's ``_unfuse``):
        a ``HybridSequentialRNNCell`` with one cell per layer (a
        ``BidirectionalCell`` of two when bidirectional, ``DropoutCell``
        between layers when ``dropout > 0``) that use this layer's Parameters,
        so both compute the same function; unroll it with the layer's layout.
        State clipping (LSTM ``state_clip_*``) is not carried over, as in
        MXNet."""
        from . import rnn_cell
        H, P = self._hidden_size, self._projection_size

        def make(d, i, ni):
            if self._mode == "lstm" and P is not None:
                cell = rnn_cell.LSTMPCell(H, P, input_size=ni)
                kinds = ("i2h", "h2h", "h2r")
            else:
                if self._mode.startswith("rnn_"):
                    cell = rnn_cell.RNNCell(H, activation=self._mode[4:], input_size=ni)
                else:
                    cls = rnn_cell.LSTMCell if self._mode == "lstm" else rnn_cell.GRUCell
                    cell = cls(H, input_size=ni)
                kinds = ("i2h", "h2h")
            for g in kinds:
                for kind in ("weight", "bias"):
                    if g == "h2r" and kind == "bias":
                        continue
                    setattr(cell, f"{g}_{kind}", getattr(self, f"{d}{i}_{g}_{kind}"))
            return cell

        stack = rnn_cell.HybridSequentialRNNCell()
        ni = self._input_size
        for i in range(self._num_layers):
            if self._dir == 2:
                stack.add(rnn_cell.BidirectionalCell(make("l", i, ni), make("r", i, ni)))
            else:
                stack.add(make("l", i, ni))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(rnn_cell.DropoutCell(self._dropout))
            ni = (P or H) * self._dir
        return stack

    def _zero_states(self, x):
        """Zero begin states built from the (TNC) input with registered ops, so
        the same code serves eager calls and traced graphs."""
        z = call_op("slice_axis", [x], axis=0, begin=0, end=1)
        z = call_op("slice_axis", [z], axis=2, begin=0, end=1)
        z = call_op("zeros_like", [z])
        return [call_op("broadcast_axis", [z], axis=(0, 2),
                        size=(self._num_layers * self._dir, info["shape"][2]))
                for info in self.state_info()]

    def _packed_params(self):
        """MXNet's packed order: all weights (layer, direction, i2h, h2h, h2r),
        then all biases (layer, direction, i2h, h2h)."""
        parts = []
        kinds = ("i2h", "h2h") + (("h2r",) if self._projection_size is not None else ())
        for kind in ("weight", "bias"):
            for i in range(self._num_layers):
                for d in ["l", "r"][:self._dir]:
                    for g in kinds:
                        if g == "h2r" and kind == "bias":
                            continue
                        p = getattr(self, f"{d}{i}_{g}_{kind}").data()
                        parts.append(call_op("Reshape", [p], shape=(-1,)))
        return call_op("Concat", parts, dim=0, num_args=len(parts))

    def forward(self, inputs, states=None, sequence_length=None):
        """``inputs`` in the layer's layout; ``states`` as ``begin_state`` makes
        them (None: zeros, and only the output is returned);
        ``sequence_length`` (batch,) with ``use_sequence_length=True``."""
        name = type(self).__name__
        if self._use_sequence_length and sequence_length is None:
            raise NbdlError(f"{name}: use_sequence_length=True needs the sequence_length "
                            f"argument (one length per batch element)")
        if not self._use_sequence_length and sequence_length is not None:
            raise NbdlError(f"{name}: sequence_length was given but the layer was made with "
                            f"use_sequence_length=False")
        skip_states = states is None
        if isinstance(inputs, Symbol):
            object.__setattr__(self, "_traced_input", inputs)   # for deferred shapes
        if self._layout == "NTC":
            inputs = call_op("SwapAxis", [inputs], dim1=0, dim2=1)
        if skip_states:
            states = self._zero_states(inputs)
        elif not isinstance(states, (list, tuple)):
            states = [states]
        n_states = 2 if self._mode == "lstm" else 1
        if len(states) != n_states:
            raise NbdlError(f"{name}: expected {n_states} state(s), got {len(states)}")
        attrs = dict(state_size=self._hidden_size, num_layers=self._num_layers,
                     bidirectional=self._dir == 2, mode=self._mode, p=self._dropout,
                     state_outputs=True)
        if self._projection_size is not None:
            attrs["projection_size"] = self._projection_size
        if self._clip[0] is not None:
            attrs.update(lstm_state_clip_min=self._clip[0], lstm_state_clip_max=self._clip[1],
                         lstm_state_clip_nan=self._clip[2])
        extra = []
        if self._use_sequence_length:
            attrs["use_sequence_length"] = True
            extra = [sequence_length]
        res = call_op("RNN", [inputs, self._packed_params()] + list(states) + extra, **attrs)
        outputs, new_states = res[0], [res[i] for i in range(1, 1 + n_states)]
        if self._layout == "NTC":
            outputs = call_op("SwapAxis", [outputs], dim1=0, dim2=1)
        return outputs if skip_states else (outputs, new_states)


class RNN(_RNNLayer):
    """Multi-layer Elman RNN with tanh or relu: ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``."""

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        if activation not in ("relu", "tanh"):
            raise NbdlError(f"RNN: activation must be 'relu' or 'tanh', got {activation!r}")
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, dtype=dtype, **kwargs)


class LSTM(_RNNLayer):
    """Multi-layer LSTM (gates i, f, g, o as MXNet), optional cell-state clipping and,
    with ``projection_size``, a projected recurrent state (LSTMP: ``r = h2r_weight @ h``,
    states ``[r, c]`` of sizes projection_size and hidden_size, output size
    ``projection_size * num_directions``)."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size=projection_size,
                         h2r_weight_initializer=h2r_weight_initializer,
                         lstm_state_clip_min=state_clip_min, lstm_state_clip_max=state_clip_max,
                         lstm_state_clip_nan=state_clip_nan, dtype=dtype, **kwargs)


class GRU(_RNNLayer):
    """Multi-layer GRU (gates r, z, n as MXNet; ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``)."""

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", dtype="float32",
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", dtype=dtype, **kwargs)
