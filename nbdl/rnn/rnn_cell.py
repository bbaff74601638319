"""MXNet 1.x's symbolic RNN cells (``mx.rnn.rnn_cell``): build unrolled
recurrent graphs out of Symbols, with MXNet's node and parameter names
(``lstm_t0_i2h``, ``lstm_i2h_weight``), so 1.x training scripts, symbol
files and checkpoints work unchanged.

This module keeps MXNet's module path; the cells live in ``cell_base.py``
(``BaseRNNCell``, ``RNNParams``, ``normalize_sequence``), ``dense_cells.py``
(``RNNCell``, ``LSTMCell``, ``GRUCell``) and ``wrapper_cells.py`` (the
sequential, bidirectional, dropout and modifier cells). ``FusedRNNCell``
(one ``RNN`` op) is in ``fused.py``, the convolutional cells in
``conv_rnn_cell.py``.
"""
from .cell_base import BaseRNNCell, RNNParams, normalize_sequence
from .dense_cells import GRUCell, LSTMCell, RNNCell, gru_update, lstm_update
from .wrapper_cells import (BidirectionalCell, DropoutCell, ModifierCell, ResidualCell,
                            SequentialRNNCell, ZoneoutCell)

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "SequentialRNNCell",
           "DropoutCell", "ModifierCell", "ZoneoutCell", "ResidualCell", "BidirectionalCell",
           "normalize_sequence", "lstm_update", "gru_update"]
