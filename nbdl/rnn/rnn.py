"""Checkpoints of models built with RNN cells (MXNet 1.x's ``mx.rnn.rnn``):
weights are saved unpacked (one array per gate, ``lstm_i2h_f_weight``), as
MXNet saves them, and packed again on loading."""
import warnings

from ..model import load_checkpoint, save_checkpoint
from .cell_base import BaseRNNCell

__all__ = ["rnn_unroll", "save_rnn_checkpoint", "load_rnn_checkpoint", "do_rnn_checkpoint"]


def _cells(cells):
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix="", layout="NTC"):
    """Deprecated (as in MXNet): ``cell.unroll(length, inputs, begin_state,
    layout=layout)``; ``input_prefix`` is ignored.

    Parameters
    ----------
    cell : BaseRNNCell
    length : int
    inputs : Symbol or list of Symbol
    begin_state : list of Symbol, optional
    input_prefix : str, optional
    layout : str, optional
    """
    warnings.warn("rnn_unroll is deprecated. Please call cell.unroll directly.",
                  DeprecationWarning, stacklevel=2)
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)


def save_rnn_checkpoint(cells, prefix, epoch, symbol, arg_params, aux_params):
    """``model.save_checkpoint`` with the cells' weights unpacked first.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
        The cells the symbol was built with.
    prefix : str
        Files ``prefix-symbol.json`` and ``prefix-%04d.params``.
    epoch : int
        The epoch number in the params file name.
    symbol : Symbol
        The network.
    arg_params, aux_params : dict of str to NDArray
        Its parameters and auxiliary states.
    """
    for cell in _cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix, epoch):
    """``model.load_checkpoint`` with the cells' weights packed again.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
        The cells the symbol was built with.
    prefix : str
        As given to ``save_rnn_checkpoint``.
    epoch : int
        The epoch to load.

    Returns
    -------
    symbol : Symbol
    arg_params : dict of str to NDArray
    aux_params : dict of str to NDArray
    """
    sym, arg, aux = load_checkpoint(prefix, epoch)
    for cell in _cells(cells):
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells, prefix, period=1):
    """An epoch-end callback for ``Module.fit`` saving ``save_rnn_checkpoint``
    every ``period`` epochs.

    Parameters
    ----------
    cells : BaseRNNCell or list of BaseRNNCell
        The cells the symbol was built with.
    prefix : str
        The checkpoint files' prefix.
    period : int, optional
        Epochs between checkpoints.

    Returns
    -------
    callable
        ``callback(iter_no, sym, arg, aux)``.
    """
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)
    return _callback
