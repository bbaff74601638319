"""Module-era checkpoints, as MXNet 1.x's ``mx.model`` writes them.

``save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)`` writes
``prefix-symbol.json`` (the graph) and ``prefix-%04d.params`` (an NDArray
file whose keys are ``arg:<name>`` for arguments and ``aux:<name>`` for
auxiliary states); ``load_checkpoint`` reads both back.  The files are
interchangeable with MXNet 1.x's ``mx.model.save_checkpoint`` /
``load_checkpoint``.  Both files are written atomically (a temporary file
renamed into place), so an interrupted save keeps the previous checkpoint.
"""
import numbers
from collections import namedtuple

from .ndarray.files import as_ndarrays
from .serialization import ndarray_file
from .serialization.atomic import as_path, atomic_write, open_for_reading
from .serialization.errors import CheckpointError, ArgumentError

__all__ = ["save_checkpoint", "load_checkpoint", "load_params", "symbol_file", "params_file",
           "CheckpointError", "BatchEndParam"]

BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])
BatchEndParam.__doc__ = """What a batch-end (or eval-end) callback is called with, as in MXNet 1.x.

Parameters
----------
epoch : int
    The epoch, counted from 0.
nbatch : int
    The batch's position in the epoch, counted from 0 (Module.fit passes
    0 after the first batch).
eval_metric : metric or None
    The metric so far: an object with ``get_name_value()`` and ``reset()``.
locals : dict or None
    The caller's local variables (MXNet passes ``locals()`` of ``fit``).
"""


def _prefix(prefix, what):
    return as_path(prefix, what)


def _epoch(epoch, what):
    if isinstance(epoch, bool) or not isinstance(epoch, numbers.Integral) or epoch < 0:
        raise CheckpointError(f"{what}: epoch must be a non-negative int, got {epoch!r}")
    return int(epoch)


def symbol_file(prefix):
    """``prefix-symbol.json``."""
    return f"{_prefix(prefix, 'symbol_file')}-symbol.json"


def params_file(prefix, epoch):
    """``prefix-%04d.params`` (``model-0007.params``)."""
    return f"{_prefix(prefix, 'params_file')}-{_epoch(epoch, 'params_file'):04d}.params"


def _param_dict(params, kind, what):
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise ArgumentError(f"{what}: {kind}_params must be a dict str -> NDArray, "
                            f"got {type(params).__name__}")
    for k in params:
        if not isinstance(k, str):
            raise ArgumentError(f"{what}: {kind}_params keys must be str, got {k!r}")
    return params


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write ``prefix-symbol.json`` (unless ``symbol`` is None) and
    ``prefix-%04d.params`` with ``arg:``/``aux:`` keys."""
    what = "save_checkpoint"
    prefix = _prefix(prefix, what)
    epoch = _epoch(epoch, what)
    args = _param_dict(arg_params, "arg", what)
    auxs = _param_dict(aux_params, "aux", what)
    if symbol is not None:
        from .symbol import Symbol
        if not isinstance(symbol, Symbol):
            raise ArgumentError(f"{what}: symbol must be an nbdl Symbol or None, "
                                f"got {type(symbol).__name__}")
        text = symbol.tojson(remove_amp_cast=remove_amp_cast).encode("utf-8")
        atomic_write(symbol_file(prefix), lambda f: f.write(text))
    save_dict = {f"arg:{k}": v for k, v in args.items()}
    save_dict.update({f"aux:{k}": v for k, v in auxs.items()})
    ndarray_file.save(params_file(prefix, epoch), save_dict)


def load_params(prefix, epoch):
    """``(arg_params, aux_params)`` from ``prefix-%04d.params``."""
    fname = params_file(prefix, epoch)
    loaded = as_ndarrays(ndarray_file.load(fname))
    arg_params, aux_params = {}, {}
    if isinstance(loaded, list):
        if loaded:
            raise CheckpointError(f"{fname!r} holds {len(loaded)} unnamed arrays; a checkpoint's "
                                  f"arrays are named 'arg:<name>' or 'aux:<name>'")
        return arg_params, aux_params
    for key, value in loaded.items():
        kind, sep, name = key.partition(":")
        if not sep or kind not in ("arg", "aux") or not name:
            raise CheckpointError(f"{fname!r}: key {key!r} does not start with 'arg:' or 'aux:' "
                                  f"followed by a name (is this a Gluon save_parameters file? "
                                  f"load it with nbdl.nd.load)")
        if value is None:
            raise CheckpointError(f"{fname!r}: {key!r} is an empty (none) array")
        (arg_params if kind == "arg" else aux_params)[name] = value
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """``(symbol, arg_params, aux_params)`` from ``prefix-symbol.json`` and
    ``prefix-%04d.params``."""
    from .symbol import load as load_symbol
    params_file(prefix, epoch)  # argument errors before any file is read
    sym_fname = symbol_file(prefix)
    _check_readable(sym_fname, "load_checkpoint")
    symbol = load_symbol(sym_fname)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


def _check_readable(fname, what):
    _, f = open_for_reading(fname, what)
    f.close()
