"""MXNet 1.x's FullyConnected cells (``mx.rnn.RNNCell``, ``LSTMCell``,
``GRUCell``) and the LSTM / GRU gating that the convolutional cells
(``conv_rnn_cell.py``) reuse, with MXNet's node and parameter names
(``lstm_t0_i2h``, ``lstm_i2h_weight``)."""
from .. import symbol
from ..initializer import LSTMBias
from .cell_base import BaseRNNCell

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "lstm_update", "gru_update"]


class _DenseCell(BaseRNNCell):
    """What the FullyConnected cells share: the four variables and
    ``_num_states`` states of shape ``(0, num_hidden)``."""

    _num_states = 1

    def __init__(self, num_hidden, prefix, params, i2h_bias_init=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get("i2h_weight")
        self._iB = (self.params.get("i2h_bias") if i2h_bias_init is None
                    else self.params.get("i2h_bias", init=i2h_bias_init))
        self._hW = self.params.get("h2h_weight")
        self._hB = self.params.get("h2h_bias")

    @property
    def state_info(self):
        return [{"shape": (0, self._num_hidden), "__layout__": "NC"}
                for _ in range(self._num_states)]


def lstm_update(gates, prev_c, name, activation, axis=None):
    """The LSTM's gating from the summed ``i2h + h2h`` (gates i, f, c, o
    along ``axis``, 1 by default): ``(next_h, next_c)``; ``activation(x,
    name=None)`` is the candidate's and the cell state's activation."""
    gates = symbol.SliceChannel(gates, num_outputs=4, name=f"{name}slice",
                                **({} if axis is None else {"axis": axis}))
    in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
    forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
    in_transform = activation(gates[2], name=f"{name}c")
    out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
    next_c = symbol._plus(forget_gate * prev_c, in_gate * in_transform, name=f"{name}state")
    next_h = symbol._mul(out_gate, activation(next_c), name=f"{name}out")
    return next_h, next_c


def gru_update(i2h, h2h, prev_h, name, activation):
    """The GRU's gating (cuDNN's form) from ``i2h`` and ``h2h`` (gates r, z,
    o): the next state; ``activation(x, name=None)`` is the candidate's."""
    i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
    h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
    reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
    update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
    next_h_tmp = activation(i2h + reset_gate * h2h, name=f"{name}_h_act")
    return symbol._plus((1. - update_gate) * next_h_tmp, update_gate * prev_h,
                        name=f"{name}out")


def _tanh(x, name=None):
    return symbol.Activation(x, act_type="tanh", name=name)


class RNNCell(_DenseCell):
    """Elman RNN cell: ``out = activation(i2h(x) + h2h(h))``.

    Parameters
    ----------
    num_hidden : int
        Units of the output.
    activation : str or callable, optional
        ``'tanh'`` (default), ``'relu'``, ... or a function of a Symbol.
    prefix : str, optional
        ``'rnn_'`` by default.
    params : RNNParams, optional
        Shared variables.
    """

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(num_hidden, prefix, params)
        self._activation = activation

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden, name=f"{name}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden, name=f"{name}h2h")
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(_DenseCell):
    """LSTM cell (gates i, f, c, o stacked in that order in the weights).

    Parameters
    ----------
    num_hidden : int
        Units of the output.
    prefix : str, optional
        ``'lstm_'`` by default.
    params : RNNParams, optional
        Shared variables.
    forget_bias : float, optional
        Initial bias of the forget gate (``init.LSTMBias`` on ``i2h_bias``).
    """

    _num_states = 2

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(num_hidden, prefix, params, LSTMBias(forget_bias=forget_bias))

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 4, name=f"{name}i2h")
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 4, name=f"{name}h2h")
        next_h, next_c = lstm_update(i2h + h2h, states[1], name, _tanh)
        return next_h, [next_h, next_c]


class GRUCell(_DenseCell):
    """GRU cell as cuDNN computes it (gates r, z, o stacked in that order).

    Parameters
    ----------
    num_hidden : int
        Units of the output.
    prefix : str, optional
        ``'gru_'`` by default.
    params : RNNParams, optional
        Shared variables.
    """

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(num_hidden, prefix, params)

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        name = self._step_name()
        prev_h = states[0]
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 3, name=f"{name}_i2h")
        h2h = symbol.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 3, name=f"{name}_h2h")
        next_h = gru_update(i2h, h2h, prev_h, name, _tanh)
        return next_h, [next_h]
