"""MXNet 1.x's symbolic RNN API (``mx.rnn``): cells that unroll into Symbol
graphs (``RNNCell``, ``LSTMCell``, ``GRUCell``, ``FusedRNNCell``, the
sequential, bidirectional, dropout, zoneout and residual wrappers, the
convolutional cells), ``BucketSentenceIter`` / ``encode_sentences``, and
checkpoints that store the cells' weights unpacked. Parameter and node
names are MXNet's, so 1.x scripts and checkpoints work unchanged (Gluon's
cells are ``nbdl.gluon.rnn``)."""
from . import io, rnn, rnn_cell
from .conv_rnn_cell import BaseConvRNNCell, ConvGRUCell, ConvLSTMCell, ConvRNNCell
from .fused import FusedRNNCell
from .io import BucketSentenceIter, encode_sentences
from .rnn import do_rnn_checkpoint, load_rnn_checkpoint, rnn_unroll, save_rnn_checkpoint
from .rnn_cell import (BaseRNNCell, BidirectionalCell, DropoutCell, GRUCell, LSTMCell,
                       ModifierCell, ResidualCell, RNNCell, RNNParams, SequentialRNNCell,
                       ZoneoutCell)

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "BidirectionalCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell",
           "ConvGRUCell", "BucketSentenceIter", "encode_sentences", "rnn_unroll",
           "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint", "io", "rnn",
           "rnn_cell"]
