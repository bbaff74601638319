"""Hashable, exact keys for a node's parsed attributes, so that passes over
big graphs can remember a rule's answer (or a kernel's ``prepare``) per
signature: in a large graph most nodes repeat a few (op, attributes, shapes,
dtypes) combinations."""
import numpy as np

from ..ops.ir import _UNSET

_PLAIN = (int, str, bool, type(None))
_MEMO_LIMIT = 4096


def _seq_key(v):
    out = []
    for x in v:
        t = type(x)
        if t is float:
            out.append((t, x.hex()))
        elif t in _PLAIN:
            out.append((t, x))
        elif t is tuple or t is list:
            sub = _seq_key(x)
            if sub is None:
                return None
            out.append((t, sub))
        else:
            return None
    return tuple(out)


def attr_key(attrs):
    """A hashable key equal for two attribute dicts exactly when they hold the
    same values of the same types in the same order (``float.hex`` keeps
    ``-0.0`` apart from ``0.0``, the type ``1`` apart from ``1.0``); None when
    a value has no exact key (then callers do not memoize).

    Parameters
    ----------
    attrs : dict
        A node's parsed attributes (``Node.attrs``).
    """
    if not attrs:
        return ()
    items = []
    for k, v in attrs.items():
        t = type(v)
        if t is float:
            items.append((k, t, v.hex()))
        elif t in _PLAIN:
            items.append((k, t, v))
        elif t is tuple or t is list:
            sub = _seq_key(v)
            if sub is None:
                return None
            items.append((k, t, sub))
        elif t is np.dtype or isinstance(v, np.dtype):
            items.append((k, np.dtype, v.str, v.name))
        else:
            return None
    return tuple(items)


_NUMBERS = (int, float, type(None), np.integer)


def raw_attr_key(raw):
    """``attr_key`` for raw attribute values, as a call passes them (strings
    or Python and numpy values): the key of the eager caches and of
    autograd's gradient recipes.  Tuples and lists of numbers are keyed by
    ``repr``, other numpy scalars by type and ``repr``; None when a value
    cannot be represented, which turns caching off for that call.  The key
    follows the dict's order: the same attributes given in another order
    make another (equally valid) key.

    Parameters
    ----------
    raw : dict or None
        The raw attributes.
    """
    if not raw:
        return ()
    items = []
    for k, v in raw.items():
        t = type(v)
        if t is float:
            items.append((k, t, v.hex()))
        elif t in _PLAIN:
            items.append((k, t, v))
        elif t is tuple or t is list:
            if not all(isinstance(x, _NUMBERS) for x in v):
                return None
            items.append((k, t, repr(tuple(v))))
        elif isinstance(v, (str, int, float, bool, np.number, np.bool_)):
            items.append((k, t, repr(v)))
        else:
            return None
    return tuple(items)


def node_attr_key(node):
    """``attr_key(node.attrs)``, computed once per node (a node's attributes
    do not change after it is made; bind's passes ask for it several times
    a node).

    Parameters
    ----------
    node : nbdl.ops.ir.Node
        An op node.
    """
    key = node._akey
    if key is _UNSET:
        key = node._akey = attr_key(node.attrs)
    return key


def bounded_put(memo, key, value):
    """``memo[key] = value``, emptying ``memo`` first once it holds
    ``_MEMO_LIMIT`` entries (the memos are caches, never needed for
    correctness).

    Parameters
    ----------
    memo : dict
        The cache.
    key : hashable
        Its key.
    value : object
        What to remember.
    """
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = value
