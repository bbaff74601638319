"""Recurrent cells (Gluon 2.0's ``rnn.RNNCell``/``LSTMCell``/``GRUCell`` and the
modifier cells).  A cell's ``forward(inputs, states)`` computes one step and
returns ``(output, new_states)``; ``unroll`` steps it over a sequence.  The
gate math is FullyConnected plus elementwise ops through ``call_op``, so
cells run eagerly and trace after ``hybridize()``; gate order is MXNet's
(LSTM i, f, g, o; GRU r, z, n), the same as the fused layers'."""
from ...errors import NbdlError
from .._trace import call_op
from ..block import Block
from ..hybrid_block import HybridBlock
from ..parameter import Parameter


def _zeros_like_batch(x, size):
    """Zeros of shape (N, size) from a step input (N, C), with registered ops."""
    z = call_op("zeros_like", [call_op("slice_axis", [x], axis=1, begin=0, end=1)])
    return call_op("broadcast_axis", [z], axis=1, size=size)


def _split_time(inputs, length, layout):
    axis = layout.find("T")
    if isinstance(inputs, (list, tuple)):
        if len(inputs) != length:
            raise NbdlError(f"unroll: got {len(inputs)} inputs for length={length}")
        return list(inputs), axis
    if length == 1:
        return [call_op("squeeze", [inputs], axis=axis)], axis
    out = call_op("SliceChannel", [inputs], num_outputs=length, axis=axis, squeeze_axis=True)
    return [out[i] for i in range(length)], axis


def _merge_time(outputs, axis):
    parts = [call_op("expand_dims", [o], axis=axis) for o in outputs]
    return call_op("Concat", parts, dim=axis, num_args=len(parts))


def _check_valid_length(cell, valid_length):
    shape = getattr(valid_length, "shape", None)
    if valid_length is not None and shape is not None and len(shape) != 1:
        raise NbdlError(f"{type(cell).__name__}.unroll: valid_length must have shape "
                        f"(batch_size,), got shape {tuple(shape)}")


def _mask_outputs(outputs, length, valid_length, axis, merge_outputs):
    """Zero the outputs after each sequence's valid length (Gluon's
    ``_mask_sequence_variable_length``); a list stays a list unless merging."""
    merged = _merge_time(outputs, axis) if isinstance(outputs, (list, tuple)) else outputs
    masked = call_op("SequenceMask", [merged, valid_length], use_sequence_length=True,
                     axis=axis)
    if merge_outputs:
        return masked
    return _split_time(masked, length, "TNC" if axis == 0 else "NTC")[0]


