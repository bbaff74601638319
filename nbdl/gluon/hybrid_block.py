"""HybridBlock: written once as ``forward(self, x, ...)``; runs eagerly on
NDArrays, or, after ``hybridize()``, as a traced graph planned and run by
the executor (``CachedOp``)."""
import warnings

from ..errors import NbdlError
from ..symbol.symbol import Symbol
from . import _trace
from .block import Block


class HybridBlock(Block):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "hybrid_forward" in cls.__dict__:
            raise NbdlError(f"{cls.__name__} defines hybrid_forward(F, x, ...): nbdl follows "
                            f"Gluon 2.0, where a HybridBlock defines forward(self, x, ...) "
                            f"instead (use nbdl.np / nbdl.npx functions inside it)")

    def __init__(self):
        super().__init__()
        object.__setattr__(self, "_active", False)
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_cached", None)      # (symbol, input names) once traced
        object.__setattr__(self, "_cached_op", None)

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise NbdlError(f"{type(self).__name__}: children of a HybridBlock must be "
                            f"HybridBlocks, but {name or 'the child'} is a {type(block).__name__}; "
                            f"use HybridSequential (not Sequential) and HybridLambda")
        super().register_child(block, name)

    def _graph_changed(self, why):
        if getattr(self, "_active", False):
            warnings.warn(f"{type(self).__name__}: {why} after hybridize(); the cached graph is "
                          f"dropped and the block runs eagerly until hybridize() is called again",
                          stacklevel=4)
            object.__setattr__(self, "_active", False)
        object.__setattr__(self, "_cached", None)
        object.__setattr__(self, "_cached_op", None)

    def hybridize(self, active=True, static_alloc=False, static_shape=False, inline_limit=2,
                  forward_bulk_size=None, backward_bulk_size=None, partition_if_dynamic=True,
                  **kwargs):
        """Trace the first call into a CachedOp.  ``static_alloc`` and
        ``static_shape`` are accepted for compatibility: nbdl always plans one
        arena per input signature and reuses it (a new input shape binds and
        plans anew)."""
        if kwargs:
            raise NbdlError(f"hybridize: unknown arguments {sorted(kwargs)}")
        object.__setattr__(self, "_active", bool(active))
        object.__setattr__(self, "_flags", dict(static_alloc=static_alloc, static_shape=static_shape,
                                                inline_limit=inline_limit))
        object.__setattr__(self, "_cached", None)
        object.__setattr__(self, "_cached_op", None)
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                          inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                          backward_bulk_size=backward_bulk_size,
                          partition_if_dynamic=partition_if_dynamic)

    def register_forward_hook(self, hook):
        self._graph_changed("a forward hook was registered")
        return super().register_forward_hook(hook)

    def register_forward_pre_hook(self, hook):
        self._graph_changed("a forward pre-hook was registered")
        return super().register_forward_pre_hook(hook)

    def cast(self, dtype):
        self._graph_changed(f"cast({dtype}) was called")
        super().cast(dtype)

    # -- tracing ----------------------------------------------------------
    def _trace(self, args):
        """Run ``forward`` on Symbols.  ``args`` may nest lists/tuples of
        NDArrays (RNN states) and hold ``None`` for optional inputs left out.
        Returns (symbol, input names, input format, output format): the flat
        graph inputs are the NDArray leaves in order, and the formats rebuild
        the nesting."""
        from ..symbol import Group, Symbol, var
        leaves, in_fmt = _flatten(args, f"{type(self).__name__} input")
        single_in = len(args) == 1 and not isinstance(args[0], (list, tuple))
        names = ["data"] if single_in and len(leaves) == 1 else [f"data{i}" for i in range(len(leaves))]
        sym_args = _unflatten([var(n) for n in names], in_fmt)
        self.collect_params()            # fixes every parameter's variable name
        with _trace.trace():
            out = self.forward(*sym_args)
        outs, out_fmt = _flatten(out, f"{type(self).__name__}.forward output", Symbol)
        sym = outs[0] if len(outs) == 1 else Group(outs)
        return sym, names, in_fmt, out_fmt

    def infer_shape(self, *args):
        """Infer the shapes of deferred parameters from the input shapes."""
        sym, names, _, _ = self._trace(args)
        self._infer_params(sym, names, _flatten(args, "input")[0])

    def _infer_params(self, sym, names, args):
        """Set deferred parameters' shapes from the graph (their dtypes are
        their own, float32 unless declared) and finish their initialisation."""
        params = {p._var_name: p for p in self.collect_params().values()}
        known = {n: tuple(a.shape) for n, a in zip(names, args)}
        for vname, p in params.items():
            if p.shape is not None and all(d > 0 for d in p.shape):
                known[vname] = tuple(p.shape)
        arg_shapes, _, aux_shapes = sym.infer_shape_partial(**{k: v for k, v in known.items()
                                                              if k in sym.list_inputs()})
        table = dict(zip(sym.list_arguments(), arg_shapes))
        table.update(zip(sym.list_auxiliary_states(), aux_shapes))
        for vname, p in params.items():
            shp = table.get(vname)
            if shp:
                p.shape = tuple(shp)
        for p in params.values():
            if p._deferred_init:
                p._finish_deferred_init()

    def infer_type(self, *args):
        """Parameters keep their declared dtypes; nothing to infer beyond them."""

    def _deferred_pending(self):
        if not self._deferred_in_tree():
            return False
        self.collect_params()            # fixes every parameter's variable name
        return True

    # -- calling ----------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if args and isinstance(args[0], Symbol) or _trace.tracing():
            return self.forward(*args, **kwargs)       # inside a parent's trace
        for hook in self._forward_pre_hooks:
            hook(self, args)
        if self._active:
            out = self._call_cached(self._positional(args, kwargs))
        else:
            if self._deferred_pending():
                self.infer_shape(*self._positional(args, kwargs))
            out = self.forward(*args, **kwargs)
        for hook in self._forward_hooks:
            hook(self, args, out)
        return out

    def _positional(self, args, kwargs):
        """Keyword arguments placed by ``forward``'s signature; trailing
        optional inputs that were not given are dropped."""
        if not kwargs:
            return tuple(args)
        import inspect
        try:
            bound = inspect.signature(self.forward).bind(*args, **kwargs)
        except TypeError as e:
            raise NbdlError(f"{type(self).__name__}.forward: {e}") from None
        bound.apply_defaults()
        vals = list(bound.arguments.values())
        while vals and vals[-1] is None:
            vals.pop()
        return tuple(vals)

    def _call_cached(self, args):
        from .cached_op import CachedOp
        leaves, pattern = _flatten(args, f"{type(self).__name__} input")
        if self._cached is None or self._cached[2] != pattern:
            sym, names, in_fmt, out_fmt = self._trace(args)
            if self._deferred_pending():
                self._infer_params(sym, names, leaves)
            object.__setattr__(self, "_cached", (sym, names, in_fmt, out_fmt))
            params = {p._var_name: p for p in self.collect_params().values()}
            used = set(sym.list_inputs())
            params = {k: v for k, v in params.items() if k in used}
            object.__setattr__(self, "_cached_op", CachedOp(sym, names, params, **self._flags_op()))
            self._cached_op.set_op_hook(getattr(self, "_op_hook", None))
        outs = self._cached_op(*leaves)
        return _unflatten(outs, self._cached[3])

    def _flags_op(self):
        return {k: self._flags.get(k, False) for k in ("static_alloc", "static_shape")}

    # -- export -----------------------------------------------------------
    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (MXNet's
        formats, keys ``arg:``/``aux:``) from the graph of the last
        hybridized call."""
        if self._cached is None:
            raise NbdlError("Please first call block.hybridize() and then run forward with "
                            "this block at least once before calling export.")
        from ..serialization import save
        sym = self._cached[0]
        sym.save(f"{path}-symbol.json")
        params = {p._var_name: p for p in self.collect_params().values()}
        out = {}
        for name in sym.list_arguments():
            if name in params:
                out[f"arg:{name}"] = params[name]._reduce()
        for name in sym.list_auxiliary_states():
            out[f"aux:{name}"] = params[name]._reduce()
        save(f"{path}-{epoch:04d}.params", out)
        return f"{path}-symbol.json", f"{path}-{epoch:04d}.params"

    def register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(node_output_name, op_name, array)`` for the output
        of every op of the cached graph as it runs (and for the inputs too
        with ``monitor_all``).  Monitoring runs the schedule one op at a time
        from Python; pass ``callback=None`` to stop."""
        object.__setattr__(self, "_op_hook", (callback, monitor_all) if callback else None)
        for child in self._children.values():
            if isinstance(child, HybridBlock):
                child.register_op_hook(callback, monitor_all)
        if self._cached_op is not None:
            self._cached_op.set_op_hook(self._op_hook)

    def debug_str(self):
        """The executor listing and memory table of the cached graph."""
        if self._cached_op is None or not self._cached_op.executors():
            raise NbdlError("debug_str: hybridize() the block and call it once first")
        return self._cached_op.executors()[-1].debug_str()


