"""``nbdl.nd.<op>``: one eager function per op of the op table, made on
first use and cached (``nbdl.imperative.arguments``: MXNet's arguments, the
results of ops without array inputs NDArrays).  Ops whose output shape
depends on data values register their own function (``register_eager``).
"""
import sys
import types

from ..array import NDArray
from ..errors import UnknownOpError
from ..imperative import arguments as _arguments
from ..ops.registry import get_op, list_ops

_functions = {}


def register_eager(name, fn):
    """Make ``fn`` the eager function of op ``name`` (``nbdl.nd.<name>``),
    for ops whose output shape depends on data values.

    Parameters
    ----------
    name : str
        The op's name in the table.
    fn : callable
        The function ``nbdl.nd.<name>`` returns.
    """
    def eager(*args, **kwargs):
        return fn(*args, **kwargs)
    eager.__name__ = eager.__qualname__ = name
    eager.__doc__ = fn.__doc__
    eager.__module__ = fn.__module__
    _functions[name] = eager


def function_for(name):
    """The eager function for op ``name`` (a name or an alias)."""
    fn = _functions.get(name)
    if fn is None:
        fn = _arguments.function_for(name, NDArray)
    return fn


def lookup(name, include_hidden=False):
    """``function_for(name)`` or AttributeError, for module ``__getattr__``."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        op = get_op(name)
    except UnknownOpError:
        raise AttributeError(f"nbdl.ndarray has no attribute or operator {name!r}") from None
    if op.hidden and not include_hidden and not name.startswith("_"):
        raise AttributeError(f"operator {name!r} is internal")
    return function_for(name)


def make_module(modname, include_hidden):
    """A module whose attributes are the ops (``nbdl.nd.op``, ``nbdl.nd._internal``)."""
    mod = types.ModuleType(modname, f"Operators of the op table as eager functions ({modname}).")

    def __getattr__(name):
        fn = lookup(name, include_hidden)
        setattr(mod, name, fn)
        return fn

    def __dir__():
        return list_ops(include_hidden=include_hidden)

    mod.__getattr__ = __getattr__
    mod.__dir__ = __dir__
    sys.modules[modname] = mod
    return mod

