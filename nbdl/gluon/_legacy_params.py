"""Loading parameter files that use MXNet 1.x's prefixed parameter names.

MXNet 1.x names every parameter after the blocks that created it:
``resnetv10_stage1_conv0_weight`` is the ``weight`` of the first ``conv``
created in the name scope ``stage1_`` of the network ``resnetv10_``.
``net.collect_params().save(f)`` writes such names, the deprecated
``net.save_params(f)`` writes them without the network's own prefix
(``stage1_conv0_weight``; MXNet 1.x's model-store files are of this kind)
and ``export`` writes them behind ``arg:`` / ``aux:``.  MXNet 1.x's
``load_parameters`` recognizes these files by their having no ``.`` in any
key.  nbdl's blocks name parameters structurally (``features.4.0.body.0.weight``)
and have no such prefixes, so a file of prefixed names is matched to the
block by order: MXNet 1.x's ``collect_params()`` order is the block's
registration order (for the model zoo, kind and shape agree one for one).

The order is taken from the names, not trusted from the file (which MXNet
writes in ``collect_params()`` order, but older files were written from
unordered dicts and tools may sort keys).  A key is split into its kind (the
last segment of the block's structural names that it ends with: ``weight``,
``running_mean``, ``l0_i2h_weight``, ...) and the prefix of the block that
owns it; the prefixes form a tree of name scopes (``resnetv10_`` >
``stage1_`` > ``conv0_``).  MXNet 1.x's creation order and the block's
structure give three rules:

* the parameters of one layer (``conv0_weight``, ``conv0_bias``) are the
  block's parameters of one layer: consecutive, all of one module of the
  structural names (``features.0``), matched there by kind;
* the parameters under one name scope (``stage1_``) are consecutive and make
  up whole modules of the structural tree (``features.4``; a scope holds
  several sibling modules where MXNet blocks made with ``prefix=''`` share
  their parent's scope);
* in a scope, children of one name with a counter (``conv0``, ``conv1``,
  ..., ``stage1``, ``stage2``) come in counter order.

How the children of different names interleave (``conv0`` before
``batchnorm0``) is not in the names: every interleaving that these rules
allow is tried, and a parameter fits a position only with the block's kind
there and a compatible shape (dimensions the block does not know yet, 0,
match any size).  Exactly one fitting order loads; none, or more than one,
is an ``NbdlError`` (the first naming the block parameter nothing fits and
the file's candidates with their shapes).  When the file's own order fits
these rules and every kind and shape, it is used as it is (that is MXNet's
order, and it settles layers that the names and shapes alone cannot tell
apart).
"""
import re
from collections import OrderedDict

from ..errors import NbdlError

_COUNTER = re.compile(r"(.*?)(\d+)")
# Placements tried before giving up on a file as too ambiguous to match (a
# shuffled file of any model-zoo architecture takes at most ~1,300).
_MAX_STEPS = 1_000_000


def is_legacy(keys, structural_names):
    """Whether a file's keys (``arg:``/``aux:`` removed) are MXNet 1.x
    prefixed names: MXNet 1.x's rule (no key holds a ``.``), except that a
    file holding every name of the block loads by name, and so does one
    holding any name of a block whose parameters are all its own (a block
    without children names its parameters ``weight``, ``bias``; a file for
    it may hold extra keys, for ``ignore_extra``, or lack some, for
    ``allow_missing``).  A block with children has names with a ``.``,
    which such a file cannot hold: its ``out_weight`` matching a key of a
    1.x file is a coincidence of the two naming schemes."""
    keys, names = set(keys), set(structural_names)
    if not keys or any("." in k for k in keys):
        return False
    if names <= keys:
        return False
    if any("." in n for n in names):
        return True
    return not keys & names


def _fmt_shape(shape):
    return "unknown" if shape is None else str(tuple(shape))


class _Node:
    """A name scope: the parameters whose block prefix is exactly ``name``
    (``own``, kind -> file key) and the scopes under it."""

    def __init__(self, name):
        self.name = name
        self.own = OrderedDict()
        self.children = OrderedDict()
        self.size = 0
        self.chains = None


class _Unit:
    """The parameters of one block (a node's ``own``), placed as one item."""

    def __init__(self, node):
        self.node = node
        self.size = len(node.own)


