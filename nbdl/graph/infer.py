"""Shape and dtype inference: over a graph, each op's rule run forward and
backward to a fixed point, so weights get their shapes from data and labels
from outputs (two-way, partial); for one call on known inputs (an eager
call), ``infer_call``.  Both remember a rule's answer per (rule, attributes,
known values) in one memo."""
from itertools import chain, repeat
from operator import is_not

import numpy as np

from .._docs import shared_doc
from ..dtype import from_flag
from ..errors import DTypeError, ShapeError
from ..ops.attrs import _parse_tuple
from ..ops.partial_shape import UNKNOWN, is_full, merge, show
from ..ops.registry import OP_AND_ATTRS, shapes_str
from ..util import is_np_shape
from .signature import attr_key, bounded_put, node_attr_key


def _where(node):
    return f"{node.op.name} (node {node.name!r})"


def _merge(table, entry, new, node, what, err):
    if new is None:
        return False
    old = table.get(entry)
    if old is None:
        table[entry] = new
        return True
    if old != new:
        raise err(f"{_where(node)}: {what} of {entry.name!r} is inferred as "
                  f"{_fmt(new)} but was already {_fmt(old)}")
    return False


def _fmt(v):
    if isinstance(v, tuple):
        return str(v)
    return str(np.dtype(v)) if v is not None else "?"


def _known(values):
    # ``is None``, not ``None in``: numpy compares np.dtype('float64') == None as True.
    return all(map(is_not, values, _NONES))


# (what, rule, attribute key, input values, output values) -> the rule's
# answer; rules are pure functions of their arguments (docs/ops.md), and a
# big graph repeats a few signatures over and over.
_MEMO = {}
_SEQ = (list, tuple)
_NONES = repeat(None)


def _run(order, table, rule_attr, what, err, partial_dims=False, attrs_of=None):
    """Sweep the op nodes alternately forward and backward until a sweep learns
    nothing.  A node whose rule ran with its inputs and outputs all known is
    finished for good (entries are never forgotten), so each sweep visits
    only the nodes the previous one left unfinished, and a graph that one
    forward sweep settles costs one visit a node: linear in its size.  A rule's answer is
    remembered per (rule, attributes, known values): repeating nodes cost a
    dictionary lookup.

    ``partial_dims``: the table may hold partial shapes (``-1`` dims, see
    ``nbdl.ops.partial_shape``): a rule marked ``accepts_partial`` sees them,
    another sees ``None`` for them, and an answer is merged dim by dim into
    what the table holds.  ``attrs_of``: {node: attrs} replacing some nodes'
    attributes for their rules (a fill's ``shape`` with unknown dims)."""
    pending = [(n, n.inputs, n.outputs(), getattr(n.op, rule_attr)) for n in order
               if n.op is not None]
    get = table.get
    memo = _MEMO.setdefault(what, {})
    nones = _NONES
    forward = True
    while pending:
        changed = False
        still = []
        for item in (pending if forward else reversed(pending)):
            node, in_es, out_es, rule = item
            ins = list(map(get, in_es))
            outs = list(map(get, out_es))
            attrs = node.attrs
            akey = node_attr_key(node)
            if partial_dims:
                if attrs_of and node in attrs_of:
                    attrs = attrs_of[node]
                    akey = attr_key(attrs)
                if not getattr(rule, "partial_shapes", False):
                    ins = [v if v is None or is_full(v) else None for v in ins]
                    outs = [v if v is None or is_full(v) else None for v in outs]
            # a node whose entries its neighbours all set still runs its rule
            # once: that is what checks them against each other
            if akey is None:
                key = res = None
            else:
                key = (rule, akey, tuple(ins), tuple(outs))
                res = memo.get(key)
            if res is None:
                try:
                    res = rule(attrs, ins, outs)
                except err as e:
                    raise err(f"node {node.name!r}: {e}" if node.name not in str(e) else str(e)) from None
                if key is not None and type(res[0]) in _SEQ and type(res[1]) in _SEQ:
                    bounded_put(memo, key, res)
            new_in, new_out = res
            if partial_dims:
                changed = _merge_partial(table, node, in_es, new_in, out_es, new_out) or changed
                if not all(map(is_full, map(get, in_es))) or not all(map(is_full, map(get, out_es))):
                    still.append(item)
                continue
            # ``o``: the entry's value before this visit; an entry listed
            # twice may have been set by its first listing meanwhile.
            done = len(new_in) >= len(ins) and len(new_out) >= len(outs)
            for e, v, o in chain(zip(in_es, new_in, ins), zip(out_es, new_out, outs)):
                if v is None:
                    if o is None:
                        done = False
                elif o is None:
                    old = get(e)
                    if old is None:
                        table[e] = v
                        changed = True
                    elif old != v:
                        _merge(table, e, v, node, what, err)
                elif o != v:
                    _merge(table, e, v, node, what, err)
            if not done and not (all(map(is_not, map(get, in_es), nones))
                                 and all(map(is_not, map(get, out_es), nones))):
                still.append(item)
        if not forward:
            still.reverse()
        # A sweep that learnt nothing visited every unfinished node with the
        # final table: a fixed point.
        if not changed:
            break
        pending = still
        forward = not forward
    return table


