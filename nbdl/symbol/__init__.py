"""``nbdl.sym``: graph construction.  ``nbdl.sym.<op>`` comes from the op table
(``nbdl.sym.op.<op>`` and ``nbdl.sym._internal.<op>``, internal ops too, are
the same builders)."""
import sys
import types

from ..errors import UnknownOpError
from ..ops.registry import aliases, get_op, list_ops
from .symbol import Symbol  # noqa: F401
from .construct import Group, Variable, create, load, load_json, var  # noqa: F401
from . import contrib  # noqa: F401  (nbdl.sym.contrib.<op> is _contrib_<op>)
from . import random  # noqa: F401,A004  (nbdl.sym.random.uniform: _random_/_sample_ nodes)
from . import linalg  # noqa: F401  (nbdl.sym.linalg.<op> is _linalg_<op>)
from . import image  # noqa: F401  (nbdl.sym.image.<op> is _image_<op>)
from .ufuncs import hypot, maximum, minimum, pow, power  # noqa: F401,A004
from .legacy import histogram, split_v2  # noqa: F401

__all__ = ["Group", "Symbol", "Variable", "create", "load", "load_json", "var", "maximum",
           "minimum", "power", "pow", "hypot", "histogram", "split_v2"]


_built = {}


def _op_function(name, op):
    """The function building a node of ``op`` (named as called: an alias
    names its nodes, as in MXNet), made once and cached."""
    fn = _built.get(name)
    if fn is None:
        def fn(*args, name=None, attr=None, **kwargs):
            return create(op_name, *args, name=name, attr=attr, **kwargs)
        op_name = name
        fn.__name__ = name
        fn.__qualname__ = name
        fn.__doc__ = op.doc
        _built[name] = fn
    return fn


def _lookup(name, include_hidden):
    if name.startswith("__"):
        raise AttributeError(f"module 'nbdl.symbol' has no attribute {name!r}")
    try:
        op = get_op(name)
    except UnknownOpError:
        raise AttributeError(f"module 'nbdl.symbol' has no attribute {name!r} "
                             f"(and nbdl has no operator of that name)") from None
    if op.hidden and not include_hidden and not name.startswith("_"):
        raise AttributeError(f"module 'nbdl.symbol' has no attribute {name!r}")
    return _op_function(name, op)


def __getattr__(name):
    fn = _lookup(name, False)
    globals()[name] = fn
    return fn


def _make_namespace(modname, include_hidden):
    """``nbdl.sym.op`` / ``nbdl.sym._internal`` (MXNet 1.x's ``mx.sym.op`` and
    ``mx.sym._internal``, which Gluon 1.x code reaches as ``F._internal``):
    the op table's node builders, internal ops too in ``_internal``."""
    mod = types.ModuleType(modname, f"Operators of the op table as Symbol builders ({modname}).")
    mod.__getattr__ = lambda name: _lookup(name, include_hidden)
    mod.__dir__ = lambda: sorted(list_ops(include_hidden=include_hidden))
    sys.modules[modname] = mod
    return mod


op = _make_namespace(__name__ + ".op", False)
_internal = _make_namespace(__name__ + "._internal", True)


def __dir__():
    return sorted(set(globals()) | set(list_ops()) | set(aliases()))
