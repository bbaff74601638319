"""``FusedRNNCell``: MXNet 1.x's ``mx.rnn.FusedRNNCell``, a whole (multi-layer,
optionally bidirectional) RNN as one fused ``RNN`` op over a flat
``parameters`` vector, in MXNet's layout (``initializer.fused_rnn_layout``)."""
import warnings

from .. import symbol
from ..errors import ArgumentError, GraphError
from ..initializer import RNN_GATES, FusedRNN, fused_rnn_layout, fused_rnn_num_input
from ..ndarray import concatenate
from .cell_base import BaseRNNCell, normalize_sequence
from .dense_cells import GRUCell, LSTMCell, RNNCell
from .wrapper_cells import BidirectionalCell, DropoutCell, SequentialRNNCell

__all__ = ["FusedRNNCell"]


class FusedRNNCell(BaseRNNCell):
    """A multi-layer RNN run as one ``RNN`` op (MXNet's fused RNN layer).

    Its variable is ``<prefix>parameters``; ``unpack_weights`` splits it into
    the weights of the equivalent stack of cells (``lstm_l0_i2h_i_weight``,
    ...), which ``unfuse()`` builds.

    Parameters
    ----------
    num_hidden : int
        Units of each layer's state.
    num_layers : int, optional
        Stacked layers.
    mode : {'lstm', 'gru', 'rnn_tanh', 'rnn_relu'}, optional
        The recurrence.
    bidirectional : bool, optional
        Also run each layer backward (the output has ``2 * num_hidden`` features).
    dropout : float, optional
        Dropout between layers in training.
    get_next_state : bool, optional
        Return the final states from ``unroll`` (otherwise an empty list).
    forget_bias : float, optional
        Initial forget-gate bias of an LSTM.
    prefix : str, optional
        ``'<mode>_'`` by default.
    params : RNNParams, optional
        Shared variables.
    """

    def __init__(self, num_hidden, num_layers=1, mode="lstm", bidirectional=False, dropout=0.,
                 get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if mode not in RNN_GATES:
            raise ArgumentError(f"FusedRNNCell: mode must be one of {sorted(RNN_GATES)}, got "
                                f"{mode!r}")
        if prefix is None:
            prefix = f"{mode}_"
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ["l", "r"] if bidirectional else ["l"]
        initializer = FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get("parameters", init=initializer)

    @property
    def state_info(self):
        b = self._bidirectional + 1
        n = (self._mode == "lstm") + 1
        return [{"shape": (b * self._num_layers, 0, self._num_hidden), "__layout__": "LNC"}
                for _ in range(n)]

    @property
    def _gate_names(self):
        return list(RNN_GATES[self._mode])

    def _layout(self, num_input):
        return fused_rnn_layout(self._mode, self._num_layers, self._bidirectional, num_input,
                                self._num_hidden, self._prefix)

    def unpack_weights(self, args):
        """Split ``<prefix>parameters`` into the unfused cells' weights
        (``<prefix>l0_i2h_i_weight``, ...; see ``BaseRNNCell.unpack_weights``)."""
        args = dict(args)
        arr = args.pop(self._parameter.name)
        num_input = fused_rnn_num_input(arr.size, self._mode, self._num_layers,
                                        self._bidirectional, self._num_hidden)
        layout, size = self._layout(num_input)
        if num_input <= 0 or size != arr.size:
            raise ArgumentError(f"FusedRNNCell.unpack_weights: {self._parameter.name} has "
                                f"{arr.size} values, not the size of this cell's parameters")
        flat = arr.reshape((arr.size,))
        for name, start, shape in layout:
            n = 1
            for d in shape:
                n *= d
            args[name] = flat[start:start + n].reshape(shape).copy()
        return args

    def pack_weights(self, args):
        """The inverse of ``unpack_weights``."""
        args = dict(args)
        w0 = args[f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"]
        layout, _ = self._layout(w0.shape[1])
        args[self._parameter.name] = concatenate(
            [args.pop(name).reshape((-1,)) for name, _, _ in layout])
        return args

    def __call__(self, inputs, states):
        raise GraphError("FusedRNNCell cannot be stepped; use unroll (or unfuse() for a "
                         "stack of cells that can)")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for "
                          "faster speed", stacklevel=2)
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise ArgumentError(f"FusedRNNCell.unroll: unsupported layout {layout!r}")
        if begin_state is None:
            begin_state = self.begin_state()
        states = {"state": begin_state[0]}
        if self._mode == "lstm":
            states["state_cell"] = begin_state[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state, mode=self._mode,
                         name=self._prefix + "rnn", **states)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            n = 2 if self._mode == "lstm" else 1
            for k in range(1, n + 1):
                rnn[k]._set_attr(__layout__="LNC")
            outputs, states = rnn[0], [rnn[k] for k in range(1, n + 1)]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The same network as a ``SequentialRNNCell`` of unfused cells
        (``BidirectionalCell`` pairs, ``DropoutCell`` between layers), with
        the names ``unpack_weights`` gives, so it can be stepped and read
        the unpacked weights."""
        make = {"rnn_relu": lambda p: RNNCell(self._num_hidden, activation="relu", prefix=p),
                "rnn_tanh": lambda p: RNNCell(self._num_hidden, activation="tanh", prefix=p),
                "lstm": lambda p: LSTMCell(self._num_hidden, prefix=p),
                "gru": lambda p: GRUCell(self._num_hidden, prefix=p)}[self._mode]
        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make(f"{self._prefix}l{i}_"),
                                            make(f"{self._prefix}r{i}_"),
                                            output_prefix=f"{self._prefix}bi_l{i}_"))
            else:
                stack.add(make(f"{self._prefix}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{i}_"))
        return stack