class _Matcher:
    def __init__(self, filename, loaded, block):
        # loaded: OrderedDict file key -> array (file order);
        # block: list of (structural name, kind, shape or None), registration order
        self.filename = filename
        self.loaded = loaded
        self.block = block
        self.kinds = [k for _, k, _ in block]
        self.shapes = [s for _, _, s in block]
        self.n = len(block)
        # a layer's parameters: consecutive, with one parent in the structural names
        self.paths = [tuple(name.split(".")[:-1]) for name, _, _ in block]
        self.group_start = [i == 0 or self.paths[i] != self.paths[i - 1] for i in range(self.n)]
        self.file_shapes = {k: tuple(v.shape) for k, v in loaded.items()}
        self.memo = {}
        self.steps = 0
        self.fail_pos = -1
        self.fail_candidates = []

    # -- parsing ------------------------------------------------------------
    def parse(self):
        """Split every key into (block prefix, kind) and build the scope tree.
        Returns the keys that end in none of the block's kinds."""
        kinds = sorted(set(self.kinds), key=len, reverse=True)
        self.kind_of, self.node_of = {}, {}
        self.root = _Node("")
        unknown = []
        for key in self.loaded:
            kind = next((k for k in kinds if key == k or key.endswith("_" + k)), None)
            if kind is None:
                unknown.append(key)
                continue
            prefix = key[:len(key) - len(kind)]
            node = self.root
            if prefix:
                name = ""
                for seg in prefix[:-1].split("_"):
                    name += seg + "_"
                    child = node.children.get(seg)
                    if child is None:
                        child = node.children[seg] = _Node(name)
                    node = child
            node.own[kind] = key
            self.kind_of[key] = kind
            self.node_of[key] = node
        self._finish(self.root)
        return unknown

    def _finish(self, node):
        groups = OrderedDict()
        for seg, child in node.children.items():
            self._finish(child)
            m = _COUNTER.fullmatch(seg)
            hint, count = (m.group(1), int(m.group(2))) if m else ("\0" + seg, 0)
            groups.setdefault(hint, []).append((count, seg, child))
        node.chains = [[c for _, _, c in sorted(g, key=lambda t: (t[0], t[1]))]
                       for g in groups.values()]
        if node.own:
            node.chains.insert(0, [_Unit(node)])
        node.size = len(node.own) + sum(c.size for c in node.children.values())

    # -- the file's own order -----------------------------------------------
    def file_order_fits(self):
        """Whether the keys in file order fit the block one for one (kind
        and shape) and the name rules (scopes and blocks consecutive,
        counters in order)."""
        keys = list(self.loaded)
        if len(keys) != self.n:
            return False
        for i, key in enumerate(keys):
            if self.kind_of.get(key) != self.kinds[i] or \
                    not self._shape_fits(self.shapes[i], self.file_shapes[key]):
                return False
        index = {k: i for i, k in enumerate(keys)}
        return self._order_fits(self.root, index) is not None

    def _order_fits(self, node, index):
        """(first, last) position of ``node``'s subtree in the file, or None
        when it breaks a rule."""
        spans = []
        if node.own:
            pos = sorted(index[k] for k in node.own.values())
            if pos[-1] - pos[0] + 1 != len(pos) or not self.group_start[pos[0]] or (
                    pos[-1] + 1 < self.n and not self.group_start[pos[-1] + 1]):
                return None
            spans.append((pos[0], pos[-1]))
        for chain in node.chains:
            prev = -1
            for item in chain:
                if isinstance(item, _Unit):
                    continue
                span = self._order_fits(item, index)
                if span is None or span[0] <= prev:
                    return None
                prev = span[0]
                spans.append(span)
        first = min(s[0] for s in spans)
        last = max(s[1] for s in spans)
        if last - first + 1 != node.size or (node.name and not self._aligned(first, last + 1)):
            return None
        return first, last

    # -- reconstructing the order -------------------------------------------
    @staticmethod
    def _shape_fits(block_shape, file_shape):
        if block_shape is None:
            return True
        return len(block_shape) == len(file_shape) and all(
            b == 0 or b == f for b, f in zip(block_shape, file_shape))

    def _aligned(self, a, b):
        """Whether positions ``a`` to ``b - 1`` are whole consecutive parts of one
        block of the structural tree (its own parameters, whole children): a
        name scope of MXNet 1.x covers a block (or blocks side by side)."""
        first, last = self.paths[a], self.paths[b - 1]
        depth = 0
        while depth < min(len(first), len(last)) and first[depth] == last[depth]:
            depth += 1
        starts = first[:depth + 1]     # the child of the common block holding a
        ends = last[:depth + 1]        # ... and the one holding b - 1
        if a > 0 and self.paths[a - 1][:depth + 1] == starts:
            return False
        return b == self.n or self.paths[b][:depth + 1] != ends

    def _fail(self, pos, node, key):
        if pos > self.fail_pos:
            self.fail_pos, self.fail_candidates = pos, []
        if pos == self.fail_pos and (node, key) not in self.fail_candidates:
            self.fail_candidates.append((node, key))

    def _match_unit(self, unit, pos):
        """A block's parameters at ``pos``: whole groups of the block's
        parameters (those of one layer), the kinds there, compatible shapes."""
        node = unit.node
        end = pos + unit.size
        if end > self.n:
            return 0, None
        if not self.group_start[pos]:
            self._fail(pos, node, None)
            return 0, None
        out, used = [], set()
        for i in range(pos, end):
            kind = self.kinds[i]
            key = node.own.get(kind)
            if key is None or kind in used:
                self._fail(i, node, None)
                return 0, None
            if not self._shape_fits(self.shapes[i], self.file_shapes[key]):
                self._fail(i, node, key)
                return 0, None
            used.add(kind)
            out.append(key)
        if end < self.n and not self.group_start[end]:
            self._fail(end, node, None)
            return 0, None
        return 1, (out, None)

    def _match(self, item, pos):
        if isinstance(item, _Unit):
            return self._match_unit(item, pos)
        return self.solve(item, pos)

    def solve(self, node, pos):
        """(ways, plan): how many orders of ``node``'s subtree fit the block
        from ``pos`` on (capped at 2), and one of them as a plan (the keys,
        and per item the ways it had, for finding an ambiguity)."""
        memo_key = (id(node), pos)
        if memo_key in self.memo:
            return self.memo[memo_key]
        chains = node.chains
        if pos + node.size > self.n or (node.name and not self._aligned(pos, pos + node.size)):
            self.memo[memo_key] = (0, None)
            return 0, None
        # states: how far each chain is placed -> [ways, position, back pointer]
        levels = [{(0,) * len(chains): [1, pos, None]}]
        n_items = sum(len(c) for c in chains)
        for _ in range(n_items):
            nxt = {}
            for state, (ways, p, _back) in levels[-1].items():
                for ci, chain in enumerate(chains):
                    idx = state[ci]
                    if idx == len(chain):
                        continue
                    item = chain[idx]
                    self.steps += 1
                    if self.steps > _MAX_STEPS:
                        raise NbdlError(
                            f"{self.filename}: its MXNet 1.x parameter names fit the block in "
                            f"too many ways to decide (more than {_MAX_STEPS} tried); save the "
                            f"parameters with structural names (save_parameters) instead")
                    item_ways, item_plan = self._match(item, p)
                    if not item_ways:
                        continue
                    new = state[:ci] + (idx + 1,) + state[ci + 1:]
                    w = min(2, ways * item_ways)
                    rec = nxt.get(new)
                    if rec is None:
                        nxt[new] = [w, p + item.size, (state, item, item_ways, item_plan)]
                    else:
                        rec[0] = min(2, rec[0] + w)
            if not nxt:
                self.memo[memo_key] = (0, None)
                return 0, None
            levels.append(nxt)
        (ways, _, back), = levels[-1].values()
        steps = []
        for level in reversed(levels[:-1]):
            state, item, item_ways, item_plan = back
            steps.append((item, item_ways, item_plan))
            back = level[state][2]
        steps.reverse()
        keys = [k for _, _, (item_keys, _) in steps for k in item_keys]
        result = (ways, (keys, steps))
        self.memo[memo_key] = result
        return result

    def ambiguity(self, node, plan):
        """The deepest scope whose children can be ordered more than one way."""
        for item, item_ways, (_, sub) in plan[1]:
            if item_ways > 1 and sub is not None:
                return self.ambiguity(item, (None, sub))
        return node.name

    # -- errors ---------------------------------------------------------------
    def odd_layers(self):
        """For a file with parameters missing or extra: its layers whose set
        of kinds no layer of the block has (``batchnorm0_`` without its
        ``running_var``)."""
        layers, start = set(), 0
        for i in range(1, self.n + 1):
            if i == self.n or self.group_start[i]:
                layers.add(frozenset(self.kinds[start:i]))
                start = i
        odd, seen = [], set()
        for key in self.loaded:
            node = self.node_of.get(key)
            if node is not None and id(node) not in seen:
                seen.add(id(node))
                if frozenset(node.own) not in layers:
                    odd.append(f"{node.name!r}... holds {', '.join(node.own)}")
        if not odd:
            return ""
        return (f" in the file, {'; '.join(odd[:3])}{' ...' if len(odd) > 3 else ''}, unlike "
                f"any layer of the block")

    def describe_failure(self):
        if self.fail_pos < 0:
            return (" no order of the file's parameters fits the block's modules (the "
                    "parameters under one MXNet 1.x name scope make up whole modules of the "
                    "block)")
        name, kind, shape = self.block[self.fail_pos]
        cands = sorted(self.fail_candidates, key=lambda c: c[1] is None)
        shown = []
        for node, key in cands[:4]:
            if key is not None:
                shown.append(f"{key!r} (shape {self.file_shapes[key]})")
            else:
                held = ", ".join(node.own) if node.own else "no parameters of its own"
                shown.append(f"{node.name!r}... (holds {held})")
        more = f" and {len(cands) - 4} more" if len(cands) > 4 else ""
        return (f" no parameter of the file fits block parameter {name!r} ({kind}, shape "
                f"{_fmt_shape(shape)}) in MXNet 1.x's creation order; the file's "
                f"candidates there: {'; '.join(shown)}{more}")


