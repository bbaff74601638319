"""MXNet 1.x's convolutional symbolic RNN cells (``mx.rnn.ConvRNNCell``,
``ConvLSTMCell``, ``ConvGRUCell``): the cells of ``dense_cells.py`` with
``Convolution`` in place of ``FullyConnected`` (Shi et al. 2015)."""
import functools

from .. import symbol
from ..errors import ArgumentError
from .cell_base import BaseRNNCell
from .dense_cells import gru_update, lstm_update

__all__ = ["BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]

_LEAKY = functools.partial(symbol.LeakyReLU, act_type="leaky", slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """Base class of the convolutional cells.

    Parameters
    ----------
    input_shape : tuple of int
        Shape of one step's input (with a batch dim), e.g. ``(1, 3, 16, 10)``.
    num_hidden : int
        Channels of the state.
    h2h_kernel, h2h_dilate : tuple of int
        The state-to-state convolution (odd kernel sizes; padded to keep the size).
    i2h_kernel, i2h_stride, i2h_pad, i2h_dilate : tuple of int
        The input-to-state convolution.
    i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer, \
h2h_bias_initializer : Initializer or str or None
        Initializers of the four variables.
    activation : str or callable
        The cell's activation.
    prefix : str, optional
        Names' prefix.
    params : RNNParams, optional
        Shared variables.
    conv_layout : str, optional
        ``'NCHW'`` by default.
    """

    _default_prefix = ""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", activation=_LEAKY,
                 prefix=None, params=None, conv_layout="NCHW"):
        super().__init__(prefix=self._default_prefix if prefix is None else prefix,
                         params=params)
        if h2h_kernel[0] % 2 != 1 or h2h_kernel[1] % 2 != 1:
            raise ArgumentError(f"{type(self).__name__}: h2h_kernel sizes must be odd, got "
                                f"{h2h_kernel}")
        self._h2h_kernel = h2h_kernel
        self._h2h_pad = (h2h_dilate[0] * (h2h_kernel[0] - 1) // 2,
                         h2h_dilate[1] * (h2h_kernel[1] - 1) // 2)
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel, self._i2h_stride = i2h_kernel, i2h_stride
        self._i2h_pad, self._i2h_dilate = i2h_pad, i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        probe = symbol.Convolution(data=symbol.Variable("data"), num_filter=num_hidden,
                                   kernel=i2h_kernel, stride=i2h_stride, pad=i2h_pad,
                                   dilate=i2h_dilate, layout=conv_layout)
        self._state_shape = (0,) + tuple(probe.infer_shape(data=input_shape)[1][0][1:])
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}
                for _ in range(self._num_states)]

    _num_states = 1

    def _act(self, x, name=None):
        return self._get_activation(x, self._activation, **({} if name is None
                                                            else {"name": name}))

    def _conv_forward(self, inputs, states, name):
        i2h = symbol.Convolution(name=f"{name}i2h", data=inputs,
                                 num_filter=self._num_hidden * self._num_gates,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate, weight=self._iW,
                                 bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name=f"{name}h2h", data=states[0],
                                 num_filter=self._num_hidden * self._num_gates,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h


class ConvRNNCell(BaseConvRNNCell):
    """Convolutional RNN cell (parameters as ``BaseConvRNNCell``'s)."""

    _default_prefix = "ConvRNN_"

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """Convolutional LSTM cell (Shi et al. 2015; parameters as
    ``BaseConvRNNCell``'s)."""

    _default_prefix = "ConvLSTM_"
    _num_states = 2

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        next_h, next_c = lstm_update(i2h + h2h, states[1], name, self._act,
                                     axis=self._conv_layout.find("C"))
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """Convolutional GRU cell (parameters as ``BaseConvRNNCell``'s)."""

    _default_prefix = "ConvGRU_"

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        next_h = gru_update(i2h, h2h, states[0], name, self._act)
        return next_h, [next_h]
