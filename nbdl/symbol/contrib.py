"""``nbdl.sym.contrib``: MXNet's ``mx.sym.contrib`` spellings; ``contrib.X``
builds a node of the op ``_contrib_X`` (``sym.contrib.index_copy`` is
``sym._contrib_index_copy``)."""
import sys

from ..errors import UnknownOpError
from ..ops.registry import get_op, list_ops

PREFIX = "_contrib_"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        get_op(PREFIX + name)
    except UnknownOpError:
        raise AttributeError(f"nbdl.sym.contrib has no attribute or operator {name!r} "
                             f"(no op {PREFIX + name!r})") from None
    fn = getattr(sys.modules[__name__.rpartition(".")[0]], PREFIX + name)
    globals()[name] = fn
    return fn


def __dir__():
    return sorted(set(globals()) | {n[len(PREFIX):] for n in list_ops() if n.startswith(PREFIX)})
