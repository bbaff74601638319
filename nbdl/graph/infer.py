"""Shape and dtype inference over a graph: each op's rule, run forward and
backward to a fixed point, so weights get their shapes from data and labels
from outputs (two-way, partial)."""
from itertools import repeat
from operator import is_not

import numpy as np

from ..errors import DTypeError, ShapeError
from .signature import attr_key, bounded_put


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


def _run(order, table, rule_attr, what, err, partial):
    """Sweep the op nodes alternately forward and backward until a sweep learns
    nothing.  A node whose inputs and outputs are all known is finished for
    good (entries are never forgotten), so each sweep visits only the nodes
    the previous one left unfinished, and a graph that one forward sweep
    settles costs one visit a node: linear in its size.  A rule's answer is
    remembered per (rule, attributes, known values): repeating nodes cost a
    dictionary lookup."""
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
            if all(map(is_not, outs, nones)) and all(map(is_not, ins, nones)):
                continue
            attrs = node.attrs
            akey = attr_key(attrs)
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
            # ``o``: the entry's value before this visit; an entry listed
            # twice may have been set by its first listing meanwhile.
            done = len(new_in) >= len(ins) and len(new_out) >= len(outs)
            for e, v, o in zip(in_es, new_in, ins):
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
            for e, v, o in zip(out_es, new_out, outs):
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


def infer_shapes(order, known, partial=True):
    """``known``: {Entry: shape}.  Returns {Entry: shape} for every entry that
    could be inferred.  Raises ``ShapeError`` on conflicts; the caller decides
    what incomplete inference means."""
    table = {}
    for node in order:
        if node.op is None and "__shape__" in node.user_attrs:
            from ..ops.attrs import _parse_tuple
            shp = _parse_tuple(node.user_attrs["__shape__"])
            if shp and all(d is not None and d > 0 for d in shp):
                table[node.output(0)] = shp
    # A shape given for a variable replaces the one it was declared with
    # (``var('a', shape=...)``), as in MXNet's infer_shape and simple_bind.
    for e, s in known.items():
        if s is not None:
            table[e] = tuple(int(d) for d in s)
    return _run(order, table, "infer_shape", "shape", ShapeError, partial)


def infer_types(order, known):
    table = {}
    for node in order:
        if node.op is None and "__dtype__" in node.user_attrs:
            from ..dtype import from_flag
            table[node.output(0)] = from_flag(node.user_attrs["__dtype__"])
    for e, t in known.items():
        if t is not None:
            table[e] = np.dtype(t)
    return _run(order, table, "infer_type", "dtype", DTypeError, True)


def describe_missing(order, table, arg_nodes):
    missing = [n.name for n in arg_nodes if table.get(n.output(0)) is None]
    return missing
