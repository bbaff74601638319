"""Automatic names of symbol nodes: MXNet 1.x's ``mxnet.name``.

A node created without ``name=`` (``nbdl.sym.FullyConnected(data,
num_hidden=4)``, ``a + b``) is named by the current ``NameManager`` from a
hint, the lower-cased operator name: ``fullyconnected0``,
``fullyconnected1``, ... ``with NameManager():`` starts a fresh count for
the symbols created inside it; ``with Prefix('net_'):`` puts ``net_`` in
front of every node name made inside it, given names included
(``name='fc1'`` -> ``net_fc1``, and its weight ``net_fc1_weight``), as in
MXNet.  Variables (``nbdl.sym.var``) keep the name they are given.

Outside any ``with`` block the process-wide default manager names nodes
(one count shared by all threads, as nbdl always had); a ``with`` block is
local to its thread.  Nodes that nbdl makes itself (gradient graphs) always
take their names from the default manager, so a scope changes only the
symbols a user creates.
"""
from .errors import ArgumentError
from .scopes import ScopeMeta

class NameManager(metaclass=ScopeMeta):
    """Names symbol nodes created inside ``with NameManager():``.

    Each manager keeps its own count per hint, so the first fully connected
    node made in a fresh ``with NameManager():`` block is
    ``fullyconnected0`` again.  Subclasses change the naming by overriding
    ``get``.
    """

    _scope_error = ArgumentError

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """The name of a new node.

        Parameters
        ----------
        name : str or None
            The name the user gave; returned unchanged when not empty.
        hint : str
            The base of an automatic name (the lower-cased operator name);
            the name is ``hint`` followed by how many nodes this manager
            has named with that hint before.

        Returns
        -------
        str
        """
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    def __enter__(self):
        self._old_manager = current()
        NameManager._scope_local.value = self
        return self

    def __exit__(self, ptype, value, trace):
        NameManager._scope_local.value = self._old_manager
        self._old_manager = None


class Prefix(NameManager):
    """A name manager that puts ``prefix`` in front of every node name.

    Parameters
    ----------
    prefix : str
        Prepended to given and automatic names alike
        (``with Prefix('mynet_'): FullyConnected(data, name='fc1')`` makes
        ``mynet_fc1`` with arguments ``mynet_fc1_weight`` and
        ``mynet_fc1_bias``).
    """

    def __init__(self, prefix):
        super().__init__()
        if not isinstance(prefix, str):
            raise ArgumentError(f"Prefix: prefix must be a str, got {prefix!r}")
        self._prefix = prefix

    def get(self, name, hint):
        """``prefix`` + the name ``NameManager.get`` gives.

        Parameters
        ----------
        name : str or None
            The name the user gave, or None for an automatic one.
        hint : str
            The base of an automatic name.

        Returns
        -------
        str
        """
        return self._prefix + super().get(name, hint)


_default = NameManager()
NameManager._scope_default = _default


def current():
    """The name manager in effect in this thread (the default one outside
    any ``with NameManager():`` block).

    Returns
    -------
    NameManager
    """
    return NameManager.in_effect()


def default_manager():
    """The process-wide default manager: it names nodes outside any ``with``
    block and every node nbdl creates internally (gradients).

    Returns
    -------
    NameManager
    """
    return _default


__all__ = ["NameManager", "Prefix", "current"]
