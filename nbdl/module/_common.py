"""What the modules share: their error, the data descriptors they accept,
and the checks on names and shapes (``BatchEndParam`` is ``nbdl.model``'s).

A data or label descriptor is anything with ``name`` and ``shape`` (an
``nbdl.io.DataDesc`` or MXNet-style namedtuple, which also carry ``dtype``
and ``layout``) or a tuple ``(name, shape[, dtype[, layout]])``; tuples are
turned into ``DataDesc``."""
import numbers
import warnings

import numpy as np

from ..errors import ArgumentError, NbdlError
from ..io import DataDesc
from ..model import BatchEndParam

__all__ = ["ModuleError", "BatchEndParam", "DataDesc", "parse_descs", "as_list",
           "call_batch_end", "check_input_names"]


class ModuleError(NbdlError, RuntimeError):
    """A module used out of order: ``forward`` before ``bind``,
    ``init_optimizer`` before ``init_params``, ``backward`` of a module bound
    for inference, ..."""


def as_list(obj):
    """``obj`` as a list: its items when it is a list or tuple, else ``[obj]``.

    Parameters
    ----------
    obj : object
        A callback, a list of callbacks, ...
    """
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def call_batch_end(callbacks, epoch, nbatch, eval_metric, local_vars):
    """Call each of ``callbacks`` (one, a list, or None for none) with a
    ``BatchEndParam`` of the other arguments.

    Parameters
    ----------
    callbacks : callable, list of callable or None
        Batch-end (or score-end) callbacks.
    epoch, nbatch : int
        The epoch and the batch count.
    eval_metric : EvalMetric
        The metric being updated.
    local_vars : dict
        The caller's ``locals()`` (MXNet's callbacks read them).
    """
    if callbacks is None:
        return
    param = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                          locals=local_vars)
    for callback in as_list(callbacks):
        callback(param)


def _shape(shape, where, name):
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise ArgumentError(f"{where}: the shape of {name!r} must be a tuple of non-negative "
                            f"ints, got {shape!r}")
    return tuple(int(d) for d in shape)


def _one_desc(d, where, kind):
    if hasattr(d, "name") and hasattr(d, "shape") and not isinstance(d, np.ndarray):
        shape = _shape(d.shape, where, d.name)
        if tuple(d.shape) == shape and isinstance(d, tuple):
            return d
        return DataDesc(d.name, shape, getattr(d, "dtype", np.float32),
                        getattr(d, "layout", "NCHW"))
    if isinstance(d, (tuple, list)) and 2 <= len(d) <= 4 and isinstance(d[0], str):
        return DataDesc(d[0], _shape(d[1], where, d[0]), *d[2:])
    raise ArgumentError(f"{where}: each entry of {kind}_shapes must be a DataDesc or a tuple "
                        f"(name, shape), got {d!r}")


def parse_descs(where, names, descs, kind, strict):
    """``descs`` as a list of descriptors after checking that their names are
    ``names`` (an ArgumentError when ``strict``, else a warning, as MXNet).

    Parameters
    ----------
    where : str
        The calling function, for messages.
    names : list of str
        The expected names (the module's data or label names).
    descs : list of DataDesc or (name, shape), or None
        What the caller gave (None: no descriptors).
    kind : str
        'data' or 'label'.
    strict : bool
        Whether a mismatch is an error.
    """
    if descs is None:
        descs = []
    elif not isinstance(descs, (list, tuple)):
        raise ArgumentError(f"{where}: {kind}_shapes must be a list of DataDesc or (name, shape) "
                            f"tuples, got {type(descs).__name__}")
    out = [_one_desc(d, where, kind) for d in descs]
    actual = [d.name for d in out]
    if sorted(actual) != sorted(names):
        msg = (f"{where}: the {kind} shapes {[(d.name, d.shape) for d in out]} do not match "
               f"the module's {kind}_names {list(names)}")
        if strict:
            raise ArgumentError(msg)
        warnings.warn(msg, stacklevel=3)
    return out


def check_input_names(symbol, names, typename, throw):
    """Check that each of ``names`` is an argument of ``symbol``: an
    ArgumentError when ``throw``, else a warning (as MXNet does for labels).

    Parameters
    ----------
    symbol : Symbol
        The module's symbol.
    names : list of str
        Names given as data, label, state or fixed parameter names.
    typename : str
        Which of those they are, for the message.
    throw : bool
        Error (True) or warning (False).
    """
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [a for a in args if not a.endswith(("_weight", "_bias", "_gamma", "_beta"))]
        msg = (f"Module: {typename}_names={list(names)} names {name!r}, which is not an "
               f"argument of the symbol; its inputs are {candidates}")
        if throw:
            raise ArgumentError(msg)
        warnings.warn(msg, stacklevel=3)
