"""Convolutional recurrent cells (Gluon 2.0's ``rnn.Conv{1,2,3}D{RNN,LSTM,GRU}Cell``).

The dense cells' ``W x`` and ``R h`` become convolutions: ``i2h`` convolves
the step input with ``i2h_kernel`` (``i2h_pad``, ``i2h_dilate``, stride 1),
``h2h`` convolves the previous ``h`` with ``h2h_kernel`` (which must be odd)
padded by ``h2h_dilate * (h2h_kernel - 1) / 2`` so the state keeps its
spatial shape.  The state shape follows from ``input_shape``: ``(hidden_channels,
*out)`` (channels-first) or ``(*out, hidden_channels)`` (channels-last) with
``out = x + 2 * i2h_pad - i2h_dilate * (i2h_kernel - 1)`` per spatial axis.

Parameters and shapes are Gluon's: ``i2h_weight (G*hidden, C, *i2h_kernel)``,
``h2h_weight (G*hidden, hidden, *h2h_kernel)`` (the channel axis last for a
channels-last ``conv_layout``), ``i2h_bias``/``h2h_bias (G*hidden,)`` with
``G`` gates: 1 (RNN), 4 (LSTM: i, f, c, o), 3 (GRU: r, z, n), the same order
as the dense cells.  ``activation`` (a name of the ``Activation`` op, or a
HybridBlock such as ``nn.LeakyReLU(0.1)``) is the RNN's nonlinearity, the
LSTM's candidate and cell-output nonlinearity and the GRU's candidate
nonlinearity, as in Gluon.

The convolutions are the table's ``Convolution`` op; a channels-last cell
transposes its input and states to channels-first (and its weights to
``(F, C, *K)``) around it, since the op computes channels-first only."""
from ...errors import NbdlError, ShapeError
from ...ops.registry import get_op
from .._trace import call_op
from ..hybrid_block import HybridBlock
from ..nn.conv_layers import _LAYOUTS, _tuple
from ..parameter import Parameter
from .cell_base import HybridRecurrentCell
from .dense_cells import gru_step, lstm_step

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell",
           "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]


def _act_types():
    return get_op("Activation").attrs["act_type"].choices


