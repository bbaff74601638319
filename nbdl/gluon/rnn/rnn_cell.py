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


class _CellMixin:
    def state_info(self, batch_size=0):
        raise NotImplementedError

    def begin_state(self, batch_size=0, func=None, **kwargs):
        from ... import ndarray as nd
        func = func or nd.zeros
        return [func(info["shape"], **kwargs) for info in self.state_info(batch_size)]

    def _zero_states(self, x):
        return [_zeros_like_batch(x, info["shape"][1]) for info in self.state_info()]

    def reset(self):
        pass

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Step the cell ``length`` times; returns ``(outputs, states)``."""
        if valid_length is not None:
            raise NbdlError(f"{type(self).__name__}.unroll: valid_length is not supported")
        self.reset()
        steps, axis = _split_time(inputs, length, layout)
        states = begin_state if begin_state is not None else self._zero_states(steps[0])
        outputs = []
        for x in steps:
            out, states = self(x, states)
            outputs.append(out)
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
                 dtype="float32"):
        super().__init__()
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
        return call_op("FullyConnected", [x, w, b], num_hidden=self._gates * self._hidden_size)

    def __repr__(self):
        shape = self.i2h_weight.shape
        inp = shape[1] if shape and shape[1] else None
        return f"{type(self).__name__}({inp} -> {self._gates * self._hidden_size})"


class RNNCell(_GatedCell):
    """Elman cell: ``h' = act(W_ih x + b_ih + W_hh h + b_hh)``."""

    def __init__(self, hidden_size, activation="tanh", **kwargs):
        super().__init__(hidden_size, **kwargs)
        self._activation = activation

    def forward(self, inputs, states):
        a = call_op("elemwise_add", [self._fc(inputs, "i2h"), self._fc(states[0], "h2h")])
        out = call_op("Activation", [a], act_type=self._activation)
        return out, [out]


class LSTMCell(_GatedCell):
    """LSTM cell; states ``[h, c]``; gates i, f, g, o."""
    _gates = 4
    _n_states = 2

    def forward(self, inputs, states):
        gates = call_op("elemwise_add", [self._fc(inputs, "i2h"), self._fc(states[0], "h2h")])
        s = call_op("SliceChannel", [gates], num_outputs=4, axis=1)
        i = call_op("sigmoid", [s[0]])
        f = call_op("sigmoid", [s[1]])
        g = call_op("tanh", [s[2]])
        o = call_op("sigmoid", [s[3]])
        c = call_op("elemwise_add", [call_op("elemwise_mul", [f, states[1]]),
                                     call_op("elemwise_mul", [i, g])])
        h = call_op("elemwise_mul", [o, call_op("tanh", [c])])
        return h, [h, c]


class GRUCell(_GatedCell):
    """GRU cell; gates r, z, n with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``."""
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
                                                  [z, call_op("elemwise_sub", [h, n])])])
        return out, [out]


class _SequentialMixin:
    def add(self, cell):
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return [i for c in self._children.values() for i in c.state_info(batch_size)]

    def _zero_states(self, x):
        # each child's states are sized by its own hidden size; the batch comes from x
        return [_zeros_like_batch(x, i["shape"][1]) for i in self.state_info()]

    def forward(self, inputs, states):
        new, p = [], 0
        for cell in self._children.values():
            n = len(cell.state_info())
            inputs, st = cell(inputs, list(states[p:p + n]))
            new.extend(st)
            p += n
        return inputs, new

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

    def __init__(self, rate, axes=()):
        super().__init__()
        self._rate, self._axes = float(rate), tuple(axes)

    def state_info(self, batch_size=0):
        return []

    def forward(self, inputs, states):
        if self._rate > 0:
            inputs = call_op("Dropout", [inputs], p=self._rate, axes=self._axes)
        return inputs, list(states)


class ModifierCell(HybridRecurrentCell):
    def __init__(self, base_cell):
        super().__init__()
        self.base_cell = base_cell

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def _zero_states(self, x):
        return self.base_cell._zero_states(x)


class ResidualCell(ModifierCell):
    """``output = base_cell(x) + x``."""

    def forward(self, inputs, states):
        out, states = self.base_cell(inputs, states)
        return call_op("elemwise_add", [out, inputs]), states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward in time and concatenates
    their outputs; only ``unroll`` is defined (a single step has no direction)."""

    def __init__(self, l_cell, r_cell):
        super().__init__()
        self.l_cell, self.r_cell = l_cell, r_cell

    def state_info(self, batch_size=0):
        return self.l_cell.state_info(batch_size) + self.r_cell.state_info(batch_size)

    def forward(self, inputs, states):
        raise NbdlError("BidirectionalCell cannot be stepped; use unroll")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        if valid_length is not None:
            raise NbdlError("BidirectionalCell.unroll: valid_length is not supported")
        steps, axis = _split_time(inputs, length, layout)
        nl = len(self.l_cell.state_info())
        if begin_state is None:
            begin_state = self.l_cell._zero_states(steps[0]) + self.r_cell._zero_states(steps[0])
        l_out, l_st = self.l_cell.unroll(length, steps, begin_state[:nl], layout,
                                         merge_outputs=False)
        r_out, r_st = self.r_cell.unroll(length, steps[::-1], begin_state[nl:], layout,
                                         merge_outputs=False)
        outputs = [call_op("Concat", [a, b], dim=1, num_args=2)
                   for a, b in zip(l_out, r_out[::-1])]
        if merge_outputs:
            outputs = _merge_time(outputs, axis)
        return outputs, list(l_st) + list(r_st)