def map_legacy(filename, loaded, params, allow_missing=False, ignore_extra=False):
    """Match the keys of an MXNet 1.x prefixed-name file to the block's
    parameters.  ``loaded``: file key (``arg:``/``aux:`` removed) -> array,
    in file order; ``params``: structural name -> Parameter, registration
    order, each Parameter once.  Returns ``{structural name: file key}`` for
    every parameter, or raises ``NbdlError``."""
    for key, arr in loaded.items():
        if arr is None:
            raise NbdlError(f"{filename}: key {key!r} holds no array")
    block = [(name, name.rsplit(".", 1)[-1], None if p.shape is None else tuple(p.shape))
             for name, p in params.items()]
    m = _Matcher(filename, loaded, block)
    unknown = m.parse()
    intro = (f"{filename}: its keys are MXNet 1.x prefixed parameter names (no '.' in any), "
             f"matched to the block's parameters by MXNet 1.x's creation order;")
    partial = (" allow_missing/ignore_extra cannot apply to such a file: its names do not say "
               "which block parameter is missing or extra." if allow_missing or ignore_extra
               else "")
    if unknown:
        kinds = ", ".join(sorted(set(m.kinds)))
        raise NbdlError(f"{intro} keys {unknown[:5]}{' ...' if len(unknown) > 5 else ''} end "
                        f"in none of the block's parameter kinds ({kinds}).{partial}")
    if len(loaded) != m.n:
        counts = []
        for kind in sorted(set(m.kinds) | set(m.kind_of.values())):
            f = sum(1 for k in m.kind_of.values() if k == kind)
            b = m.kinds.count(kind)
            if f != b:
                counts.append(f"{kind}: {f} in the file, {b} in the block")
        where = m.odd_layers()
        if not where:
            m.solve(m.root, 0)
            where = m.describe_failure() if m.fail_pos >= 0 else ""
        raise NbdlError(f"{intro} the file holds {len(loaded)} parameters but the block has "
                        f"{m.n} ({'; '.join(counts)}){';' + where if where else ''}.{partial}")
    if m.file_order_fits():
        keys = list(loaded)
    else:
        ways, plan = m.solve(m.root, 0)
        if not ways:
            raise NbdlError(f"{intro}{m.describe_failure()}")
        if ways > 1:
            where = m.ambiguity(m.root, plan)
            raise NbdlError(
                f"{intro} under the prefix {where!r} the names and shapes fit the block in more "
                f"than one order (layers of one kind and shape whose order the names do not "
                f"fix), and the file's own order does not fit the block; refusing to guess "
                f"(save the parameters with structural names, save_parameters, instead)")
        keys = plan[0]
    return OrderedDict((name, key) for (name, _, _), key in zip(block, keys))
