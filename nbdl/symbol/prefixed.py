"""Modules of prefixed op spellings (``nbdl.sym.linalg``, ``nbdl.sym.image``):
attribute ``X`` builds a node of op ``<prefix>X``, named after ``X`` as MXNet
names them (``sym.linalg.gemm2(a, b)`` is a ``_linalg_gemm2`` node ``gemm20``)."""
from ..errors import UnknownOpError
from ..name import NameManager, current
from ..ops.registry import get_op, list_ops
from .construct import create


def prefixed_namespace(prefix, where, module_globals):
    """``(__getattr__, __dir__)`` of such a module.

    Parameters
    ----------
    prefix : str
        The ops' name prefix (``"_linalg_"``).
    where : str
        The module's public name, for error messages.
    module_globals : dict
        The module's globals, where each function is cached once made.
    """
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            op = get_op(prefix + name)
        except UnknownOpError:
            raise AttributeError(f"{where} has no attribute or operator {name!r} "
                                 f"(no op {prefix + name!r})") from None

        def fn(*args, name=None, attr=None, **kwargs):
            if not name:   # counted under the short hint; create() adds any Prefix once
                name = NameManager.get(current(), None, short)
            return create(op.name, *args, name=name, attr=attr, **kwargs)
        short = name
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = op.doc
        module_globals[name] = fn
        return fn

    def __dir__():
        return sorted(set(module_globals)
                      | {n[len(prefix):] for n in list_ops() if n.startswith(prefix)})
    return __getattr__, __dir__
