"""``nbdl.sym``: graph construction.  ``nbdl.sym.<op>`` comes from the op table."""
from .symbol import Group, Symbol, Variable, create, load, load_json, var  # noqa: F401


def __getattr__(name):
    from ..errors import UnknownOpError
    from ..ops.registry import get_op
    try:
        op = get_op(name)
    except UnknownOpError:
        raise AttributeError(f"module 'nbdl.symbol' has no attribute {name!r}") from None
    if op.hidden and not name.startswith("_"):
        raise AttributeError(name)

    def fn(*args, name=None, attr=None, **kwargs):
        return create(op.name, *args, name=name, attr=attr, **kwargs)
    fn.__name__ = name
    fn.__doc__ = op.doc
    globals()[name] = fn
    return fn
