"""Gluon 1.x naming: every Block's prefix, its name scope, and when a block
reports MXNet 1.x's prefixed parameter names.

How MXNet 1.x (``mxnet.gluon.block._BlockScope``) names a Block, and what
nbdl does the same way for every Block it creates:

* A block's *hint* is its class name in lower case (``dense``,
  ``hybridsequential``); convolutions say ``conv``, poolings ``pool``,
  ``Activation`` its activation (``relu``), the recurrent cells ``rnn``,
  ``lstm``, ``gru`` (``Block._alias``).
* A block made outside every open name scope takes ``hint + count + '_'``
  from a per-thread counter of top-level names (``dense0_``, ``dense1_``,
  ...; ``NameCounter`` opens a fresh set of counters, as
  ``mx.name.NameManager()`` does).
* A block made while ``with parent.name_scope():`` is open counts in that
  scope, which starts at 0 for every hint: its prefix is
  ``parent.prefix + hint + count + '_'`` (``mynet0_dense0_``).
* ``prefix='...'`` replaces ``hint + count + '_'`` (inside a scope it is
  still put behind the parent's prefix), and counts nothing.
  ``prefix=''``: the block's name scope adds nothing, so what is made in it
  counts in the enclosing scope.
* A block's parameter dictionary has the prefix of the block, or, with
  ``params=other``, the prefix of ``other``, whose Parameters it takes when
  it asks for a name ``other`` holds (that is how 1.x shares parameters).
  The dictionaries of blocks made in its name scope then share ``other``
  too.

Which names ``collect_params()`` reports (nbdl runs both dialects, MXNet
2.0 names structurally, ``features.3.weight``): a block is *1.x-style*
when its class defines ``hybrid_forward``, when it was given ``prefix=`` or
``params=``, when it was made inside the name scope of a 1.x-style block,
or once its ``name_scope()`` is opened or its ``params`` read (there
``params.get`` / ``params.get_constant``), all of them 1.x-only API, or
once a 1.x-style child is registered on it (a ``Sequential`` holding
``Dense(prefix='fc_')`` reports ``fc_weight``).
``collect_params()`` of a 1.x-style block reports the 1.x names (the
parameter dictionary prefix of the block that owns a parameter, plus the
parameter's own name: ``mynet0_dense0_weight``), also for the blocks in
its tree that are not 1.x-style themselves; ``collect_params()`` of any
other block reports the structural names.  A Parameter registered on a
1.x-style block takes its 1.x name (``Parameter.name``), as in MXNet 1.x.
A block that uses nothing of 1.x (``nn.HybridSequential()`` with ``add``
and no ``name_scope``) keeps Gluon 2.0's names although MXNet 1.x would have
prefixed it: the same code means both, and nbdl follows 2.0 there.

Symbols' automatic names (``fullyconnected0``) are counted apart from these
block counters.
"""
import threading

_state = threading.local()


def _counters():
    """The per-thread top-level counters (hint -> next count)."""
    stack = getattr(_state, "counters", None)
    if stack is None:
        stack = _state.counters = [{}]
    return stack[-1]


def current():
    """The BlockScope whose ``name_scope()`` is open, or None."""
    return getattr(_state, "scope", None)


class NameCounter:
    """``with NameCounter():`` counts top-level block names afresh
    (``dense0_`` again), restoring the previous counts on exit."""

    def __enter__(self):
        _counters()
        _state.counters.append({})
        return self

    def __exit__(self, *exc):
        _state.counters.pop()


def _take(counter, hint):
    count = counter.get(hint, 0)
    counter[hint] = count + 1
    return f"{hint}{count}_"


class BlockScope:
    """The name scope of one block (what ``Block.name_scope()`` returns).

    Parameters
    ----------
    block : Block
        The block whose prefix the blocks made inside the scope extend.
    """

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old = None

    def __enter__(self):
        self._block._mark_1x()
        if self._block._empty_prefix:
            return self
        self._old = current()
        _state.scope = self
        return self

    def __exit__(self, *exc):
        if self._block._empty_prefix:
            return
        _state.scope = self._old
        self._old = None


def create(prefix, params, hint):
    """The prefix, parameter dictionary and 1.x-style flag of a new block.

    Parameters
    ----------
    prefix : str or None
        The ``prefix`` argument of the block (None: count one from ``hint``).
    params : ParameterDict or dict or None
        The ``params`` argument: parameters to share.
    hint : str
        The block's alias (``dense``).

    Returns
    -------
    (str, ParameterDict, bool)
        The block's prefix, its parameter dictionary, and whether the block
        is 1.x-style from the start.
    """
    from .parameter_dict import ParameterDict, as_shared
    scope = current()
    legacy = prefix is not None or params is not None or scope is not None
    if scope is None:
        own = _take(_counters(), hint) if prefix is None else prefix
        full = own
        dict_prefix, shared = own, None
    else:
        own = _take(scope._counter, hint) if prefix is None else prefix
        full = scope._block.prefix + own
        parent = scope._block._params
        dict_prefix, shared = parent.prefix + own, parent._shared
    if params is not None:
        shared = as_shared(params, "Block(params=...)")
        dict_prefix = shared.prefix
    return full, ParameterDict(dict_prefix, shared), legacy
