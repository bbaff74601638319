"""The functions of the modules of prefixed op spellings (``nbdl.sym.linalg``,
``nbdl.sym.image``, ``nbdl.sym.contrib``, ``nbdl.sym.random``), made by
``ops.registry.op_namespace``: in ``linalg`` and ``image`` attribute ``X``
builds a node of op ``<prefix>X`` named after ``X`` as MXNet names them
(``sym.linalg.gemm2(a, b)`` is a ``_linalg_gemm2`` node ``gemm20``); in
``contrib`` and ``random`` it is ``nbdl.sym.<prefix>X``, named after the op."""
import sys

from ..name import NameManager, current
from ..ops.registry import get_op
from .construct import create


def short_named(prefix):
    """``make(op_name)`` for ``op_namespace``: the function building a node of
    op ``op_name``, named after the op's name without ``prefix``.

    Parameters
    ----------
    prefix : str
        The ops' name prefix (``"_linalg_"``).
    """
    def make(op_name):
        op = get_op(op_name)
        short = op_name[len(prefix):]

        def fn(*args, name=None, attr=None, **kwargs):
            if not name:   # counted under the short hint; create() adds any Prefix once
                name = NameManager.get(current(), None, short)
            return create(op.name, *args, name=name, attr=attr, **kwargs)
        fn.__name__ = fn.__qualname__ = short
        fn.__doc__ = op.doc
        return fn
    return make


def package_function(op_name):
    """``nbdl.sym.<op_name>`` (its nodes are named after the op, as MXNet
    names ``sym.contrib`` and ``sym.random`` nodes).

    Parameters
    ----------
    op_name : str
        The op's name.
    """
    return getattr(sys.modules[__name__.rpartition(".")[0]], op_name)