class _BaseConvRNNCell(HybridRecurrentCell):
    """Shared by the convolutional cells: argument checks, the parameters,
    the state shape and the two convolutions of a step."""

    _gates = 1
    _n_states = 1

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                 i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout, activation, **kwargs):
        super().__init__(**kwargs)
        where = type(self).__name__
        if conv_layout not in _LAYOUTS[dims]:
            raise NbdlError(f"{where}: conv_layout {conv_layout!r} is not supported; use one "
                            f"of {', '.join(_LAYOUTS[dims])}")
        self._dims, self._conv_layout = dims, conv_layout
        self._channel_last = conv_layout[1] != "C"
        self._channel_axis = conv_layout.find("C")
        if not isinstance(input_shape, (tuple, list)):
            raise NbdlError(f"{where}: input_shape must be a tuple of {dims + 1} ints (one "
                            f"step's sample shape in {conv_layout}), got {input_shape!r}")
        shape = _tuple(input_shape, dims + 1, where, "input_shape", 1)
        self._input_shape = shape
        hidden = int(hidden_channels)
        if hidden <= 0:
            raise NbdlError(f"{where}: hidden_channels must be positive, got {hidden_channels}")
        self._hidden_channels = hidden
        self._i2h_kernel = _tuple(i2h_kernel, dims, where, "i2h_kernel", 1)
        self._i2h_pad = _tuple(i2h_pad, dims, where, "i2h_pad")
        self._i2h_dilate = _tuple(i2h_dilate, dims, where, "i2h_dilate", 1)
        self._h2h_kernel = _tuple(h2h_kernel, dims, where, "h2h_kernel", 1)
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise NbdlError(f"{where}: h2h_kernel must be odd on every axis so the state keeps "
                            f"its spatial shape, got h2h_kernel={self._h2h_kernel}")
        self._h2h_dilate = _tuple(h2h_dilate, dims, where, "h2h_dilate", 1)
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate,
                                                               self._h2h_kernel))
        self._stride = (1,) * dims
        if isinstance(activation, str):
            if activation not in _act_types():
                raise NbdlError(f"{where}: activation {activation!r} is not one of "
                                f"{', '.join(_act_types())} (or pass a HybridBlock)")
        elif not isinstance(activation, HybridBlock):
            raise NbdlError(f"{where}: activation must be an activation name or a HybridBlock, "
                            f"got {type(activation).__name__}")
        self._activation = activation        # a HybridBlock registers as a child, as in Gluon

        if self._channel_last:
            in_channels, spatial = shape[-1], shape[:-1]
        else:
            in_channels, spatial = shape[0], shape[1:]
        self._in_channels = in_channels
        out = tuple(x + 2 * p - d * (k - 1) for x, k, p, d in
                    zip(spatial, self._i2h_kernel, self._i2h_pad, self._i2h_dilate))
        if any(o <= 0 for o in out):
            raise NbdlError(f"{where}: input_shape={shape} (spatial {spatial}) with i2h_pad="
                            f"{self._i2h_pad} is smaller than the dilated i2h_kernel "
                            f"{self._i2h_kernel} (i2h_dilate {self._i2h_dilate})")
        self._state_shape = out + (hidden,) if self._channel_last else (hidden,) + out

        total = self._gates * hidden

        def weight_shape(channels, kernel):
            return ((total,) + kernel + (channels,) if self._channel_last
                    else (total, channels) + kernel)
        self.i2h_weight = Parameter("i2h_weight", shape=weight_shape(in_channels, self._i2h_kernel),
                                    init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = Parameter("h2h_weight", shape=weight_shape(hidden, self._h2h_kernel),
                                    init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = Parameter("i2h_bias", shape=(total,), init=i2h_bias_initializer,
                                  allow_deferred_init=True)
        self.h2h_bias = Parameter("h2h_bias", shape=(total,), init=h2h_bias_initializer,
                                  allow_deferred_init=True)

    # -- states -----------------------------------------------------------
    def state_info(self, batch_size=0):
        return [{"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
                for _ in range(self._n_states)]

    def _zero_states(self, x):
        """Zero states of the batch of the step input ``x``, from registered ops
        (so they trace): one element per sample, broadcast and reshaped."""
        size = 1
        for s in self._state_shape:
            size *= s
        one = call_op("slice_axis", [call_op("Reshape", [x], shape=(0, -1))], axis=1, begin=0,
                      end=1)
        flat = call_op("broadcast_axis", [call_op("zeros_like", [one])], axis=1, size=size)
        z = call_op("Reshape", [flat], shape=(0,) + self._state_shape)
        return [z for _ in range(self._n_states)]

    # -- a step -----------------------------------------------------------
    def __call__(self, inputs, states, *args, **kwargs):
        self._check_step(inputs, states)
        return super().__call__(inputs, states, *args, **kwargs)

    def _check_step(self, inputs, states):
        """Eager calls check shapes up front (a traced call leaves that to the
        graph's shape inference)."""
        from ...ndarray import NDArray
        where = type(self).__name__
        if not isinstance(states, (list, tuple)) or len(states) != self._n_states:
            got = len(states) if isinstance(states, (list, tuple)) else type(states).__name__
            raise NbdlError(f"{where}: expected a list of {self._n_states} state(s), got {got}")
        if isinstance(inputs, NDArray):
            shape = tuple(inputs.shape)
            if len(shape) != self._dims + 2 or shape[1:] != self._input_shape:
                raise ShapeError(f"{where}: input has shape {shape}, expected (batch,) + "
                                 f"input_shape = (N,) + {self._input_shape} "
                                 f"({self._conv_layout})")
            for i, s in enumerate(states):
                if isinstance(s, NDArray) and tuple(s.shape) != (shape[0],) + self._state_shape:
                    raise ShapeError(f"{where}: states[{i}] has shape {tuple(s.shape)}, expected "
                                     f"{(shape[0],) + self._state_shape} for a batch of "
                                     f"{shape[0]}")

    def _channels_first(self, x):
        if not self._channel_last:
            return x
        n = self._dims
        return call_op("transpose", [x], axes=(0, n + 1) + tuple(range(1, n + 1)))

    def _channels_last(self, x):
        if not self._channel_last:
            return x
        n = self._dims
        return call_op("transpose", [x], axes=(0,) + tuple(range(2, n + 2)) + (1,))

    def _conv(self, x, kind):
        """``kind`` = i2h or h2h on a channels-first ``x``; channels-first result."""
        w = self._channels_first(getattr(self, f"{kind}_weight").data())
        b = getattr(self, f"{kind}_bias").data()
        pad = self._i2h_pad if kind == "i2h" else self._h2h_pad
        return call_op("Convolution", [x, w, b], kernel=getattr(self, f"_{kind}_kernel"),
                       stride=self._stride, dilate=getattr(self, f"_{kind}_dilate"), pad=pad,
                       num_filter=self._gates * self._hidden_channels)

    def _act(self, x):
        if isinstance(self._activation, str):
            return call_op("Activation", [x], act_type=self._activation)
        return self._activation(x)

    def forward(self, inputs, states):
        x = self._channels_first(inputs)
        st = [self._channels_first(s) for s in states]
        out, new = self._step(self._conv(x, "i2h"), self._conv(st[0], "h2h"), st)
        out = self._channels_last(out)
        return out, [out if s is new[0] else self._channels_last(s) for s in new]

    def __repr__(self):
        act = self._activation if isinstance(self._activation, str) else repr(self._activation)
        return (f"{type(self).__name__}({self._in_channels} -> "
                f"{self._gates * self._hidden_channels}, {act}, {self._conv_layout})")


class _ConvRNNCell(_BaseConvRNNCell):
    def _step(self, i2h, h2h, states):
        out = self._act(call_op("elemwise_add", [i2h, h2h]))
        return out, [out]


class _ConvLSTMCell(_BaseConvRNNCell):
    _gates = 4
    _n_states = 2

    def _step(self, i2h, h2h, states):
        h, c = lstm_step(call_op("elemwise_add", [i2h, h2h]), states[1], self._act)
        return h, [h, c]


class _ConvGRUCell(_BaseConvRNNCell):
    _gates = 3

    def _step(self, i2h, h2h, states):
        out = gru_step(i2h, h2h, states[0], self._act)
        return out, [out]


def _cell(base, dims, gates_doc):
    layouts = _LAYOUTS[dims]
    zeros, ones = (0,) * dims, (1,) * dims

    class Cell(base):
        def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                     i2h_pad=zeros, i2h_dilate=ones, h2h_dilate=ones,
                     i2h_weight_initializer=None, h2h_weight_initializer=None,
                     i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                     conv_layout=layouts[0], activation="tanh", **kwargs):
            super().__init__(input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                             i2h_dilate, h2h_dilate, i2h_weight_initializer,
                             h2h_weight_initializer, i2h_bias_initializer, h2h_bias_initializer,
                             dims, conv_layout, activation, **kwargs)

    kind = {_ConvRNNCell: "RNN", _ConvLSTMCell: "LSTM", _ConvGRUCell: "GRU"}[base]
    Cell.__name__ = Cell.__qualname__ = f"Conv{dims}D{kind}Cell"
    Cell.__module__ = __name__
    Cell.__doc__ = (
        f"{dims}-D convolutional {kind} cell: {gates_doc}\n\n"
        f"``input_shape`` is one step's sample shape without the batch axis, in "
        f"``conv_layout`` ({' or '.join(repr(s) for s in layouts)}; default "
        f"{layouts[0]!r}), e.g. ``{('C',) + tuple(layouts[0][2:])}``.  ``h2h_kernel`` must be "
        f"odd.  Defaults: ``i2h_pad={zeros}``, ``i2h_dilate={ones}``, "
        f"``h2h_dilate={ones}``, zero biases, ``activation='tanh'``.")
    return Cell


_RNN_DOC = "``h' = act(W * x + b_i + R * h + b_h)`` (``*`` a convolution); states ``[h]``."
_LSTM_DOC = ("gates i, f, c, o from ``W * x + b_i + R * h + b_h``; ``c' = sigmoid(f) c + "
             "sigmoid(i) act(c~)``, ``h' = sigmoid(o) act(c')``; states ``[h, c]``.")
_GRU_DOC = ("gates r, z, n; ``n = act(W_n * x + b_in + r (R_n * h + b_hn))``, "
            "``h' = (1 - z) n + z h``; states ``[h]``.")

Conv1DRNNCell = _cell(_ConvRNNCell, 1, _RNN_DOC)
Conv2DRNNCell = _cell(_ConvRNNCell, 2, _RNN_DOC)
Conv3DRNNCell = _cell(_ConvRNNCell, 3, _RNN_DOC)
Conv1DLSTMCell = _cell(_ConvLSTMCell, 1, _LSTM_DOC)
Conv2DLSTMCell = _cell(_ConvLSTMCell, 2, _LSTM_DOC)
Conv3DLSTMCell = _cell(_ConvLSTMCell, 3, _LSTM_DOC)
Conv1DGRUCell = _cell(_ConvGRUCell, 1, _GRU_DOC)
Conv2DGRUCell = _cell(_ConvGRUCell, 2, _GRU_DOC)
Conv3DGRUCell = _cell(_ConvGRUCell, 3, _GRU_DOC)
