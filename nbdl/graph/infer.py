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


def _run(order, table, rule_attr, what, err, partial):
    """Sweep the op nodes alternately forward and backward until a sweep learns
    nothing.  A node whose rule ran with its inputs and outputs all known is
    finished for good (entries are never forgotten), so each sweep visits
    only the nodes the previous one left unfinished, and a graph that one
    forward sweep settles costs one visit a node: linear in its size.  A rule's answer is
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
            # a node whose entries its neighbours all set still runs its rule
            # once: that is what checks them against each other
            attrs = node.attrs
            akey = node_attr_key(node)
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


def infer_shapes(order, known, partial=True):
    """``known``: {Entry: shape}.  Returns {Entry: shape} for every entry that
    could be inferred.  Raises ``ShapeError`` on conflicts; the caller decides
    what incomplete inference means."""
    table = {}
    for node in order:
        if node.op is None and "__shape__" in node.user_attrs:
            shp = _parse_tuple(node.user_attrs["__shape__"])
            if shp and all(d is not None and d > 0 for d in shp):
                table[node.output(0)] = shp
    # A shape given for a variable replaces the one it was declared with
    # (``var('a', shape=...)``), as in MXNet's infer_shape and simple_bind.
    for e, s in known.items():
        if s is not None:
            table[e] = tuple(int(d) for d in s)
    fills = [] if is_np_shape() else _partial_fills(order)
    if fills:
        table = _resolve_partial_fills(order, table, fills)
    return _run(order, table, "infer_shape", "shape", ShapeError, partial)


def _partial_fills(order):
    """The nodes without inputs whose ``shape`` attribute holds a ``0``
    (``_zeros``, ``_ones``, ``_full``, the samplers): outside NumPy-shape
    mode MXNet 1.x reads those dims as unknown, to be found from the
    consumers (``mx.rnn``'s ``begin_state`` makes ``zeros(shape=(0, H))``)."""
    return [n for n in order if n.op is not None and not n.inputs and "shape" in n.op.attrs
            and 0 in tuple(n.attrs.get("shape") or ())]


# probe sizes standing in for a partial fill's unknown dims: far from the
# sizes a graph computes
_FILL_PROBE = 1_000_003


def _resolve_partial_fills(order, table, fills):
    """Shapes for the outputs of ``fills`` (see ``_partial_fills``) found from
    the rest of the graph.

    The graph without the fills is inferred from what is known; a fill whose
    consumer then knows its output (an elementwise op) is settled. For one
    that is not, the same graph is inferred from that fill alone, its
    unknown dims set to probe sizes; an entry both inferences reach tells
    the size each probe stands for (an LSTM's ``h2h`` FullyConnected output
    (probe, 4H) meets the ``i2h`` output (batch, 4H) at their sum). This is
    repeated while it settles fills; what stays unknown is left to the
    fills' own rules (the zeros read as sizes)."""
    fill_set = set(fills)
    rest = [n for n in order if n not in fill_set]
    while True:
        table = _run(rest, table, "infer_shape", "shape", ShapeError, True)
        for node in fills:
            if table.get(node.output(0)) is None:
                shape = _probe_fill(rest, table, node)
                if shape is not None:
                    table[node.output(0)] = shape
                    break
        else:
            return table    # the fills' rules then check what was found


def _probe_fill(rest, table, node):
    """The shape of partial fill ``node``'s output that the graph implies, or None."""
    shape = tuple(int(d) for d in node.attrs["shape"])
    probed = tuple(_FILL_PROBE + k if d == 0 else d for k, d in enumerate(shape))
    try:
        ptable = _run(rest, {node.output(0): probed}, "infer_shape", "shape", ShapeError, True)
    except ShapeError:
        return None
    probes = {p for p, d in zip(probed, shape) if d == 0}
    found = {}
    for e, pshape in ptable.items():
        real = table.get(e)
        if real is not None and len(real) == len(pshape):
            for a, b in zip(pshape, real):
                if a in probes:
                    found.setdefault(a, b)
    if not probes <= set(found):
        return None
    return tuple(found.get(d, d) for d in probed)


# two sizes standing in for the unknown dims of partial shapes (see
# ``infer_shapes_unknown_zero``): primes, unlikely to arise from known dims
_PROBES = (7919, 7927)


def _declared_partial(order):
    """{Entry: shape} of the variables declared with a shape holding a 0."""
    out = {}
    for node in order:
        if node.op is None and "__shape__" in node.user_attrs:
            shp = _parse_tuple(node.user_attrs["__shape__"])
            if shp and any(d == 0 for d in shp) and all(d is not None for d in shp):
                out[node.output(0)] = tuple(int(d) for d in shp)
    return out


def infer_shapes_unknown_zero(order, known):
    """Partial inference reading a ``0`` dim as unknown (MXNet 1.x's legacy
    shapes): ``known`` and the variables' declared shapes may hold zeros.

    The inference runs twice, the unknown dims set to one and then another
    probe size; a dim that comes out the same both times is known, one that
    differs depends on an unknown dim and is reported as ``0``.  When an op
    rule rejects the probe sizes (dims it requires to match, or divide), the
    partial shapes are left out instead: the entries that only they would
    have given stay unknown, and the partial shapes given are reported for
    their own variables.

    Parameters
    ----------
    order : list of Node
        The graph in topological order.
    known : dict
        {Entry: shape} given by the caller; a ``0`` dim is unknown.

    Returns
    -------
    dict
        {Entry: shape}, with ``0`` for the dims that stay unknown.
    """
    partial = {e: s for e, s in _declared_partial(order).items() if e not in known}
    full = {}
    for e, s in known.items():
        if s is None:
            continue
        s = tuple(int(d) for d in s)
        (partial if 0 in s else full)[e] = s
    if not partial:
        return infer_shapes(order, full)
    tables = []
    try:
        for p in _PROBES:
            probe = dict(full)
            probe.update({e: tuple(p if d == 0 else d for d in s) for e, s in partial.items()})
            tables.append(infer_shapes(order, probe))
    except ShapeError:
        table = infer_shapes(order, full)
        for e, s in partial.items():
            table.setdefault(e, s)
        return table
    first, second = tables
    out = {}
    for e, a in first.items():
        b = second.get(e)
        if b is not None and len(a) == len(b):
            out[e] = tuple(x if x == y else 0 for x, y in zip(a, b))
    return out


def infer_types(order, known):
    table = {}
    for node in order:
        if node.op is None and "__dtype__" in node.user_attrs:
            table[node.output(0)] = from_flag(node.user_attrs["__dtype__"])
    for e, t in known.items():
        if t is not None:
            table[e] = np.dtype(t)
    return _run(order, table, "infer_type", "dtype", DTypeError, True)


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
            return outs
    if what == "dtype":  # an op without inputs that says nothing: MXNet's default
        return [np.dtype(np.float32) if v is None else v for v in outs]
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