def _merge_partial(table, node, in_es, new_in, out_es, new_out):
    """A rule's answer merged dim by dim into ``table``; whether it changed."""
    changed = False
    for e, v in list(zip(in_es, new_in)) + list(zip(out_es, new_out)):
        if v is None:
            continue
        v = tuple(v)
        old = table.get(e)
        m = merge(old, v, _where(node), repr(e.name))
        if m != old:
            table[e] = m
            changed = True
    return changed


def _declared(node, legacy):
    """A variable's declared ``shape=`` as a partial shape (None when it has
    none): outside NumPy-shape mode (``legacy``) a 0 dim is unknown, inside
    it a -1 is, as in MXNet."""
    if "__shape__" not in node.user_attrs:
        return None
    shp = _parse_tuple(node.user_attrs["__shape__"])
    if not shp or any(d is None for d in shp):
        return None
    return tuple(UNKNOWN if (d == 0 and legacy) or d < 0 else int(d) for d in shp)


def _fill_attrs(order, legacy):
    """{node: attrs} for the ops whose ``legacy_unknown_dims`` attribute holds
    an unknown dim (``_zeros(shape=(0, H))`` outside NumPy-shape mode, ``-1``
    inside it): that attribute with ``-1`` for those dims."""
    out = {}
    for n in order:
        name = n.op is not None and n.op.legacy_unknown_dims
        if not name:
            continue
        shape = n.attrs.get(name)
        if shape and any(d is not None and (d < 0 or (d == 0 and legacy)) for d in shape):
            out[n] = dict(n.attrs, **{name: tuple(
                UNKNOWN if d is not None and (d < 0 or (d == 0 and legacy)) else d
                for d in shape)})
    return out


def infer_shapes(order, known, legacy=None, keep_partial=False):
    """``known``: {Entry: shape}, a ``-1`` dim unknown.  Returns {Entry: shape}
    for every entry that could be inferred.  Raises ``ShapeError`` on
    conflicts; the caller decides what incomplete inference means.

    Parameters
    ----------
    order : list of Node
        The graph in topological order.
    known : dict
        {Entry: shape} given by the caller; replaces a variable's declared shape.
    legacy : bool, optional
        Read 0 dims of the variables' declared shapes and of the fills'
        ``shape`` as unknown (MXNet 1.x outside NumPy-shape mode); default
        ``not is_np_shape()``.  A ``-1`` there is unknown in both modes.
    keep_partial : bool
        Keep the entries known only in part (with ``-1`` dims) in the result;
        by default they are left out (unknown).
    """
    if legacy is None:
        legacy = not is_np_shape()
    table = {}
    for node in order:
        if node.op is None:
            shp = _declared(node, legacy)
            if shp:
                table[node.output(0)] = shp
    # A shape given for a variable replaces the one it was declared with
    # (``var('a', shape=...)``), as in MXNet's infer_shape and simple_bind.
    for e, s in known.items():
        if s is not None:
            table[e] = tuple(int(d) for d in s)
    fills = _fill_attrs(order, legacy)
    partial_dims = bool(fills) or any(min(s, default=0) < 0 for s in table.values())
    table = _run(order, table, "infer_shape", "shape", ShapeError, partial_dims, fills)
    if partial_dims and not keep_partial:
        table = {e: s for e, s in table.items() if is_full(s)}
    return table


