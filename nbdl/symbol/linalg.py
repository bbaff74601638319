"""``nbdl.sym.linalg``: MXNet's ``mx.sym.linalg`` spellings; ``linalg.X``
builds a node of the op ``_linalg_X`` (``sym.linalg.gemm2`` is
``sym._linalg_gemm2``)."""
import sys

from ..errors import UnknownOpError
from ..ops.registry import get_op, list_ops

PREFIX = "_linalg_"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        get_op(PREFIX + name)
    except UnknownOpError:
        raise AttributeError(f"nbdl.sym.linalg has no attribute or operator {name!r} "
                             f"(no op {PREFIX + name!r})") from None
    fn = getattr(sys.modules[__name__.rpartition(".")[0]], PREFIX + name)
    globals()[name] = fn
    return fn


def __dir__():
    return sorted(set(globals()) | {n[len(PREFIX):] for n in list_ops() if n.startswith(PREFIX)})