class _CellMixin:
    def state_info(self, batch_size=0):
        from ...errors import NbdlError
        raise NbdlError(f"{type(self).__name__} does not define state_info(); every recurrent "
                        f"cell subclass must")

    def begin_state(self, batch_size=0, func=None, **kwargs):
        from ... import ndarray as nd
        func = func or nd.zeros
        return [func(info["shape"], **kwargs) for info in self.state_info(batch_size)]

    def _zero_states(self, x):
        return [_zeros_like_batch(x, info["shape"][1]) for info in self.state_info()]

    def reset(self):
        """Start a new sequence: the step counter (``t0`` in the names of
        the first step's graph nodes) restarts, here and in the child cells."""
        object.__setattr__(self, "_counter", -1)
        for child in self._children.values():
            if isinstance(child, _CellMixin):
                child.reset()

    def __call__(self, *args, **kwargs):
        object.__setattr__(self, "_counter", getattr(self, "_counter", -1) + 1)
        return super().__call__(*args, **kwargs)

    def _node(self, what):
        """MXNet 1.x's name of a step's graph node (``rnn_t0_out``) for a
        1.x-style cell, else None (an automatic name)."""
        if not self._legacy:
            return None   # the block's prefix comes from its trace's name scope
        return f"t{max(getattr(self, '_counter', 0), 0)}_{what}"

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Step the cell ``length`` times; returns ``(outputs, states)``.

        With ``valid_length`` (shape ``(batch,)``), as Gluon: outputs at steps
        ``t >= valid_length[b]`` are zero (SequenceMask) and the returned
        states are each sequence's states after its last valid step
        (SequenceLast over the stacked per-step states)."""
        _check_valid_length(self, valid_length)
        self.reset()
        steps, axis = _split_time(inputs, length, layout)
        states = begin_state if begin_state is not None else self._zero_states(steps[0])
        outputs, all_states = [], []
        for x in steps:
            out, states = self(x, states)
            outputs.append(out)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [call_op("SequenceLast", [_merge_time(list(per_step), 0), valid_length],
                              use_sequence_length=True, axis=0)
                      for per_step in zip(*all_states)]
            # masked outputs are merged unless merge_outputs=False (MXNet 1.x)
            return _mask_outputs(outputs, length, valid_length, axis,
                                 merge_outputs is not False), states
        if merge_outputs:
            outputs = _merge_time(outputs, axis)
        return outputs, states


class RecurrentCell(_CellMixin, Block):
    """Base class of cells that are plain Blocks."""


class HybridRecurrentCell(_CellMixin, HybridBlock):
    """Base class of hybridizable cells."""


class _GatedCell(HybridRecurrentCell):
    _gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        super().__init__(**kwargs)
        self._hidden_size, self._input_size = int(hidden_size), int(input_size)
        gh = self._gates * self._hidden_size
        self.i2h_weight = Parameter("i2h_weight", shape=(gh, input_size), dtype=dtype,
                                    init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = Parameter("h2h_weight", shape=(gh, hidden_size), dtype=dtype,
                                    init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = Parameter("i2h_bias", shape=(gh,), dtype=dtype,
                                  init=i2h_bias_initializer, allow_deferred_init=True)
        self.h2h_bias = Parameter("h2h_bias", shape=(gh,), dtype=dtype,
                                  init=h2h_bias_initializer, allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}] * self._n_states

    _n_states = 1

    def _fc(self, x, kind):
        w, b = getattr(self, f"{kind}_weight").data(), getattr(self, f"{kind}_bias").data()
        return call_op("FullyConnected", [x, w, b], num_hidden=self._gates * self._hidden_size,
                       name=self._node(kind))

    def __repr__(self):
        shape = self.i2h_weight.shape
        inp = shape[1] if shape and shape[1] else None
        return f"{type(self).__name__}({inp} -> {self._gates * self._hidden_size})"


class RNNCell(_GatedCell):
    """Elman cell: ``h' = act(W_ih x + b_ih + W_hh h + b_hh)``."""

    def _alias(self):
        return "rnn"

    def __init__(self, hidden_size, activation="tanh", **kwargs):
        super().__init__(hidden_size, **kwargs)
        self._activation = activation

    def forward(self, inputs, states):
        a = call_op("elemwise_add", [self._fc(inputs, "i2h"), self._fc(states[0], "h2h")])
        out = call_op("Activation", [a], act_type=self._activation, name=self._node("out"))
        return out, [out]


def _activate(x, activation):
    """``activation`` (an op name or an ``Activation`` act_type) applied to ``x``."""
    if activation in ("tanh", "sigmoid", "relu", "softsign"):
        return call_op(activation, [x])
    return call_op("Activation", [x], act_type=activation)


