"""Modules of prefixed op spellings (``nbdl.sym.linalg``, ``nbdl.sym.image``):
attribute ``X`` builds a node of op ``<prefix>X``, named after ``X`` as MXNet
names them (``sym.linalg.gemm2(a, b)`` is a ``_linalg_gemm2`` node ``gemm20``)."""
import sys

from ..name import NameManager, current
from ..ops.registry import get_op, op_namespace
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
    def make(op_name, short):
        op = get_op(op_name)

        def fn(*args, name=None, attr=None, **kwargs):
            if not name:   # counted under the short hint; create() adds any Prefix once
                name = NameManager.get(current(), None, short)
            return create(op.name, *args, name=name, attr=attr, **kwargs)
        fn.__name__ = fn.__qualname__ = short
        fn.__doc__ = op.doc
        return fn
    return op_namespace(prefix, where, make, module_globals)


def package_function(op_name, _attr_name=None):
    """``nbdl.sym.<op_name>`` (the node is named after the op, as MXNet names
    ``sym.contrib`` and ``sym.random`` nodes).

    Parameters
    ----------
    op_name : str
        The op's name.
    _attr_name : str, optional
        The short name it is looked up under (unused: ``op_namespace``'s ``make``).
    """
    return getattr(sys.modules[__name__.rpartition(".")[0]], op_name)
