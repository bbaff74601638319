"""MXNet 1.x's ``Updater``: an optimizer with the states of the weights it
updates, called as ``updater(index, grad, weight)`` (what a KVStore runs on
push after ``set_optimizer``, and what ``Module`` uses without a KVStore).

``get_states`` / ``set_states`` exchange the states (and, with
``dump_optimizer``, the optimizer's settings) as bytes in nbdl's state
container (``nbdl.optimizer.state_file``: an ``.npz`` archive with a JSON
header, read without pickle), where MXNet pickles them.
"""
import numpy as np

from ..ndarray.ndarray import NDArray
from . import state_file
from .optimizer import Optimizer, OptimizerError, from_config, get_config, state_structure

_FORMAT = "nbdl-updater-states"
_VERSION = 1


class Updater:
    """Applies ``optimizer`` to weights by index, creating each index's state
    on its first update.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer to apply.
    """

    def __init__(self, optimizer):
        if not isinstance(optimizer, Optimizer):
            raise OptimizerError(f"Updater: optimizer must be an nbdl.optimizer.Optimizer, got "
                                 f"{type(optimizer).__name__}")
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}

    def __call__(self, index, grad, weight):
        """Update ``weight`` in place from ``grad``.

        Parameters
        ----------
        index : int or str, or a list of them
            The key(s) of the weight(s); states are kept per key.
        grad : NDArray or list of NDArray
            The gradient(s), like the weight(s).
        weight : NDArray or list of NDArray
            The weight(s) to update.
        """
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), grad, weight
            if not isinstance(grads, (list, tuple)) or not isinstance(weights, (list, tuple)) \
                    or not len(indices) == len(grads) == len(weights):
                raise OptimizerError(f"Updater: with a list of {len(indices)} indices, grad and "
                                     f"weight must be lists of as many arrays")
        else:
            indices, grads, weights = [index], [grad], [weight]
        if weights and isinstance(weights[0], NDArray):
            self.optimizer._set_current_context(weights[0].device)
        for idx, w in zip(indices, weights):
            if not isinstance(w, NDArray):
                raise OptimizerError(f"Updater: the weight of {idx!r} must be an NDArray, got "
                                     f"{type(w).__name__}")
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, w)
                self.states_synced[idx] = True
            elif not self.states_synced.get(idx, False):
                self.states[idx] = self.sync_state_context(self.states[idx], w.device)
                self.states_synced[idx] = True
        for idx, w, g in zip(indices, weights, grads):
            self.optimizer.update_multi_precision(idx, w, g, self.states[idx])

    def sync_state_context(self, state, context):
        """``state`` with every array moved to ``context`` (a Device).

        Parameters
        ----------
        state : None, NDArray or tuple/list of states
            An optimizer state.
        context : Device
            Where the arrays should live.
        """
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def get_states(self, dump_optimizer=False):
        """The states as bytes (nbdl's state container, no pickle).

        Parameters
        ----------
        dump_optimizer : bool, default False
            Whether to save the optimizer's settings too (learning rate,
            schedule, update counts); ``set_states`` then rebuilds it.
        """
        config = get_config(self.optimizer) if dump_optimizer else None
        entries, arrays = [], {}
        for n, key in enumerate(self.states):
            if not isinstance(key, (int, str)) or isinstance(key, bool):
                raise OptimizerError(f"Updater.get_states: key {key!r} is not an int or a str, "
                                     f"so it cannot be saved")
            structure, flat = state_structure(self.states[key])
            entries.append({"key": key, "structure": structure})
            for k, a in enumerate(flat):
                arrays[f"state{n}_{k}"] = a.asnumpy()
        header = {"format": _FORMAT, "version": _VERSION, "optimizer": config, "states": entries}
        try:
            return state_file.pack(header, arrays)
        except (TypeError, ValueError) as e:
            raise OptimizerError(f"Updater.get_states: the optimizer's settings are not plain "
                                 f"data ({e})") from None

    def set_states(self, states, label="Updater.set_states"):
        """Restore what ``get_states`` returned.  The data is checked
        completely before anything changes; the restored arrays move to each
        weight's device on its next update.

        Parameters
        ----------
        states : bytes
            ``get_states``' bytes.
        label : str
            What error messages call the source (a file name).
        """
        header, arrays = state_file.unpack(states, label, "optimizer state container",
                                           OptimizerError)
        with state_file.restoring(label, OptimizerError, "the states", "Updater state container"):
            if header.get("format") != _FORMAT or header.get("version") != _VERSION:
                raise OptimizerError(f"{label}: not an Updater state container of version "
                                     f"{_VERSION} (format {header.get('format')!r}, version "
                                     f"{header.get('version')!r})")
            optimizer = self.optimizer
            if header["optimizer"] is not None:
                optimizer = from_config(header["optimizer"],
                                        param_dict=self.optimizer.param_dict)
            restored = {}
            for n, entry in enumerate(header["states"]):
                key = entry["key"]
                if not isinstance(key, (int, str)) or isinstance(key, bool) or key in restored:
                    raise OptimizerError(f"{label}: bad or repeated state key {key!r}")
                flat = []
                for k in range(_count(entry["structure"])):
                    name = f"state{n}_{k}"
                    if name not in arrays:
                        raise OptimizerError(f"{label}: array {name!r} of key {key!r} is missing")
                    flat.append(NDArray(np.ascontiguousarray(arrays[name])))
                restored[key] = state_file.build_state(entry["structure"], iter(flat))
        self.optimizer = optimizer
        self.states = restored
        self.states_synced = dict.fromkeys(restored, False)


def _count(structure):
    """How many arrays a state structure holds."""
    if structure is None:
        return 0
    if structure == "a":
        return 1
    if isinstance(structure, list):
        return sum(_count(s) for s in structure)
    raise ValueError(f"bad state structure {structure!r}")


def get_updater(optimizer):
    """An ``Updater`` for ``optimizer`` (MXNet's ``mx.optimizer.get_updater``).

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer the updater applies.
    """
    return Updater(optimizer)
