"""The callees each kernel compiles, recorded ahead of time, so that a fresh
machine's first run can hand them to the compile pool's workers.

Numba compiles a kernel's callees while it types the kernel, one after the
other: ResNet's convolution is one kernel whose call tree (the im2col table,
the block loops, the GEMM, the epilogue) takes 8 s of a cold ResNet-50
inference's 9 s of compilation, so a pool that hands out whole kernels had
nothing to give a second core.  A callee's argument types follow from its
caller's, but only typing finds them; ``compile_plan.json`` (next to this
module) holds them, recorded by ``tools/compile_plan.py`` from the
workloads of ``nbdl.precompile`` and ``perf/test_cold_start.py`` on an
empty cache: for each kernel and argument types, the module-level kernels
its compilation compiled, in the order it compiled them.  The pool gives
them to its workers (``compile_pool.start``), which then compile them into
the on-disk cache while this process types the caller.

The file also lists, for the first kernel of each recorded training graph,
the kernels that run compiled after that graph's first run began and that
were not its own (``load_followers``: a loss called eagerly, its gradient,
the optimizer's update); a pool for a training graph gives its workers
those too, after everything else, since this process will compile them
right after the graph's own.

A plan that no longer matches the kernels costs nothing but a worker's
time: an entry names a function and argument types; a function that is
gone is skipped, and code compiled for types nobody calls is never loaded.
The file is JSON (it is read, never executed); argument types are written
in the small vocabulary of ``encode_type`` (arrays, scalars, tuples, None).
A follower that is a generated kernel (``_elemwise_gen``) is described by
its source, which a worker compiles: such entries are taken from the
package's own plan only, not from a file ``NBDL_COMPILE_PLAN`` names.
"""
import json
import os

from numba.core import types

from .compile_claims import describe

PLAN_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compile_plan.json")
_plan = [None]


def encode_type(ty):
    """A JSON value for the Numba type ``ty``, or None when it is outside the
    plan's vocabulary (arrays, booleans, integers, floats, complex numbers,
    None, tuples of these).

    Parameters
    ----------
    ty : numba.core.types.Type
    """
    if isinstance(ty, types.Array) and type(ty) is types.Array:
        dt = encode_type(ty.dtype)
        if dt is None:
            return None
        return ["array", dt, ty.ndim, ty.layout, bool(ty.mutable), bool(ty.aligned)]
    if isinstance(ty, (types.Boolean, types.Integer, types.Float, types.Complex)) \
            and not isinstance(ty, types.Literal):
        return str(ty)
    if isinstance(ty, types.NoneType):
        return "none"
    if isinstance(ty, types.UniTuple):
        dt = encode_type(ty.dtype)
        return None if dt is None else ["unituple", dt, ty.count]
    if isinstance(ty, types.Tuple):
        items = [encode_type(t) for t in ty.types]
        return None if any(t is None for t in items) else ["tuple", items]
    return None


def decode_type(v):
    """The Numba type ``encode_type`` wrote as ``v`` (ValueError when ``v``
    is not one).

    Parameters
    ----------
    v : str or list
    """
    if isinstance(v, str):
        if v == "none":
            return types.none
        ty = getattr(types, v, None)
        if isinstance(ty, (types.Boolean, types.Integer, types.Float, types.Complex)):
            return ty
        raise ValueError(f"compile plan: unknown type {v!r}")
    if isinstance(v, list) and v:
        kind = v[0]
        if kind == "array" and len(v) == 6:
            return types.Array(decode_type(v[1]), int(v[2]), str(v[3]), readonly=not v[4],
                               aligned=bool(v[5]))
        if kind == "unituple" and len(v) == 3:
            return types.UniTuple(decode_type(v[1]), int(v[2]))
        if kind == "tuple" and len(v) == 2:
            return types.Tuple([decode_type(t) for t in v[1]])
    raise ValueError(f"compile plan: unknown type {v!r}")


def encode_sig(sig):
    """The list of ``encode_type`` values of the argument types ``sig``, or
    None when one of them is outside the vocabulary.

    Parameters
    ----------
    sig : tuple of numba.core.types.Type
    """
    out = [encode_type(t) for t in sig]
    return None if any(t is None for t in out) else out


def decode_sig(v):
    """The tuple of argument types ``encode_sig`` wrote as ``v``.

    Parameters
    ----------
    v : list
    """
    return tuple(decode_type(t) for t in v)


def name_of(fn):
    """``'module:qualname'`` of the dispatcher ``fn``'s Python function (the
    plan's name for a kernel).

    Parameters
    ----------
    fn : numba dispatcher
    """
    f = fn.py_func
    return f"{f.__module__}:{f.__qualname__}"


def key_of(fn, sig):
    """The plan's key for ``fn`` compiled for the argument types ``sig``.

    Parameters
    ----------
    fn : numba dispatcher
    sig : tuple of numba.core.types.Type
    """
    return f"{name_of(fn)}{tuple(sig)}"


def load(path=None):
    """The plan: ``{key_of(kernel, sig): [[module, name, encoded sig], ...]}``
    ({} when the file is missing or unreadable).  Read once per process for
    the default file.

    Parameters
    ----------
    path : str, optional
        A plan file (default: ``NBDL_COMPILE_PLAN``'s, ``config.compile_plan_file``,
        kept after the first read).
    """
    return _read(path)[0]