class LSTMCell(_GatedCell):
    """LSTM cell; states ``[h, c]``; gates i, f, g, o.

    Parameters
    ----------
    hidden_size : int
        Units of the state.
    activation : str, optional
        Of the candidate and of the cell state (``'tanh'``).
    recurrent_activation : str, optional
        Of the input, forget and output gates (``'sigmoid'``).
    **kwargs
        As ``RNNCell``'s (initializers, ``input_size``, ``dtype``, ``prefix``, ...).
    """

    def _alias(self):
        return "lstm"

    _gates = 4
    _n_states = 2

    def __init__(self, hidden_size, activation="tanh", recurrent_activation="sigmoid",
                 **kwargs):
        super().__init__(hidden_size, **kwargs)
        self._activation, self._recurrent_activation = activation, recurrent_activation

    def forward(self, inputs, states):
        gates = call_op("elemwise_add", [self._fc(inputs, "i2h"), self._fc(states[0], "h2h")])
        s = call_op("SliceChannel", [gates], num_outputs=4, axis=1)
        i = _activate(s[0], self._recurrent_activation)
        f = _activate(s[1], self._recurrent_activation)
        g = _activate(s[2], self._activation)
        o = _activate(s[3], self._recurrent_activation)
        c = call_op("elemwise_add", [call_op("elemwise_mul", [f, states[1]]),
                                     call_op("elemwise_mul", [i, g])], name=self._node("state"))
        h = call_op("elemwise_mul", [o, _activate(c, self._activation)],
                    name=self._node("out"))
        return h, [h, c]


class GRUCell(_GatedCell):
    """GRU cell; gates r, z, n with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``."""

    def _alias(self):
        return "gru"

    _gates = 3

    def forward(self, inputs, states):
        h = states[0]
        xi = call_op("SliceChannel", [self._fc(inputs, "i2h")], num_outputs=3, axis=1)
        hh = call_op("SliceChannel", [self._fc(h, "h2h")], num_outputs=3, axis=1)
        r = call_op("sigmoid", [call_op("elemwise_add", [xi[0], hh[0]])])
        z = call_op("sigmoid", [call_op("elemwise_add", [xi[1], hh[1]])])
        n = call_op("tanh", [call_op("elemwise_add", [xi[2], call_op("elemwise_mul", [r, hh[2]])])])
        # (1 - z) * n + z * h  ==  n + z * (h - n)
        out = call_op("elemwise_add", [n, call_op("elemwise_mul",
                                                  [z, call_op("elemwise_sub", [h, n])])],
                      name=self._node("out"))
        return out, [out]


class _SequentialMixin:
    def add(self, cell):
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return [i for c in self._children.values() for i in c.state_info(batch_size)]

    def _zero_states(self, x):
        # each child sizes its own states (dense or convolutional); the batch comes from x
        return [z for c in self._children.values() for z in c._zero_states(x)]

    def forward(self, inputs, states):
        new, p = [], 0
        for cell in self._children.values():
            n = len(cell.state_info())
            inputs, st = cell(inputs, list(states[p:p + n]))
            new.extend(st)
            p += n
        return inputs, new

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll the stack layer by layer, as MXNet 1.x does: each cell is
        unrolled over the whole sequence on the previous cell's outputs (so
        cells that cannot be stepped, such as BidirectionalCell, can be
        stacked); returns ``(outputs, states)`` with every cell's states in
        order.

        Parameters
        ----------
        length : int
            The number of time steps.
        inputs : NDArray, Symbol or list of them
            The sequence (``layout``), or one input per step.
        begin_state : list, optional
            The states of all the cells in order (default: zeros).
        layout : str, default 'NTC'
            Where the time axis of merged inputs and outputs is.
        merge_outputs : bool or None
            True: one merged output; False or None: a list, one per step.
        valid_length : NDArray or Symbol, optional
            Each sequence's length, shape (batch_size,).
        """
        _check_valid_length(self, valid_length)
        self.reset()
        cells = list(self._children.values())
        states, p = [], 0
        for k, cell in enumerate(cells):
            n = len(cell.state_info())
            begin = None if begin_state is None else list(begin_state[p:p + n])
            p += n
            inputs, st = cell.unroll(length, inputs, begin_state=begin, layout=layout,
                                     merge_outputs=merge_outputs if k == len(cells) - 1 else None,
                                     valid_length=valid_length)
            states.extend(st)
        return inputs, states

    def __len__(self):
        return len(self._children)

    def __getitem__(self, i):
        return list(self._children.values())[i]


class SequentialRNNCell(_SequentialMixin, RecurrentCell):
    """Stacks cells: each step feeds one cell's output to the next."""


