"""Recurrent layers (fused RNN/LSTM/GRU) and cells."""
from .rnn_cell import (BidirectionalCell, DropoutCell, GRUCell, HybridRecurrentCell,  # noqa: F401
                       HybridSequentialRNNCell, LSTMCell, LSTMPCell, ModifierCell, RecurrentCell,
                       ResidualCell, RNNCell, SequentialRNNCell, VariationalDropoutCell,
                       ZoneoutCell)
from .rnn_layer import GRU, LSTM, RNN  # noqa: F401
from .conv_rnn_cell import (Conv1DGRUCell, Conv1DLSTMCell, Conv1DRNNCell,  # noqa: F401
                            Conv2DGRUCell, Conv2DLSTMCell, Conv2DRNNCell, Conv3DGRUCell,
                            Conv3DLSTMCell, Conv3DRNNCell)