def load_followers(path=None):
    """The plan's followers: ``{key_of(kernel, sig): [[description, encoded
    sig], ...]}``, for the first kernel of a training graph, the kernels
    compiled after that graph's first run began that were none of its own
    (a loss called eagerly, its gradient, the optimizer's update), in the
    order they were compiled ({} when there are none).

    Parameters
    ----------
    path : str, optional
        As for ``load``.
    """
    return _read(path)[1]


def _read(path):
    if path is None:
        if _plan[0] is not None:
            return _plan[0]
        from .. import config
        chosen = config.compile_plan_file()
        _plan[0] = _read(PLAN_FILE if chosen is None else chosen) if chosen != "" else ({}, {})
        return _plan[0]
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}, {}
    if not isinstance(data, dict):
        return {}, {}
    plan, followers = data.get("plan"), data.get("followers")
    plan = plan if isinstance(plan, dict) else {}
    followers = followers if isinstance(followers, dict) else {}
    if os.path.realpath(path) != os.path.realpath(PLAN_FILE):
        # a generated kernel is described by its source, which a worker would
        # compile: only the package's own plan may name one
        followers = {k: [e for e in v if _named(e)] for k, v in followers.items()}
    return plan, followers


def _named(entry):
    try:
        return entry[0][1] is None
    except (TypeError, IndexError, KeyError):
        return False


def callees(fn, sig, plan=None):
    """The ``(module, name, argument types)`` of the kernels the plan says
    ``fn`` compiles for ``sig``, in its order; entries whose types do not
    decode are left out.

    Parameters
    ----------
    fn : numba dispatcher
    sig : tuple of numba.core.types.Type
    plan : dict, optional
        A plan (default: the package's, ``load()``).
    """
    plan = load() if plan is None else plan
    out = []
    for entry in plan.get(key_of(fn, sig), ()):
        try:
            module, name, enc = entry
            out.append((str(module), str(name), decode_sig(enc)))
        except (ValueError, TypeError):
            continue
    return out


def followers(fn, sig, table=None):
    """The ``(description, argument types)`` of the kernels recorded as
    compiled after a training graph whose first kernel is ``fn`` for
    ``sig`` (``load_followers``); entries that do not decode are left out.

    Parameters
    ----------
    fn : numba dispatcher
    sig : tuple of numba.core.types.Type
    table : dict, optional
        Followers (default: the package's, ``load_followers()``).
    """
    table = load_followers() if table is None else table
    out = []
    for entry in table.get(key_of(fn, sig), ()):
        try:
            desc, enc = entry
            module, builder, args = desc
            out.append(((str(module), builder, args), decode_sig(enc)))
        except (ValueError, TypeError):
            continue
    return out


class Recorder:
    """A compile hook (``nbdl.kernels.shared.jit.set_compile_hook``) that
    records, for each kernel compiled from Python (or by the executor), the
    module-level kernels compiled while it compiled: ``plan`` in ``load``'s
    form; and, told where each training graph's first run begins
    (``graph_started``), the kernels compiled after it that were not the
    graph's own: ``followers()``, in ``load_followers``'s form.  Run with an
    empty cache: a kernel loaded from the cache compiles no callee."""

    def __init__(self):
        self.plan = {}
        self._stack = []      # (key, nested list) of the compilations under way
        self._order = []      # (key, [description, encoded sig]) of top-level compilations
        self._graphs = []     # (first kernel's key, its kernels' keys, len(_order) then)

    def graph_started(self, calls):
        """Note that a training graph's first run begins: ``calls`` are its
        kernels and their arguments (``compile_pool.start``'s)."""
        from .. import compile_log
        keys = []
        for fn, args in calls:
            known = compile_log.lookup(fn, args)
            if known is not None:
                keys.append(key_of(fn, known[0]))
        if keys:
            self._graphs.append((keys[0], set(keys), len(self._order)))

    def followers(self):
        """``load_followers``'s table for what was recorded."""
        table = {}
        mine = set().union(*(keys for _, keys, _ in self._graphs)) if self._graphs else set()
        for first, _, at in self._graphs:
            out = table.setdefault(first, [])
            for key, entry in self._order[at:]:
                if key not in mine and entry not in out:
                    out.append(entry)
        return {k: v for k, v in table.items() if v}

    def __call__(self, fn, sig):
        desc, enc = describe(fn), encode_sig(sig)
        if desc is not None and enc is not None:
            if not self._stack:                 # a kernel compiled from Python or the executor
                self._order.append((key_of(fn, sig), [list(desc), enc]))
            elif getattr(fn, "public", fn) is not fn:  # a callee twin: a callee of the one under way
                entry = [desc[2][0], desc[2][1], enc]
                nested = self._stack[0][1]
                if entry not in nested:
                    nested.append(entry)
        self._stack.append((key_of(fn, sig), []))

        def after():
            key, nested = self._stack.pop()
            if not self._stack and nested:
                self.plan[key] = nested
        return after


__all__ = ["PLAN_FILE", "encode_type", "decode_type", "encode_sig", "decode_sig", "name_of",
           "key_of", "load", "load_followers", "callees", "followers", "Recorder"]
