"""Hashable, exact keys for a node's parsed attributes, so that passes over
big graphs can remember a rule's answer (or a kernel's ``prepare``) per
signature: in a large graph most nodes repeat a few (op, attributes, shapes,
dtypes) combinations."""
import threading
from contextlib import contextmanager

import numpy as np

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


_local = threading.local()


@contextmanager
def remembering():
    """Within this block ``node_attr_key`` computes each attribute dict's key
    once (a bind asks for it in every inference sweep and again when
    scheduling); the keys are forgotten on leaving the outermost block."""
    outer = getattr(_local, "keys", None)
    if outer is None:
        _local.keys = {}
    try:
        yield
    finally:
        if outer is None:
            _local.keys = None


def node_attr_key(attrs):
    """``attr_key(attrs)``, remembered per dict inside ``remembering()``.

    Parameters
    ----------
    attrs : dict
        A node's parsed attributes (not changed after the node is made).
    """
    keys = getattr(_local, "keys", None)
    if keys is None:
        return attr_key(attrs)
    hit = keys.get(id(attrs))
    if hit is not None and hit[0] is attrs:
        return hit[1]
    k = attr_key(attrs)
    keys[id(attrs)] = (attrs, k)
    return k
