"""``nbdl.sym``: graph construction.  ``nbdl.sym.<op>`` comes from the op table."""
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


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module 'nbdl.symbol' has no attribute {name!r}")
    try:
        op = get_op(name)
    except UnknownOpError:
        raise AttributeError(f"module 'nbdl.symbol' has no attribute {name!r} "
                             f"(and nbdl has no operator of that name)") from None
    if op.hidden and not name.startswith("_"):
        raise AttributeError(f"module 'nbdl.symbol' has no attribute {name!r}")

    def fn(*args, name=None, attr=None, **kwargs):
        return create(op_name, *args, name=name, attr=attr, **kwargs)
    op_name = name          # the name called (an alias names its nodes, as in MXNet)
    fn.__name__ = name
    fn.__qualname__ = name
    fn.__doc__ = op.doc
    globals()[name] = fn
    return fn


def __dir__():
    return sorted(set(globals()) | set(list_ops()) | set(aliases()))
