"""Gluon's dense recurrent cells (``rnn.RNNCell``, ``LSTMCell``, ``GRUCell``,
``LSTMPCell``) and the LSTM / GRU gating that the convolutional cells reuse.
The gate math is FullyConnected plus elementwise ops through ``call_op``, so
cells run eagerly and trace after ``hybridize()``; gate order is MXNet's
(LSTM i, f, g, o; GRU r, z, n), the same as the fused layers'."""
from ...errors import NbdlError
from .._trace import call_op
from ..parameter import Parameter
from .cell_base import HybridRecurrentCell

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "LSTMPCell"]


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


def _tanh(x):
    return call_op("tanh", [x])


def _sigmoid(x):
    return call_op("sigmoid", [x])


def lstm_step(gates, prev_c, act, recurrent_act=_sigmoid, state_name=None, out_name=None):
    """The LSTM's gating from the summed ``i2h + h2h`` (gates i, f, g, o on
    axis 1): ``(h, c)`` with ``c = f * prev_c + i * g`` and ``h = o * act(c)``;
    ``act`` (of g and c) and ``recurrent_act`` (of i, f, o; sigmoid by
    default) are functions of one array; the names are those of the nodes computing ``c`` and ``h``."""
    s = call_op("SliceChannel", [gates], num_outputs=4, axis=1)
    i = recurrent_act(s[0])
    f = recurrent_act(s[1])
    g = act(s[2])
    o = recurrent_act(s[3])
    c = call_op("elemwise_add", [call_op("elemwise_mul", [f, prev_c]),
                                 call_op("elemwise_mul", [i, g])], name=state_name)
    h = call_op("elemwise_mul", [o, act(c)], name=out_name)
    return h, c


def gru_step(i2h, h2h, prev_h, act, out_name=None):
    """The GRU's gating from ``i2h`` and ``h2h`` (gates r, z, n on axis 1):
    the next state ``(1 - z) * n + z * prev_h`` with ``n = act(i2h_n + r *
    h2h_n)``; ``act`` is a function of one array, ``out_name`` the name of
    the node computing the state."""
    xi = call_op("SliceChannel", [i2h], num_outputs=3, axis=1)
    hh = call_op("SliceChannel", [h2h], num_outputs=3, axis=1)
    r = call_op("sigmoid", [call_op("elemwise_add", [xi[0], hh[0]])])
    z = call_op("sigmoid", [call_op("elemwise_add", [xi[1], hh[1]])])
    n = act(call_op("elemwise_add", [xi[2], call_op("elemwise_mul", [r, hh[2]])]))
    # (1 - z) * n + z * h  ==  n + z * (h - n)
    return call_op("elemwise_add", [n, call_op("elemwise_mul",
                                               [z, call_op("elemwise_sub", [prev_h, n])])],
                   name=out_name)


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
        h, c = lstm_step(gates, states[1], lambda x: _activate(x, self._activation),
                         lambda x: _activate(x, self._recurrent_activation),
                         state_name=self._node("state"), out_name=self._node("out"))
        return h, [h, c]


class GRUCell(_GatedCell):
    """GRU cell; gates r, z, n with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``."""

    def _alias(self):
        return "gru"

    _gates = 3

    def forward(self, inputs, states):
        out = gru_step(self._fc(inputs, "i2h"), self._fc(states[0], "h2h"), states[0], _tanh,
                       out_name=self._node("out"))
        return out, [out]


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
        h, c = lstm_step(call_op("elemwise_add", [i2h, h2h]), states[1], _tanh)
        r = call_op("FullyConnected", [h, self.h2r_weight.data()], num_hidden=self._projection_size,
                    no_bias=True)
        return r, [r, c]

    def __repr__(self):
        shape = self.i2h_weight.shape
        inp = shape[1] if shape and shape[1] else None
        return (f"LSTMPCell({inp} -> {4 * self._hidden_size} -> {self._projection_size})")
