"""``nbdl.nd.linalg``: MXNet's ``mx.nd.linalg`` spellings.  ``linalg.X`` is the
op ``_linalg_X`` of the op table (``nd.linalg.gemm2`` runs ``_linalg_gemm2``,
``nd.linalg.potrf`` ``_linalg_potrf``); see docs/ops.md, "Linear algebra".
"""
from ..errors import UnknownOpError
from ..ops.registry import get_op, list_ops
from . import namespace as _namespace

PREFIX = "_linalg_"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        get_op(PREFIX + name)
    except UnknownOpError:
        raise AttributeError(f"nbdl.nd.linalg has no attribute or operator {name!r} "
                             f"(no op {PREFIX + name!r})") from None
    fn = _namespace.function_for(PREFIX + name)
    globals()[name] = fn
    return fn


def __dir__():
    return sorted(set(globals()) | {n[len(PREFIX):] for n in list_ops() if n.startswith(PREFIX)})
