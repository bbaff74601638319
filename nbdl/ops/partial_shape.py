"""Partial shapes: shapes with unknown dims, as MXNet's shape inference has them.

MXNet 1.x reads a ``0`` dim of a shape given to ``infer_shape`` /
``infer_shape_partial``, of a variable's ``shape=`` attribute and of a fill
op's ``shape`` (``sym.zeros((0, H))``) as *unknown* outside NumPy-shape mode
(in NumPy-shape mode a ``-1`` is unknown and a ``0`` is a size).  Inside
nbdl's graph inference (``nbdl.graph.infer``) an unknown dim is ``-1``
(``UNKNOWN``) whatever the mode; the Symbol methods convert at the edges.

A shape rule written for partial shapes is marked with ``accepts_partial``:
the inference then hands it entries with unknown dims (and ``None`` for an
entry not known at all) and merges what it returns dim by dim (MXNet's
``shape_assign``: a known dim fills an unknown one, two known dims must be
equal).  Other rules see an entry that is not fully known as ``None``.  The
rules written for partial shapes are listed in docs/ops.md ("Partial
shapes")."""
import math

from ..errors import ShapeError

UNKNOWN = -1


def accepts_partial(rule):
    """Mark shape rule ``rule`` as taking partial shapes (see the module
    docstring) and return it.

    Parameters
    ----------
    rule : callable
        ``(attrs, in_shapes, out_shapes) -> (in_shapes, out_shapes)``.
    """
    rule.partial_shapes = True
    return rule


def is_full(shape):
    """Whether ``shape`` is known with every dim (not None, no ``UNKNOWN``).

    Parameters
    ----------
    shape : tuple of int or None
        A shape, ``-1`` for an unknown dim.
    """
    return shape is not None and all(d >= 0 for d in shape)


def compatible(a, b):
    """Whether two partial shapes can be one shape (same rank, known dims equal).

    Parameters
    ----------
    a, b : tuple of int
        The shapes, ``-1`` for an unknown dim.
    """
    return len(a) == len(b) and all(x < 0 or y < 0 or x == y for x, y in zip(a, b))


def merge(a, b, where="", name="an entry"):
    """Two partial shapes of one entry merged dim by dim (MXNet's
    ``shape_assign``); ``None`` is a shape not known at all.  Raises
    ``ShapeError`` when they disagree.

    Parameters
    ----------
    a, b : tuple of int or None
        The shapes; ``-1`` is an unknown dim.
    where : str
        The op (node) for the message.
    name : str
        The entry, for the message.
    """
    if a is None:
        return None if b is None else tuple(b)
    if b is None:
        return tuple(a)
    if not compatible(a, b):
        raise ShapeError(f"{where}: shape of {name} is inferred as {show(b)} but was "
                         f"already {show(a)}")
    return tuple(x if x >= 0 else y for x, y in zip(a, b))


def merge_all(shapes, where="", names=None):
    """One partial shape merged from all of ``shapes`` (None where none is known).

    Parameters
    ----------
    shapes : list of (tuple of int or None)
        The shapes of one entry.
    where : str
        The op, for the message.
    names : list of str, optional
        The entries' names, for the message.
    """
    out = None
    for i, s in enumerate(shapes):
        if s is not None:
            out = merge(out, s, where, names[i] if names else f"entry {i}")
    return out


def prod(dims):
    """The product of ``dims``, ``UNKNOWN`` when one of them is unknown.

    Parameters
    ----------
    dims : tuple of int
        Dims, ``-1`` for an unknown one.
    """
    dims = tuple(dims)
    return UNKNOWN if any(d < 0 for d in dims) else math.prod(dims)


def fill_one_unknown(shape, size):
    """``shape`` with its single unknown dim set so that it holds ``size``
    elements (MXNet's ``ReverseReshapeInferShape``); unchanged when it has
    none, more than one, or the known dims do not divide ``size``.

    Parameters
    ----------
    shape : tuple of int
        A partial shape.
    size : int
        The number of elements it must hold.
    """
    unknown = [i for i, d in enumerate(shape) if d < 0]
    if len(unknown) != 1 or size < 0:
        return tuple(shape)
    rest = math.prod(d for d in shape if d >= 0)
    if rest == 0 or size % rest:
        return tuple(shape)
    out = list(shape)
    out[unknown[0]] = size // rest
    return tuple(out)


def show(shape):
    """``shape`` for a message, unknown dims as ``?`` (``(?, 3)``).

    Parameters
    ----------
    shape : tuple of int or None
        A partial shape (None: ``?``).
    """
    if shape is None:
        return "?"
    dims = ", ".join("?" if d < 0 else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"
