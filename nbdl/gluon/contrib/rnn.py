"""``gluon.contrib.rnn`` (MXNet 1.x): the convolutional recurrent cells,
``VariationalDropoutCell`` and ``LSTMPCell``, the same classes as in
``nbdl.gluon.rnn``."""
from ..rnn import (Conv1DGRUCell, Conv1DLSTMCell, Conv1DRNNCell, Conv2DGRUCell,  # noqa: F401
                   Conv2DLSTMCell, Conv2DRNNCell, Conv3DGRUCell, Conv3DLSTMCell, Conv3DRNNCell,
                   LSTMPCell, VariationalDropoutCell)

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell", "Conv1DLSTMCell",
           "Conv2DLSTMCell", "Conv3DLSTMCell", "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell",
           "VariationalDropoutCell", "LSTMPCell"]
