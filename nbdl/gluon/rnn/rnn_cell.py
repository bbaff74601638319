"""Recurrent cells (Gluon's ``rnn.RNNCell``/``LSTMCell``/``GRUCell`` and the
modifier cells) under MXNet's module path ``gluon.rnn.rnn_cell``.

A cell's ``forward(inputs, states)`` computes one step and returns
``(output, new_states)``; ``unroll`` steps it over a sequence.  The cells
live in ``cell_base.py`` (``RecurrentCell``, ``HybridRecurrentCell``),
``dense_cells.py`` (``RNNCell``, ``LSTMCell``, ``GRUCell``, ``LSTMPCell``)
and ``wrapper_cells.py`` (the sequential, bidirectional, dropout and
modifier cells)."""
from .cell_base import HybridRecurrentCell, RecurrentCell
from .dense_cells import GRUCell, LSTMCell, LSTMPCell, RNNCell
from .wrapper_cells import (BidirectionalCell, DropoutCell, HybridSequentialRNNCell,
                            ModifierCell, ResidualCell, SequentialRNNCell,
                            VariationalDropoutCell, ZoneoutCell)

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "LSTMPCell", "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell",
           "ModifierCell", "ResidualCell", "BidirectionalCell", "ZoneoutCell",
           "VariationalDropoutCell"]
