"""``nbdl.sym.linalg``: MXNet's ``mx.sym.linalg`` spellings; ``linalg.X``
builds a node of the op ``_linalg_X`` named, as in MXNet, after ``X``
(``sym.linalg.gemm2(a, b)`` is a ``_linalg_gemm2`` node ``gemm20``)."""
from ..errors import UnknownOpError
from ..name import NameManager, current
from ..ops.registry import get_op, list_ops
from .construct import create

PREFIX = "_linalg_"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        get_op(PREFIX + name)
    except UnknownOpError:
        raise AttributeError(f"nbdl.sym.linalg has no attribute or operator {name!r} "
                             f"(no op {PREFIX + name!r})") from None
    op = get_op(PREFIX + name)

    def fn(*args, name=None, attr=None, **kwargs):
        if not name:   # counted under the short hint; create() adds any Prefix once
            name = NameManager.get(current(), None, short)
        return create(op.name, *args, name=name, attr=attr, **kwargs)
    short = name
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = op.doc
    globals()[name] = fn
    return fn


def __dir__():
    return sorted(set(globals()) | {n[len(PREFIX):] for n in list_ops() if n.startswith(PREFIX)})
