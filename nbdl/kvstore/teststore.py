"""``TestStore``: the minimal KVStore that MXNet 1.x registers as
``'teststore'`` (``mx.kv.create('teststore')``).  It keeps nothing: a
broadcast copies the value into the outputs and a pushpull writes the sum of
the pushed values into the outputs.  It cannot run an optimizer
(``is_capable('optimizer')`` is False), so a Trainer given one sums the
gradients through it and updates the weights itself.
"""
import numpy as np

from ..ndarray import NDArray
from ..ndarray.creation import from_host
from .kvstore import KVStoreBase, KVStoreError, SingleProcess


def _list(method, what, value):
    vals = list(value) if isinstance(value, (list, tuple)) else [value]
    if not vals or not all(isinstance(v, NDArray) for v in vals):
        raise KVStoreError(f"TestStore.{method}: {what} must be an NDArray or a non-empty list of "
                           f"NDArrays, got {value!r}")
    return vals


def _check_shapes(method, src_shape, outs):
    for o in outs:
        if tuple(o.shape) != tuple(src_shape):
            raise KVStoreError(f"TestStore.{method}: the value has shape {tuple(src_shape)} but an "
                               f"output has shape {tuple(o.shape)}")


class TestStore(SingleProcess, KVStoreBase):
    """A stateless store for tests and examples (MXNet's ``'teststore'``)."""

    __test__ = False          # not a pytest test class

    def broadcast(self, key, value, out, priority=0):
        """Copy ``value`` into every array of ``out``.

        Parameters
        ----------
        key : int or str
            The key (only named in errors).
        value : NDArray
            The value.
        out : NDArray or list of NDArray
            Where to copy it.
        priority : int, default 0
            Accepted for MXNet compatibility.
        """
        src = _list("broadcast", "value", value)[0]
        outs = _list("broadcast", "out", out)
        _check_shapes("broadcast", src.shape, outs)
        for o in outs:
            src.copyto(o)

    def pushpull(self, key, value, out=None, priority=0):
        """Write the sum of the values into ``out`` (or back into ``value``).

        Parameters
        ----------
        key : int or str
            The key (only named in errors).
        value : NDArray or list of NDArray
            The values to sum (one per device).
        out : NDArray or list of NDArray, optional
            Where the sum goes; default ``value`` itself.
        priority : int, default 0
            Accepted for MXNet compatibility.
        """
        vals = _list("pushpull", "value", value)
        for v in vals[1:]:
            _check_shapes("pushpull", vals[0].shape, [v])
        outs = vals if out is None else _list("pushpull", "out", out)
        _check_shapes("pushpull", vals[0].shape, outs)
        total = np.sum([v.asnumpy() for v in vals], axis=0).astype(np.dtype(vals[0].dtype))
        reduced = from_host(total, vals[0].device)
        for o in outs:
            reduced.copyto(o)

    @staticmethod
    def is_capable(capability):
        """False for ``'optimizer'``: this store cannot update weights.

        Parameters
        ----------
        capability : str
            The capability asked about.
        """
        if isinstance(capability, str) and capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise KVStoreError(f"TestStore.is_capable: unknown capability {capability!r} (known: "
                           f"{KVStoreBase.OPTIMIZER!r})")

    @property
    def type(self):
        """``'teststore'``."""
        return "teststore"


KVStoreBase.register(TestStore)
