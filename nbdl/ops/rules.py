"""Rules shared by op families: the common type rule, the element count of
a shape, the argument-shape check and the input-names rule that validates
attributes (``OpDef`` fields and the helpers their rules call)."""
from .registry import shape_error


def check_arg_shape(where, name, got, want, in_shapes, note=""):
    """Raise the ShapeError of argument ``name`` when its shape ``got`` is
    known and is not ``want``.

    Parameters
    ----------
    where : str
        The op's name (the message's first word).
    name : str
        The argument's name.
    got : tuple or None
        Its shape (None: unknown, accepted).
    want : tuple
        The shape it must have.
    in_shapes : list
        The op's input shapes, quoted in the message.
    note : str, optional
        Appended to the expected shape (an explanation).
    """
    if got is not None and tuple(got) != tuple(want):
        raise shape_error(where, f"argument {name!r} has shape {tuple(got)}, expected "
                          f"{tuple(want)}{note}", in_shapes)


def output_shape(where, outs, shape, in_shapes):
    """``shape`` as the op's only output shape, after checking a known
    ``outs[0]`` against it: the rule's ``out_shapes`` answer.

    Parameters
    ----------
    where : str
        The op's name.
    outs : list
        The output shapes the rule was given.
    shape : tuple
        The output's shape.
    in_shapes : list
        The op's input shapes, quoted in the message.
    """
    if outs[0] is not None and tuple(outs[0]) != shape:
        raise shape_error(where, f"output has shape {tuple(outs[0])}, expected {shape}", in_shapes)
    return [shape]


def size_of(shape):
    """The number of elements of ``shape`` (1 for ``()``)."""
    n = 1
    for d in shape:
        n *= int(d)
    return n


def checked_inputs(check, opname, names):
    """``OpDef.input_names`` that first runs ``check(opname, attrs)``: the
    first rule run on parsed attributes, so bad values fail at graph build.

    Parameters
    ----------
    check : callable
        The family's attribute check, ``check(opname, attrs)``.
    opname : str
        The op's name.
    names : sequence of str
        The input names.
    """
    def input_names(attrs):
        check(opname, attrs)
        return list(names)
    return input_names


def same_type(attrs, in_types, out_types):
    """Every input and output has one dtype (two-way, partial)."""
    known = next((t for t in list(in_types) + list(out_types) if t is not None), None)
    return [known] * len(in_types), [known] * len(out_types)


def data_type(attrs, in_types, out_types):
    """The output has input 0's (the data's) dtype; inputs of unknown dtype
    (an index, a shape-like) take it too."""
    d = in_types[0] if in_types[0] is not None else out_types[0]
    if d is None:
        return in_types, out_types
    return [d] + [t if t is not None else d for t in in_types[1:]], [d]


def data_axis(opname, axis, shape, in_shapes, of="data"):
    """``axis`` of an input of ``shape`` counted from 0 (a negative one from
    the end); out of range raises the op's ShapeError.

    Parameters
    ----------
    opname : str
        The op's name.
    axis : int
        The axis attribute.
    shape : tuple
        The input's shape.
    in_shapes : list
        The op's input shapes, quoted in the message.
    of : str, default 'data'
        The input, as the message names it.
    """
    nd = len(shape)
    if not -nd <= axis < nd:
        raise shape_error(opname, f"axis={axis} is out of range for {of} of {nd} "
                          f"dimension(s) {tuple(shape)}", in_shapes)
    return axis + nd if axis < 0 else axis


def known_shape(*shapes):
    """The first known of ``shapes`` (an input's shape, then the shapes that
    must equal it, such as output 0's), as a tuple; None while all are unknown.

    Parameters
    ----------
    *shapes : tuple, list or None
        The candidates, in order of preference.
    """
    for s in shapes:
        if s is not None:
            return tuple(s)
    return None