def infer_types(order, known):
    table = {}
    for node in order:
        if node.op is None and "__dtype__" in node.user_attrs:
            table[node.output(0)] = from_flag(node.user_attrs["__dtype__"])
    for e, t in known.items():
        if t is not None:
            table[e] = np.dtype(t)
    return _run(order, table, "infer_type", "dtype", DTypeError)


@shared_doc(op_and_attrs=OP_AND_ATTRS)
def infer_call(op, attrs, given, n_out, names, what):
    """The output shapes (``what="shape"``) or dtypes (``"dtype"``) of one
    call of ``op`` on inputs whose values are all known (an eager call):
    the op's rule run to a fixed point, checked to agree with the inputs
    and to determine every output.

    Parameters
    ----------
    {op_and_attrs}
    given : list
        The inputs' shapes (tuples) or dtypes.
    n_out : int
        The number of outputs.
    names : list of str
        The inputs' names, for messages.
    what : str
        ``"shape"`` or ``"dtype"``.

    Returns
    -------
    list
        One shape (tuple of int) or ``np.dtype`` per output.
    """
    rule = op.infer_shape if what == "shape" else op.infer_type
    err = ShapeError if what == "shape" else DTypeError
    outs = [None] * n_out
    if rule is None:
        if what == "shape" or not given:
            raise err(f"{op.name}: the op has no {what} rule")
        return [np.dtype(given[0])] * n_out
    memo = _MEMO.setdefault(what, {})
    akey = attr_key(attrs)
    ins = list(given)
    for _ in range(3):  # a two-way rule may need a second look at its own results
        key = None if akey is None else (rule, akey, tuple(ins), tuple(outs))
        try:
            res = None if key is None else memo.get(key)
        except TypeError:           # a value that is a list: no exact key
            key = res = None
        if res is None:
            res = rule(attrs, list(ins), list(outs))
            if key is not None and type(res[0]) in _SEQ and type(res[1]) in _SEQ:
                bounded_put(memo, key, res)
        new_in, new_out = res
        for name, g, v in zip(names, given, new_in):
            if v is not None and _norm(v, what) != _norm(g, what):
                raise err(f"{op.name}: input {name!r} has {what} {_one(g, what)} but the op "
                          f"expects {_one(v, what)}; input {what}s {_list(given, what)}")
        outs = [None if v is None else _norm(v, what) for v in new_out]
        if all(v is not None for v in outs):
            if what == "shape" and not all(map(is_full, outs)):
                break
            return outs
    if what == "dtype":  # an op without inputs that says nothing: MXNet's default
        return [np.dtype(np.float32) if v is None else v for v in outs]
    if any(v is not None and not is_full(v) for v in outs):
        raise ShapeError(f"{op.name}: output shapes {', '.join(map(show, outs))} have unknown "
                         f"(-1) dims; an array needs every dim known")
    raise ShapeError(f"{op.name}: output shapes could not be inferred from input shapes "
                     f"{shapes_str(given)}")


def _norm(v, what):
    return tuple(int(d) for d in v) if what == "shape" else np.dtype(v)


def _one(v, what):
    return str(tuple(v)) if what == "shape" else str(np.dtype(v))


def _list(vals, what):
    if what == "shape":
        return shapes_str(vals)
    return "[" + ", ".join(str(np.dtype(t)) for t in vals) + "]"


def describe_missing(order, table, arg_nodes):
    missing = [n.name for n in arg_nodes if table.get(n.output(0)) is None]
    return missing