class HybridSequentialRNNCell(_SequentialMixin, HybridRecurrentCell):
    """Hybridizable stack of cells."""


class DropoutCell(HybridRecurrentCell):
    """Applies dropout to the input; no state."""

    def _alias(self):
        return "dropout"

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate, self._axes = float(rate), tuple(axes)

    def state_info(self, batch_size=0):
        return []

    def forward(self, inputs, states):
        if self._rate > 0:
            inputs = call_op("Dropout", [inputs], p=self._rate, axes=self._axes)
        return inputs, list(states)


class ModifierCell(HybridRecurrentCell):
    def __init__(self, base_cell, **kwargs):
        super().__init__(**kwargs)
        self.base_cell = base_cell

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def _zero_states(self, x):
        return self.base_cell._zero_states(x)

    def reset(self):
        super().reset()
        self.base_cell.reset()


class ResidualCell(ModifierCell):
    """``output = base_cell(x) + x``."""

    def forward(self, inputs, states):
        out, states = self.base_cell(inputs, states)
        return call_op("elemwise_add", [out, inputs]), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll the base cell over the sequence, then add the inputs to its
        outputs (so a BidirectionalCell can be the base cell); parameters as
        ``RecurrentCell.unroll``.

        Parameters
        ----------
        length : int
            The number of time steps.
        inputs : NDArray, Symbol or list of them
            The sequence.
        begin_state : list, optional
            The base cell's states.
        layout : str, default 'NTC'
            The layout of merged inputs and outputs.
        merge_outputs : bool or None
            Whether to return one merged output.
        valid_length : NDArray or Symbol, optional
            Each sequence's length; inputs past it are not added.
        """
        _check_valid_length(self, valid_length)
        self.reset()
        outputs, states = self.base_cell.unroll(length, inputs, begin_state=begin_state,
                                                layout=layout, merge_outputs=merge_outputs,
                                                valid_length=valid_length)
        steps, axis = _split_time(inputs, length, layout)
        if valid_length is not None:
            steps = _mask_outputs(steps, length, valid_length, axis, False)
        if isinstance(outputs, (list, tuple)):
            return [call_op("elemwise_add", [o, x]) for o, x in zip(outputs, steps)], states
        return call_op("elemwise_add", [outputs, _merge_time(steps, axis)]), states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward in time and concatenates
    their outputs; only ``unroll`` is defined (a single step has no direction)."""

    def __init__(self, l_cell, r_cell, output_prefix="bi_", **kwargs):
        super().__init__(**kwargs)
        if not isinstance(output_prefix, str):
            raise NbdlError(f"BidirectionalCell: output_prefix must be a str, got "
                            f"{output_prefix!r}")
        self.l_cell, self.r_cell = l_cell, r_cell
        self._output_prefix = output_prefix

    def state_info(self, batch_size=0):
        return self.l_cell.state_info(batch_size) + self.r_cell.state_info(batch_size)

    def forward(self, inputs, states):
        raise NbdlError("BidirectionalCell cannot be stepped; use unroll")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        _check_valid_length(self, valid_length)
        self.reset()
        steps, axis = _split_time(inputs, length, layout)
        nl = len(self.l_cell.state_info())
        if begin_state is None:
            begin_state = self.l_cell._zero_states(steps[0]) + self.r_cell._zero_states(steps[0])
        if valid_length is None:
            r_steps = steps[::-1]
        else:
            # reverse each sequence within its own length (Gluon: SequenceReverse)
            rev = call_op("SequenceReverse", [_merge_time(steps, 0), valid_length],
                          use_sequence_length=True, axis=0)
            r_steps = _split_time(rev, length, "TNC")[0]
        l_out, l_st = self.l_cell.unroll(length, steps, begin_state[:nl], layout,
                                         merge_outputs=False, valid_length=valid_length)
        r_out, r_st = self.r_cell.unroll(length, r_steps, begin_state[nl:], layout,
                                         merge_outputs=False, valid_length=valid_length)
        if valid_length is None:
            r_out = r_out[::-1]
        else:
            rev = call_op("SequenceReverse", [_merge_time(r_out, 0), valid_length],
                          use_sequence_length=True, axis=0)
            r_out = _split_time(rev, length, "TNC")[0]
        outputs = [call_op("Concat", [a, b], dim=1, num_args=2,
                           name=f"{self._output_prefix}t{t}")
                   for t, (a, b) in enumerate(zip(l_out, r_out))]
        if merge_outputs or (merge_outputs is None and valid_length is not None):
            outputs = _merge_time(outputs, axis)
        return outputs, list(l_st) + list(r_st)


