"""The updater a ``Module`` applies its optimizer with, and the optimizer
state files of ``save_optimizer_states`` / ``load_optimizer_states``.

``Updater(optimizer)`` is called as MXNet 1.x's updater is,
``updater(index, grad, weight)``, and creates each index's optimizer state on
its first update.  The state file is a numpy ``.npz`` archive with a JSON
header (read with ``allow_pickle=False``), where MXNet pickles the states:
the files are nbdl's own, and loading one never runs code.  As in MXNet's
Module, the file holds the states only (momentum, moments, ...), not the
optimizer's settings or update counts."""
import json
import zipfile

import numpy as np

from ..errors import NbdlError
from ..optimizer import Optimizer
from ..optimizer.optimizer import state_structure
from ..serialization.atomic import as_path, atomic_write, open_for_reading
from ._common import ModuleError

__all__ = ["Updater", "save_states", "load_states"]

_FORMAT = "nbdl-module-optimizer-states"
_VERSION = 1
_HEADER = "__header__"


class Updater:
    """Applies ``optimizer`` to weights by index, keeping one state per index.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer to apply.
    """

    def __init__(self, optimizer):
        if not isinstance(optimizer, Optimizer):
            raise ModuleError(f"Updater: optimizer must be an nbdl.optimizer.Optimizer, got "
                              f"{type(optimizer).__name__}")
        self.optimizer = optimizer
        self.states = {}

    def __call__(self, index, grad, weight):
        """Update ``weight`` in place from ``grad`` (or lists of them).

        Parameters
        ----------
        index : int or list of int
            The weight's key; states are kept per key.
        grad : NDArray or list of NDArray
            The gradient(s).
        weight : NDArray or list of NDArray
            The weight(s) to update.
        """
        if not isinstance(index, (list, tuple)):
            index, grad, weight = [index], [grad], [weight]
        for i, g, w in zip(index, grad, weight):
            if i not in self.states:
                self.states[i] = self.optimizer.create_state_multi_precision(i, w)
            self.optimizer.update_multi_precision(i, w, g, self.states[i])


def save_states(fname, updater, names):
    """Write ``updater``'s states to ``fname``.

    Parameters
    ----------
    fname : str
        The file (``prefix-0003.states``).
    updater : Updater
        Whose states to write.
    names : dict of int to str
        The parameter name of each index (checked when loading).
    """
    fname = as_path(fname, "save_optimizer_states")
    arrays, entries = {}, []
    for n, index in enumerate(sorted(updater.states)):
        structure, flat = state_structure(updater.states[index])
        entries.append({"index": int(index), "name": names.get(index), "structure": structure})
        for k, a in enumerate(flat):
            arrays[f"s{n}_{k}"] = a.asnumpy()
    header = {"format": _FORMAT, "version": _VERSION, "states": entries}
    arrays[_HEADER] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    atomic_write(fname, lambda f: np.savez(f, **arrays))


def load_states(fname, updater, weights, names):
    """Restore into ``updater`` the states ``save_states`` wrote.  The whole
    file is checked against ``weights`` before anything changes.

    Parameters
    ----------
    fname : str
        The state file.
    updater : Updater
        Whose states to replace.
    weights : dict of int to NDArray
        The weight of every index (the states are made like them).
    names : dict of int to str
        The parameter name of every index.
    """
    what = "load_optimizer_states"
    path, f = open_for_reading(fname, what)
    try:
        with f, np.load(f, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        header = json.loads(arrays.pop(_HEADER).tobytes().decode("utf-8"))
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError) as e:
        raise ModuleError(f"{what}: {path!r} is not a readable optimizer state file of a Module "
                          f"({type(e).__name__}: {e})") from None
    if header.get("format") != _FORMAT or header.get("version") != _VERSION:
        raise ModuleError(f"{what}: {path!r} is not a Module optimizer state file of version "
                          f"{_VERSION} (format {header.get('format')!r}, version "
                          f"{header.get('version')!r})")
    try:
        states = {}
        for n, entry in enumerate(header["states"]):
            index = entry["index"]
            if index not in weights:
                raise ModuleError(f"{what}: {path!r} holds a state for parameter #{index!r}, "
                                  f"but the module has {len(weights)} parameters")
            if entry["name"] != names.get(index):
                raise ModuleError(f"{what}: {path!r}: parameter #{index} is {entry['name']!r} "
                                  f"in the file but {names.get(index)!r} in this module")
            state = updater.optimizer.create_state_multi_precision(index, weights[index])
            structure, targets = state_structure(state)
            if structure != entry["structure"]:
                raise ModuleError(f"{what}: {path!r}: the state of {entry['name']!r} has layout "
                                  f"{entry['structure']!r} but {type(updater.optimizer).__name__}"
                                  f" makes {structure!r}")
            for k, target in enumerate(targets):
                src = arrays.get(f"s{n}_{k}")
                if src is None or tuple(src.shape) != tuple(target.shape) \
                        or src.dtype != np.dtype(target.dtype):
                    got = "missing" if src is None else f"{src.dtype}{tuple(src.shape)}"
                    raise ModuleError(f"{what}: {path!r}: state array {k} of {entry['name']!r} "
                                      f"is {got}, expected {np.dtype(target.dtype)}"
                                      f"{tuple(target.shape)}")
                target[...] = src
            states[index] = state
    except NbdlError as e:
        if isinstance(e, ModuleError):
            raise
        raise ModuleError(f"{what}: {path!r}: {e}") from None
    except (KeyError, TypeError, ValueError) as e:
        raise ModuleError(f"{what}: {path!r}: malformed header ({type(e).__name__}: {e})") \
            from None
    updater.states = states