def _flatten(obj, what, leaf_type=None):
    """Leaves of a nest of lists/tuples, and a hashable format to rebuild it:
    an int for a leaf (its index), None for None, (kind, subformats) for a
    list or tuple.  A multi-output Symbol counts as a list of its outputs."""
    from ..ndarray import NDArray
    from ..symbol import Symbol
    leaf_type = leaf_type or NDArray
    leaves = []

    def walk(x):
        if x is None:
            return None
        if isinstance(x, Symbol) and leaf_type is Symbol and len(x) > 1:
            return ("list", tuple(walk(s) for s in x))
        if isinstance(x, leaf_type):
            leaves.append(x)
            return len(leaves) - 1
        if isinstance(x, (list, tuple)):
            return ("list" if isinstance(x, list) else "tuple", tuple(walk(v) for v in x))
        raise NbdlError(f"{what}: expected {leaf_type.__name__}s (possibly in lists or tuples) "
                        f"or None, got {type(x).__name__}; inside a HybridBlock use nbdl.np/npx "
                        f"functions")
    return leaves, walk(obj)


def _unflatten(leaves, fmt):
    if fmt is None:
        return None
    if isinstance(fmt, int):
        return leaves[fmt]
    kind, subs = fmt
    items = [_unflatten(leaves, f) for f in subs]
    return items if kind == "list" else tuple(items)