def _check_rate(cls, name, p):
    p = float(p)
    if not 0.0 <= p < 1.0:
        raise NbdlError(f"{cls}: {name}={p} is invalid: it must be in [0, 1)")
    return p


def _dropout_mask(like, p):
    """Ones scaled by dropout: zero with probability ``p`` while training,
    all ones (the identity) otherwise."""
    return call_op("Dropout", [call_op("ones_like", [like])], p=p)


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al.): while training, each element of the output
    and of the states keeps its previous value with probability
    ``zoneout_outputs`` / ``zoneout_states`` instead of taking the new one
    (Gluon's ``rnn.ZoneoutCell``).  Outside training it is the base cell."""

    def _alias(self):
        return "zoneout"

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0, **kwargs):
        if isinstance(base_cell, BidirectionalCell):
            raise NbdlError("ZoneoutCell: a BidirectionalCell cannot be wrapped (it cannot be "
                            "stepped); wrap its l_cell and r_cell instead")
        super().__init__(base_cell, **kwargs)
        self.zoneout_outputs = _check_rate("ZoneoutCell", "zoneout_outputs", zoneout_outputs)
        self.zoneout_states = _check_rate("ZoneoutCell", "zoneout_states", zoneout_states)
        self._prev_output = None

    def reset(self):
        super().reset()
        self._prev_output = None

    def forward(self, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)
        p_out, p_st = self.zoneout_outputs, self.zoneout_states
        output = next_output
        if p_out:
            prev = self._prev_output
            if prev is None:
                prev = call_op("zeros_like", [next_output])
            output = call_op("where", [_dropout_mask(next_output, p_out), next_output, prev])
        if p_st:
            next_states = [call_op("where", [_dropout_mask(new, p_st), new, old])
                           for new, old in zip(next_states, states)]
        self._prev_output = output
        return output, list(next_states)

    def __repr__(self):
        return (f"ZoneoutCell(p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, "
                f"{self.base_cell!r})")


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal & Ghahramani): one dropout mask per sequence,
    drawn at its first step and reused at every step, on the inputs, on the
    first state (``h``) and on the outputs (Gluon's
    ``rnn.VariationalDropoutCell``).  ``unroll`` (or ``reset``) starts new
    masks."""

    def __init__(self, base_cell, drop_inputs=0.0, drop_states=0.0, drop_outputs=0.0, **kwargs):
        if drop_states and isinstance(base_cell, (BidirectionalCell, SequentialRNNCell,
                                                  HybridSequentialRNNCell)):
            raise NbdlError(f"VariationalDropoutCell: drop_states={drop_states} needs a cell "
                            f"whose first state is h, not a {type(base_cell).__name__}; wrap "
                            f"the inner cells instead")
        super().__init__(base_cell, **kwargs)
        name = "VariationalDropoutCell"
        self.drop_inputs = _check_rate(name, "drop_inputs", drop_inputs)
        self.drop_states = _check_rate(name, "drop_states", drop_states)
        self.drop_outputs = _check_rate(name, "drop_outputs", drop_outputs)
        self.reset()

    def reset(self):
        super().reset()
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """As ``RecurrentCell.unroll``; without ``drop_states`` and with
        ``merge_outputs=None`` the outputs come merged (MXNet 1.x).

        Parameters
        ----------
        length : int
            The number of time steps.
        inputs : NDArray, Symbol or list of them
            The sequence.
        begin_state : list, optional
            The base cell's states.
        layout : str, default 'NTC'
            The layout of merged inputs and outputs.
        merge_outputs : bool or None
            Whether to return one merged output.
        valid_length : NDArray or Symbol, optional
            Each sequence's length.
        """
        if merge_outputs is None and not self.drop_states:
            merge_outputs = True
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=valid_length)

    def forward(self, inputs, states):
        if self.drop_states:
            if self.drop_states_mask is None:
                self.drop_states_mask = _dropout_mask(states[0], self.drop_states)
            states = [call_op("elemwise_mul", [states[0], self.drop_states_mask])] + \
                list(states[1:])
        if self.drop_inputs:
            if self.drop_inputs_mask is None:
                self.drop_inputs_mask = _dropout_mask(inputs, self.drop_inputs)
            inputs = call_op("elemwise_mul", [inputs, self.drop_inputs_mask])
        output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs:
            if self.drop_outputs_mask is None:
                self.drop_outputs_mask = _dropout_mask(output, self.drop_outputs)
            output = call_op("elemwise_mul", [output, self.drop_outputs_mask])
        return output, list(next_states)

    def __repr__(self):
        return (f"VariationalDropoutCell(drop_inputs={self.drop_inputs}, drop_states="
                f"{self.drop_states}, drop_outputs={self.drop_outputs}, {self.base_cell!r})")


class LSTMPCell(HybridRecurrentCell):
    """LSTM with a projected recurrent state (Gluon's ``rnn.LSTMPCell``):
    gates from ``i2h(x) + h2h(r)``, ``c' = f * c + i * g``,
    ``h = o * tanh(c')`` and the output/recurrent state ``r' = h2r_weight @ h``
    (no bias).  States ``[r, c]`` of sizes ``projection_size`` and
    ``hidden_size``."""

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        super().__init__(**kwargs)
        if int(hidden_size) <= 0 or int(projection_size) <= 0:
            raise NbdlError(f"LSTMPCell: hidden_size={hidden_size} and projection_size="
                            f"{projection_size} must be positive")
        self._hidden_size, self._projection_size = int(hidden_size), int(projection_size)
        self._input_size = int(input_size)
        H, P = self._hidden_size, self._projection_size

        def param(name, shape, init):
            setattr(self, name, Parameter(name, shape=shape, dtype=dtype, init=init,
                                          allow_deferred_init=True))
        param("i2h_weight", (4 * H, input_size), i2h_weight_initializer)
        param("h2h_weight", (4 * H, P), h2h_weight_initializer)
        param("h2r_weight", (P, H), h2r_weight_initializer)
        param("i2h_bias", (4 * H,), i2h_bias_initializer)
        param("h2h_bias", (4 * H,), h2h_bias_initializer)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def forward(self, inputs, states):
        H = self._hidden_size
        i2h = call_op("FullyConnected", [inputs, self.i2h_weight.data(), self.i2h_bias.data()],
                      num_hidden=4 * H)
        h2h = call_op("FullyConnected", [states[0], self.h2h_weight.data(),
                                         self.h2h_bias.data()], num_hidden=4 * H)
        s = call_op("SliceChannel", [call_op("elemwise_add", [i2h, h2h])], num_outputs=4, axis=1)
        i, f = call_op("sigmoid", [s[0]]), call_op("sigmoid", [s[1]])
        g, o = call_op("tanh", [s[2]]), call_op("sigmoid", [s[3]])
        c = call_op("elemwise_add", [call_op("elemwise_mul", [f, states[1]]),
                                     call_op("elemwise_mul", [i, g])])
        h = call_op("elemwise_mul", [o, call_op("tanh", [c])])
        r = call_op("FullyConnected", [h, self.h2r_weight.data()], num_hidden=self._projection_size,
                    no_bias=True)
        return r, [r, c]

    def __repr__(self):
        shape = self.i2h_weight.shape
        inp = shape[1] if shape and shape[1] else None
        return (f"LSTMPCell({inp} -> {4 * self._hidden_size} -> {self._projection_size})")
