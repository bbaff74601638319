"""MXNet 1.x's operator introspection: ``get_all_registered_operators`` and
``get_operator_arguments`` over nbdl's op table."""
import collections

from ..ops.attrs import Attr
from ..ops.registry import aliases, get_op, list_ops

__all__ = ["get_all_registered_operators", "get_operator_arguments", "OperatorArguments"]


def get_all_registered_operators():
    """The names of every operator of the table (hidden ones and aliases
    included), as MXNet's does.

    Returns
    -------
    list of str
    """
    return sorted(set(list_ops(include_hidden=True)) | set(aliases()))


OperatorArguments = collections.namedtuple("OperatorArguments", ["narg", "names", "types"])

_KIND_TYPES = {"int": "int", "float": "float", "bool": "boolean", "str": "string",
               "tuple": "Shape(tuple)", "shape": "Shape(tuple)", "floats": "tuple of <float>"}


def get_operator_arguments(op_name):
    """An operator's arguments: its inputs (``'NDArray-or-Symbol'``) and
    attributes (MXNet's type strings: ``"{'relu', 'sigmoid'}, required"``,
    ``'int, optional, default=1'``).

    Parameters
    ----------
    op_name : str
        The operator's name.

    Returns
    -------
    OperatorArguments
        ``(narg, names, types)``.
    """
    op = get_op(op_name)
    names, types = [], []
    if not callable(op.input_names):
        for n in list(op.input_names) + list(op.aux_names if not callable(op.aux_names) else ()):
            names.append(n)
            types.append("NDArray-or-Symbol")
    for k, a in op.attrs.items():
        names.append(k)
        types.append(_attr_type(a))
    return OperatorArguments(len(names), names, types)


def _attr_type(a: Attr):
    base = ("{" + ", ".join(repr(c) for c in sorted(a.choices)) + "}" if a.choices
            else _KIND_TYPES[a.kind])
    if a.required:
        return f"{base}, required"
    default = a.default
    if isinstance(default, str) and a.choices:
        default = repr(default)
    return f"{base}, optional, default={default}"
